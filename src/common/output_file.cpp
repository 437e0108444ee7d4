#include "common/output_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

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
void sync_file(const std::string& temp, const std::string& path, const std::string& option) {
  const int fd = open(temp.c_str(), O_RDONLY);
  if (fd < 0 || fsync(fd) != 0) {
    const int error = errno;
    if (fd >= 0) close(fd);
    throw write_error(option, "cannot write", path, error);
  }
  close(fd);
}

void rename_over(const std::string& temp, const std::string& target, const std::string& path,
                 const std::string& option) {
  if (std::rename(temp.c_str(), target.c_str()) != 0) throw write_error(option, "cannot replace", path, errno);
}

CommitPoint* g_commit_point = nullptr;

// The identity of an open file or of what a path names now.
bool same_inode(int fd, const std::string& path) {
  struct stat open_file {}, named {};
  return fstat(fd, &open_file) == 0 && stat(path.c_str(), &named) == 0 && open_file.st_dev == named.st_dev &&
         open_file.st_ino == named.st_ino;
}

}  // namespace

CommitPoint::CommitPoint() { g_commit_point = this; }

CommitPoint::~CommitPoint() {
  if (g_commit_point == this) g_commit_point = nullptr;
  for (Held& output : outputs_)
    if (output.remove) output.remove();
}

std::vector<std::string> CommitPoint::held() const {
  std::vector<std::string> paths;
  for (const Held& output : outputs_)
    if (output.remove) paths.push_back(output.path);
  return paths;
}

void CommitPoint::print() {
  for (const auto& [line, to_stderr] : lines_) {
    std::FILE* stream = to_stderr ? stderr : stdout;
    std::fwrite(line.data(), 1, line.size(), stream);
    std::fputc('\n', stream);
  }
  lines_.clear();
}

void CommitPoint::put_in_place() {
  for (Held& output : outputs_) {
    if (!output.remove) continue;
    output.put();
    output.remove = nullptr;
    output.keep.reset();
  }
}

void CommitPoint::hold(Held output) { outputs_.push_back(std::move(output)); }

void CommitPoint::say(std::string line, bool to_stderr) { lines_.emplace_back(std::move(line), to_stderr); }

CommitPoint* commit_point() { return g_commit_point; }

CommitNow::CommitNow() : held_(g_commit_point) { g_commit_point = nullptr; }
CommitNow::~CommitNow() { g_commit_point = held_; }

void announce(const std::string& line, bool to_stderr) {
  if (CommitPoint* point = commit_point()) return point->say(line, to_stderr);
  std::FILE* stream = to_stderr ? stderr : stdout;
  std::fwrite(line.data(), 1, line.size(), stream);
  std::fputc('\n', stream);
}

ExclusiveLock::ExclusiveLock(const std::string& path, const std::atomic<bool>* interrupted,
                             const std::function<void()>& waiting) {
  bool told = false;
  for (;;) {
    const std::string target = written_path(path);
    bool folder = false;
    int fd = open(target.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0 && errno == EACCES) fd = open(target.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
      fd = open(parent_of(target).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      folder = true;
    }
    if (fd < 0) return;  // the writer's own checks name what is wrong with the path
    while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) {
        close(fd);  // no locks on this file system
        return;
      }
      if (!told && waiting) waiting();
      told = true;
      if (interrupted && interrupted->load()) {
        close(fd);
        throw Error(ExitCode::kInterrupted, fmt::format("interrupted while waiting for '{}'", path));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::error_code ec;
    // Still the file the path names, or (a folder's lock) still no file: else the holder before us
    // put a new one there, and that is the one to lock.
    if (folder ? !fs::exists(target, ec) : same_inode(fd, target)) {
      fd_ = fd;
      return;
    }
    close(fd);
  }
}

ExclusiveLock::~ExclusiveLock() {
  if (fd_ >= 0) close(fd_);
}

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

bool is_sqlite_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char header[16] = {};
  return in.read(header, sizeof header) && std::memcmp(header, "SQLite format 3", sizeof header) == 0;
}

void check_output_path(const std::string& path, const std::string& option, const std::vector<std::string>& inputs,
                       StoreAtOutput store) {
  if (path.empty()) throw usage_error(fmt::format("{}: '' is empty (a file name)", option));
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (fs::is_directory(status))
    throw usage_error(fmt::format("{}: '{}' is a directory, not a file", option, path));
  if (fs::exists(status) && !fs::is_regular_file(status))
    throw usage_error(fmt::format("{}: '{}' is a device or other special file, not a regular file", option, path));
  const auto refuse_if_read = [&](const std::string& other) {
    if (same_file(path, other))
      throw usage_error(fmt::format("{}: '{}' is '{}', which this command reads; it would be overwritten", option,
                                    path, other));
  };
  for (const std::string& input : inputs) {
    if (input.empty()) continue;
    refuse_if_read(input);
    for (const char* suffix : kSqliteSideSuffixes) refuse_if_read(input + suffix);
  }
  // A store's -wal, -shm or -journal file beside it, whether or not this command reads the store: the
  // page over it would lose the store's last writes (or make it unreadable). Never, not even with --force.
  for (const std::string suffix : kSqliteSideSuffixes)
    if (path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
      const std::string store_path = path.substr(0, path.size() - suffix.size());
      if (fs::is_regular_file(store_path, ec) && is_sqlite_file(store_path))
        throw usage_error(fmt::format("{}: '{}' is the {} file of the SQLite database '{}' (a result store?), which "
                                      "SQLite keeps beside it; it would be overwritten: give another name",
                                      option, path, suffix.substr(1), store_path));
    }
  if (!fs::is_directory(parent_of(path), ec))
    throw usage_error(fmt::format("{}: '{}': directory '{}' does not exist", option, path, parent_of(path).string()));
  if (store != StoreAtOutput::kReplace && fs::is_regular_file(status) && is_sqlite_file(path))
    throw usage_error(fmt::format("{}: '{}' is an SQLite database (a result store?), which this output would "
                                  "replace; give another name{}",
                                  option, path,
                                  store == StoreAtOutput::kRefuseUnlessForced ? ", or --force to replace it"
                                                                              : " (or remove it first)"));
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
  sync_file(temp_, path_, option_);
  if (CommitPoint* point = commit_point()) {
    point->hold({path_, [temp = temp_, target = target_, path = path_, option = option_] { rename_over(temp, target, path, option); },
                 [temp = temp_] { std::remove(temp.c_str()); }, nullptr});
  } else {
    rename_over(temp_, target_, path_, option_);
  }
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

void StagedFile::commit(std::function<void()> then) {
  sync_file(temp_, path_, option_);
  const auto put = [temp = temp_, target = target_, path = path_, option = option_, then = std::move(then)] {
    rename_over(temp, target, path, option);
    if (then) then();
  };
  if (CommitPoint* point = commit_point()) {
    point->hold({path_, put, [temp = temp_] { std::remove(temp.c_str()); }, lock_});
  } else {
    put();
  }
  committed_ = true;
  lock_.reset();
}

OutputFolder::OutputFolder(std::string dir, std::string option) : dir_(std::move(dir)), option_(std::move(option)) {
  std::string pattern = (fs::path(dir_) / ".shapescope-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr)
    throw write_error(option_, "cannot write in", dir_, errno);
  temp_ = pattern;
}

OutputFolder::~OutputFolder() {
  if (handed_over_) return;
  std::error_code ignored;
  fs::remove_all(temp_, ignored);
}

void OutputFolder::commit(const std::vector<std::string>& names) {
  const mode_t mode = new_file_mode();
  std::string paths;
  for (const std::string& name : names) {
    const std::string to = (fs::path(dir_) / name).string();
    struct stat existing {};
    chmod((fs::path(temp_) / name).c_str(), stat(to.c_str(), &existing) == 0 ? (existing.st_mode & 07777) : mode);
    paths += (paths.empty() ? "" : "', '") + to;
  }
  const auto put = [names, dir = dir_, temp = temp_, option = option_] {
    for (const std::string& name : names) {
      const std::string to = (fs::path(dir) / name).string();
      if (std::rename((fs::path(temp) / name).c_str(), to.c_str()) != 0) throw write_error(option, "cannot replace", to, errno);
    }
    std::error_code ignored;
    fs::remove_all(temp, ignored);
  };
  const auto remove = [temp = temp_] {
    std::error_code ignored;
    fs::remove_all(temp, ignored);
  };
  if (CommitPoint* point = commit_point()) {
    point->hold({paths, put, remove, nullptr});
    handed_over_ = true;
  } else {
    put();
  }
}

}  // namespace shapescope
