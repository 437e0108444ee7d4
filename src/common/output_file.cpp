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

// A failed write names the destination as the user gave it, never the hidden temporary file. A
// full disk or a read-only file system is no bad option (exit 6); a missing or foreign folder is.
Error write_error(const std::string& option, const std::string& what, const std::string& path, int error) {
  const bool medium = error == ENOSPC || error == EDQUOT || error == EFBIG || error == EIO || error == EROFS;
  return Error(medium ? ExitCode::kWrite : ExitCode::kUsage,
               fmt::format("{}: {} '{}' ({})", option, what, path, std::strerror(error)));
}

// The file that a write to `path` is to change: a symbolic link's target (followed to the end, which
// may not exist yet), so that the link stays and its target is replaced; else `path` itself.
std::string written_path(const std::string& path) {
  std::error_code ec;
  if (!fs::is_symlink(path, ec)) return path;
  const fs::path target = fs::weakly_canonical(path, ec);
  return ec ? path : target.string();
}

// ".NAME.shapescope-XXXXXX" beside `target`, created empty with the mode the destination keeps (an
// existing file's) or gets (0666 less the umask). Messages name `path`, as the user gave it.
std::string temp_beside(const std::string& target, const std::string& path, const std::string& option) {
  std::string pattern =
      (parent_of(target) / fmt::format(".{}.shapescope-XXXXXX", fs::path(target).filename().string())).string();
  const int fd = mkstemp(pattern.data());
  if (fd < 0) throw write_error(option, "cannot write beside", path, errno);
  struct stat existing {};
  const mode_t mode = stat(target.c_str(), &existing) == 0 ? (existing.st_mode & 07777) : new_file_mode();
  fchmod(fd, mode);
  close(fd);
  return pattern;
}

// The data reaches the disk before the name does: a crash leaves the old file or the new one.
void sync_and_rename(const std::string& temp, const std::string& target, const std::string& path,
                     const std::string& option) {
  const int fd = open(temp.c_str(), O_RDONLY);
  if (fd < 0 || fsync(fd) != 0) {
    const int error = errno;
    if (fd >= 0) close(fd);
    throw write_error(option, "cannot write", path, error);
  }
  close(fd);
  if (std::rename(temp.c_str(), target.c_str()) != 0) throw write_error(option, "cannot replace", path, errno);
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  // A path that does not exist yet (a store's -wal) is compared by its absolute spelling:
  // weakly_canonical leaves "store.db-wal" relative but makes "./store.db-wal" absolute.
  return fs::weakly_canonical(fs::absolute(a, ec), ec) == fs::weakly_canonical(fs::absolute(b, ec), ec);
}

void check_given_once(const std::vector<std::string>& paths, const std::string& option) {
  for (size_t i = 0; i < paths.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (same_file(paths[i], paths[j]))
        throw usage_error(fmt::format("{}: '{}' is given twice ('{}')", option, paths[i], paths[j]));
}

void check_output_path(const std::string& path, const std::string& option,
                       const std::vector<std::string>& inputs) {
  if (path.empty()) throw usage_error(fmt::format("{}: '' is empty (a file name)", option));
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (fs::is_directory(status))
    throw usage_error(fmt::format("{}: '{}' is a directory, not a file", option, path));
  if (fs::exists(status) && !fs::is_regular_file(status))
    throw usage_error(fmt::format("{}: '{}' is a device or other special file, not a regular file", option, path));
  for (const std::string& input : inputs) {
    if (input.empty()) continue;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      const std::string other = input + suffix;
      if (same_file(path, other))
        throw usage_error(fmt::format("{}: '{}' is '{}', which this command reads; it would be overwritten", option,
                                      path, other));
    }
  }
  if (!fs::is_directory(parent_of(path), ec))
    throw usage_error(fmt::format("{}: '{}': directory '{}' does not exist", option, path, parent_of(path).string()));
}

OutputFile::OutputFile(std::string path, std::string option)
    : path_(std::move(path)),
      option_(std::move(option)),
      target_(written_path(path_)),
      temp_(temp_beside(target_, path_, option_)) {
  stream_.open(temp_, std::ios::binary | std::ios::trunc);
  if (!stream_) {
    const int error = errno;
    std::remove(temp_.c_str());
    throw write_error(option_, "cannot write", path_, error);
  }
}

OutputFile::~OutputFile() {
  if (committed_) return;
  stream_.close();
  std::remove(temp_.c_str());
}

void OutputFile::commit() {
  errno = 0;
  stream_.flush();
  stream_.close();
  // A stream keeps no errno: a failed write on a full disk most often left ENOSPC (or EFBIG).
  if (!stream_) throw write_error(option_, "cannot write", path_, errno != 0 ? errno : ENOSPC);
  sync_and_rename(temp_, target_, path_, option_);
  committed_ = true;
}

StagedFile::StagedFile(std::string path, std::string option)
    : path_(std::move(path)),
      option_(std::move(option)),
      target_(written_path(path_)),
      temp_(temp_beside(target_, path_, option_)) {}

StagedFile::~StagedFile() {
  if (!committed_) std::remove(temp_.c_str());
}

void StagedFile::commit() {
  sync_and_rename(temp_, target_, path_, option_);
  committed_ = true;
}

OutputFolder::OutputFolder(std::string dir, std::string option) : dir_(std::move(dir)), option_(std::move(option)) {
  std::string pattern = (fs::path(dir_) / ".shapescope-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr)
    throw write_error(option_, "cannot write in", dir_, errno);
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
      throw write_error(option_, "cannot replace", to, errno);
  }
  committed_ = true;
}

}  // namespace shapescope
