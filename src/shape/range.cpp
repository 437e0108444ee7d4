#include "shape/range.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cstdint>
#include <limits>
#include <sstream>
#include <unordered_set>

#include "common/error.hpp"

namespace shapescope {

namespace {

// cuBLAS takes its sizes as int, so every size, step and factor must fit in 32 bits.
constexpr int64_t kMaxValue = std::numeric_limits<int32_t>::max();
// One range past this is almost surely a typo (a missing step), and would exhaust memory long
// before it could be measured.
constexpr int64_t kMaxValuesPerRange = 1'000'000;
constexpr std::string_view kExpectedForms = "expected A, A..B, A..B:STEP or A..B*FACTOR";

std::string_view trim(std::string_view text) {
  auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

bool all_digits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// The item being parsed, so that every message quotes the whole value and, in a comma list,
// also the item at fault.
struct Where {
  std::string_view option;
  std::string_view text;
  std::string_view item;

  std::string prefix() const {
    if (item == trim(text)) return fmt::format("{}: '{}'", option, text);
    return fmt::format("{}: '{}': '{}'", option, text, item);
  }
  [[noreturn]] void fail(std::string_view what) const {
    throw usage_error(fmt::format("{}{}", prefix(), what));
  }
};

// A token is syntactically a number if it is digits, or '-' and digits (so that a negative value
// gets a message about its sign rather than about the grammar).
bool is_number_token(std::string_view token) {
  if (!token.empty() && token.front() == '-') token.remove_prefix(1);
  return all_digits(token);
}

// Value of a token that passed is_number_token; a negative one comes back as -1 and one beyond
// kMaxValue as kMaxValue + 1, which is all the callers need to reject them.
int64_t token_value(std::string_view token) {
  if (token.front() == '-') return -1;
  int64_t value = 0;
  for (char c : token) {
    value = value * 10 + (c - '0');
    if (value > kMaxValue) return kMaxValue + 1;
  }
  return value;
}

int64_t size_value(const Where& where, std::string_view token) {
  int64_t value = token_value(token);
  if (value < 1) where.fail(": sizes must be >= 1");
  if (value > kMaxValue) {
    where.fail(fmt::format(": {} is too large (sizes must be <= {})", token, kMaxValue));
  }
  return value;
}

void append_item(const Where& where, std::vector<int64_t>& values) {
  std::string_view item = where.item;
  auto dots = item.find("..");
  if (dots == std::string_view::npos) {
    if (!is_number_token(item)) where.fail(fmt::format(" is not a range ({})", kExpectedForms));
    values.push_back(size_value(where, item));
    return;
  }

  std::string_view first_text = item.substr(0, dots);
  std::string_view rest = item.substr(dots + 2);
  auto op_pos = rest.find_first_of(":*");
  std::string_view last_text = rest.substr(0, op_pos);
  char op = op_pos == std::string_view::npos ? '\0' : rest[op_pos];
  std::string_view by_text = op == '\0' ? std::string_view() : rest.substr(op_pos + 1);
  // Check the grammar of every part before any value, so "0..x" is reported as malformed.
  if (!is_number_token(first_text) || !is_number_token(last_text) ||
      (op != '\0' && !is_number_token(by_text))) {
    where.fail(fmt::format(" is not a range ({})", kExpectedForms));
  }

  // A reversed range is named as one even where its lower end is no size ("1..0"), so that the
  // message says what is wrong with the range before what is wrong with a number in it.
  for (const std::string_view text : {first_text, last_text})
    if (token_value(text) > kMaxValue) size_value(where, text);
  if (token_value(first_text) > token_value(last_text)) {
    if (token_value(last_text) < 1)
      where.fail(fmt::format(" is a reversed range ({} > {}), and sizes must be >= 1", first_text, last_text));
    std::string suffix = op == '\0' ? std::string() : fmt::format("{}{}", op, by_text);
    where.fail(fmt::format(" is a reversed range ({} > {}); write '{}..{}{}'", first_text, last_text, last_text,
                           first_text, suffix));
  }
  int64_t first = size_value(where, first_text);
  int64_t last = size_value(where, last_text);
  int64_t by = 1;
  if (op == ':') {
    by = token_value(by_text);
    if (by < 1) where.fail(": the step must be >= 1");
    if (by > kMaxValue) where.fail(fmt::format(": the step must be <= {}", kMaxValue));
  } else if (op == '*') {
    by = token_value(by_text);
    if (by < 2) where.fail(": the factor must be >= 2");
    if (by > kMaxValue) where.fail(fmt::format(": the factor must be <= {}", kMaxValue));
  }
  if (op == '*') {
    // first and by are below 2^31, so value * by cannot overflow before value passes last.
    for (int64_t value = first; value <= last; value *= by) values.push_back(value);
    return;
  }
  int64_t count = (last - first) / by + 1;
  if (count > kMaxValuesPerRange) {
    where.fail(fmt::format(" gives {} sizes, more than the limit of {} per range; use a step "
                           "(A..B:STEP) or a factor (A..B*FACTOR)",
                           count, kMaxValuesPerRange));
  }
  for (int64_t value = first; value <= last; value += by) values.push_back(value);
}

}  // namespace

std::vector<int64_t> parse_range(std::string_view text, std::string_view option) {
  if (trim(text).empty()) throw usage_error(fmt::format("{}: '{}' is empty", option, text));

  std::vector<int64_t> values;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string_view item = trim(text.substr(start, comma == std::string_view::npos
                                                        ? std::string_view::npos
                                                        : comma - start));
    if (item.empty()) {
      throw usage_error(fmt::format("{}: '{}' has an empty item (a stray comma)", option, text));
    }
    append_item(Where{option, text, item}, values);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }

  // Keep the first occurrence of each size so the sweep runs in the order the user wrote.
  std::unordered_set<int64_t> seen;
  std::vector<int64_t> unique;
  unique.reserve(values.size());
  for (int64_t value : values) {
    if (seen.insert(value).second) unique.push_back(value);
  }
  return unique;
}

std::vector<int64_t> parse_number_list(const std::string& text, const char* option, const char* one, const char* list) {
  std::vector<int64_t> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    int64_t v = -1;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (error != std::errc() || end != item.data() + item.size() || v < 0 || v > std::numeric_limits<int32_t>::max())
      throw usage_error(fmt::format("{}: '{}' in '{}' is not {} (0..2147483647)", option, item, text, one));
    out.push_back(v);
  }
  if (out.empty() || text.back() == ',') throw usage_error(fmt::format("{}: '{}' is not a comma list of {}", option, text, list));
  return out;
}

}  // namespace shapescope
