#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "shape/plan.hpp"
#include "core/fp8_recipe.hpp"
#include "core/problem.hpp"

namespace shapescope {
namespace {

// The message of the usage error that planning must throw, after checking that it names
// `option` first and contains `value`.
std::string plan_error(const ShapeOptions& options, const std::string& option,
                       const std::string& value) {
  try {
    plan_problems(options);
  } catch (const Error& error) {
    std::string message = error.what();
    EXPECT_EQ(error.code(), ExitCode::kUsage) << message;
    EXPECT_EQ(message.rfind(option, 0), 0u) << message;
    EXPECT_NE(message.find(value), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  }
  ADD_FAILURE() << "the options were accepted";
  return "";
}

ShapeOptions sizes(const std::string& m, const std::string& n, const std::string& k) {
  ShapeOptions options;
  options.m = m;
  options.n = n;
  options.k = k;
  return options;
}

struct Dims {
  int64_t m, n, k, batch;
  bool operator==(const Dims& other) const {
    return m == other.m && n == other.n && k == other.k && batch == other.batch;
  }
};

std::ostream& operator<<(std::ostream& out, const Dims& dims) {
  return out << dims.m << "x" << dims.n << "x" << dims.k << " b" << dims.batch;
}

std::vector<Dims> dims_of(const std::vector<Problem>& problems) {
  std::vector<Dims> dims;
  for (const Problem& problem : problems) {
    dims.push_back({problem.m, problem.n, problem.k, problem.batch});
  }
  return dims;
}

TEST(DTypeLayout, RoundTrip) {
  for (DType dtype : {DType::kBf16, DType::kFp16, DType::kFp32, DType::kTf32, DType::kFp8}) {
    EXPECT_EQ(parse_dtype(to_string(dtype)), dtype);
  }
  for (Layout layout : {Layout::kNN, Layout::kNT, Layout::kTN, Layout::kTT}) {
    EXPECT_EQ(parse_layout(to_string(layout)), layout);
  }
  EXPECT_EQ(to_string(DType::kBf16), "bf16");
  EXPECT_EQ(to_string(DType::kFp8), "fp8");
  EXPECT_EQ(to_string(Layout::kTN), "tn");
}

TEST(DTypeLayout, ParseIsExactLowercase) {
  for (const char* text : {"BF16", "bf8", "", " bf16", "bf16 ", "float"}) {
    EXPECT_FALSE(parse_dtype(text).has_value()) << text;
  }
  for (const char* text : {"NN", "n", "ntt", "", " nt"}) {
    EXPECT_FALSE(parse_layout(text).has_value()) << text;
  }
}

TEST(DTypeLayout, ElementBytes) {
  EXPECT_EQ(input_bytes(DType::kFp8), 1);
  EXPECT_EQ(input_bytes(DType::kBf16), 2);
  EXPECT_EQ(input_bytes(DType::kFp16), 2);
  EXPECT_EQ(input_bytes(DType::kFp32), 4);
  EXPECT_EQ(input_bytes(DType::kTf32), 4);
  EXPECT_EQ(output_bytes(DType::kFp8), 2);
  EXPECT_EQ(output_bytes(DType::kBf16), 2);
  EXPECT_EQ(output_bytes(DType::kFp16), 2);
  EXPECT_EQ(output_bytes(DType::kFp32), 4);
  EXPECT_EQ(output_bytes(DType::kTf32), 4);
}

TEST(ProblemTest, ShapeString) {
  Problem problem;
  problem.m = 4096;
  problem.n = 1024;
  problem.k = 512;
  EXPECT_EQ(problem.shape_string(), "4096x1024x512");
  problem.batch = 8;
  EXPECT_EQ(problem.shape_string(), "4096x1024x512 (batch 8)");
}

TEST(ProblemTest, EqualityComparesEveryField) {
  Problem base;
  base.m = base.n = base.k = 16;
  base.lda = base.ldb = base.ldc = 16;
  EXPECT_TRUE(base == base);
  std::vector<Problem> variants(12, base);
  variants[0].m = 1;
  variants[1].n = 1;
  variants[2].k = 1;
  variants[3].batch = 2;
  variants[4].dtype = DType::kFp16;
  variants[5].layout = Layout::kNT;
  variants[6].lda = 17;
  variants[7].ldb = 17;
  variants[8].ldc = 17;
  variants[9].off_a = 1;
  variants[10].off_b = 1;
  variants[11].off_c = 1;
  for (size_t i = 0; i < variants.size(); ++i) EXPECT_FALSE(variants[i] == base) << i;
}

TEST(PlanProblems, OneDimGivesSquareProblems) {
  std::vector<Problem> problems = plan_problems(sizes("", "1..3", ""));
  EXPECT_EQ(dims_of(problems), (std::vector<Dims>{{1, 1, 1, 1}, {2, 2, 2, 1}, {3, 3, 3, 1}}));
  for (const Problem& problem : problems) {
    EXPECT_EQ(problem.dtype, DType::kBf16);
    EXPECT_EQ(problem.layout, Layout::kNN);
    EXPECT_EQ(problem.lda, problem.k);
    EXPECT_EQ(problem.ldb, problem.n);
    EXPECT_EQ(problem.ldc, problem.n);
    EXPECT_EQ(problem.off_a, 0);
    EXPECT_EQ(problem.off_b, 0);
    EXPECT_EQ(problem.off_c, 0);
  }
}

TEST(PlanProblems, OnlyKGiven) {
  EXPECT_EQ(dims_of(plan_problems(sizes("", "", "2,5"))),
            (std::vector<Dims>{{2, 2, 2, 1}, {5, 5, 5, 1}}));
}

TEST(PlanProblems, GivenDimsFormAProduct) {
  EXPECT_EQ(dims_of(plan_problems(sizes("4096", "1..8:4", "4096"))),
            (std::vector<Dims>{{4096, 1, 4096, 1}, {4096, 5, 4096, 1}}));
  EXPECT_EQ(dims_of(plan_problems(sizes("1,2", "3,4", "5,6"))),
            (std::vector<Dims>{{1, 3, 5, 1},
                               {1, 3, 6, 1},
                               {1, 4, 5, 1},
                               {1, 4, 6, 1},
                               {2, 3, 5, 1},
                               {2, 3, 6, 1},
                               {2, 4, 5, 1},
                               {2, 4, 6, 1}}));
}

TEST(PlanProblems, FollowerTakesFirstGivenDim) {
  // k follows m.
  EXPECT_EQ(dims_of(plan_problems(sizes("2,3", "10,20", ""))),
            (std::vector<Dims>{{2, 10, 2, 1}, {2, 20, 2, 1}, {3, 10, 3, 1}, {3, 20, 3, 1}}));
  // m follows n.
  EXPECT_EQ(dims_of(plan_problems(sizes("", "2,3", "7"))),
            (std::vector<Dims>{{2, 2, 7, 1}, {3, 3, 7, 1}}));
  // n follows m.
  EXPECT_EQ(dims_of(plan_problems(sizes("4,8", "", "16"))),
            (std::vector<Dims>{{4, 4, 16, 1}, {8, 8, 16, 1}}));
}

TEST(PlanProblems, BatchIsInnermost) {
  ShapeOptions options = sizes("1,2", "", "");
  options.batch = "1,4";
  EXPECT_EQ(dims_of(plan_problems(options)),
            (std::vector<Dims>{{1, 1, 1, 1}, {1, 1, 1, 4}, {2, 2, 2, 1}, {2, 2, 2, 4}}));
}

TEST(PlanProblems, DTypeAndLayoutParsed) {
  ShapeOptions options = sizes("", "8", "");
  options.dtype = "fp32";
  options.layout = "tt";
  Problem problem = plan_problems(options).at(0);
  EXPECT_EQ(problem.dtype, DType::kFp32);
  EXPECT_EQ(problem.layout, Layout::kTT);
}

// M=2, N=3, K=5 so every leading dimension tells which size it came from.
Problem plan_one(const std::string& layout, int64_t ld_pad = 0) {
  ShapeOptions options = sizes("2", "3", "5");
  options.layout = layout;
  options.ld_pad = ld_pad;
  std::vector<Problem> problems = plan_problems(options);
  EXPECT_EQ(problems.size(), 1u);
  return problems.at(0);
}

TEST(PlanProblems, NaturalLeadingDims) {
  Problem nn = plan_one("nn");
  EXPECT_EQ(nn.lda, 5);  // A is M x K
  EXPECT_EQ(nn.ldb, 3);  // B is K x N
  EXPECT_EQ(nn.ldc, 3);
  Problem nt = plan_one("nt");
  EXPECT_EQ(nt.lda, 5);  // A is M x K
  EXPECT_EQ(nt.ldb, 5);  // B stored N x K
  EXPECT_EQ(nt.ldc, 3);
  Problem tn = plan_one("tn");
  EXPECT_EQ(tn.lda, 2);  // A stored K x M
  EXPECT_EQ(tn.ldb, 3);  // B is K x N
  EXPECT_EQ(tn.ldc, 3);
  Problem tt = plan_one("tt");
  EXPECT_EQ(tt.lda, 2);
  EXPECT_EQ(tt.ldb, 5);
  EXPECT_EQ(tt.ldc, 3);
}

TEST(PlanProblems, LdPadAddsToAllThree) {
  Problem nt = plan_one("nt", 8);
  EXPECT_EQ(nt.lda, 13);
  EXPECT_EQ(nt.ldb, 13);
  EXPECT_EQ(nt.ldc, 11);
  Problem tn = plan_one("tn", 1);
  EXPECT_EQ(tn.lda, 3);
  EXPECT_EQ(tn.ldb, 4);
  EXPECT_EQ(tn.ldc, 4);
}

TEST(PlanProblems, ExplicitLeadingDimsAreTakenAsGiven) {
  ShapeOptions options = sizes("2", "3", "5");
  options.lda = 64;
  options.ldc = 3;
  Problem problem = plan_problems(options).at(0);
  EXPECT_EQ(problem.lda, 64);
  EXPECT_EQ(problem.ldb, 3);  // not given: natural
  EXPECT_EQ(problem.ldc, 3);
  options.ldb = 3;  // exactly the row length is fine
  EXPECT_EQ(plan_problems(options).at(0).ldb, 3);
}

TEST(PlanProblems, PaddingWithAnExplicitLeadingDimIsRefused) {
  // Both would set the same leading dimension; neither may silently win.
  for (auto set : {+[](ShapeOptions& o) { o.lda = 64; }, +[](ShapeOptions& o) { o.ldb = 64; },
                   +[](ShapeOptions& o) { o.ldc = 64; }}) {
    ShapeOptions options = sizes("2", "3", "5");
    options.ld_pad = 8;
    set(options);
    try {
      plan_problems(options);
      ADD_FAILURE() << "not refused";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kUsage);
      EXPECT_NE(std::string(e.what()).find("--ld-pad: 8 cannot be combined with --ld"), std::string::npos) << e.what();
    }
  }
}

TEST(PlanProblems, OffsetAppliesToAAndB) {
  ShapeOptions options = sizes("", "4", "");
  options.offset = 7;
  Problem problem = plan_problems(options).at(0);
  EXPECT_EQ(problem.off_a, 7);
  EXPECT_EQ(problem.off_b, 7);
  EXPECT_EQ(problem.off_c, 0);
}

TEST(PlanProblems, SpansAndBytesByHand) {
  // bf16 nn, M=2 N=3 K=4, batch 2, pad 1, offset 5:
  // lda = 4+1 = 5, stride_a = 2*5 = 10, a_span = 5 + 2*10 = 25
  // ldb = 3+1 = 4, stride_b = 4*4 = 16, b_span = 5 + 2*16 = 37
  // ldc = 3+1 = 4, stride_c = 2*4 = 8,  c_span = 0 + 2*8 = 16
  // bytes = (25 + 37) * 2 + 16 * 2 = 156
  ShapeOptions options = sizes("2", "3", "4");
  options.batch = "2";
  options.ld_pad = 1;
  options.offset = 5;
  Problem problem = plan_problems(options).at(0);
  EXPECT_EQ(problem.stride_a(), 10);
  EXPECT_EQ(problem.stride_b(), 16);
  EXPECT_EQ(problem.stride_c(), 8);
  EXPECT_EQ(problem.a_span(), 25);
  EXPECT_EQ(problem.b_span(), 37);
  EXPECT_EQ(problem.c_span(), 16);
  EXPECT_EQ(problem.bytes(), 156);
  EXPECT_DOUBLE_EQ(problem.flops(), 2.0 * 2 * 3 * 4 * 2);

  // fp8 nt, same sizes: B is stored 3 x 4, ldb = 4+1 = 5, stride_b = 15, b_span = 5 + 30 = 35;
  // bytes = (25 + 35) * 1 + 16 * 2 = 92 (C is bf16).
  options.dtype = "fp8";
  options.layout = "nt";
  Problem fp8 = plan_problems(options).at(0);
  EXPECT_EQ(fp8.a_span(), 25);
  EXPECT_EQ(fp8.b_span(), 35);
  EXPECT_EQ(fp8.c_span(), 16);
  EXPECT_EQ(fp8.bytes(), 92);
}

TEST(PlanProblemsError, NoSizeGiven) {
  EXPECT_EQ(plan_error(ShapeOptions{}, "no size given", "--n"),
            "no size given: use --m, --n or --k (e.g. --n 1..4096)");
}

TEST(PlanProblemsError, BadRangeNamesItsOption) {
  plan_error(sizes("1..x", "", ""), "--m: ", "'1..x'");
  plan_error(sizes("", "4096..1", ""), "--n: ", "'4096..1'");
  plan_error(sizes("4", "", "0"), "--k: ", "'0'");
  ShapeOptions options = sizes("4", "", "");
  options.batch = "0";
  plan_error(options, "--batch: ", "'0'");
  options.batch = "";
  plan_error(options, "--batch: ", "''");
}

TEST(PlanProblemsError, UnknownDType) {
  ShapeOptions options = sizes("", "8", "");
  options.dtype = "bf8";
  EXPECT_EQ(plan_error(options, "--dtype: ", "'bf8'"),
            "--dtype: 'bf8' is not a dtype (bf16, fp16, fp32, tf32, fp8)");
  options.dtype = "BF16";
  plan_error(options, "--dtype: ", "'BF16'");
}

TEST(PlanProblemsError, UnknownLayout) {
  ShapeOptions options = sizes("", "8", "");
  options.layout = "xn";
  EXPECT_EQ(plan_error(options, "--layout: ", "'xn'"),
            "--layout: 'xn' is not a layout (nn, nt, tn, tt)");
}

TEST(PlanProblemsError, Fp8NeedsNT) {
  ShapeOptions options = sizes("", "16", "");
  options.dtype = "fp8";
  EXPECT_EQ(plan_error(options, "--layout: ", "'nn'"),
            "--layout: fp8 needs layout nt (A row-major M x K, B stored N x K), got 'nn'");
  for (std::string layout : {"tn", "tt"}) {
    options.layout = layout;
    plan_error(options, "--layout: ", "'" + layout + "'");
  }
  options.layout = "nt";
  EXPECT_EQ(plan_problems(options).at(0).dtype, DType::kFp8);
}

TEST(PlanProblemsError, LeadingDimTooSmall) {
  ShapeOptions options = sizes("4096", "4096", "4096");
  options.lda = 100;
  EXPECT_EQ(plan_error(options, "--lda: ", "100"),
            "--lda: 100 is smaller than A's row length 4096 at 4096x4096x4096");
}

TEST(PlanProblemsError, LeadingDimNamesFirstFailingPoint) {
  ShapeOptions options = sizes("", "1..8", "");
  options.ldc = 5;
  EXPECT_EQ(plan_error(options, "--ldc: ", "5"),
            "--ldc: 5 is smaller than C's row length 6 at 6x6x6");
  options = sizes("", "1..8", "");
  options.layout = "nt";
  options.batch = "2";
  options.ldb = 3;
  EXPECT_EQ(plan_error(options, "--ldb: ", "3"),
            "--ldb: 3 is smaller than B's row length 4 at 4x4x4 (batch 2)");
  // tn: A is stored K x M, so lda is checked against M.
  options = sizes("10", "", "2");
  options.layout = "tn";
  options.lda = 5;
  plan_error(options, "--lda: ", "5");
}

TEST(PlanProblemsError, LeadingDimNotPositive) {
  ShapeOptions options = sizes("", "8", "");
  options.lda = 0;
  EXPECT_EQ(plan_error(options, "--lda: ", "0"), "--lda: 0 must be >= 1");
  options.lda.reset();
  options.ldb = -3;
  plan_error(options, "--ldb: ", "-3");
  options.ldb.reset();
  options.ldc = -1;
  plan_error(options, "--ldc: ", "-1");
}

TEST(PlanProblemsError, LeadingDimTooLarge) {
  ShapeOptions options = sizes("", "8", "");
  options.lda = 2147483648;
  plan_error(options, "--lda: ", "2147483648");
  options.lda.reset();
  options.ld_pad = 2147483647;
  plan_error(options, "--ld-pad: ", "2147483647");
}

TEST(PlanProblemsError, NegativePadding) {
  ShapeOptions options = sizes("", "8", "");
  options.ld_pad = -1;
  EXPECT_EQ(plan_error(options, "--ld-pad: ", "-1"), "--ld-pad: -1 must be >= 0");
}

TEST(PlanProblemsError, NegativeOffset) {
  ShapeOptions options = sizes("", "8", "");
  options.offset = -16;
  EXPECT_EQ(plan_error(options, "--offset: ", "-16"), "--offset: -16 must be >= 0");
}

TEST(PlanProblemsError, TooManyPoints) {
  plan_error(sizes("1..1000", "1..1001", ""), "--m, --n: ", "1001000 points");
  ShapeOptions options = sizes("1..100", "1..100", "1..100");
  options.batch = "1..2";
  plan_error(options, "--m, --n, --k, --batch: ", "2000000 points");
  // Products too large for int64 are still reported, not overflowed.
  plan_error(sizes("1..1000000", "1..1000000", "1..1000000"), "--m, --n, --k: ", "points");
}

TEST(PlanProblemsError, TooLargeToAddress) {
  ShapeOptions options = sizes("2147483647", "", "");
  options.batch = "2147483647";
  plan_error(options, "--m, --batch: ", "2147483647x2147483647x2147483647 (batch 2147483647)");
  options = sizes("", "8", "");
  options.offset = int64_t(1) << 62;  // past the offset's own limit, which every command shares
  plan_error(options, "--offset: ", "4611686018427387904 must be <= 2147483647 (elements)");
  options.offset = 2147483647;
  options.n = "2147483647";
  plan_error(options, "--n, --offset: ", "2147483647x2147483647x2147483647");
}

// Every position of a plan is taken by exactly one of the N shards, for N = 1..16 and plan sizes
// around those N (fewer points than shards included); and the parts of a shard (--devices within
// --shard) take exactly the shard's positions, once each.
// explain's target and neighbours: the options read once into a form, every other size planned from
// numbers in it, as plan_problems would plan that size from the same options.
TEST(PlanSize, NeighboursInTheFormMatchThePlanOfTheirSize) {
  ShapeOptions options;
  options.dtype = "fp8";
  options.layout = "nt";
  options.recipe = "row";
  options.batch = "3";
  options.lda = 5000;
  options.offset = 2;
  const SizePlan target = plan_size(options, 4096, 1000, 4096, "SHAPE");
  ASSERT_EQ(target.problems.size(), 1u);
  EXPECT_EQ(target.form.dtype, DType::kFp8);
  EXPECT_EQ(target.form.layout, Layout::kNT);
  EXPECT_EQ(recipe_text(target.form.recipe), "row");
  EXPECT_EQ(target.form.batch, 3);
  for (const auto& [m, n, k] : {std::array<int64_t, 3>{4096, 1000, 4096}, {4095, 1001, 4096}, {4097, 1000, 4100}}) {
    ShapeOptions sized = options;
    sized.m = std::to_string(m);
    sized.n = std::to_string(n);
    sized.k = std::to_string(k);
    EXPECT_EQ(form_problem(target.form, m, n, k), plan_problems(sized).at(0)) << m << "x" << n << "x" << k;
  }
  EXPECT_EQ(form_problem(target.form, 4096, 1000, 4096), target.problems.front());
  // An explicit lda too small for a larger K is the planner's refusal, for that size only.
  try {
    form_problem(target.form, 4096, 1000, 5001);
    ADD_FAILURE() << "lda 5000 taken for K = 5001";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "--lda: 5000 is smaller than A's row length 5001 at 4096x1000x5001 (batch 3)");
  }
}

TEST(PlanSize, RefusesAsThePlanDoes) {
  ShapeOptions options;
  options.batch = "1..2";
  EXPECT_EQ(plan_size(options, 8, 8, 8, "SHAPE").problems.size(), 2u);
  options.batch = "1";
  options.dtype = "fp8";
  try {
    plan_size(options, 8, 8, 8, "SHAPE");
    ADD_FAILURE() << "fp8 nn planned";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "--layout: fp8 needs layout nt (A row-major M x K, B stored N x K), got 'nn'");
  }
  ProblemForm form;
  form.ld_pad = 4;
  form.ldb = 100;
  EXPECT_THROW(check_form(form), Error);
  // A size no GPU holds names what gave it.
  try {
    form_problem(ProblemForm{}, 2000000000, 2000000000, 2000000000);
    ADD_FAILURE() << "2e9 cubed planned";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("SHAPE: 2000000000x2000000000x2000000000's operands would take", 0), 0u) << e.what();
  }
}

TEST(Shard, EveryPointExactlyOnce) {
  for (int64_t n = 1; n <= 16; ++n) {
    for (size_t size : {size_t(0), size_t(1), size_t(n - 1), size_t(n), size_t(n + 1), size_t(3 * n + 2), size_t(1000)}) {
      std::vector<int> taken(size, 0);
      for (int64_t i = 1; i <= n; ++i)
        for (size_t position : shard_positions(size, Shard{i, n})) {
          ASSERT_LT(position, size);
          ++taken[position];
        }
      for (size_t p = 0; p < size; ++p) ASSERT_EQ(taken[p], 1) << "N = " << n << ", size " << size << ", position " << p;
    }
  }
}

TEST(Shard, TakeShardMatchesThePositions) {
  ShapeOptions options;
  options.n = "1..37";
  const std::vector<Problem> plan = plan_problems(options);
  const std::vector<Problem> part = take_shard(plan, "3/5");
  const std::vector<size_t> positions = shard_positions(plan.size(), Shard{3, 5});
  ASSERT_EQ(part.size(), positions.size());
  for (size_t i = 0; i < part.size(); ++i) EXPECT_EQ(part[i], plan[positions[i]]);
  EXPECT_EQ(take_shard(plan, "").size(), plan.size());
  for (const char* bad : {"0/4", "5/4", "1/0", "a/4", "1/", "/4", "-1/4", "1/4/2", " 1/4", "99999999999999999999/1"})
    EXPECT_THROW(parse_shard(bad), Error) << bad;
  EXPECT_EQ(parse_shard("9223372036854775807/9223372036854775807").index, INT64_MAX);
}

}  // namespace
}  // namespace shapescope
