// explain's precision control: which dtypes a GEMM is measured in, how a faster precision enters the
// verdict (an fp32 GEMM's cause; a bf16 GEMM's fp8 a fix only), its words with the measured error,
// and the command reading a store that holds an fp32 GEMM and its bf16 twin (no GPU).
#include <gtest/gtest.h>

#include "core/fp8.hpp"
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_util.hpp"
#include "core/backend_kind.hpp"
#include "device/device.hpp"
#include "measure/precision_error.hpp"
#include "model/explain.hpp"
#include "model/fp8_steps.hpp"
#include "report/explain_report.hpp"
#include "store/store.hpp"
#include "stored_points.hpp"
#include "views/explain.hpp"
#include "views/explain_precision.hpp"

namespace shapescope {
namespace {

Problem square(int64_t n, DType dtype, Layout layout = Layout::kNN) {
  Problem p;
  p.m = p.n = p.k = p.lda = p.ldb = p.ldc = n;
  p.dtype = dtype;
  p.layout = layout;
  return p;
}

const ModelGpu& h200() {
  static const ModelGpu gpu = model_gpu(*find_profile("h200"));
  return gpu;
}

ExplainPoint timed(Role role, const std::string& label, const Problem& p, double time_us, const std::string& why = "") {
  ExplainPoint x;
  x.role = role;
  x.label = label;
  x.candidate.value = p.n;
  x.candidate.why = why;
  x.candidate.problem = p;
  x.time_us = time_us;
  x.kernel = "k_" + label;
  x.annotation.alignment = alignment_of(p);
  x.annotation.roofline = roofline_of(p, h200(), time_us);
  x.annotation.waves = waves_of(97, 100);
  x.annotation.grid = tile_grid(p.m, p.n, 1, 128, 128);
  return x;
}

// The target in another dtype, with its measured error.
ExplainPoint precision(const ExplainPoint& target, DType dtype, double time_us, double relative) {
  Problem p = target.candidate.problem;
  p.dtype = dtype;
  ExplainPoint x = timed(Role::kPrecision, std::string(to_string(dtype)), p, time_us);
  NumericalError e;
  e.dtype = dtype;
  e.problem = p;
  e.relative = relative;
  e.max_abs = relative * 40;
  e.reference_max = 300;
  x.error = e;
  return x;
}

TEST(ExplainPrecision, TheDtypesEachGemmIsMeasuredIn) {
  using V = std::vector<DType>;
  EXPECT_EQ(precision_dtypes(square(4096, DType::kFp32), 90), (V{DType::kTf32, DType::kBf16, DType::kFp16}));
  EXPECT_EQ(precision_dtypes(square(4096, DType::kTf32), 80), (V{DType::kBf16, DType::kFp16}));
  // A Turing GPU has fp16 tensor cores only.
  EXPECT_EQ(precision_dtypes(square(4096, DType::kFp32), 75), (V{DType::kFp16}));
  // fp8 where the GPU has it (8.9+), for a Linear layer's three GEMMs (nn and tn run as nt in fp8, their
  // casts transposing); tt is none of them.
  EXPECT_EQ(precision_dtypes(square(4096, DType::kBf16, Layout::kNT), 90), (V{DType::kFp8}));
  EXPECT_EQ(precision_dtypes(square(4096, DType::kFp16, Layout::kNT), 89), (V{DType::kFp8}));
  EXPECT_EQ(precision_dtypes(square(4096, DType::kBf16, Layout::kNT), 80), V{});
  EXPECT_EQ(precision_dtypes(square(4096, DType::kBf16, Layout::kNN), 90), (V{DType::kFp8}));
  EXPECT_EQ(precision_dtypes(square(4096, DType::kFp16, Layout::kTN), 90), (V{DType::kFp8}));
  EXPECT_EQ(precision_dtypes(square(4096, DType::kBf16, Layout::kTT), 90), V{});
  EXPECT_EQ(precision_dtypes(square(4096, DType::kFp8, Layout::kNT), 90), V{});
  const Problem grouped = grouped_problem({square(512, DType::kFp32), square(512, DType::kFp32)});
  EXPECT_EQ(precision_dtypes(grouped, 90), V{});
  EXPECT_TRUE(precision_is_cause(DType::kFp32));
  EXPECT_TRUE(precision_is_cause(DType::kTf32));
  EXPECT_FALSE(precision_is_cause(DType::kBf16));
}

TEST(ExplainPrecision, AnFp32GemmIsSlowerThanItsBf16Twin) {
  const Problem p = square(4096, DType::kFp32);
  std::vector<ExplainPoint> points = {timed(Role::kTarget, "4096", p, 2500.0),
                                      timed(Role::kNeighbour, "4095", square(4095, DType::kFp32), 2600.0, "n-1")};
  points.push_back(precision(points[0], DType::kTf32, 330.0, 4.6e-4));
  points.push_back(precision(points[0], DType::kBf16, 170.0, 4.1e-3));
  points.push_back(precision(points[0], DType::kFp16, 172.0, 5.1e-4));
  const Explanation e = explain(points);
  EXPECT_EQ(e.verdict.kind, VerdictKind::kSlower);
  ASSERT_EQ(e.verdict.against, 3u);  // bf16, the fastest
  EXPECT_NEAR(e.verdict.time_ratio, 2500.0 / 170, 1e-9);
  EXPECT_NEAR(e.verdict.gap_us, 2330.0, 1e-9);
  ASSERT_EQ(e.effects.size(), 1u);
  EXPECT_EQ(e.effects[0].kind, EffectKind::kPrecision);
  EXPECT_TRUE(e.effects[0].measured);
  EXPECT_NEAR(e.effects[0].cost_us, 2330.0, 1e-9);
  // A fix per faster precision, the fastest first; each halves (or keeps) the operand memory.
  ASSERT_EQ(e.fixes.size(), 3u);
  EXPECT_EQ(e.fixes[0].kind, FixKind::kPrecision);
  EXPECT_EQ(e.fixes[0].point, 3u);
  EXPECT_EQ(e.fixes[1].point, 4u);
  EXPECT_EQ(e.fixes[2].point, 2u);
  EXPECT_NEAR(e.fixes[0].extra_bytes, -0.5, 1e-9);
  EXPECT_NEAR(e.fixes[2].extra_bytes, 0.0, 1e-9);  // tf32 keeps fp32 operands
}

// The same-precision controls take their part first; precision takes what the best of them leaves.
TEST(ExplainPrecision, PrecisionTakesWhatTheSamePrecisionLeaves) {
  Problem p = square(1793, DType::kFp32);
  std::vector<ExplainPoint> points = {timed(Role::kTarget, "1793", p, 600.0)};
  points.push_back(timed(Role::kAligned16, "lda 1796", aligned_layout(p, 16), 300.0));
  points.push_back(precision(points[0], DType::kBf16, 100.0, 4e-3));
  const Explanation e = explain(points);
  EXPECT_EQ(e.verdict.kind, VerdictKind::kSlower);
  EXPECT_EQ(e.verdict.against, 2u);
  ASSERT_EQ(e.effects.size(), 2u);
  EXPECT_EQ(e.effects[0].kind, EffectKind::kAlignment16);
  EXPECT_NEAR(e.effects[0].cost_us, 300.0, 1e-9);
  EXPECT_EQ(e.effects[1].kind, EffectKind::kPrecision);
  EXPECT_NEAR(e.effects[1].cost_us, 200.0, 1e-9);
  EXPECT_NEAR(e.effects[0].cost_us + e.effects[1].cost_us, e.verdict.gap_us, 1e-9);  // they add up to the gap
}

// The error of a GEMM too large for the budget is measured on fewer rows and columns, never a shorter K.
TEST(ExplainPrecision, ErrorOfALargeGemmOnFewerRowsSameK) {
  Problem p = square(4096, DType::kFp32, Layout::kTN);
  p.batch = 8;
  p.lda = 4100;
  p.off_a = p.off_b = 3;
  EXPECT_TRUE(numerical_error_problem(p, int64_t(1) << 40) == p);  // it fits: itself
  const int64_t budget = 256ll << 20;
  const Problem q = numerical_error_problem(p, budget);
  EXPECT_LE(numerical_error_bytes(q), budget);
  EXPECT_EQ(q.k, 4096);
  EXPECT_EQ(q.batch, 1);
  EXPECT_LT(q.m, 4096);
  EXPECT_EQ(q.lda, q.m);  // packed (A stored K x M)
  EXPECT_EQ(q.off_a, 0);
  EXPECT_EQ(q.layout, Layout::kTN);
  EXPECT_EQ(q.dtype, DType::kFp32);
  // Halving from 4096 along the larger side keeps M and N within a factor of two.
  EXPECT_LE(std::max(q.m, q.n), 2 * std::min(q.m, q.n));
}

// A precision within the noise of the target is no cause and no fix.
TEST(ExplainPrecision, NoGainNoCause) {
  const Problem p = square(64, DType::kFp32);
  std::vector<ExplainPoint> points = {timed(Role::kTarget, "64", p, 5.0),
                                      timed(Role::kNeighbour, "63", square(63, DType::kFp32), 5.1, "n-1")};
  points.push_back(precision(points[0], DType::kBf16, 4.9, 4e-3));
  const Explanation e = explain(points);
  for (const Effect& x : e.effects) EXPECT_NE(x.kind, EffectKind::kPrecision);
  for (const Fix& f : e.fixes) EXPECT_NE(f.kind, FixKind::kPrecision);
}

// A bf16 GEMM is where mixed precision puts it: fp8 is a fix, listed after the ones that keep the
// numbers, never the verdict's cause.
TEST(ExplainPrecision, Fp8IsAFixOfABf16GemmNotItsCause) {
  const Problem p = square(4096, DType::kBf16, Layout::kNT);
  std::vector<ExplainPoint> points = {timed(Role::kTarget, "4096", p, 174.0),
                                      timed(Role::kNeighbour, "4095", square(4095, DType::kBf16, Layout::kNT), 900.0, "n-1")};
  points.push_back(timed(Role::kAlternative, "h3", p, 150.0));
  points.push_back(precision(points[0], DType::kFp8, 110.0, 6e-2));
  // fp8 pays its casts: the activation's each call, the weight's once per step.
  for (CastOperand operand : {CastOperand::kA, CastOperand::kB}) {
    ExplainPoint cast = timed(Role::kCast, "cast", cast_problem(p, Fp8Recipe{}, operand), operand == CastOperand::kA ? 9.0 : 20.0);
    cast.of = 3;
    cast.per_call = operand == CastOperand::kA;
    points.push_back(cast);
  }
  const Explanation e = explain(points);
  EXPECT_EQ(e.verdict.kind, VerdictKind::kSlower);
  EXPECT_EQ(e.verdict.against, 2u);  // the alternative: the same numbers
  for (const Effect& x : e.effects) EXPECT_NE(x.kind, EffectKind::kPrecision);
  ASSERT_EQ(e.fixes.size(), 2u);
  EXPECT_EQ(e.fixes[0].kind, FixKind::kAlgorithm);
  EXPECT_EQ(e.fixes[1].kind, FixKind::kPrecision);
  EXPECT_NEAR(e.fixes[1].speedup, 174.0 / (110 + 9), 1e-9);
  EXPECT_EQ(e.fixes[1].per_step_us, 20.0);
}

// The report words the verdict with the error, and lists every precision with its error.
TEST(ExplainPrecision, TheVerdictNamesPrecisionWithItsError) {
  const Problem p = square(4096, DType::kFp32);
  ExplainReport r;
  r.shape = "4096";
  r.mode = "measured";
  r.points = {timed(Role::kTarget, "4096", p, 2500.0)};
  NumericalError own;
  own.dtype = DType::kFp32;
  own.problem = p;
  own.relative = 2.3e-7;
  r.points[0].error = own;
  r.points.push_back(precision(r.points[0], DType::kBf16, 156.0, 4.1e-3));
  r.points.push_back(precision(r.points[0], DType::kTf32, 310.0, 4.6e-4));
  r.points.back().error.reset();  // not measured
  r.stored.resize(r.points.size());
  r.explanation = explain(r.points);
  EXPECT_EQ(explain_verdict_line(r).rfind("4096 runs in fp32: the same GEMM in bf16 takes 0.062x the time, relative "
                                          "error 4.1e-3: precision (100 % of the gap)",
                                          0),
            0u)
      << explain_verdict_line(r);
  EXPECT_EQ(explain_fix_line(r), "run it in bf16: 2500.0 us -> 156.0 us, 16x faster, -50 % operand memory, relative "
                                 "error 4.1e-3");
  std::ostringstream text;
  write_explain_text(text, r);
  EXPECT_NE(text.str().find("fp32 (target)"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("2.3e-7"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("or:  run it in tf32: 2500.0 us -> 310.0 us, 8.1x faster, +0 % operand memory, its error "
                            "not measured"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("where fp32's own is 2.3e-7"), std::string::npos) << text.str();
  std::ostringstream json;
  write_explain_json(json, r);
  EXPECT_NE(json.str().find("\"relative\": 0.0041"), std::string::npos) << json.str();
}

// What only a GPU run writes into explain's JSON (paired passes, errors on outlier inputs, a cast's
// per_call) fits the JSON tables (report/json_records.cpp) that the Python package's fields come from.
TEST(ExplainPrecision, TheJsonOfAPairedRunFitsItsTable) {
  const Problem p = square(4096, DType::kBf16);
  ExplainReport r;
  r.shape = "4096";
  r.mode = "measured";
  r.points = {timed(Role::kTarget, "4096", p, 150.0)};
  r.points.push_back(precision(r.points[0], DType::kFp8, 110.0, 6e-2));
  r.points[1].error_outliers = r.points[1].error;
  ExplainPoint cast = timed(Role::kCast, "cast", cast_problem(p, Fp8Recipe{}, CastOperand::kA), 9.0);
  cast.of = 1;
  r.points.push_back(cast);
  PairedRatio ratio;
  ratio.low = 0.7, ratio.median = 0.73, ratio.high = 0.76, ratio.pairs = 24;
  r.points[1].paired = ratio;
  r.stored.resize(r.points.size());
  r.explanation = explain(r.points);
  r.paired = PairedOutcome{};
  r.paired->passes = 30;
  r.paired->seconds = 1.5;
  r.paired->power_w = 690;
  std::ostringstream json;
  ASSERT_NO_THROW(write_explain_json(json, r));
  for (const char* key : {"\"error_outliers\": {", "\"per_call\": true", "\"pairs\": 24", "\"min_effect\": "})
    EXPECT_NE(json.str().find(key), std::string::npos) << key << " missing from\n" << json.str();
}

// --- the command without a GPU, on a store holding an fp32 GEMM, a neighbour and its bf16 twin ---

TEST(ExplainPrecisionCommand, FromAStoreTheBf16TwinIsTheCauseAndItsErrorUnknown) {
  if (device_count() > 0) GTEST_SKIP() << "a GPU is present: explain would measure instead of reading the store";
  const std::string db = ::testing::TempDir() + "shapescope_precision_" + std::to_string(getpid()) + ".db";
  std::filesystem::remove(db);
  {
    Store store(db);
    save(store, square(2048, DType::kFp32), BackendKind::kCublas, 330.0);
    save(store, square(2047, DType::kFp32), BackendKind::kCublas, 340.0);
    save(store, square(2048, DType::kBf16), BackendKind::kCublas, 25.0);
  }
  const CliRun r = run("explain 2048 --dtype fp32 --db " + db);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("2048 runs in fp32: the same GEMM in bf16 takes 0.076x the time, its error not measured (no "
                        "GPU here): precision",
                        0),
            0u)
      << r.out;
  const size_t missing = r.out.find("not measured (the store has no point of it): ");
  ASSERT_NE(missing, std::string::npos) << r.out;
  // The precision twins the store lacks are among them (the line names how many, the first two and
  // the last; the JSON lists each).
  EXPECT_NE(r.out.substr(missing, r.out.find('\n', missing) - missing).find(" problems: "), std::string::npos) << r.out;
  const CliRun json = run("explain 2048 --dtype fp32 --json --db " + db);
  EXPECT_NE(json.out.find("tf32"), std::string::npos) << json.out;
  EXPECT_NE(r.out.find("fix: run it in bf16"), std::string::npos) << r.out;
  // --no-precision: the same store, no precision control.
  const CliRun without = run("explain 2048 --dtype fp32 --no-precision --db " + db);
  EXPECT_EQ(without.code, 0) << without.err;
  EXPECT_EQ(without.out.find("bf16"), std::string::npos) << without.out;
  std::filesystem::remove(db);
}

// A Linear layer's input gradient (nn) and weight gradient (tn) from a store that holds them in bf16
// and in fp8 (the nt form, each recipe, with their casts): explain offers every recipe as a fix priced
// with its casts, named by the operands' roles, and says which casts transpose.
TEST(ExplainPrecisionCommand, FromAStoreTheGradientsGetFp8WithTransposingCasts) {
  if (device_count() > 0) GTEST_SKIP() << "a GPU is present: explain would measure instead of reading the store";
  // A store per layout: the tn GEMM's activation cast is the nn GEMM's weight cast (B stored K x N).
  const auto db_of = [](Layout layout) {
    return ::testing::TempDir() + "shapescope_precision_" + std::string(to_string(layout)) + "_" +
           std::to_string(getpid()) + ".db";
  };
  for (Layout layout : {Layout::kNN, Layout::kTN}) {
    std::filesystem::remove(db_of(layout));
    Store store(db_of(layout));
    const Problem target = square(4096, DType::kBf16, layout);
    save(store, target, BackendKind::kCublas, 400.0);
    for (const Fp8Candidate& c : precision_candidates(target, linear_roles(layout), 90)) {
      save(store, c.gemm, BackendKind::kCublasLt, 250.0);
      for (const CastTerm& t : c.casts) save(store, t.problem, BackendKind::kCast, t.per_call ? 20.0 : 30.0);
    }
  }
  const CliRun nn = run("explain 4096 --layout nn --db " + db_of(Layout::kNN));
  EXPECT_EQ(nn.code, 0) << nn.err;
  for (const char* want : {"fix: run it in fp8 tensor:e5m2xe4m3: 400.0 us -> 270.0 us (the GEMM 250.0 us + its "
                           "gradient's cast 20.00 us per call; the weight's cast 30.00 us once per step; fp8 runs it "
                           "as nt, the weight's cast transposing B)",
                           "run it in fp8 row: ", "run it in fp8 block: "})
    EXPECT_NE(nn.out.find(want), std::string::npos) << want << "\n" << nn.out;
  const CliRun tn = run("explain 4096 --layout tn --db " + db_of(Layout::kTN));
  EXPECT_EQ(tn.code, 0) << tn.err;
  for (const char* want : {"run it in fp8 block-1x128: 400.0 us -> 290.0 us (the GEMM 250.0 us + its gradient's "
                           "and activation's casts 40.00 us per call; fp8 runs it as nt, the gradient's cast "
                           "transposing A, the activation's cast transposing B)",
                           "run it in fp8 tensor:e5m2xe4m3: ", "run it in fp8 row: "})
    EXPECT_NE(tn.out.find(want), std::string::npos) << want << "\n" << tn.out;
  // The JSON names each cast point with the operand it transposes.
  const CliRun json = run("explain 4096 --layout nn --json --db " + db_of(Layout::kNN));
  EXPECT_NE(json.out.find("cast B (fp8 block, per step, transposed)"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("cast A (fp8 block, per call)\""), std::string::npos) << json.out;
  for (Layout layout : {Layout::kNN, Layout::kTN}) std::filesystem::remove(db_of(layout));
}

// The precision controls of an nn GEMM: each recipe's nt GEMM, and per recipe the gradient's cast
// (per call, as stored) and the weight's (per step, transposed), all in the one fp8 request.
TEST(ExplainPrecision, AnInputGradientsFp8ControlsAreItsNtFormAndTransposingCasts) {
  ExplainRequest o;
  o.backend = BackendSpec(BackendKind::kCublas);
  const Problem target = square(4096, DType::kBf16, Layout::kNN);
  const PrecisionControls controls = precision_controls(o, target, 90);
  ASSERT_EQ(controls.problems.size(), 3u);
  ASSERT_EQ(controls.casts.size(), 6u);
  for (size_t i = 0; i < controls.casts.size(); ++i) {
    const CastControl& c = controls.casts[i];
    ASSERT_TRUE(c.precision);
    EXPECT_EQ(*c.precision, i / 2);
    EXPECT_EQ(controls.problems[*c.precision].layout, Layout::kNT);
    EXPECT_EQ(c.problem.recipe, controls.problems[*c.precision].recipe);
    const bool b = c.problem.cast == CastOperand::kB;
    EXPECT_EQ(b, i % 2 == 1);
    EXPECT_EQ(c.per_call, !b);
    EXPECT_EQ(cast_transposes(c.problem), b);
    EXPECT_EQ(c.label.find("transposed") != std::string::npos, b) << c.label;
  }
  const std::vector<MeasureRequest> requests = precision_requests(o, target, controls);
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests.front().problems.size(), 9u);
}

// A bf16 nt GEMM's fp8 controls: one request holds every recipe's GEMM on cuBLASLt and every cast on
// the cast backend, each pair naming one of its own backends (the request once kept MeasureRequest's
// default cuBLAS alone, and its casts named a second backend that was not there: explain crashed on
// an H100 and profile's verdicts measured no fp8 at all).
TEST(ExplainPrecision, Fp8RequestNamesItsOwnBackends) {
  ExplainRequest o;
  o.backend = BackendSpec(BackendKind::kCublas);
  const Problem target = square(4096, DType::kBf16, Layout::kNT);
  const PrecisionControls controls = precision_controls(o, target, 90);
  ASSERT_EQ(controls.problems.size(), 3u);  // tensor, row, block
  ASSERT_FALSE(controls.casts.empty());
  const std::vector<MeasureRequest> requests = precision_requests(o, target, controls);
  ASSERT_EQ(requests.size(), 1u);
  const MeasureRequest& r = requests.front();
  ASSERT_EQ(r.backends.size(), 2u);
  EXPECT_EQ(r.backends[0].kind, BackendKind::kCublasLt);
  EXPECT_EQ(r.backends[1].kind, BackendKind::kCast);
  EXPECT_EQ(r.pairs.size(), r.problems.size());
  for (const auto& [problem, backend] : r.pairs) {
    ASSERT_LT(problem, r.problems.size());
    ASSERT_LT(backend, r.backends.size());
    EXPECT_EQ(backend, r.problems[problem].cast == CastOperand::kNone ? 0u : 1u);
  }
  // An fp32 GEMM's other precisions: one request per dtype, each on explain's backend alone.
  const Problem fp32 = square(1024, DType::kFp32);
  for (const MeasureRequest& other : precision_requests(o, fp32, precision_controls(o, fp32, 90))) {
    ASSERT_EQ(other.backends.size(), 1u);
    EXPECT_EQ(other.backends[0].kind, BackendKind::kCublas);
  }
}

}  // namespace
}  // namespace shapescope
