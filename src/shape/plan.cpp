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
std::string size_culprits(const ShapeOptions& options, const Problem& problem) {
  std::vector<std::string_view> names;
  const std::array<const std::string*, 3> dim_texts = {&options.m, &options.n, &options.k};
  if (!options.sizes_from.empty()) names.push_back(options.sizes_from);
  for (size_t d = 0; d < dim_texts.size() && options.sizes_from.empty(); ++d) {
    if (!dim_texts[d]->empty()) names.push_back(kDimOptions[d]);
  }
  if (problem.batch > 1) names.push_back("--batch");
  if (options.ld_pad > 0) names.push_back("--ld-pad");
  if (options.lda) names.push_back("--lda");
  if (options.ldb) names.push_back("--ldb");
  if (options.ldc) names.push_back("--ldc");
  if (options.offset > 0) names.push_back("--offset");
  return fmt::format("{}", fmt::join(names, ", "));
}

// The options besides the sizes, each against its own rule; returns the dtype and layout.
std::pair<DType, Layout> checked_options(const ShapeOptions& options) {
  const DType dtype = dtype_option(options.dtype);
  const Layout layout = layout_option(options.layout);
  // cuBLASLt's FP8 kernels only take the column-major "TN" form, which row-major nt is.
  if (dtype == DType::kFp8 && layout != Layout::kNT) {
    throw usage_error(fmt::format(
        "--layout: fp8 needs layout nt (A row-major M x K, B stored N x K), got '{}'",
        options.layout));
  }

  if (options.ld_pad < 0) {
    throw usage_error(fmt::format("--ld-pad: {} must be >= 0", options.ld_pad));
  }
  if (options.ld_pad > kMaxLeadingDim) {
    throw usage_error(fmt::format("--ld-pad: {} must be <= {} (cuBLAS takes a 32-bit int)",
                                  options.ld_pad, kMaxLeadingDim));
  }
  // Both would set the same leading dimension: refuse rather than let one silently win.
  if (options.ld_pad > 0 && (options.lda || options.ldb || options.ldc)) {
    throw usage_error(fmt::format("--ld-pad: {} cannot be combined with {} (an explicit leading dimension); give "
                                  "one or the other",
                                  options.ld_pad, options.lda ? "--lda" : options.ldb ? "--ldb" : "--ldc"));
  }
  checked_leading_dim(options.lda, "--lda");
  checked_leading_dim(options.ldb, "--ldb");
  checked_leading_dim(options.ldc, "--ldc");
  if (options.offset < 0) {
    throw usage_error(fmt::format("--offset: {} must be >= 0", options.offset));
  }
  if (options.offset > kMaxStrideOption) {
    throw usage_error(fmt::format("--offset: {} must be <= {} (elements)", options.offset, kMaxStrideOption));
  }

  return {dtype, layout};
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

// One problem of the plan: its leading dimensions and offsets from the options; refused when its
// operands could not fit in any GPU's memory.
Problem make_problem(const ShapeOptions& options, int64_t m, int64_t n, int64_t k, int64_t batch, DType dtype,
                     Layout layout) {
  Problem problem;
  problem.m = m;
  problem.n = n;
  problem.k = k;
  problem.batch = batch;
  problem.dtype = dtype;
  problem.layout = layout;
  problem.lda =
      leading_dim(options.lda, problem.a_cols(), options.ld_pad, "lda", "A", problem);
  problem.ldb =
      leading_dim(options.ldb, problem.b_cols(), options.ld_pad, "ldb", "B", problem);
  problem.ldc = leading_dim(options.ldc, problem.n, options.ld_pad, "ldc", "C", problem);
  problem.off_a = options.offset;
  problem.off_b = options.offset;
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
        size_culprits(options, problem), problem.shape_string(), bytes));
  }
  return problem;
}

}  // namespace

std::vector<Problem> plan_problems(const ShapeOptions& options) {
  const std::array<const std::string*, 3> dim_texts = {&options.m, &options.n, &options.k};
  int leader = -1;
  for (int d = 0; d < 3; ++d) {
    if (!dim_texts[d]->empty()) {
      leader = d;
      break;
    }
  }
  if (leader < 0) throw usage_error("no size given: use --m, --n or --k (e.g. --n 1..4096)");

  // A dimension not given has no list of its own: it takes the leader's value at each point.
  std::array<std::vector<int64_t>, 3> dims;
  std::array<bool, 3> given{};
  for (int d = 0; d < 3; ++d) {
    given[d] = !dim_texts[d]->empty();
    dims[d] = given[d] ? parse_range(*dim_texts[d], kDimOptions[d]) : std::vector<int64_t>{0};
  }
  std::vector<int64_t> batches = parse_range(options.batch, "--batch");

  const auto [dtype, layout] = checked_options(options);
  const double points = checked_point_count(dims, given, batches);

  std::vector<Problem> problems;
  Fp8Recipe recipe;
  if (!options.recipe.empty()) {
    recipe = recipe_option(options.recipe);
    if (dtype != DType::kFp8)
      throw usage_error(fmt::format("--recipe: '{}' is an fp8 recipe; --dtype is {} (give --dtype fp8)", options.recipe,
                                    to_string(dtype)));
  }
  problems.reserve(static_cast<size_t>(points));
  std::array<int64_t, 3> value{};
  for (int64_t m : dims[0]) {
    for (int64_t n : dims[1]) {
      for (int64_t k : dims[2]) {
        for (int64_t batch : batches) {
          value = {m, n, k};
          for (int d = 0; d < 3; ++d) {
            if (!given[d]) value[d] = value[leader];
          }
          problems.push_back(make_problem(options, value[0], value[1], value[2], batch, dtype, layout));
          problems.back().recipe = recipe;
        }
      }
    }
  }
  return problems;
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
