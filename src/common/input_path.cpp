#include "common/input_path.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "common/error.hpp"

namespace shapescope {

namespace {

std::optional<std::string> kind_of(mode_t mode) {
  if (S_ISREG(mode)) return std::nullopt;
  if (S_ISDIR(mode)) return "is a directory, not a file";
  if (S_ISFIFO(mode)) return "is a FIFO (named pipe), not a regular file";
  if (S_ISCHR(mode)) return "is a character device, not a regular file";
  if (S_ISBLK(mode)) return "is a block device, not a regular file";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  return "is not a regular file";
}

}  // namespace

std::optional<std::string> not_a_regular_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return kind_of(st.st_mode);
  struct stat link {};
  if (errno == ENOENT && ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    std::error_code ec;
    const std::filesystem::path target = std::filesystem::read_symlink(path, ec);
    return fmt::format("is a dangling symbolic link (to '{}', which does not exist)", ec ? "?" : target.string());
  }
  return std::nullopt;  // absent, or unreadable: opening it says which
}

int open_regular_file(const std::string& path, const std::string& origin) {
  if (const std::optional<std::string> why = not_a_regular_file(path))
    throw usage_error(fmt::format("{} {}", origin, *why));
  // O_NONBLOCK: a FIFO swapped in after the check opens at once instead of waiting for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw usage_error(fmt::format("{} cannot be read ({})", origin, std::strerror(errno)));
  struct stat st {};
  const std::optional<std::string> why =
      ::fstat(fd, &st) == 0 ? kind_of(st.st_mode) : std::optional<std::string>("cannot be examined");
  if (why) {
    ::close(fd);
    throw usage_error(fmt::format("{} {}", origin, *why));
  }
  // A regular file's reads never wait; clearing the flag keeps them plain.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

}  // namespace shapescope
