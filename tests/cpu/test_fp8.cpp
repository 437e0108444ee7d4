// fp8 recipes in plain C++: the recipes' names, the scales' layouts cuBLASLt reads (the arithmetic
// the cast and check kernels share through SHAPESCOPE_HD), what cuBLASLt refuses and why, the casts a
// GEMM pays in a step, the recipe read from a trace's _scaled_mm, the recipe in the store's key.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "core/fp8.hpp"
#include "core/numerics.hpp"
#include "model/config_workload.hpp"
#include "model/explain_fp8.hpp"
#include "model/fp8_steps.hpp"
#include "model/pad.hpp"
#include "model/trace_fp8.hpp"
#include "model/workload.hpp"
#include "model_util.hpp"
#include "shape/plan.hpp"

namespace shapescope {
namespace {

Problem gemm(int64_t m, int64_t n, int64_t k, Layout layout = Layout::kNT, DType dtype = DType::kBf16) {
  return packed_problem(m, n, k, layout, dtype);
}

Problem fp8(int64_t m, int64_t n, int64_t k, Fp8Scaling scaling) {
  Fp8Recipe r;
  r.scaling = scaling;
  return fp8_problem(gemm(m, n, k), r);
}

TEST(Fp8Recipe, NamesRoundTripAndBadOnesAreRefusedNamingTheOption) {
  for (const char* text : {"tensor", "row", "block", "block-1x128", "tensor:e5m2xe4m3", "block:e4m3xe5m2"}) {
    const std::optional<Fp8Recipe> r = parse_recipe(text);
    ASSERT_TRUE(r) << text;
    EXPECT_EQ(recipe_text(*r), text);
  }
  EXPECT_EQ(parse_recipe("tensor:e5m2xe4m3")->a, Fp8Format::kE5m2);
  // One spelling per recipe: the e4m3 default has no suffix.
  for (const char* text : {"", "blocks", "tensor:", "tensor:e4m3xe4m3", "tensor:e5m2", "row:e5m2xe6m2", "Tensor"})
    EXPECT_FALSE(parse_recipe(text)) << text;
  expect_usage_error([] { recipe_option("1x128"); }, "--recipe: '1x128'", "tensor, row, block, block-1x128");
}

TEST(Fp8Recipe, PlanTakesARecipeForFp8Only) {
  ShapeOptions o;
  o.m = "4096";
  o.dtype = "fp8";
  o.layout = "nt";
  o.recipe = "block";
  EXPECT_EQ(plan_problems(o).front().recipe.scaling, Fp8Scaling::kBlock);
  o.recipe = "";
  EXPECT_EQ(plan_problems(o).front().recipe, Fp8Recipe{});
  o.dtype = "bf16";
  o.recipe = "row";
  expect_usage_error([&] { plan_problems(o); }, "--recipe: 'row'", "give --dtype fp8");
  o.dtype = "fp8";
  o.recipe = "rows";
  expect_usage_error([&] { plan_problems(o); }, "--recipe: 'rows'", "is not an fp8 recipe");
}

// The layouts PyTorch hands cuBLASLt (pytorch#166752): A's 1x128 scales [M, K/128] with stride [1, M];
// B's 128x128 scales [L4, N/128] with stride [1, L4], L4 = K/128 rounded up to a multiple of 4.
TEST(Fp8Scales, LayoutsAreCublasLts) {
  const ScaleLayout tensor = scale_layout(ScaleGrain::kTensor, 129, 384);
  EXPECT_EQ(tensor.count, 1);
  EXPECT_EQ(tensor.index(128, 383), 0);
  const ScaleLayout row = scale_layout(ScaleGrain::kRow, 129, 384);
  EXPECT_EQ(row.count, 129);
  EXPECT_EQ(row.index(128, 383), 128);
  // 1x128: rows fastest (M-major), no padding of M.
  const ScaleLayout vec = scale_layout(ScaleGrain::kVec128, 129, 384);
  EXPECT_EQ(vec.k_blocks, 3);
  EXPECT_EQ(vec.count, 129 * 3);
  EXPECT_EQ(vec.index(0, 0), 0);
  EXPECT_EQ(vec.index(1, 0), 1);
  EXPECT_EQ(vec.index(5, 127), 5);
  EXPECT_EQ(vec.index(5, 128), 129 + 5);
  EXPECT_EQ(vec.index(128, 383), 2 * 129 + 128);
  // 128x128: K blocks fastest, padded to 4; N = 300 has 3 row blocks, the last one partial.
  const ScaleLayout blk = scale_layout(ScaleGrain::kBlock128, 300, 640);
  EXPECT_EQ(blk.k_blocks, 5);
  EXPECT_EQ(blk.ld, 8);
  EXPECT_EQ(blk.count, 3 * 8);
  EXPECT_EQ(blk.index(0, 639), 4);
  EXPECT_EQ(blk.index(127, 0), 0);
  EXPECT_EQ(blk.index(128, 0), 8);  // without the round-up this would read 5: PyTorch's silent wrong answer
  EXPECT_EQ(blk.index(299, 600), 2 * 8 + 4);
  // K/128 a multiple of 4 needs no padding; (384, 128, 1280) is PyTorch's padding case: 10 blocks -> 12.
  EXPECT_EQ(scale_layout(ScaleGrain::kBlock128, 128, 512).ld, 4);
  EXPECT_EQ(scale_layout(ScaleGrain::kBlock128, 128, 1280).ld, 12);
  // Every element of an operand maps to a scale inside the buffer, and each scale block is one entry.
  for (const ScaleLayout& l : {vec, blk}) {
    std::set<int64_t> used;
    for (int64_t r = 0; r < l.rows; ++r)
      for (int64_t k = 0; k < 384; k += 64) {
        const int64_t i = l.index(r, k);
        EXPECT_GE(i, 0);
        EXPECT_LT(i, l.count);
        used.insert(i);
      }
    EXPECT_EQ(int64_t(used.size()), l.grain == ScaleGrain::kVec128 ? 129 * 3 : 3 * 3);
  }
}

TEST(Fp8Scales, EachRecipeGivesEachOperandItsGrain) {
  EXPECT_EQ(scale_grain(Fp8Scaling::kBlock, CastOperand::kA), ScaleGrain::kVec128);
  EXPECT_EQ(scale_grain(Fp8Scaling::kBlock, CastOperand::kB), ScaleGrain::kBlock128);
  EXPECT_EQ(scale_grain(Fp8Scaling::kBlock1x128, CastOperand::kB), ScaleGrain::kVec128);
  EXPECT_EQ(scale_grain(Fp8Scaling::kRow, CastOperand::kB), ScaleGrain::kRow);
  const Problem p = fp8(64, 300, 640, Fp8Scaling::kBlock);
  EXPECT_EQ(scale_layout(p, CastOperand::kA).count, 64 * 5);
  EXPECT_EQ(scale_layout(p, CastOperand::kB).count, 3 * 8);
  EXPECT_EQ(fp8_max(Fp8Format::kE4m3), 448.0f);
  EXPECT_EQ(fp8_max(Fp8Format::kE5m2), 57344.0f);
}

TEST(Fp8Refusals, OneLineWithTheReason) {
  const auto why = [](const Problem& p, int cc) { return recipe_unsupported(p, cc).value_or(""); };
  EXPECT_EQ(why(fp8(4096, 4096, 4096, Fp8Scaling::kBlock), 90), "");
  EXPECT_EQ(why(fp8(1, 200, 128, Fp8Scaling::kBlock), 90), "");
  EXPECT_EQ(why(fp8(4096, 4096, 4096, Fp8Scaling::kTensor), 89), "");
  EXPECT_EQ(why(gemm(64, 64, 64), 90), "");  // not fp8: nothing to say
  Problem nn = fp8(4096, 4096, 4096, Fp8Scaling::kTensor);
  nn.layout = Layout::kNN;
  EXPECT_NE(why(nn, 90).find("fp8 runs only in layout nt"), std::string::npos) << why(nn, 90);
  Problem both = fp8(4096, 4096, 4096, Fp8Scaling::kTensor);
  both.recipe.a = both.recipe.b = Fp8Format::kE5m2;
  EXPECT_NE(why(both, 90).find("no e5m2 x e5m2"), std::string::npos);
  EXPECT_NE(why(fp8(4096, 4096, 4096, Fp8Scaling::kRow), 89).find("recipe row needs compute capability 9.0"),
            std::string::npos);
  EXPECT_NE(why(fp8(4096, 4096, 4096, Fp8Scaling::kBlock), 100).find("compute capability 9.x only"), std::string::npos);
  EXPECT_NE(why(fp8(4096, 4096, 1000, Fp8Scaling::kBlock), 90).find("K = 1000 is not a multiple of 128"),
            std::string::npos);
  EXPECT_NE(why(fp8(4096, 4096, 1000, Fp8Scaling::kBlock), 90).find("pad K to 1024"), std::string::npos);
  EXPECT_EQ(why(fp8(4096, 4096, 1000, Fp8Scaling::kRow), 90), "");
  Problem batched = fp8(512, 512, 512, Fp8Scaling::kRow);
  batched.batch = 8;
  EXPECT_NE(why(batched, 90).find("a batched call"), std::string::npos);
  for (const Problem& p : {nn, both, batched}) EXPECT_EQ(why(p, 90).find('\n'), std::string::npos);
}

TEST(Fp8Casts, ACastIsItsOperandInTheFormTheGemmReads) {
  const Fp8Recipe block{Fp8Scaling::kBlock};
  // The forward x @ W^T (nt): both operands already K-contiguous.
  const Problem a = cast_problem(gemm(1024, 4096, 7168), block, CastOperand::kA);
  EXPECT_EQ(a.cast, CastOperand::kA);
  EXPECT_EQ(a.dtype, DType::kFp8);
  EXPECT_EQ(cast_rows(a), 1024);
  EXPECT_EQ(a.n, 0);
  EXPECT_FALSE(cast_transposes(a));
  EXPECT_EQ(cast_source_ld(a), 7168);
  EXPECT_EQ(a.flops(), 0);
  EXPECT_EQ(a.shape_string(), "cast A 1024x7168");
  const Problem b = cast_problem(gemm(1024, 4096, 7168), block, CastOperand::kB);
  EXPECT_EQ(cast_rows(b), 4096);
  EXPECT_FALSE(cast_transposes(b));
  EXPECT_EQ(scale_layout(b, CastOperand::kB).grain, ScaleGrain::kBlock128);
  // The input gradient dY @ W (nn): W is stored K x N, the cast transposes it.
  const Problem w = cast_problem(gemm(1024, 7168, 4096, Layout::kNN), block, CastOperand::kB);
  EXPECT_TRUE(cast_transposes(w));
  EXPECT_EQ(cast_source_ld(w), 7168);
  EXPECT_EQ(w.shape_string(), "cast B 7168x4096 (from 4096x7168)");
  // The weight gradient dY^T @ X (tn): dY is stored K x M.
  const Problem g = cast_problem(gemm(4096, 7168, 1024, Layout::kTN), block, CastOperand::kA);
  EXPECT_TRUE(cast_transposes(g));
  EXPECT_EQ(cast_rows(g), 4096);
  EXPECT_EQ(cast_source_ld(g), 4096);
  EXPECT_FALSE(cast_unsupported(g));
  EXPECT_TRUE(cast_unsupported(gemm(8, 8, 8)));
  // A cast of the same operand for two GEMMs of different N is one cast.
  EXPECT_TRUE(cast_problem(gemm(1024, 4096, 7168), block, CastOperand::kA) ==
              cast_problem(gemm(1024, 512, 7168), block, CastOperand::kA));
  EXPECT_FALSE(cast_problem(gemm(1024, 4096, 7168), block, CastOperand::kA) ==
               cast_problem(gemm(1024, 4096, 7168), Fp8Recipe{Fp8Scaling::kRow}, CastOperand::kA));
}

TEST(Fp8Casts, ActivationsEveryCallWeightsOncePerStepStoredFp8Never) {
  const Fp8Recipe tensor{};
  const std::vector<CastTerm> fwd = fp8_casts(gemm(1024, 4096, 7168), tensor, linear_roles(Layout::kNT));
  ASSERT_EQ(fwd.size(), 2u);
  EXPECT_TRUE(fwd[0].per_call);
  EXPECT_EQ(fwd[0].problem.cast, CastOperand::kA);
  EXPECT_FALSE(fwd[1].per_call);
  const std::vector<CastTerm> wgrad = fp8_casts(gemm(4096, 7168, 1024, Layout::kTN), tensor, linear_roles(Layout::kTN));
  ASSERT_EQ(wgrad.size(), 2u);
  EXPECT_TRUE(wgrad[0].per_call && wgrad[1].per_call);
  const std::vector<CastTerm> stored =
      fp8_casts(gemm(1024, 4096, 7168), tensor, {OperandRole::kActivation, OperandRole::kStoredFp8Weight});
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].problem.cast, CastOperand::kA);
  Problem grouped = grouped_problem({gemm(64, 128, 128), gemm(32, 128, 128)});
  EXPECT_TRUE(fp8_casts(grouped, tensor, {}).empty());
}

TEST(Fp8Casts, TrainingRecipesGiveEachPassItsScalesAndFormats) {
  const Fp8Recipe fwd = gemm_recipe(Fp8Scaling::kTensor, linear_roles(Layout::kNT));
  EXPECT_EQ(recipe_text(fwd), "tensor");
  EXPECT_EQ(recipe_text(gemm_recipe(Fp8Scaling::kTensor, linear_roles(Layout::kNN))), "tensor:e5m2xe4m3");
  EXPECT_EQ(recipe_text(gemm_recipe(Fp8Scaling::kTensor, {OperandRole::kGradient, OperandRole::kGradient})),
            "tensor:e5m2xe4m3");
  EXPECT_EQ(recipe_text(gemm_recipe(Fp8Scaling::kRow, linear_roles(Layout::kNN))), "row");
  EXPECT_EQ(recipe_text(gemm_recipe(Fp8Scaling::kBlock, linear_roles(Layout::kNT))), "block");
  EXPECT_EQ(recipe_text(gemm_recipe(Fp8Scaling::kBlock, linear_roles(Layout::kNN))), "block");
  EXPECT_EQ(recipe_text(gemm_recipe(Fp8Scaling::kBlock, linear_roles(Layout::kTN))), "block-1x128");
}

TEST(Fp8Casts, PrecisionCandidatesSayWhyARecipeCannotRun) {
  const std::vector<Fp8Candidate> h100 = precision_candidates(gemm(4096, 4096, 1000), linear_roles(Layout::kNT), 90);
  ASSERT_EQ(h100.size(), 3u);
  EXPECT_FALSE(h100[0].refused);
  EXPECT_FALSE(h100[1].refused);
  ASSERT_TRUE(h100[2].refused);
  EXPECT_NE(h100[2].refused->find("K = 1000"), std::string::npos);
  EXPECT_EQ(h100[0].gemm.layout, Layout::kNT);
  EXPECT_EQ(h100[0].casts.size(), 2u);
  const std::vector<Fp8Candidate> ada = precision_candidates(gemm(4096, 4096, 4096), linear_roles(Layout::kNT), 89);
  EXPECT_FALSE(ada[0].refused);
  EXPECT_TRUE(ada[1].refused && ada[2].refused);
  EXPECT_TRUE(precision_candidates(gemm(64, 64, 64, Layout::kNT, DType::kFp32), {}, 90).empty());
  // The input gradient in fp8 is an nt GEMM whose weight cast transposes.
  const std::vector<Fp8Candidate> dgrad = precision_candidates(gemm(1024, 7168, 4096, Layout::kNN),
                                                               linear_roles(Layout::kNN), 90);
  EXPECT_EQ(dgrad[0].gemm.layout, Layout::kNT);
  EXPECT_TRUE(cast_transposes(dgrad[0].casts[1].problem));
}

TEST(Fp8Casts, FastestWithinTheErrorAllowed) {
  std::vector<PricedCandidate> c(3);
  c[0] = {100, 10, 50, 0.04};  // tensor
  c[1] = {110, 10, 0, 0.02};   // row
  c[2] = {90, 30, 0, 0.01};    // block
  EXPECT_EQ(c[0].step_us(4), 490);
  EXPECT_EQ(fastest_within(c, 4, std::nullopt), 1u);  // row 480 = block 480 < tensor 490: the first of the fastest
  c[2].gemm_us = 95;
  EXPECT_EQ(fastest_within(c, 4, std::nullopt), 1u);
  EXPECT_EQ(fastest_within(c, 4, 0.015), 2u);
  c[2].runs = false;
  EXPECT_FALSE(fastest_within(c, 4, 0.015));
  c[1].error.reset();
  EXPECT_EQ(fastest_within(c, 4, 0.05), 0u);  // an unmeasured error does not qualify under a limit
}

TEST(Fp8Casts, AStepsCastsMergeAndCountItsCalls) {
  const Problem fwd = fp8(1024, 4096, 7168, Fp8Scaling::kBlock);
  const Problem up = fp8(1024, 512, 7168, Fp8Scaling::kBlock);  // reads the same activation
  const std::vector<StepCast> casts = step_fp8_casts({{fwd, 2}, {up, 3}, {gemm(64, 64, 64), 5}});
  ASSERT_EQ(casts.size(), 3u);
  EXPECT_EQ(casts[0].problem.cast, CastOperand::kA);
  EXPECT_EQ(casts[0].per_step, 5);
  EXPECT_EQ(casts[1].per_step, 2);
  EXPECT_EQ(casts[2].per_step, 3);
}

TEST(Fp8Trace, ScaledMmRecipeComesFromItsScalesShapes) {
  const auto recipe = [](std::vector<int64_t> sa, std::vector<int64_t> sb, const char* a = "c10::Float8_e4m3fn",
                         const char* b = "c10::Float8_e4m3fn") {
    std::string why;
    const std::optional<Fp8Recipe> r = scaled_mm_recipe({a, b, 256, 1000, 640, sa, sb}, why);
    return r ? recipe_text(*r) : "refused: " + why;
  };
  EXPECT_EQ(recipe({}, {}), "tensor");
  EXPECT_EQ(recipe({1}, {1, 1}), "tensor");
  EXPECT_EQ(recipe({256, 1}, {1, 1000}), "row");
  EXPECT_EQ(recipe({256, 5}, {5, 8}), "block");
  EXPECT_EQ(recipe({256, 5}, {8, 8}), "block");  // the padded layout seen as its storage
  EXPECT_EQ(recipe({256, 5}, {5, 1000}), "block-1x128");
  EXPECT_EQ(recipe({}, {}, "c10::Float8_e5m2"), "tensor:e5m2xe4m3");
  EXPECT_NE(recipe({2, 5}, {5, 1000}).find("no fp8 recipe shapescope runs"), std::string::npos);
  EXPECT_NE(recipe({}, {}, "c10::Float8_e5m2", "c10::Float8_e5m2").find("e5m2 x e5m2"), std::string::npos);
  EXPECT_NE(recipe({}, {}, "c10::BFloat16").find("'c10::BFloat16'"), std::string::npos);
}

TEST(Fp8Step, AnFp8TrainingStepRunsEveryPassInItsRecipesNtForm) {
  WorkloadRequest r;
  r.tokens = 4096;
  r.train = true;
  r.dtype = DType::kFp8;
  r.fp8 = Fp8Scaling::kBlock;
  const Workload w = config_workload(preset("llama3-8b"), r);
  std::set<std::string> recipes;
  for (const WorkloadGemm& g : w.gemms)
    for (const Problem& p : g.problems) {
      EXPECT_EQ(p.dtype, DType::kFp8);
      EXPECT_EQ(p.layout, Layout::kNT);
      recipes.insert(recipe_text(p.recipe));
    }
  EXPECT_EQ(recipes, (std::set<std::string>{"block", "block-1x128"}));
  StepOptions s;
  s.tokens = 4096;
  s.train = true;
  s.dtype = DType::kFp8;
  s.fp8 = Fp8Scaling::kTensor;
  for (const StepGemm& g : step_gemms(preset("llama3-8b"), s)) {
    EXPECT_EQ(g.problem.layout, Layout::kNT);
    EXPECT_EQ(g.problem.recipe.a == Fp8Format::kE5m2, g.pass != Pass::kForward) << pass_name(g.pass);
  }
}

// A point's recipe decides its explanation's causes: block scaling's blocks against the shape.
TEST(Fp8Explain, BlockCausesCiteTheNeighbourAtTheBlocksSize) {
  const auto point = [](Role role, const Problem& p, double us, Dim dim = Dim::kM, int64_t value = 0) {
    ExplainPoint x;
    x.role = role;
    x.candidate.problem = p;
    x.candidate.dim = dim;
    x.candidate.value = value;
    x.time_us = us;
    x.annotation.roofline.flops = p.flops();
    x.annotation.roofline.tflops = p.flops() / us / 1e6;
    return x;
  };
  const Problem t = fp8(64, 1000, 1280, Fp8Scaling::kBlock);
  std::vector<ExplainPoint> points = {point(Role::kTarget, t, 20),
                                      point(Role::kNeighbour, fp8(128, 1000, 1280, Fp8Scaling::kBlock), 21, Dim::kM, 128)};
  const std::vector<Fp8Cause> causes = fp8_causes(points);
  ASSERT_EQ(causes.size(), 3u);
  EXPECT_EQ(causes[0].kind, Fp8CauseKind::kSmallM);
  ASSERT_TRUE(causes[0].evidence);
  EXPECT_EQ(*causes[0].evidence, 1u);
  EXPECT_NEAR(causes[0].cost_us, 20 - 21.0 / 2, 1e-9);  // at M = 128's rate, 64 rows take 10.5 us
  EXPECT_EQ(causes[1].kind, Fp8CauseKind::kPartialBlock);
  EXPECT_EQ(causes[1].dim, Dim::kN);
  EXPECT_EQ(causes[1].block_size, 1024);
  EXPECT_FALSE(causes[1].evidence);
  EXPECT_EQ(causes[2].kind, Fp8CauseKind::kScaleLayoutPad);
  EXPECT_EQ(causes[2].value, 10);
  EXPECT_EQ(causes[2].block_size, 12);
  points[0].candidate.problem = fp8(64, 1000, 1280, Fp8Scaling::kTensor);
  EXPECT_TRUE(fp8_causes(points).empty());
}

// An fp8 precision fix pays its casts: the activation's every call in its time, the weight's beside it.
TEST(Fp8Explain, PrecisionFixesPayTheirCastsAndRespectTheErrorLimit) {
  ExplainPoint t;
  t.role = Role::kTarget;
  t.candidate.problem = gemm(4096, 4096, 4096);
  t.time_us = 200;
  t.annotation.roofline.flops = t.candidate.problem.flops();
  t.annotation.roofline.tflops = t.candidate.problem.flops() / 200 / 1e6;
  std::vector<ExplainPoint> points = {t};
  const auto add = [&](Role role, Problem p, double us, std::optional<size_t> of = std::nullopt, bool per_call = true) {
    ExplainPoint x;
    x.role = role;
    x.candidate.problem = p;
    x.time_us = us;
    x.of = of;
    x.per_call = per_call;
    x.annotation.roofline.flops = p.flops();
    points.push_back(x);
  };
  Problem block = t.candidate.problem;
  block.dtype = DType::kFp8;
  block.recipe.scaling = Fp8Scaling::kBlock;
  add(Role::kPrecision, block, 100);
  add(Role::kCast, cast_problem(t.candidate.problem, block.recipe, CastOperand::kA), 30, 1, true);
  add(Role::kCast, cast_problem(t.candidate.problem, block.recipe, CastOperand::kB), 40, 1, false);
  Explanation e = explain(points);
  const auto fix = std::find_if(e.fixes.begin(), e.fixes.end(), [](const Fix& f) { return f.kind == FixKind::kPrecision; });
  ASSERT_NE(fix, e.fixes.end());
  EXPECT_EQ(fix->time_us, 130);
  EXPECT_EQ(fix->casts_us, 30);
  EXPECT_EQ(fix->per_step_us, 40);
  EXPECT_NEAR(fix->speedup, 200.0 / 130, 1e-9);
  // The casts make it slower than the target: no fix.
  points[2].time_us = 95;
  EXPECT_TRUE(std::none_of(explain(points).fixes.begin(), explain(points).fixes.end(),
                           [](const Fix& f) { return f.kind == FixKind::kPrecision; }));
  // Its casts not measured: its price is unknown, no fix.
  points[2].time_us = 30;
  points.pop_back();
  EXPECT_TRUE(std::none_of(explain(points).fixes.begin(), explain(points).fixes.end(),
                           [](const Fix& f) { return f.kind == FixKind::kPrecision; }));
  add(Role::kCast, cast_problem(t.candidate.problem, block.recipe, CastOperand::kB), 40, 1, false);
  // --max-error: the fix goes when its worse error is above the limit, or was not measured.
  e = explain(points);
  EXPECT_EQ(limit_precision_error(e, points, 0.1), 1u);
  NumericalError gaussian, outliers;
  gaussian.relative = 0.03;
  outliers.relative = 0.2;
  points[1].error = gaussian;
  points[1].error_outliers = outliers;
  e = explain(points);
  EXPECT_EQ(limit_precision_error(e, points, 0.1), 1u);
  e = explain(points);
  EXPECT_EQ(limit_precision_error(e, points, 0.25), 0u);
}

TEST(Fp8Explain, PrecisionControlsAreOneFp8PerRecipeThisGpuRuns) {
  const std::vector<Problem> h100 = precision_problems(gemm(4096, 4096, 4096), 90);
  ASSERT_EQ(h100.size(), 3u);
  EXPECT_EQ(recipe_text(h100[0].recipe), "tensor");
  EXPECT_EQ(recipe_text(h100[1].recipe), "row");
  EXPECT_EQ(recipe_text(h100[2].recipe), "block");
  EXPECT_EQ(precision_problems(gemm(4096, 4096, 4096), 89).size(), 1u);
  EXPECT_EQ(precision_problems(gemm(4096, 4096, 1000), 90).size(), 2u);  // block refused: K
  EXPECT_EQ(precision_problems(gemm(4096, 4096, 4096, Layout::kNT, DType::kFp32), 90).size(), 3u);  // tf32, bf16, fp16
}

// A Linear layer's input gradient (nn) and weight gradient (tn) get fp8 controls too: the nt form
// cuBLASLt runs, packed, under the recipe their operands' roles give, whatever the target's strides.
TEST(Fp8Explain, TheInputAndWeightGradientsGetTheirNtFormInFp8) {
  const Problem dgrad = gemm(1024, 7168, 4096, Layout::kNN), wgrad = gemm(4096, 7168, 1024, Layout::kTN);
  for (const Problem& target : {dgrad, wgrad}) {
    const std::vector<Problem> got = precision_problems(target, 90);
    ASSERT_EQ(got.size(), 3u) << target.shape_string();
    const std::vector<Fp8Candidate> want = precision_candidates(target, linear_roles(target.layout), 90);
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i], want[i].gemm);
      EXPECT_EQ(got[i].layout, Layout::kNT);
      EXPECT_EQ(got[i].dtype, DType::kFp8);
      EXPECT_EQ(std::tie(got[i].m, got[i].n, got[i].k), std::tie(target.m, target.n, target.k));
      EXPECT_EQ(std::tie(got[i].lda, got[i].ldb, got[i].ldc), std::tie(target.k, target.k, target.n));
      EXPECT_FALSE(recipe_unsupported(got[i], 90)) << recipe_text(got[i].recipe);
    }
  }
  EXPECT_EQ(recipe_text(precision_problems(dgrad, 90)[0].recipe), "tensor:e5m2xe4m3");  // the gradient in e5m2
  EXPECT_EQ(recipe_text(precision_problems(dgrad, 90)[2].recipe), "block");              // 128x128 weight
  EXPECT_EQ(recipe_text(precision_problems(wgrad, 90)[2].recipe), "block-1x128");        // no weight
  // An nt target with a wider lda: its fp8 control reads what the casts write, packed.
  Problem strided = gemm(1024, 4096, 7168);
  strided.lda = 7200;
  EXPECT_EQ(precision_problems(strided, 90)[0].lda, 7168);
  EXPECT_EQ(precision_problems(strided, 90)[0].layout, Layout::kNT);
  // tt is no Linear layer's GEMM: its operands' roles are unknown, it gets no fp8 control.
  EXPECT_TRUE(precision_problems(gemm(1024, 4096, 7168, Layout::kTT), 90).empty());
}

// Which operand's cast transposes, and which a step pays per call: nn casts the gradient A as it is
// every call and transposes the weight B (stored K x N) once per step; tn transposes both, the
// gradient A (stored K x M) and the activation B (stored K x N), every call.
TEST(Fp8Casts, TheGradientsCastsTransposeTheOperandStoredKMajor) {
  const Problem dgrad = gemm(1024, 7168, 4096, Layout::kNN), wgrad = gemm(4096, 7168, 1024, Layout::kTN);
  for (const Fp8Candidate& c : precision_candidates(dgrad, linear_roles(Layout::kNN), 90)) {
    ASSERT_EQ(c.casts.size(), 2u);
    const Problem &a = c.casts[0].problem, &b = c.casts[1].problem;
    EXPECT_EQ(a.cast, CastOperand::kA);
    EXPECT_TRUE(c.casts[0].per_call);
    EXPECT_FALSE(cast_transposes(a));
    EXPECT_EQ(std::tie(a.m, a.k, a.lda), std::tie(dgrad.m, dgrad.k, dgrad.lda));
    EXPECT_EQ(b.cast, CastOperand::kB);
    EXPECT_FALSE(c.casts[1].per_call);
    EXPECT_TRUE(cast_transposes(b));
    EXPECT_EQ(cast_source_ld(b), dgrad.n);  // B stored K x N
    EXPECT_EQ(std::tie(b.n, b.k), std::tie(dgrad.n, dgrad.k));
    EXPECT_EQ(b.recipe, c.gemm.recipe);
  }
  for (const Fp8Candidate& c : precision_candidates(wgrad, linear_roles(Layout::kTN), 90)) {
    ASSERT_EQ(c.casts.size(), 2u);
    const Problem &a = c.casts[0].problem, &b = c.casts[1].problem;
    EXPECT_TRUE(c.casts[0].per_call && c.casts[1].per_call);
    EXPECT_TRUE(cast_transposes(a));
    EXPECT_EQ(cast_source_ld(a), wgrad.m);  // A stored K x M
    EXPECT_EQ(std::tie(a.m, a.k), std::tie(wgrad.m, wgrad.k));
    EXPECT_TRUE(cast_transposes(b));
    EXPECT_EQ(cast_source_ld(b), wgrad.n);  // B stored K x N
    EXPECT_EQ(cast_rows(b), wgrad.n);
  }
}

TEST(Fp8Pad, ABlockRecipeProposesSizesThatFillItsBlocks) {
  ModelConfig c = preset("gpt2");
  StepOptions s;
  s.tokens = 12288;
  s.dtype = DType::kFp8;
  s.fp8 = Fp8Scaling::kBlock;
  size_t proposed = 0;
  for (const ChoiceInfo& choice : choices(c, s)) {
    for (const PadCandidate& cand : pad_candidates(c, s, choice, Annotation{})) {
      EXPECT_EQ(cand.gemm_size % 128, 0) << choice.name << " " << cand.value << " (" << cand.why << ")";
      ++proposed;
    }
  }
  EXPECT_GT(proposed, 0u);
  // In bf16 the vocabulary's next multiple of 8 is a candidate; under block scaling it is not.
  s.dtype = DType::kBf16;
  bool eight = false;
  for (const ChoiceInfo& choice : choices(c, s))
    for (const PadCandidate& cand : pad_candidates(c, s, choice, Annotation{})) eight = eight || cand.gemm_size == 50264;
  EXPECT_TRUE(eight);
}

TEST(Fp8Errors, OutlierChannelsAreAFewColumns) {
  int64_t outliers = 0;
  for (int64_t k = 0; k < 4096; ++k) outliers += outlier_channel(k);
  EXPECT_EQ(outliers, 9);  // 17, 526, ..., 4089
  EXPECT_TRUE(outlier_channel(17));
  EXPECT_FALSE(outlier_channel(0));
}

}  // namespace
}  // namespace shapescope
