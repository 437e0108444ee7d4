// Workloads of many GEMMs: calls merge through a hash (the same calls, counts and order as merging
// pair by pair), a size's candidates are priced from the calls the size appears in alone (the same
// step time, FLOPs and GEMMs to measure as changing the whole workload), and a list past its row
// limit is refused in one line. The speed itself is a benchmark (bench/inputs/), not a test.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "common/error.hpp"
#include "model/gemm_list.hpp"
#include "model/profile.hpp"
#include "model/workload.hpp"
#include "model_util.hpp"
#include "views/pad_sizes.hpp"

namespace shapescope {
namespace {

// A list of `rows` GEMMs drawn from a few sizes (so that sizes repeat across M, N and K and calls
// merge), some with leading dimensions of their own, two grouped calls, a few attention calls.
std::string random_list(size_t rows, unsigned seed) {
  std::mt19937 rng(seed);
  const int64_t sizes[] = {64, 96, 127, 128, 768, 1000, 1024, 3072, 4095, 4096};
  const auto size = [&] { return sizes[rng() % std::size(sizes)]; };
  std::string text = "m,n,k,layout,dtype,batch,count,lda,ldb,ldc,name,group\n";
  const char* layouts[] = {"nn", "nt", "tn", "tt"};
  for (size_t i = 0; i < rows; ++i) {
    const int64_t m = size(), n = size(), k = size();
    const char* layout = layouts[rng() % 4];
    const bool slice = rng() % 7 == 0;  // a slice of a wider tensor: its leading dimension is kept
    const std::string lda = slice ? std::to_string((layout[0] == 't' ? m : k) + 8) : "";
    const std::string group = i % 50 < 4 ? "g" + std::to_string(i / 50) : "";
    text += fmt::format("{},{},{},{},bf16,1,{},{},,,row{},{}\n", m, n, k, group.empty() ? layout : "nt",
                        group.empty() ? 1 + rng() % 5 : 3, group.empty() ? lda : "", i % 13, group);
  }
  return text;
}

// Merging by hash gives what merging by comparing every pair gave: the calls in order of first
// appearance, their counts added, their names joined once each.
TEST(WorkloadScale, CallsMergeAsComparedPairByPair) {
  const Workload w = parse_gemm_list(random_list(2000, 1), "x");
  std::vector<WorkloadGemm> expected;
  for (const WorkloadGemm& g : w.gemms) expected.push_back(g);  // already merged: merge them again one by one
  Workload again;
  for (const WorkloadGemm& g : w.gemms) {
    WorkloadGemm a = g, b = g;
    a.count = 1;
    b.count = g.count - 1;
    again.add(a);
    if (b.count > 0) again.add(b);
  }
  ASSERT_EQ(again.gemms.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_TRUE(same_call(again.gemms[i], expected[i])) << i;
    EXPECT_EQ(again.gemms[i].count, expected[i].count) << i;
    EXPECT_EQ(again.gemms[i].origin, expected[i].origin) << i;
  }
  for (size_t i = 0; i < w.gemms.size(); ++i)
    for (size_t j = 0; j < i; ++j) ASSERT_FALSE(same_call(w.gemms[i], w.gemms[j])) << i << " " << j;
}

// Names join once each, whole joined lists too, and a list of many stops growing.
TEST(WorkloadScale, NamesJoinOnceAndStopAtTheirLimit) {
  std::string into;
  for (const char* name : {"q_proj", "k_proj", "q_proj", "", "k_proj+v_proj", "q_proj+v_proj"}) join_name(into, name);
  EXPECT_EQ(into, "q_proj+k_proj+v_proj");
  std::string many;
  for (int i = 0; i < 10000; ++i) join_name(many, "layer" + std::to_string(i));
  EXPECT_LE(many.size(), kMaxOriginChars + 4);
  EXPECT_EQ(many.substr(many.size() - 4), "+...");
  EXPECT_EQ(many.rfind("layer0+layer1+", 0), 0u);
}

// The incremental prices are the prices of the changed workload, for every size and candidate.
TEST(WorkloadScale, ACandidateIsPricedFromTheCallsItTouches) {
  Workload w = parse_gemm_list(random_list(400, 2), "x");
  w.gemms[3].usually_fused = true;  // left out of every total, changed with the others
  w.steps = 3;
  // Times from a formula of the problem; with `gaps`, none for a few sizes (a GEMM not measured).
  for (const bool gaps : {false, true}) {
    const GemmTimeOf time_of = [gaps](const Problem& p) -> std::optional<GemmTime> {
      if (gaps && p.m == 1000 && p.k == 4095) return std::nullopt;
      return GemmTime{1 + p.flops() / 1e9 + double(p.lda % 7), double(p.n % 5) / 100};
    };
    const StepTimeTerms terms = step_time_terms(w, time_of);
    const std::optional<StepTime> before = workload_step_time(w, time_of);
    ASSERT_EQ(step_time(terms).has_value(), before.has_value());
    size_t compared = 0, missing = 0;
    for (const DimensionKnob& knob : dimension_knobs(w)) {
      for (const int64_t to : {knob.value + 1, knob.value * 2, int64_t(1000), int64_t(4096)}) {
        if (to == knob.value) continue;
        const Workload changed = with_dimension(w, knob.value, to);
        const std::optional<StepTime> whole = workload_step_time(changed, time_of);
        const std::optional<StepTime> part = step_time_with_dimension(w, terms, knob, to, time_of);
        ASSERT_EQ(whole.has_value(), part.has_value()) << knob.value << " -> " << to;
        if (whole) {
          EXPECT_NEAR(part->us, whole->us, 1e-9 * whole->us) << knob.value << " -> " << to;
          EXPECT_NEAR(part->noise, whole->noise, 1e-9) << knob.value << " -> " << to;
          ++compared;
        } else {
          ++missing;
        }
        const double flops = step_flops(changed) - step_flops(w);
        EXPECT_NEAR(extra_step_flops(w, knob, to), flops, 1e-9 * step_flops(changed)) << knob.value << " -> " << to;
      }
    }
    EXPECT_GT(compared, gaps ? 0u : 30u);
    EXPECT_EQ(missing > 0, gaps);
  }
}

// The GEMMs a pad of sizes measures: the workload's and each candidate's changed ones, each once, in
// the order that changing every candidate's whole workload gave.
TEST(WorkloadScale, TheGemmsToMeasureAreThoseOfTheChangedWorkloads) {
  const Workload w = parse_gemm_list(random_list(300, 3), "x");
  const SizePadResult r = pad_sizes_plan(w, PadRequest{});
  std::vector<BackendProblem> expected;
  const auto add = [&](const Workload& x) {
    for (const WorkloadGemm& g : x.gemms) {
      if (g.usually_fused) continue;
      const Problem p = grouped_problem(g.problems);
      const BackendProblem bp{p, profile_backend(p, BackendKind::kCublas)};
      if (std::find(expected.begin(), expected.end(), bp) == expected.end()) expected.push_back(bp);
    }
  };
  add(w);
  EXPECT_EQ(size_pad_problems(r, BackendKind::kCublas, false), expected);
  for (size_t i = 0; i < r.knobs.size(); ++i)
    for (const PadCandidate& c : r.candidates[i]) add(with_dimension(w, r.knobs[i].value, c.value));
  EXPECT_EQ(size_pad_problems(r, BackendKind::kCublas, true), expected);
}

TEST(WorkloadScale, AListPastItsRowLimitIsRefusedInOneLine) {
  std::string text = "m,n,k,layout,dtype,batch,count\n";
  text.reserve(text.size() + (kMaxListRows + 1) * 18);
  for (size_t i = 0; i <= kMaxListRows; ++i) text += "8,8,8,nn,bf16,1,1\n";
  expect_usage_error([&] { parse_gemm_list(text, "--gemms: 'big.csv'"); }, "--gemms: 'big.csv'",
                     fmt::format(": line {}: more than 1000000 GEMMs, the limit on a GEMM list", kMaxListRows + 2));
  text.resize(text.size() - 18);  // the limit itself is read
  EXPECT_EQ(parse_gemm_list(text, "x").gemms.front().count, int64_t(kMaxListRows));
}

}  // namespace
}  // namespace shapescope
