// explain's paired passes on the GPU: measure() pairs only the cuBLASLt algorithms a request names
// (MeasureRequest::pair_algos); explain pairs every point of a short GEMM within its default budget,
// and with a budget too small for them all pairs what its verdict rests on, marking the rest as
// surveyed only (model/explain_pairing.hpp).
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "gpu_test_util.hpp"
#include "measure/measure.hpp"
#include "shape/plan.hpp"
#include "store/store.hpp"
#include "model/workload.hpp"
#include "views/explain.hpp"

namespace shapescope {
namespace {

// A packed bf16 nn GEMM.
Problem packed(int64_t m, int64_t n, int64_t k) { return packed_problem(m, n, k, Layout::kNN, DType::kBf16); }

TEST(MeasurePairAlgos, OnlyTheNamedAlgosArePaired) {
  SKIP_WITHOUT_GPU();
  const DeviceContext device = query_device(0);
  testing::TempStore temp("pair_algos");
  Store store(temp.path.string());
  MeasureRequest r;
  r.problems = {packed(1024, 1024, 1024)};
  r.backends = {BackendSpec(BackendKind::kCublas), BackendSpec(BackendKind::kCublasLt)};
  r.lt_algos = 4;
  r.pairs = {{0, 0}, {0, 1}};
  r.measure.warmup_ms = 0;
  r.paired = PairedRule{};
  r.paired->max_seconds = 0.05;
  const MeasureOutcome all = measure(r, device, store, {}, nullptr);
  ASSERT_TRUE(all.paired);
  EXPECT_GE(all.paired->keys.size(), 3u) << "cuBLAS and cuBLASLt's top algorithms";
  r.pair_algos = {{"default"}, {"h1"}};
  const MeasureOutcome named = measure(r, device, store, {}, nullptr);
  ASSERT_TRUE(named.paired);
  ASSERT_EQ(named.paired->keys.size(), 2u);
  EXPECT_EQ(named.paired->keys[0].backend, BackendKind::kCublas);
  EXPECT_EQ(named.paired->keys[1].backend, BackendKind::kCublasLt);
  EXPECT_EQ(named.paired->keys[1].algo, "h1");
  EXPECT_GE(named.paired->outcome.ratios[1].pairs, size_t(PairedRule{}.min_pairs));
  r.pair_algos = {{"default"}};  // one list per pair, or none
  EXPECT_THROW(measure(r, device, store, {}, nullptr), Error);
}

ExplainRequest request_for(const Problem& target, const std::string& db, double pair_seconds) {
  ExplainRequest o;
  o.shape = ShapeArg{target.m, target.n, target.k, false};
  o.shape_text = target.shape_string();
  o.backend = BackendSpec(BackendKind::kCublas);
  o.precision = false;
  o.pair_seconds = pair_seconds;
  o.db = db;
  return o;
}

// Every point of the explanation is the target, paired, surveyed only, or one whose own time places
// the target; the verdict's comparison and each fix are paired.
void check_pairing(const ExplainReport& r) {
  ASSERT_TRUE(r.paired);
  ASSERT_TRUE(r.pairing);
  const ExplainPoint& t = r.points.front();
  ASSERT_TRUE(t.paired);
  size_t paired = 0, survey = 0;
  for (const ExplainPoint& p : r.points) {
    if (p.role == Role::kTarget || !paired_role(p.role) || !p.time_us) continue;
    EXPECT_NE(p.paired.has_value(), left_out_of_pairing(t, p)) << p.label;
    ++(p.paired ? paired : survey);
  }
  EXPECT_EQ(r.pairing->paired, paired);
  EXPECT_EQ(r.pairing->survey_only, survey);
  const Explanation& e = r.explanation;
  if (e.verdict.against) {
    EXPECT_TRUE(r.points[*e.verdict.against].paired) << r.points[*e.verdict.against].label;
  }
  for (const Fix& f : e.fixes) EXPECT_TRUE(r.points[*f.point].paired) << r.points[*f.point].label;
  for (const Effect& x : e.effects) {
    for (size_t i : x.evidence.indices()) {
      if (paired_role(r.points[i].role)) {
        EXPECT_TRUE(r.points[i].paired) << r.points[i].label;
      }
    }
  }
}

TEST(ExplainPairedPasses, AShortGemmPairsEveryPointAndASmallBudgetWhatTheVerdictRestsOn) {
  SKIP_WITHOUT_GPU();
  const DeviceContext device = query_device(0);
  testing::TempStore temp("explain_pairing");
  Store store(temp.path.string());
  const Problem target = packed(2048, 2048, 2048);
  const auto no_progress = [](size_t) { return ProgressCallback(); };
  // ~30 us on an H100: ~100 points fit 8 pairs in the default second.
  const ExplainReport all = explain_measured(request_for(target, temp.path.string(), kExplainPairSeconds), target,
                                             device, store, no_progress, nullptr);
  check_pairing(all);
  EXPECT_EQ(all.pairing->survey_only, 0u);
  EXPECT_GT(all.pairing->paired, 20u);
  // 1 ms of passes: what the verdict rests on, with its 8 pairs, and nothing more.
  const ExplainReport few = explain_measured(request_for(target, temp.path.string(), 1e-3), target, device, store,
                                             no_progress, nullptr);
  check_pairing(few);
  EXPECT_GT(few.pairing->survey_only, 0u);
  EXPECT_LT(few.pairing->paired, all.pairing->paired);
  EXPECT_GE(few.pairing->paired, 1u);
  for (const ExplainPoint& p : few.points) {
    if (p.paired && p.role != Role::kTarget) {
      EXPECT_GE(p.paired->pairs, size_t(PairedRule{}.min_pairs)) << p.label;
    }
  }
  std::cout << "paired " << all.pairing->paired << " of " << all.pairing->paired + all.pairing->survey_only
            << " points in " << all.paired->seconds << " s; with 1 ms: " << few.pairing->paired << " in "
            << few.paired->seconds << " s\n";
}

}  // namespace
}  // namespace shapescope
