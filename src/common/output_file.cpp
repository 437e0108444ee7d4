#include "common/output_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/error.hpp"

namespace shapescope {
namespace fs = std::filesystem;

namespace {

fs::path parent_of(const std::string& path) {
  const fs::path p(path);
  return p.has_parent_path() ? p.parent_path() : fs::path(".");
}

// The mode a new file gets from this process: 0666 less the umask (mkstemp makes 0600).
mode_t new_file_mode() {
  const mode_t mask = umask(0);
  umask(mask);
  return 0666 & ~mask;
}

// ".NAME.shapescope-XXXXXX" beside `path`, created empty with the mode the destination keeps (an
// existing file's) or gets (0666 less the umask).
std::string temp_beside(const std::string& path, const std::string& option) {
  const fs::path target(path);
  std::string pattern = (parent_of(path) / fmt::format(".{}.shapescope-XXXXXX", target.filename().string())).string();
  const int fd = mkstemp(pattern.data());
  if (fd < 0) throw usage_error(fmt::format("{}: cannot write beside '{}' ({})", option, path, std::strerror(errno)));
  struct stat existing {};
  const mode_t mode = stat(path.c_str(), &existing) == 0 ? (existing.st_mode & 07777) : new_file_mode();
  fchmod(fd, mode);
  close(fd);
  return pattern;
}

// The data reaches the disk before the name does: a crash leaves the old file or the new one.
void sync_and_rename(const std::string& temp, const std::string& path, const std::string& option) {
  const int fd = open(temp.c_str(), O_RDONLY);
  if (fd < 0 || fsync(fd) != 0) {
    const int error = errno;
    if (fd >= 0) close(fd);
    throw usage_error(fmt::format("{}: writing '{}' failed ({})", option, path, std::strerror(error)));
  }
  close(fd);
  if (std::rename(temp.c_str(), path.c_str()) != 0)
    throw usage_error(fmt::format("{}: cannot replace '{}' ({})", option, path, std::strerror(errno)));
}

}  // namespace

void check_output_path(const std::string& path, const std::string& option,
                       const std::vector<std::string>& stores) {
  if (path.empty()) throw usage_error(fmt::format("{}: '' is empty (a file name)", option));
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (fs::is_directory(status))
    throw usage_error(fmt::format("{}: '{}' is a directory, not a file", option, path));
  if (fs::exists(status) && !fs::is_regular_file(status))
    throw usage_error(fmt::format("{}: '{}' is a device or other special file, not a regular file", option, path));
  for (const std::string& store : stores) {
    if (store.empty()) continue;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      const std::string other = store + suffix;
      // A path that does not exist yet (the store's -wal) is compared by its absolute spelling:
      // weakly_canonical leaves "store.db-wal" relative but makes "./store.db-wal" absolute.
      const bool same = fs::exists(status) && fs::exists(other, ec)
                            ? fs::equivalent(path, other, ec)
                            : fs::weakly_canonical(fs::absolute(path, ec), ec) ==
                                  fs::weakly_canonical(fs::absolute(other, ec), ec);
      if (same) throw usage_error(fmt::format("{}: '{}' is the result store's own file '{}'", option, path, other));
    }
  }
  if (!fs::is_directory(parent_of(path), ec))
    throw usage_error(fmt::format("{}: '{}': directory '{}' does not exist", option, path, parent_of(path).string()));
}

OutputFile::OutputFile(std::string path, std::string option)
    : path_(std::move(path)), option_(std::move(option)), temp_(temp_beside(path_, option_)) {
  stream_.open(temp_, std::ios::binary | std::ios::trunc);
  if (!stream_) {
    std::remove(temp_.c_str());
    throw usage_error(fmt::format("{}: cannot write '{}' ({})", option_, temp_, std::strerror(errno)));
  }
}

OutputFile::~OutputFile() {
  if (committed_) return;
  stream_.close();
  std::remove(temp_.c_str());
}

void OutputFile::commit() {
  stream_.flush();
  stream_.close();
  if (!stream_) throw usage_error(fmt::format("{}: writing '{}' failed ({})", option_, path_, std::strerror(errno)));
  sync_and_rename(temp_, path_, option_);
  committed_ = true;
}

StagedFile::StagedFile(std::string path, std::string option)
    : path_(std::move(path)), option_(std::move(option)), temp_(temp_beside(path_, option_)) {}

StagedFile::~StagedFile() {
  if (!committed_) std::remove(temp_.c_str());
}

void StagedFile::commit() {
  sync_and_rename(temp_, path_, option_);
  committed_ = true;
}

OutputFolder::OutputFolder(std::string dir, std::string option) : dir_(std::move(dir)), option_(std::move(option)) {
  std::string pattern = (fs::path(dir_) / ".shapescope-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr)
    throw usage_error(fmt::format("{}: cannot write in '{}' ({})", option_, dir_, std::strerror(errno)));
  temp_ = pattern;
}

OutputFolder::~OutputFolder() {
  std::error_code ignored;
  fs::remove_all(temp_, ignored);
}

void OutputFolder::commit(const std::vector<std::string>& names) {
  const mode_t mode = new_file_mode();
  for (const std::string& name : names) {
    const std::string from = (fs::path(temp_) / name).string();
    const std::string to = (fs::path(dir_) / name).string();
    struct stat existing {};
    chmod(from.c_str(), stat(to.c_str(), &existing) == 0 ? (existing.st_mode & 07777) : mode);
    if (std::rename(from.c_str(), to.c_str()) != 0)
      throw usage_error(fmt::format("{}: cannot replace '{}' ({})", option_, to, std::strerror(errno)));
  }
  committed_ = true;
}

}  // namespace shapescope
