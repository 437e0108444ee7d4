#include "model/input_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/error.hpp"

namespace shapescope {

std::string read_text_file(const std::string& path, const std::string& origin) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw usage_error(fmt::format("{} is a directory, not a file", origin));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw usage_error(fmt::format("{} cannot be read ({})", origin, std::strerror(errno)));
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw usage_error(fmt::format("{} cannot be read ({})", origin, std::strerror(errno)));
  return text.str();
}

nlohmann::json parse_json_text(std::string_view text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 3, column 5: ...": keep what follows the tag.
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
