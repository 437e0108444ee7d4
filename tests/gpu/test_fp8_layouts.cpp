// fp8 for a Linear layer's input gradient (nn) and weight gradient (tn) on the GPU: explain's precision
// controls of a bf16 GEMM in those layouts run the nt form cuBLASLt's fp8 takes (each checked against
// its dequantized operands by measure() before it is timed), beside the casts that transpose an
// operand stored K x rows, and the whole pipeline's error against the fp64 reference of the target's
// own inputs. Hopper (compute capability 9.x): the row and block recipes.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "core/fp8.hpp"
#include "gpu_test_util.hpp"
#include "measure/measure.hpp"
#include "measure/precision_error.hpp"
#include "model/explain_fp8.hpp"
#include "model/fp8_steps.hpp"
#include "model/workload.hpp"
#include "shape/plan.hpp"
#include "store/store.hpp"
#include "views/explain.hpp"

namespace shapescope {
namespace {

ExplainRequest request_for(const Problem& target, const std::string& db) {
  ExplainRequest o;
  o.shape = ShapeArg{target.m, target.n, target.k, false};
  o.shape_text = target.shape_string();
  o.form.layout = target.layout;
  o.backend = BackendSpec(BackendKind::kCublas);
  o.measure.samples = 5;
  o.alternatives = 1;
  o.pair_seconds = 0;  // the points' own medians: this test is about what is measured, not the verdict
  o.db = db;
  return o;
}

// explain of a bf16 nn and tn GEMM measures fp8 tensor, row and block as the nt GEMM, each with its
// casts (an operand stored K x rows transposed), and their errors on both kinds of inputs.
TEST(Fp8Layouts, ExplainOfTheGradientsMeasuresTheirNtFormWithTransposingCasts) {
  SKIP_WITHOUT_FP8_HOPPER();
  const DeviceContext device = query_device(0);
  testing::TempStore temp("fp8_layouts");
  Store store(temp.path.string());
  for (Layout layout : {Layout::kNN, Layout::kTN}) {
    const Problem target = packed_problem(2048, 4096, 4096, layout, DType::kBf16);
    const ExplainRequest o = request_for(target, temp.path.string());
    const ExplainReport r = explain_measured(o, target, device, store, [](size_t) { return ProgressCallback(); }, nullptr);
    std::map<size_t, size_t> casts_of;  // precision point -> its timed casts
    size_t precisions = 0;
    for (size_t i = 0; i < r.points.size(); ++i) {
      const ExplainPoint& p = r.points[i];
      if (p.role == Role::kPrecision) {
        const Problem& q = p.candidate.problem;
        ASSERT_EQ(q.dtype, DType::kFp8) << p.label;
        ++precisions;
        EXPECT_EQ(q.layout, Layout::kNT) << p.label;
        EXPECT_EQ(q, fp8_problem(target, q.recipe)) << p.label;
        ASSERT_TRUE(p.time_us) << p.label << " not measured";
        ASSERT_TRUE(p.error && p.error_outliers) << p.label << ": its error not measured";
        // e4m3's unit roundoff is 2^-4 (e5m2's, a gradient's under tensor scaling, 2^-3): the
        // pipeline's error is of that order, and an operand transposed wrong (another product: a
        // relative error near 1.4) or a scale read from the wrong place would be far above it.
        EXPECT_LT(p.error->relative, 0.1) << p.label;
        EXPECT_GT(p.error->relative, 1e-2) << p.label;
        EXPECT_EQ(p.error->non_finite, 0) << p.label;
        EXPECT_LT(p.error_outliers->relative, 0.5) << p.label;
        std::cout << to_string(layout) << " " << p.label << ": " << *p.time_us << " us, relative error "
                  << p.error->relative << " (outliers " << p.error_outliers->relative << ")\n";
      }
      if (p.role == Role::kCast && p.of && p.time_us) {
        ++casts_of[*p.of];
        const Problem& c = p.candidate.problem;
        // An operand stored K x rows transposes: nn's B (the weight, once per step); tn's A and B
        // (the gradient and the activation, every call).
        const bool k_outer = layout == Layout::kTN || c.cast == CastOperand::kB;
        EXPECT_EQ(cast_transposes(c), k_outer) << p.label;
        EXPECT_EQ(p.per_call, !(layout == Layout::kNN && c.cast == CastOperand::kB)) << p.label;
      }
    }
    EXPECT_EQ(precisions, 3u) << to_string(layout) << ": tensor, row and block";
    for (size_t i = 0; i < r.points.size(); ++i) {
      if (r.points[i].role == Role::kPrecision) {
        EXPECT_EQ(casts_of[i], 2u) << r.points[i].label;
      }
    }
    // The target's own error (bf16) is the floor the fp8 ones are read against.
    ASSERT_TRUE(r.points.front().error);
    EXPECT_LT(r.points.front().error->relative, 1e-2);
  }
}

// The same inputs in any layout: an nn and a tn GEMM's fp8 error is the nt GEMM's (the casts transpose
// exactly; only the quantization errs), within the spread of two draws.
TEST(Fp8Layouts, ErrorOfTheNtFormIsTheSameInEveryLinearLayout) {
  SKIP_WITHOUT_FP8_HOPPER();
  const DeviceContext device = query_device(0);
  const int cc = device.cc_major * 10 + device.cc_minor;
  std::map<Layout, std::map<size_t, double>> e;  // per layout, per recipe (tensor, row, block): the Gaussian error
  for (Layout layout : {Layout::kNT, Layout::kNN, Layout::kTN}) {
    const Problem p = packed_problem(512, 768, 4096, layout, DType::kBf16);
    std::vector<Precision> precisions;
    for (const Problem& q : precision_problems(p, cc)) precisions.emplace_back(q.dtype, q.recipe);
    ASSERT_EQ(precisions.size(), 3u);
    const NumericalErrors got = measure_numerical_errors(p, precisions, BackendSpec(BackendKind::kCublas), device);
    ASSERT_TRUE(got.skipped.empty()) << got.skipped.front();
    ASSERT_EQ(got.errors.size(), 6u);
    for (const NumericalError& x : got.errors)
      for (size_t i = 0; i < precisions.size(); ++i)
        if (x.data == ErrorData::kGaussian && precisions[i] == Precision(x.dtype, x.recipe)) e[layout][i] = x.relative;
    ASSERT_EQ(e[layout].size(), 3u);
  }
  for (const auto& [recipe, nt] : e[Layout::kNT])
    for (Layout layout : {Layout::kNN, Layout::kTN}) {
      // A gradient in e5m2 (tensor) errs more than in e4m3, and the weight gradient's block recipe
      // scales B by 1x128 rather than 128x128: the same order, not the same number.
      const double other = e[layout][recipe];
      EXPECT_GT(other, 0.5 * nt) << to_string(layout) << " recipe " << recipe;
      EXPECT_LT(other, 3 * nt) << to_string(layout) << " recipe " << recipe;
      std::cout << to_string(layout) << " recipe " << recipe << ": " << other << " (nt " << nt << ")\n";
    }
}

}  // namespace
}  // namespace shapescope
