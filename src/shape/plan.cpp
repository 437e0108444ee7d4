#include "shape/plan.hpp"

#include <charconv>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cstdint>
#include <limits>
#include <string_view>

#include "common/error.hpp"
#include "shape/range.hpp"

namespace shapescope {

namespace {

// Past this a sweep would take days and its plan alone would use a lot of memory; it is almost
// surely a range without a step.
constexpr double kMaxPoints = 1'000'000;
// cuBLAS takes leading dimensions as int.
constexpr int64_t kMaxLeadingDim = std::numeric_limits<int32_t>::max();
static_assert(kMaxStrideOption == kMaxLeadingDim);
// Far beyond any GPU's memory, and low enough that Problem::bytes() cannot overflow int64.
constexpr double kMaxBytes = 0x1p62;

constexpr std::array<std::string_view, 3> kDimOptions = {"--m", "--n", "--k"};

// "4000000" for exact counts, "1.2e+24" once a double no longer holds the count exactly.
std::string count_string(double count) {
  if (count < 0x1p53) return fmt::format("{:.0f}", count);
  return fmt::format("{:.2g}", count);
}

int64_t checked_leading_dim(const std::optional<int64_t>& ld, std::string_view option) {
  if (!ld) return 0;
  if (*ld < 1) throw usage_error(fmt::format("{}: {} must be >= 1", option, *ld));
  if (*ld > kMaxLeadingDim) {
    throw usage_error(fmt::format("{}: {} must be <= {} (cuBLAS takes a 32-bit int)", option, *ld,
                                  kMaxLeadingDim));
  }
  return *ld;
}

// The leading dimension of one operand at one point: explicit, or the natural row length plus
// the padding. `name` is "lda", "ldb" or "ldc" and `operand` "A", "B" or "C", for messages.
int64_t leading_dim(const std::optional<int64_t>& explicit_ld, int64_t row_length, int64_t ld_pad,
                    std::string_view name, std::string_view operand, const Problem& problem) {
  if (explicit_ld) {
    if (*explicit_ld < row_length) {
      throw usage_error(fmt::format("--{}: {} is smaller than {}'s row length {} at {}", name,
                                    *explicit_ld, operand, row_length, problem.shape_string()));
    }
    return *explicit_ld;
  }
  int64_t ld = row_length + ld_pad;
  if (ld > kMaxLeadingDim) {
    throw usage_error(fmt::format("--ld-pad: {} makes {} {} at {}, more than {} (cuBLAS takes a "
                                  "32-bit int)",
                                  ld_pad, name, ld, problem.shape_string(), kMaxLeadingDim));
  }
  return ld;
}

// The options that make one point as large as it is, for a message about its size.
std::string size_culprits(const ProblemForm& form, const Problem& problem) {
  std::vector<std::string_view> names = {form.sizes_from};
  if (problem.batch > 1) names.push_back("--batch");
  if (form.ld_pad > 0) names.push_back("--ld-pad");
  if (form.lda) names.push_back("--lda");
  if (form.ldb) names.push_back("--ldb");
  if (form.ldc) names.push_back("--ldc");
  if (form.offset > 0) names.push_back("--offset");
  return fmt::format("{}", fmt::join(names, ", "));
}

// The options besides the sizes, the recipe and the batch, read and each checked against its own rule.
ProblemForm parse_form(const ShapeOptions& options, const std::string& sizes_from) {
  ProblemForm form;
  form.dtype = dtype_option(options.dtype);
  form.layout = layout_option(options.layout);
  form.ld_pad = options.ld_pad;
  form.lda = options.lda;
  form.ldb = options.ldb;
  form.ldc = options.ldc;
  form.offset = options.offset;
  form.sizes_from = sizes_from;
  check_form(form);
  return form;
}

// Refuses a plan of more than kMaxPoints points, naming the options that multiply up to it.
double checked_point_count(const std::array<std::vector<int64_t>, 3>& dims, const std::array<bool, 3>& given,
                           const std::vector<int64_t>& batches) {
  // Counted in double: a few long lists multiplied together overflow int64.
  double points = double(batches.size());
  std::string culprits;
  std::string factors;
  for (int d = 0; d < 3; ++d) {
    if (!given[d]) continue;
    points *= double(dims[d].size());
    culprits += fmt::format("{}{}", culprits.empty() ? "" : ", ", kDimOptions[d]);
    factors += fmt::format("{}{} {}", factors.empty() ? "" : " x ", kDimOptions[d].substr(2),
                           dims[d].size());
  }
  if (batches.size() > 1) {
    culprits += ", --batch";
    factors += fmt::format(" x batch {}", batches.size());
  }
  if (points > kMaxPoints) {
    throw usage_error(fmt::format(
        "{}: the sweep has {} points ({}), more than {:.0f}; use fewer sizes or a coarser step "
        "(e.g. 1..4096:64 or 64..8192*2)",
        culprits, count_string(points), factors, kMaxPoints));
  }

  return points;
}

// The sizes of a plan: each dimension's values where given; one not given takes the first given
// one's value at each point.
struct Dims {
  std::array<std::vector<int64_t>, 3> values;
  std::array<bool, 3> given{};
  int leader = -1;
};

// The product of the sizes and the options' batches, in the options' form (returned in `form`).
std::vector<Problem> plan_dims(const ShapeOptions& options, const Dims& dims, const std::string& sizes_from,
                               ProblemForm& form) {
  std::vector<int64_t> batches = parse_range(options.batch, "--batch");
  form = parse_form(options, sizes_from);
  const double points = checked_point_count(dims.values, dims.given, batches);
  if (!options.recipe.empty()) {
    form.recipe = recipe_option(options.recipe);
    if (form.dtype != DType::kFp8)
      throw usage_error(fmt::format("--recipe: '{}' is an fp8 recipe; --dtype is {} (give --dtype fp8)", options.recipe,
                                    to_string(form.dtype)));
  }
  std::vector<Problem> problems;
  problems.reserve(static_cast<size_t>(points));
  ProblemForm point = form;
  std::array<int64_t, 3> value{};
  for (int64_t m : dims.values[0]) {
    for (int64_t n : dims.values[1]) {
      for (int64_t k : dims.values[2]) {
        for (int64_t batch : batches) {
          value = {m, n, k};
          for (int d = 0; d < 3; ++d) {
            if (!dims.given[d]) value[d] = value[dims.leader];
          }
          point.batch = batch;
          problems.push_back(form_problem(point, value[0], value[1], value[2]));
        }
      }
    }
  }
  form.batch = batches.front();
  return problems;
}

}  // namespace

void check_form(const ProblemForm& form) {
  // cuBLASLt's FP8 kernels only take the column-major "TN" form, which row-major nt is.
  if (form.dtype == DType::kFp8 && form.layout != Layout::kNT) {
    throw usage_error(fmt::format(
        "--layout: fp8 needs layout nt (A row-major M x K, B stored N x K), got '{}'",
        to_string(form.layout)));
  }

  if (form.ld_pad < 0) {
    throw usage_error(fmt::format("--ld-pad: {} must be >= 0", form.ld_pad));
  }
  if (form.ld_pad > kMaxLeadingDim) {
    throw usage_error(fmt::format("--ld-pad: {} must be <= {} (cuBLAS takes a 32-bit int)",
                                  form.ld_pad, kMaxLeadingDim));
  }
  // Both would set the same leading dimension: refuse rather than let one silently win.
  if (form.ld_pad > 0 && (form.lda || form.ldb || form.ldc)) {
    throw usage_error(fmt::format("--ld-pad: {} cannot be combined with {} (an explicit leading dimension); give "
                                  "one or the other",
                                  form.ld_pad, form.lda ? "--lda" : form.ldb ? "--ldb" : "--ldc"));
  }
  checked_leading_dim(form.lda, "--lda");
  checked_leading_dim(form.ldb, "--ldb");
  checked_leading_dim(form.ldc, "--ldc");
  if (form.offset < 0) {
    throw usage_error(fmt::format("--offset: {} must be >= 0", form.offset));
  }
  if (form.offset > kMaxStrideOption) {
    throw usage_error(fmt::format("--offset: {} must be <= {} (elements)", form.offset, kMaxStrideOption));
  }
}

Problem form_problem(const ProblemForm& form, int64_t m, int64_t n, int64_t k) {
  Problem problem;
  problem.m = m;
  problem.n = n;
  problem.k = k;
  problem.batch = form.batch;
  problem.dtype = form.dtype;
  problem.layout = form.layout;
  problem.lda = leading_dim(form.lda, problem.a_cols(), form.ld_pad, "lda", "A", problem);
  problem.ldb = leading_dim(form.ldb, problem.b_cols(), form.ld_pad, "ldb", "B", problem);
  problem.ldc = leading_dim(form.ldc, problem.n, form.ld_pad, "ldc", "C", problem);
  problem.off_a = form.offset;
  problem.off_b = form.offset;
  problem.off_c = 0;

  // Checked in double before Problem::bytes() is ever called, since in int64 it could
  // overflow for sizes that each pass on their own.
  double in_elements =
      double(problem.off_a) + double(problem.batch) * double(problem.a_rows()) *
                                  double(problem.lda) +
      double(problem.off_b) +
      double(problem.batch) * double(problem.b_rows()) * double(problem.ldb);
  double out_elements = double(problem.batch) * double(problem.m) * double(problem.ldc);
  double bytes = in_elements * input_bytes(problem.dtype) +
                 out_elements * output_bytes(problem.dtype);
  if (bytes > kMaxBytes) {
    throw usage_error(fmt::format(
        "{}: {}'s operands would take {:.2g} bytes, more than any GPU holds",
        size_culprits(form, problem), problem.shape_string(), bytes));
  }
  problem.recipe = form.recipe;
  return problem;
}

std::vector<Problem> plan_problems(const ShapeOptions& options) {
  const std::array<const std::string*, 3> dim_texts = {&options.m, &options.n, &options.k};
  Dims dims;
  std::vector<std::string_view> given;
  for (int d = 0; d < 3; ++d) {
    dims.given[d] = !dim_texts[d]->empty();
    if (!dims.given[d]) continue;
    if (dims.leader < 0) dims.leader = d;
    given.push_back(kDimOptions[d]);
  }
  if (dims.leader < 0) throw usage_error("no size given: use --m, --n or --k (e.g. --n 1..4096)");

  // A dimension not given has no list of its own: it takes the leader's value at each point.
  for (int d = 0; d < 3; ++d)
    dims.values[d] = dims.given[d] ? parse_range(*dim_texts[d], kDimOptions[d]) : std::vector<int64_t>{0};
  ProblemForm form;
  return plan_dims(options, dims, fmt::format("{}", fmt::join(given, ", ")), form);
}

SizePlan plan_size(const ShapeOptions& options, int64_t m, int64_t n, int64_t k, const std::string& sizes_from) {
  Dims dims;
  dims.values = {std::vector<int64_t>{m}, std::vector<int64_t>{n}, std::vector<int64_t>{k}};
  dims.given = {true, true, true};
  dims.leader = 0;
  SizePlan plan;
  plan.problems = plan_dims(options, dims, sizes_from, plan.form);
  return plan;
}

Shard parse_shard(const std::string& text, const std::string& option) {
  const auto refuse = [&] {
    return usage_error(fmt::format("{}: '{}' is not I/N with 1 <= I <= N <= 2^63-1 (e.g. 2/8)", option, text));
  };
  const size_t slash = text.find('/');
  if (slash == std::string::npos) throw refuse();
  // from_chars takes digits only (no sign, no spaces) and reports a number beyond 64 bits.
  const auto number = [&](size_t begin, size_t end) {
    int64_t value = 0;
    const auto [stop, error] = std::from_chars(text.data() + begin, text.data() + end, value);
    if (error != std::errc() || stop != text.data() + end || begin == end) throw refuse();
    return value;
  };
  Shard shard{number(0, slash), number(slash + 1, text.size())};
  if (shard.count < 1 || shard.index < 1 || shard.index > shard.count) throw refuse();
  return shard;
}

std::vector<size_t> shard_positions(size_t plan_size, const Shard& shard) {
  std::vector<size_t> positions;
  if (uint64_t(shard.index - 1) >= plan_size) return positions;
  // Stepping by count from index-1 never overflows: both are below plan_size or stop the loop.
  for (size_t i = size_t(shard.index - 1); i < plan_size; i += size_t(std::min<uint64_t>(uint64_t(shard.count), plan_size)))
    positions.push_back(i);
  return positions;
}

std::vector<Problem> take_shard(const std::vector<Problem>& problems, const std::string& shard) {
  if (shard.empty()) return problems;
  std::vector<Problem> part;
  for (size_t i : shard_positions(problems.size(), parse_shard(shard))) part.push_back(problems[i]);
  return part;
}

}  // namespace shapescope
