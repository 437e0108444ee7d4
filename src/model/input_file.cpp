#include "model/input_file.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "common/error.hpp"
#include "common/input_path.hpp"

namespace shapescope {

namespace {

[[noreturn]] void refuse_size(const std::string& origin, uint64_t bytes) {
  throw usage_error(fmt::format("{} is larger than {} MiB ({} bytes), the limit on an input file", origin,
                                kMaxInputBytes >> 20, bytes));
}

// The deepest nesting of arrays and objects, counted outside strings: nlohmann's dump() (a message
// that quotes an entry) recurses once per level, so 70,000 '[' overflowed the stack.
void check_json_depth(std::string_view text, const std::string& origin) {
  int depth = 0;
  int line = 1;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') ++line;
    if (in_string) {
      if (c == '\\') ++i;  // an escaped character, perhaps a quote
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw usage_error(fmt::format("{} nests JSON arrays and objects deeper than {} levels (at line {}), the limit "
                                      "on an input file",
                                      origin, kMaxJsonDepth, line));
    } else if (c == ']' || c == '}') {
      --depth;  // unbalanced brackets are the parser's to report
    }
  }
}

}  // namespace

std::string read_text_file(const std::string& path, const std::string& origin) {
  const int fd = open_regular_file(path, origin);
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  // A regular file's size is known before reading it; one that grows meanwhile is held at the limit.
  struct stat st {};
  if (::fstat(fd, &st) == 0 && uint64_t(st.st_size) > kMaxInputBytes) refuse_size(origin, uint64_t(st.st_size));
  std::string text;
  std::array<char, 1 << 16> chunk;
  for (;;) {
    const ssize_t got = ::read(fd, chunk.data(), chunk.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw usage_error(fmt::format("{} cannot be read ({})", origin, std::strerror(errno)));
    if (got == 0) break;
    text.append(chunk.data(), size_t(got));
    if (text.size() > kMaxInputBytes) refuse_size(origin, text.size());
  }
  return text;
}

nlohmann::json parse_json_text(std::string_view text, const std::string& origin) {
  if (text.size() > kMaxInputBytes) refuse_size(origin, text.size());
  check_json_depth(text, origin);
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 3, column 5: ...": keep what follows the tag.
    // Not only parse_error: a number too large for a double (1E999) is out_of_range.406.
    std::string what = e.what();
    const size_t tag = what.find("] ");
    if (tag != std::string::npos) what = what.substr(tag + 2);
    std::replace(what.begin(), what.end(), '\n', ' ');
    throw usage_error(fmt::format("{} is not valid JSON ({})", origin, what));
  }
}

std::string short_dump(const nlohmann::json& value) {
  std::string text = value.dump();
  constexpr size_t kMaxChars = 40;
  if (text.size() > kMaxChars) text = text.substr(0, kMaxChars) + "...";
  return text;
}

}  // namespace shapescope
