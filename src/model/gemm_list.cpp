#include "model/gemm_list.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "model/csv.hpp"
#include "model/input_file.hpp"

namespace shapescope {

namespace {

using Json = nlohmann::json;

constexpr int64_t kMaxValue = std::numeric_limits<int32_t>::max();  // cuBLAS's sizes are 32-bit ints
constexpr std::string_view kRequired[] = {"m", "n", "k", "layout", "dtype", "batch", "count"};
constexpr std::string_view kOptional[] = {"lda", "ldb", "ldc", "offset_a", "offset_b", "name", "group"};

bool known_column(std::string_view c) {
  return std::find(std::begin(kRequired), std::end(kRequired), c) != std::end(kRequired) ||
         std::find(std::begin(kOptional), std::end(kOptional), c) != std::end(kOptional);
}

std::string columns_text() {
  std::string out;
  for (std::string_view c : kRequired) out += (out.empty() ? "" : ", ") + std::string(c);
  out += "; optional";
  for (std::string_view c : kOptional) out += " " + std::string(c);
  return out;
}

// One row: its place for messages ("line 4", "entry 3") and its cells as text.
struct Row {
  std::string where;
  std::map<std::string, std::string> cells;  // absent: not given
};

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void check_header(const std::string& origin, const std::string& where, const std::vector<std::string>& columns) {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (!known_column(columns[i]))
      throw usage_error(fmt::format("{}: {}: unknown column '{}' (columns: {})", origin, where, columns[i],
                                    columns_text()));
    if (std::find(columns.begin(), columns.begin() + long(i), columns[i]) != columns.begin() + long(i))
      throw usage_error(fmt::format("{}: {}: column '{}' is given twice", origin, where, columns[i]));
  }
  for (std::string_view c : kRequired)
    if (std::find(columns.begin(), columns.end(), c) == columns.end())
      throw usage_error(fmt::format("{}: {}: no column '{}' (columns: {})", origin, where, c, columns_text()));
}

// Each row as it is read (a list of 200,000 rows is never held as text cells all at once).
using RowSink = std::function<void(const Row&)>;

void csv_rows(std::string_view text, const std::string& origin, const RowSink& sink) {
  std::vector<std::string> header;
  size_t line_no = 1, pos = 0;
  while (pos < text.size()) {
    const size_t start = pos, first_line = line_no;
    const size_t eol = std::min(text.find('\n', pos), text.size());
    const size_t first = std::min(text.find_first_not_of(" \t\r\f\v", pos), text.size());
    if (first >= eol || text[first] == '#') {  // a blank line or a comment
      pos = eol + 1;
      ++line_no;
      continue;
    }
    const std::string where = fmt::format("line {}", first_line);
    const std::optional<std::vector<std::string>> fields = next_csv_record(text, pos);
    if (!fields) throw usage_error(fmt::format("{}: {}: a quote is not closed", origin, where));
    line_no += size_t(std::count(text.begin() + ptrdiff_t(start), text.begin() + ptrdiff_t(pos), '\n'));
    if (header.empty()) {
      for (const std::string& f : *fields) header.push_back(lower(f));
      check_header(origin, where, header);
      continue;
    }
    if (fields->size() != header.size())
      throw usage_error(fmt::format("{}: {}: {} values for {} columns", origin, where, fields->size(), header.size()));
    Row row{where, {}};
    for (size_t i = 0; i < header.size(); ++i)
      if (!(*fields)[i].empty()) row.cells[header[i]] = (*fields)[i];
    sink(row);
  }
  if (header.empty()) throw usage_error(fmt::format("{} is empty (a CSV GEMM list starts with a header: {})", origin,
                                                    columns_text()));
}

void json_rows(std::string_view text, const std::string& origin, const RowSink& sink) {
  const Json json = parse_json_text(text, origin);
  const Json* list = &json;
  if (json.is_object() && json.contains("gemms")) list = &json["gemms"];
  if (!list->is_array())
    throw usage_error(fmt::format("{}: a JSON GEMM list is an array of objects (or {{\"gemms\": [...]}})", origin));
  for (size_t i = 0; i < list->size(); ++i) {
    const Json& entry = (*list)[i];
    Row row{fmt::format("entry {}", i + 1), {}};
    if (!entry.is_object())
      throw usage_error(fmt::format("{}: {} is {}, not an object", origin, row.where, short_dump(entry)));
    std::vector<std::string> keys;
    for (const auto& [key, value] : entry.items()) keys.push_back(key);
    for (const std::string& key : keys)
      if (!known_column(key))
        throw usage_error(fmt::format("{}: {}: unknown key '{}' (keys: {})", origin, row.where, key, columns_text()));
    for (const auto& [key, value] : entry.items()) {
      if (value.is_null()) continue;
      // A number, bool, list or object is kept as its JSON text: the checks below name it.
      row.cells[key] = value.is_string() ? value.get<std::string>() : value.dump();
    }
    sink(row);
  }
}

class RowReader {
 public:
  RowReader(const Row& row, const std::string& origin) : row_(row), origin_(origin) {}

  std::optional<std::string> text(const char* column) const {
    const auto it = row_.cells.find(column);
    if (it == row_.cells.end()) return std::nullopt;
    return it->second;
  }
  std::string required_text(const char* column) const {
    const std::optional<std::string> t = text(column);
    if (!t) fail(column, "no value (it is required)");
    return *t;
  }
  // An integer in [min, 2^31-1]; nullopt when absent.
  std::optional<int64_t> integer(const char* column, int64_t min) const {
    const std::optional<std::string> t = text(column);
    if (!t) return std::nullopt;
    const std::string& s = *t;
    const bool negative = !s.empty() && s[0] == '-';
    const bool digits = s.size() > (negative ? 1u : 0u) &&
                        std::all_of(s.begin() + (negative ? 1 : 0), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    const std::string range = fmt::format("an integer from {} to {}", min, kMaxValue);
    if (!digits) fail(column, fmt::format("'{}' is not {}", s, range));
    if (negative || s.size() > 10) fail(column, fmt::format("{} is out of range ({})", s, range));
    const int64_t v = std::stoll(s);
    if (v < min || v > kMaxValue) fail(column, fmt::format("{} is out of range ({})", s, range));
    return v;
  }
  int64_t required_integer(const char* column, int64_t min) const {
    if (!text(column)) fail(column, "no value (it is required)");
    return *integer(column, min);
  }
  [[noreturn]] void fail(const char* column, const std::string& what) const {
    throw usage_error(fmt::format("{}: {}, column '{}': {}", origin_, row_.where, column, what));
  }

 private:
  const Row& row_;
  const std::string& origin_;
};

struct ListGemm {
  Problem problem;
  int64_t count = 0;
  std::string name, group, where;
};

ListGemm read_row(const Row& row, const std::string& origin) {
  const RowReader r(row, origin);
  ListGemm g;
  g.where = row.where;
  Problem& p = g.problem;
  p.m = r.required_integer("m", 1);
  p.n = r.required_integer("n", 1);
  p.k = r.required_integer("k", 1);
  const std::string layout = r.required_text("layout");
  const std::optional<Layout> l = parse_layout(lower(layout));
  if (!l) r.fail("layout", fmt::format("'{}' is not nn, nt, tn or tt", layout));
  p.layout = *l;
  const std::string dtype = r.required_text("dtype");
  const std::optional<DType> d = parse_dtype(lower(dtype));
  if (!d) r.fail("dtype", fmt::format("'{}' is not bf16, fp16, fp32, tf32 or fp8", dtype));
  p.dtype = *d;
  p.batch = r.required_integer("batch", 1);
  g.count = r.required_integer("count", 1);
  p.lda = r.integer("lda", 1).value_or(p.a_cols());
  p.ldb = r.integer("ldb", 1).value_or(p.b_cols());
  p.ldc = r.integer("ldc", 1).value_or(p.n);
  if (p.lda < p.a_cols())
    r.fail("lda", fmt::format("{} is less than A's stored row length {} ({} layout: A is stored {})", p.lda, p.a_cols(),
                              to_string(p.layout), p.a_transposed() ? "K x M" : "M x K"));
  if (p.ldb < p.b_cols())
    r.fail("ldb", fmt::format("{} is less than B's stored row length {} ({} layout: B is stored {})", p.ldb, p.b_cols(),
                              to_string(p.layout), p.b_transposed() ? "N x K" : "K x N"));
  if (p.ldc < p.n) r.fail("ldc", fmt::format("{} is less than N = {}", p.ldc, p.n));
  p.off_a = r.integer("offset_a", 0).value_or(0);
  p.off_b = r.integer("offset_b", 0).value_or(0);
  g.name = r.text("name").value_or("");
  g.group = r.text("group").value_or("");
  return g;
}

}  // namespace

Workload parse_gemm_list(std::string_view text, const std::string& origin) {
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.remove_prefix(3);  // a spreadsheet's UTF-8 byte order mark
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) throw usage_error(fmt::format("{} is empty", origin));
  const bool json = text[first] == '[' || text[first] == '{';
  std::vector<ListGemm> gemms;
  const RowSink sink = [&](const Row& row) {
    if (gemms.size() == kMaxListRows)
      throw usage_error(fmt::format("{}: {}: more than {} GEMMs, the limit on a GEMM list", origin, row.where,
                                    kMaxListRows));
    gemms.push_back(read_row(row, origin));
  };
  json ? json_rows(text, origin, sink) : csv_rows(text, origin, sink);
  if (gemms.empty()) throw usage_error(fmt::format("{} lists no GEMM", origin));

  Workload w;
  w.source = origin;
  // Groups are collected first (their rows may be apart) and added where their first row is.
  std::map<std::string, size_t> group_at;  // group id -> index in `calls`
  std::vector<WorkloadGemm> calls;
  for (const ListGemm& g : gemms) {
    if (!g.group.empty()) {
      const auto it = group_at.find(g.group);
      if (it != group_at.end()) {
        WorkloadGemm& call = calls[it->second];
        if (g.count != call.count)
          throw usage_error(fmt::format("{}: {}, column 'count': {} differs from the {} of group '{}' (a group is one "
                                        "call: its rows share a count)",
                                        origin, g.where, g.count, call.count, g.group));
        if (g.problem.dtype != call.problems.front().dtype || g.problem.layout != call.problems.front().layout)
          throw usage_error(fmt::format("{}: {}: group '{}' mixes dtypes or layouts (a grouped call has one of each)",
                                        origin, g.where, g.group));
        call.problems.push_back(g.problem);
        join_name(call.origin, g.name);
        continue;
      }
      group_at[g.group] = calls.size();
    }
    WorkloadGemm call;
    call.problems = {g.problem};
    call.count = g.count;
    call.origin = g.name.empty() && !g.group.empty() ? "group " + g.group : g.name;
    calls.push_back(std::move(call));
  }
  for (WorkloadGemm& call : calls) w.add(std::move(call));
  return w;
}

Workload load_gemm_list(const std::string& path, const std::string& origin) {
  return parse_gemm_list(read_text_file(path, origin), origin);
}

}  // namespace shapescope
