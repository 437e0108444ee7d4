#include "model/csv.hpp"

#include <cctype>

namespace shapescope {

namespace {

std::string trim(std::string_view s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return std::string(s.substr(a, b - a));
}

}  // namespace

std::optional<std::vector<std::string>> next_csv_record(std::string_view text, size_t& pos) {
  std::vector<std::string> out;
  std::string field;
  bool quoted = false, was_quoted = false;
  const auto finish_field = [&] {
    out.push_back(was_quoted ? field : trim(field));
    field.clear();
    was_quoted = false;
  };
  for (; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (quoted) {
      if (c == '"' && pos + 1 < text.size() && text[pos + 1] == '"') {
        field += '"';
        ++pos;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"' && trim(field).empty()) {
      quoted = was_quoted = true;
      field.clear();
    } else if (c == ',') {
      finish_field();
    } else if (c == '\n') {
      ++pos;
      break;
    } else if (c == '\r' && pos + 1 < text.size() && text[pos + 1] == '\n') {
      continue;  // CRLF: the LF ends the record
    } else {
      field += c;
    }
  }
  if (quoted) return std::nullopt;
  finish_field();
  return out;
}

}  // namespace shapescope
