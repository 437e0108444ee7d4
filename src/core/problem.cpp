#include "core/problem.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <functional>

#include "common/error.hpp"

namespace shapescope {

namespace {

// Reached only if an enum holds a value outside its enumerators, which is a bug, not bad input.
[[noreturn]] void unknown_enum(const char* what, int value) {
  throw Error(ExitCode::kInternal, fmt::format("internal error: unknown {} value {}", what, value));
}

}  // namespace

std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::kBf16: return "bf16";
    case DType::kFp16: return "fp16";
    case DType::kFp32: return "fp32";
    case DType::kTf32: return "tf32";
    case DType::kFp8: return "fp8";
  }
  unknown_enum("DType", static_cast<int>(dtype));
}

std::string_view to_string(Layout layout) {
  switch (layout) {
    case Layout::kNN: return "nn";
    case Layout::kNT: return "nt";
    case Layout::kTN: return "tn";
    case Layout::kTT: return "tt";
  }
  unknown_enum("Layout", static_cast<int>(layout));
}

std::optional<DType> parse_dtype(std::string_view text) {
  for (DType dtype : {DType::kBf16, DType::kFp16, DType::kFp32, DType::kTf32, DType::kFp8}) {
    if (text == to_string(dtype)) return dtype;
  }
  return std::nullopt;
}

std::optional<Layout> parse_layout(std::string_view text) {
  for (Layout layout : {Layout::kNN, Layout::kNT, Layout::kTN, Layout::kTT}) {
    if (text == to_string(layout)) return layout;
  }
  return std::nullopt;
}

DType dtype_option(std::string_view text) {
  const std::optional<DType> dtype = parse_dtype(text);
  if (!dtype) throw usage_error(fmt::format("--dtype: '{}' is not a dtype (bf16, fp16, fp32, tf32, fp8)", text));
  return *dtype;
}

Layout layout_option(std::string_view text) {
  const std::optional<Layout> layout = parse_layout(text);
  if (!layout) throw usage_error(fmt::format("--layout: '{}' is not a layout (nn, nt, tn, tt)", text));
  return *layout;
}

int input_bytes(DType dtype) {
  switch (dtype) {
    case DType::kFp8: return 1;
    case DType::kBf16:
    case DType::kFp16: return 2;
    case DType::kFp32:
    case DType::kTf32: return 4;
  }
  unknown_enum("DType", static_cast<int>(dtype));
}

int output_bytes(DType dtype) {
  // cuBLASLt's FP8 GEMMs are run with a bf16 output, so C is twice as wide as A and B.
  if (dtype == DType::kFp8) return 2;
  return input_bytes(dtype);
}

int min_compute_capability(DType dtype) {
  switch (dtype) {
    case DType::kBf16: return 80;
    case DType::kTf32: return 80;
    case DType::kFp8: return 89;
    case DType::kFp16: return 53;
    case DType::kFp32: return 50;
  }
  unknown_enum("DType", static_cast<int>(dtype));
}

bool GroupShape::operator==(const GroupShape& o) const {
  return m == o.m && n == o.n && k == o.k && lda == o.lda && ldb == o.ldb && ldc == o.ldc;
}

namespace {

// Group starts are rounded up to this many bytes.
constexpr int64_t kGroupAlignBytes = 16;

int64_t round_up(int64_t elements, int element_bytes) {
  const int64_t unit = std::max<int64_t>(1, kGroupAlignBytes / element_bytes);
  return (elements + unit - 1) / unit * unit;
}

// Where group g starts (g == groups.size(): the end of the last one), for one operand whose group
// size is `elements(group)`.
template <class Elements>
int64_t group_start(const Problem& p, size_t g, int element_bytes, Elements elements) {
  int64_t at = 0;
  for (size_t i = 0; i < g && i < p.groups.size(); ++i) at = round_up(at + elements(p.group(i)), element_bytes);
  return at;
}

// "1025..1026", or "1025" when the groups agree.
template <class Get>
std::string group_range(const std::vector<GroupShape>& groups, Get get) {
  const auto [lo, hi] = std::minmax_element(groups.begin(), groups.end(),
                                            [&](const GroupShape& a, const GroupShape& b) { return get(a) < get(b); });
  return get(*lo) == get(*hi) ? std::to_string(get(*lo)) : fmt::format("{}..{}", get(*lo), get(*hi));
}

}  // namespace

Problem Problem::group(size_t g) const {
  const GroupShape& s = groups.at(g);
  Problem p;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.lda = s.lda;
  p.ldb = s.ldb;
  p.ldc = s.ldc;
  p.dtype = dtype;
  p.layout = layout;
  return p;
}

int64_t Problem::group_a_start(size_t g) const {
  return group_start(*this, g, input_bytes(dtype), [](const Problem& q) { return q.a_rows() * q.lda; });
}
int64_t Problem::group_b_start(size_t g) const {
  return group_start(*this, g, input_bytes(dtype), [](const Problem& q) { return q.b_rows() * q.ldb; });
}
int64_t Problem::group_c_start(size_t g) const {
  return group_start(*this, g, output_bytes(dtype), [](const Problem& q) { return q.m * q.ldc; });
}

int64_t Problem::a_span() const { return grouped() ? group_a_start(groups.size()) : off_a + batch * stride_a(); }
int64_t Problem::b_span() const { return grouped() ? group_b_start(groups.size()) : off_b + batch * stride_b(); }
int64_t Problem::c_span() const { return grouped() ? group_c_start(groups.size()) : off_c + batch * stride_c(); }

double Problem::flops() const {
  if (!grouped()) return 2.0 * double(m) * double(n) * double(k) * double(batch);
  double total = 0;
  for (const GroupShape& g : groups) total += 2.0 * double(g.m) * double(g.n) * double(g.k);
  return total;
}

std::string Problem::shape_string() const {
  if (cast != CastOperand::kNone) {
    const bool a = cast == CastOperand::kA;
    const int64_t rows = a ? m : n;
    const bool transposes = a ? a_transposed() : !b_transposed();
    return fmt::format("cast {} {}x{}{}", a ? "A" : "B", rows, k, transposes ? fmt::format(" (from {}x{})", k, rows) : "");
  }
  if (grouped())
    return fmt::format("grouped {} x {}x{}x{}", groups.size(), group_range(groups, [](const GroupShape& g) { return g.m; }),
                       group_range(groups, [](const GroupShape& g) { return g.n; }),
                       group_range(groups, [](const GroupShape& g) { return g.k; }));
  if (batch > 1) return fmt::format("{}x{}x{} (batch {})", m, n, k, batch);
  return fmt::format("{}x{}x{}", m, n, k);
}

bool Problem::operator==(const Problem& other) const {
  return m == other.m && n == other.n && k == other.k && batch == other.batch &&
         dtype == other.dtype && layout == other.layout && lda == other.lda &&
         ldb == other.ldb && ldc == other.ldc && off_a == other.off_a && off_b == other.off_b &&
         off_c == other.off_c && groups == other.groups && recipe == other.recipe && cast == other.cast;
}

namespace {
// boost::hash_combine's mixing step.
void combine(size_t& seed, int64_t value) {
  seed ^= std::hash<int64_t>{}(value) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}
}  // namespace

size_t hash_value(const Problem& p) {
  size_t seed = 0;
  for (const int64_t v : {p.m, p.n, p.k, p.batch, int64_t(p.dtype), int64_t(p.layout), p.lda, p.ldb, p.ldc, p.off_a,
                          p.off_b, p.off_c, int64_t(p.groups.size())})
    combine(seed, v);
  for (const GroupShape& g : p.groups)
    for (const int64_t v : {g.m, g.n, g.k, g.lda, g.ldb, g.ldc}) combine(seed, v);
  return seed;
}

Problem grouped_problem(const std::vector<Problem>& groups) {
  if (groups.empty()) throw Error(ExitCode::kInternal, "internal error: a grouped call without groups");
  if (groups.size() == 1) return groups.front();
  Problem p = groups.front();
  for (const Problem& g : groups) {
    if (g.dtype != p.dtype || g.layout != p.layout || g.batch != 1 || g.grouped() || g.off_a || g.off_b || g.off_c)
      throw Error(ExitCode::kInternal,
                  fmt::format("internal error: {} cannot be a group of a grouped call of {} {}", g.shape_string(),
                              to_string(p.dtype), to_string(p.layout)));
    p.groups.push_back({g.m, g.n, g.k, g.lda, g.ldb, g.ldc});
  }
  return p;
}

std::string groups_text(const Problem& p) {
  std::string out;
  for (const GroupShape& g : p.groups)
    out += fmt::format("{}{}x{}x{}/{}/{}/{}", out.empty() ? "" : ";", g.m, g.n, g.k, g.lda, g.ldb, g.ldc);
  return out;
}

std::optional<std::vector<GroupShape>> parse_groups(std::string_view text) {
  std::vector<GroupShape> out;
  if (text.empty()) return out;
  const char* at = text.data();
  const char* end = text.data() + text.size();
  // One positive number, then the separator that must follow it ('\0': the end of a group).
  auto number = [&](int64_t& value, char separator) {
    const auto [next, error] = std::from_chars(at, end, value);
    if (error != std::errc() || value < 1) return false;
    at = next;
    if (separator == '\0') return at == end || *at == ';';
    if (at == end || *at != separator) return false;
    ++at;
    return true;
  };
  while (at < end) {
    GroupShape g;
    if (!number(g.m, 'x') || !number(g.n, 'x') || !number(g.k, '/') || !number(g.lda, '/') || !number(g.ldb, '/') ||
        !number(g.ldc, '\0'))
      return std::nullopt;
    out.push_back(g);
    if (at < end && ++at == end) return std::nullopt;  // a trailing ';'
  }
  if (out.size() < 2) return std::nullopt;  // one group is an ordinary problem
  return out;
}

namespace {

int64_t round_up_ld(int64_t cols, int element_bytes, int row_bytes) {
  const int64_t step = std::max<int64_t>(1, row_bytes / element_bytes);
  return (cols + step - 1) / step * step;
}

bool misaligned(int64_t ld, int64_t offset, int element_bytes, int bytes) {
  return (ld * element_bytes) % bytes != 0 || (offset * element_bytes) % bytes != 0;
}

}  // namespace

Problem aligned_layout(const Problem& p, int row_bytes) {
  Problem q = p;
  q.lda = round_up_ld(p.a_cols(), input_bytes(p.dtype), row_bytes);
  q.ldb = round_up_ld(p.b_cols(), input_bytes(p.dtype), row_bytes);
  q.ldc = round_up_ld(p.n, output_bytes(p.dtype), row_bytes);
  q.off_a = q.off_b = q.off_c = 0;
  return q;
}

OperandCopies unaligned_operands(const Problem& p, int bytes) {
  return {misaligned(p.lda, p.off_a, input_bytes(p.dtype), bytes),
          misaligned(p.ldb, p.off_b, input_bytes(p.dtype), bytes),
          misaligned(p.ldc, p.off_c, output_bytes(p.dtype), bytes)};
}

}  // namespace shapescope
