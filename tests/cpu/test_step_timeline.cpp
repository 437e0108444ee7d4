// A step's timeline (model/step_timeline.hpp) from a trace's kernels, the replay's plan arithmetic
// (timing/replay_plan.hpp), and the clock a trace's GEMMs ran at, read from their times
// (model/profile.hpp: infer_clock).
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "model/profile.hpp"
#include "model/step_timeline.hpp"
#include "model/trace_import.hpp"
#include "timing/paired.hpp"
#include "timing/replay_plan.hpp"
#include "views/step_replay.hpp"

namespace shapescope {
namespace {

using Json = nlohmann::json;
using Kind = TimelineSegment::Kind;

TimelineKernel gemm_kernel(double ts, double dur, size_t gemm, int64_t call) {
  return {ts, dur, "nvjet_sm90_tst_128x256", gemm, call};
}
TimelineKernel other_kernel(double ts, double dur, const std::string& name = "vectorized_elementwise_kernel") {
  return {ts, dur, name, std::nullopt, std::nullopt};
}

TEST(StepTimeline, KernelsFoldIntoGemmCallsOtherKernelsAndIdleGaps) {
  // Out of order on purpose: the builder sorts by start time.
  const std::optional<StepTimeline> t = build_timeline({
      gemm_kernel(12, 20, 0, 100),
      other_kernel(0, 10),
      gemm_kernel(33, 2, 0, 100),  // the same call's split-K reduction joins its segment
      other_kernel(75, 30, "flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64>>"),
      other_kernel(106, 4),
      gemm_kernel(111, 10, 1, 101),
      gemm_kernel(122, 10, 1, 102),  // the same GEMM, another call: a segment of its own
  });
  ASSERT_TRUE(t);
  ASSERT_EQ(t->segments.size(), 6u);
  EXPECT_EQ(t->segments[0].kind, Kind::kOtherKernels);
  EXPECT_DOUBLE_EQ(t->segments[0].us, 10);
  EXPECT_EQ(t->segments[1].kind, Kind::kGemm);
  EXPECT_EQ(t->segments[1].gemm, 0u);
  EXPECT_DOUBLE_EQ(t->segments[1].us, 22);
  EXPECT_EQ(t->segments[2].kind, Kind::kIdle);
  EXPECT_DOUBLE_EQ(t->segments[2].us, 40);  // the reduction ends at 35, attention starts at 75
  EXPECT_EQ(t->segments[3].kind, Kind::kOtherKernels);
  EXPECT_DOUBLE_EQ(t->segments[3].us, 34);
  EXPECT_DOUBLE_EQ(t->segments[3].attention_us, 30);
  EXPECT_EQ(t->segments[4].gemm, 1u);
  EXPECT_EQ(t->segments[5].gemm, 1u);
  EXPECT_EQ(t->gemm_calls(), 3u);
  EXPECT_DOUBLE_EQ(t->gemm_us(), 42);
  EXPECT_DOUBLE_EQ(t->other_us(), 44);
  EXPECT_DOUBLE_EQ(t->idle_us(), 40);
  EXPECT_DOUBLE_EQ(t->span_us, 132);
}

TEST(StepTimeline, ShortGapsAreLaunchGapsAndOverlapsAreNotIdle) {
  const std::optional<StepTimeline> t = build_timeline({
      gemm_kernel(0, 10, 0, 1),
      other_kernel(10 + kTimelineIdleFromUs - 1, 5),  // a launch gap: no idle segment
      other_kernel(12, 50),                           // overlaps (another stream): busy until 62
      gemm_kernel(40, 10, 0, 2),                      // starts inside the busy span
      gemm_kernel(70, 10, 0, 3),                      // 8 us after the busy span ends: idle
  });
  ASSERT_TRUE(t);
  std::vector<Kind> kinds;
  for (const TimelineSegment& s : t->segments) kinds.push_back(s.kind);
  EXPECT_EQ(kinds, (std::vector<Kind>{Kind::kGemm, Kind::kOtherKernels, Kind::kGemm, Kind::kIdle, Kind::kGemm}));
  EXPECT_DOUBLE_EQ(t->segments[3].us, 8);
}

TEST(StepTimeline, NoGemmKernelNoTimeline) {
  EXPECT_FALSE(build_timeline({}));
  EXPECT_FALSE(build_timeline({other_kernel(0, 5), other_kernel(10, 5)}));
}

TEST(StepTimeline, AttentionKernelsByName) {
  EXPECT_TRUE(is_attention_kernel("flash_fwd_splitkv_kernel"));
  EXPECT_TRUE(is_attention_kernel("void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel"));
  EXPECT_TRUE(is_attention_kernel("fmha_cutlassF_bf16_aligned_64x128_rf_sm80"));
  EXPECT_TRUE(is_attention_kernel("cudnn_generated_fort_native_sdpa_sm90_flash_fprop"));
  EXPECT_FALSE(is_attention_kernel("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>"));
  EXPECT_FALSE(is_attention_kernel("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"));
}

// A trace's GEMM calls, in time order, with their kernels' times: the timeline names the merged calls.
TEST(StepTimeline, ATraceGivesItsTimeline) {
  Json ev = Json::array();
  auto op = [&](double ts, int64_t ext, int64_t rows) {
    ev.push_back({{"ph", "X"}, {"cat", "cpu_op"}, {"name", "aten::mm"}, {"pid", 7}, {"tid", 1}, {"ts", ts}, {"dur", 5},
                  {"args",
                   {{"External id", ext},
                    {"Input Dims", {{rows, 64}, {64, 32}}},
                    {"Input Strides", {{64, 1}, {32, 1}}},
                    {"Input type", {"c10::BFloat16", "c10::BFloat16"}}}}});
  };
  auto kernel = [&](double ts, double dur, int64_t corr, std::optional<int64_t> ext, const std::string& name) {
    if (ext)
      ev.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"pid", 7}, {"tid", 1},
                    {"ts", 0}, {"dur", 1}, {"args", {{"External id", *ext}, {"correlation", corr}}}});
    ev.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", name}, {"pid", 0}, {"tid", 7}, {"ts", ts}, {"dur", dur},
                  {"args", {{"correlation", corr}}}});
  };
  op(100, 1, 128);
  op(200, 2, 256);
  op(300, 3, 128);  // the first call's shape again: merged into gemm 0
  kernel(1000, 10, 11, 1, "nvjet_a");
  kernel(1012, 30, 12, std::nullopt, "layer_norm_kernel");
  kernel(1042, 20, 13, 2, "nvjet_b");
  kernel(1100, 10, 14, 3, "nvjet_a");
  const Workload w = parse_torch_trace(Json{{"traceEvents", ev}}.dump(), "t");
  ASSERT_EQ(w.gemms.size(), 2u);
  ASSERT_TRUE(w.timeline);
  std::vector<std::pair<Kind, size_t>> seen;
  for (const TimelineSegment& s : w.timeline->segments) seen.emplace_back(s.kind, s.kind == Kind::kGemm ? s.gemm : 99);
  EXPECT_EQ(seen, (std::vector<std::pair<Kind, size_t>>{
                      {Kind::kGemm, 0}, {Kind::kOtherKernels, 99}, {Kind::kGemm, 1}, {Kind::kIdle, 99}, {Kind::kGemm, 0}}));
  EXPECT_DOUBLE_EQ(w.timeline->segments[3].us, 38);
}

TEST(ReplayPlan, StandInsMergeAndShortOnesGo) {
  using R = ReplayItem::Kind;
  const std::vector<ReplayItem> items = {
      {R::kCall, 0, 0, 0, 0},        {R::kMemoryWork, 0, 0, 3, 0}, {R::kMemoryWork, 0, 0, 4, 0},
      {R::kIdle, 0, 0, 1, 0},        {R::kCall, 1, 0, 0, 1},       {R::kComputeWork, 0, 0, 1.5, 0},
      {R::kCall, 0, 0, 0, 0},
  };
  const std::vector<ReplayItem> out = compact_replay(items, 2);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[1].kind, R::kMemoryWork);
  EXPECT_DOUBLE_EQ(out[1].us, 7);
  EXPECT_EQ(out[2].kind, R::kCall);  // the 1 us idle and the 1.5 us compute stand-in are gone
  EXPECT_DOUBLE_EQ(standin_us(items), 9.5);
  // Timed calls' times add up per term, in item order.
  EXPECT_EQ(term_sums(out, {10, 20, 30}, 2), (std::vector<double>{40, 20}));
}

// A changed step named by --what-if keeps the passes going until its move (1 - ratio), not only its
// ratio, is known within the rule's move target; the time limit still ends them.
TEST(ReplayPlan, ANamedChangeRunsUntilItsMoveIsKnown) {
  ReplayRule rule;
  rule.steps.resize(2);
  const std::vector<double> sums(8, 100.0);  // the step's sums: known exactly
  // Eight pairs of a 5 % move, their ratios spread +-0.4 %: the ratio is known within the step's
  // +-0.5 % target, its move (0.05 +- ~0.003) not within 5 % of itself (+-0.0025).
  const std::vector<double> spread = {0.946, 0.954, 0.947, 0.953, 0.948, 0.952, 0.946, 0.954};
  const std::vector<std::vector<double>> ratios = {{}, spread};
  EXPECT_TRUE(replay_done(sums, ratios, rule, 1.0)) << "not named: the ratio's target is met";
  rule.precise = {1};
  EXPECT_FALSE(replay_done(sums, ratios, rule, 1.0)) << "named: the move is not known within 5 %";
  EXPECT_TRUE(replay_done(sums, ratios, rule, rule.max_seconds)) << "the time limit ends the passes";
  // The same move measured tighter: known within 5 % of itself.
  const std::vector<double> tight = {0.949, 0.951, 0.9495, 0.9505, 0.949, 0.951, 0.9495, 0.9505};
  EXPECT_TRUE(replay_done(sums, {{}, tight}, rule, 1.0));
  // Too few pairs: not before min_replays of them, unless the hard limit has passed; a named change's
  // time limit ends the passes once it has an interval (three pairs), not kHardLimit times later.
  const std::vector<double> two(tight.begin(), tight.begin() + 2), three(tight.begin(), tight.begin() + 3);
  EXPECT_FALSE(replay_done(sums, {{}, two}, rule, rule.max_seconds));
  EXPECT_TRUE(replay_done(sums, {{}, two}, rule, kHardLimit * rule.max_seconds));
  EXPECT_TRUE(replay_done(sums, {{}, three}, rule, rule.max_seconds));
  rule.precise.clear();
  EXPECT_FALSE(replay_done(sums, {{}, three}, rule, rule.max_seconds)) << "no named change: six pairs or the hard limit";
}

// A named step is asked for its move, not its ratio: a 30 % saving to +-0.4 % of the step is known
// within 5 % of itself, though its ratio (0.7 +- 0.004: +-0.57 %) misses the step's +-0.5 %. And its
// time limit waits for the named step's interval only, not for a changed step that gets no pairs.
TEST(ReplayPlan, ANamedStepIsJudgedByItsMoveAndWaitsForNoOther) {
  ReplayRule rule;
  rule.steps.resize(3);
  rule.precise = {1};
  const std::vector<double> sums(8, 100.0);
  const std::vector<double> big = {0.696, 0.704, 0.697, 0.703, 0.698, 0.702, 0.696, 0.704};
  const std::vector<double> small = {0.949, 0.951, 0.9495, 0.9505, 0.949, 0.951, 0.9495, 0.9505};
  EXPECT_TRUE(replay_done(sums, {{}, big, small}, rule, 1.0)) << "the 30 % move is known within 5 %";
  rule.precise.clear();
  EXPECT_FALSE(replay_done(sums, {{}, big, small}, rule, 1.0)) << "not named: its ratio misses +-0.5 %";
  rule.precise = {1};
  const std::vector<double> three(small.begin(), small.begin() + 3);
  EXPECT_TRUE(replay_done(sums, {{}, three, {}}, rule, rule.max_seconds))
      << "the named step has an interval; step 2's missing pairs do not stretch the limit";
  EXPECT_FALSE(replay_done(sums, {{}, {0.95, 0.95}, {}}, rule, rule.max_seconds)) << "the named step has none";
}

// A named step keeps its rule when a step before it cannot run here and is left out of the replay.
// Left out itself, the step's own limits hold again (not the user's 30 s, nor an unbounded count).
TEST(ReplayPlan, ANamedStepKeepsItsRuleWhenAStepBeforeItIsLeftOut) {
  ReplayRule rule;
  rule.precise = {3};
  rule.max_seconds = 30;
  rule.max_replays = 1 << 30;
  ReplayRule runnable = rule;
  keep_precise(runnable, rule, {0, 1, 3});
  EXPECT_EQ(runnable.precise, (std::vector<size_t>{2}));
  EXPECT_EQ(runnable.max_seconds, 30);
  keep_precise(runnable, rule, {0, 1, 2, 3});
  EXPECT_EQ(runnable.precise, (std::vector<size_t>{3}));
  keep_precise(runnable, rule, {0, 1, 2});
  EXPECT_TRUE(runnable.precise.empty()) << "the named step itself left out";
  EXPECT_EQ(runnable.max_seconds, ReplayRule{}.max_seconds);
  EXPECT_EQ(runnable.max_replays, ReplayRule{}.max_replays);
}

// A move near nothing is known once its interval is within a tenth of a percent of the step: 5 % of
// no move is no interval at all.
TEST(ReplayPlan, AMoveNearNothingIsKnownWithinAFloor) {
  PairedRatio r;
  r.median = 1.0, r.low = 0.9995, r.high = 1.0005, r.pairs = 6;
  EXPECT_TRUE(move_known(r));
  r.low = 0.998, r.high = 1.002;
  EXPECT_FALSE(move_known(r));
  r.median = 0.9, r.low = 0.896, r.high = 0.904;  // a 10 % move to +-4 %
  EXPECT_TRUE(move_known(r));
  r.pairs = 2;
  EXPECT_FALSE(move_known(r)) << "two pairs make no interval";
  EXPECT_DOUBLE_EQ(interval_level(r), 0) << "two pairs make no interval";
  r.pairs = 3, r.coverage = 0.75;
  EXPECT_FALSE(move_known(r)) << "a 75 % interval knows nothing at 95 %";
  EXPECT_DOUBLE_EQ(interval_level(r), 0.75) << "three pairs: their least and largest, 75 %";
  r.pairs = 6;
  EXPECT_TRUE(move_known(r));
  // A change that costs: its move is the ratio's excess over 1, known the same way.
  r.median = 1.3, r.low = 1.29, r.high = 1.31;
  EXPECT_TRUE(move_known(r)) << "a 30 % cost to +-1 %";
  r.low = 1.27, r.high = 1.33;
  EXPECT_FALSE(move_known(r)) << "a 30 % cost to +-3 %: +-10 % of it";
}

// With a named change, the other changed steps leave the passes once they have an interval, and the
// stopping rule no longer waits for them; without one, every changed step stays.
TEST(ReplayPlan, TheOtherChangesLeaveThePassesOfANamedOne) {
  ReplayRule rule;
  rule.steps.resize(3);
  const std::vector<double> three = {0.99, 1.0, 1.01}, many = {0.949, 0.951, 0.9495, 0.9505, 0.949, 0.951};
  const std::vector<std::vector<double>> ratios = {{}, three, many};
  EXPECT_TRUE(replay_keeps(1, ratios, rule));
  rule.precise = {2};
  EXPECT_TRUE(replay_keeps(0, ratios, rule));
  EXPECT_FALSE(replay_keeps(1, ratios, rule)) << "an interval (3 pairs) and not named";
  EXPECT_TRUE(replay_keeps(2, ratios, rule));
  EXPECT_TRUE(replay_keeps(1, {{}, {0.99, 1.0}, many}, rule)) << "two pairs make no interval";
  // The passes replay the step around step 2 alone: 0 2 0 2 0 (every changed step: 0 a 0 b 0 b 0 a 0).
  EXPECT_EQ(replay_pass(3, ratios, rule, 7), (std::vector<size_t>{0, 2, 0, 2, 0}));
  EXPECT_EQ(replay_pass(3, {{}, {}, {}}, rule, 7).size(), 9u);
  EXPECT_EQ(replay_pass(1, {{}}, rule, 7), (std::vector<size_t>{0}));
  // Step 1's three pairs (+-1 %) no longer hold the passes: step 2's move is known within 5 %.
  EXPECT_TRUE(replay_done(std::vector<double>(8, 100.0), ratios, rule, 1.0));
}

TEST(ClockInference, ComputeBoundTimesGiveTheClock) {
  // Measured at 1980 MHz; in the trace each took 1980/1700 x longer: it ran at 1700 MHz.
  std::vector<ClockEvidence> evidence = {{1000 * 1980.0 / 1700, 1000, 1980}, {200 * 1980.0 / 1700, 200, 1980}};
  std::optional<ClockInference> c = infer_clock(evidence);
  ASSERT_TRUE(c);
  EXPECT_NEAR(c->mhz, 1700, 1e-6);
  EXPECT_EQ(c->gemms, 2u);
  // The trace time weighs: a long GEMM at 1500 MHz outweighs two short ones at 1980.
  evidence = {{1000 * 1980.0 / 1500, 1000, 1980}, {100, 100, 1980}, {100, 100, 1980}};
  c = infer_clock(evidence);
  ASSERT_TRUE(c);
  EXPECT_NEAR(c->mhz, 1500, 1e-6);
  EXPECT_NEAR(c->high_mhz, 1500, 1e-6);
  // GEMMs under kClockEvidenceFromUs, or without a measured clock, say nothing.
  EXPECT_FALSE(infer_clock({{kClockEvidenceFromUs / 2, 5, 1980}, {100, 90, 0}}));
}

TEST(ClockInference, TheRecordedClockDecidesTheReplayBeforeTheGemmsTimes) {
  const ClockInference gemms_at_boost{1915, 1900, 1930, 15};  // within kBoostShare of 1961
  const ClockInference gemms_below{1700, 1650, 1750, 15};
  // Without NVML samples the GEMMs' times decide: near boost they stand, below it the step is replayed.
  StepClockCall c = step_clock_call(gemms_at_boost, 1961, std::nullopt, false);
  EXPECT_FALSE(c.replay);
  EXPECT_TRUE(c.ran_at_boost);
  c = step_clock_call(gemms_below, 1961, std::nullopt, false);
  EXPECT_TRUE(c.replay);
  EXPECT_EQ(c.why, "the trace's compute-bound GEMMs ran below the boost clock");
  // Samples recorded below boost at the power limit replay the step although its GEMMs read near boost,
  // against the GPU's recorded maximum clock where the trace has it.
  RecordedClocks recorded;
  recorded.busy_samples = 21;
  recorded.sm_clock_median_mhz = 1710;
  recorded.max_sm_clock_mhz = 1980;
  recorded.power_median_w = 667;
  recorded.power_limit_w = 700;
  c = step_clock_call(gemms_at_boost, 1961, recorded, false);
  EXPECT_TRUE(c.replay);
  EXPECT_FALSE(c.ran_at_boost);
  EXPECT_EQ(c.why, "the step recorded at 1710 MHz and 667 W (NVML, medians; power limit 700 W), below the boost "
                   "clock (1980 MHz)");
  // Samples at boost leave it to the GEMMs (both must say boost); samples without a busy one say nothing.
  recorded.sm_clock_median_mhz = 1980;
  EXPECT_FALSE(step_clock_call(gemms_at_boost, 1961, recorded, false).replay);
  EXPECT_TRUE(step_clock_call(gemms_below, 1961, recorded, false).replay);
  recorded.sm_clock_median_mhz = 1710;
  recorded.busy_samples = 0;
  EXPECT_FALSE(step_clock_call(gemms_at_boost, 1961, recorded, false).replay);
  // A low clock in a step far below its power limit is not the limit's: an H200's small OPT step recorded
  // 1875 MHz at 154 W of 700 W while its GEMMs ran at boost, and replayed it read 1.08x its trace.
  recorded.busy_samples = 2;
  recorded.sm_clock_median_mhz = 1875;
  recorded.power_median_w = 154;
  c = step_clock_call(gemms_at_boost, 1961, recorded, false);
  EXPECT_FALSE(c.replay) << c.why;
  EXPECT_TRUE(c.ran_at_boost);
  // Without the power or the limit recorded the samples cannot tell: the GEMMs decide.
  recorded.power_median_w = std::nullopt;
  EXPECT_FALSE(step_clock_call(gemms_at_boost, 1961, recorded, false).replay);
  recorded.power_median_w = 667;
  recorded.power_limit_w = std::nullopt;
  EXPECT_FALSE(step_clock_call(gemms_at_boost, 1961, recorded, false).replay);
  // --clocks replay replays whatever the clock; no evidence at all replays too.
  EXPECT_TRUE(step_clock_call(gemms_at_boost, 1961, std::nullopt, true).replay);
  EXPECT_TRUE(step_clock_call(std::nullopt, 1961, std::nullopt, false).replay);
}

TEST(StepReplay, AChangedStepCastsEachWeightOncePerStep) {
  // Two steps of two layers: one GEMM shape called 4 times, an fp8 change with a weight cast per step.
  StepTimeline t;
  for (int call = 0; call < 4; ++call) {
    t.segments.push_back({TimelineSegment::Kind::kGemm, 0, 100, 0});
    t.segments.push_back({TimelineSegment::Kind::kOtherKernels, 0, 50, 0});
  }
  Problem gemm;
  gemm.m = gemm.n = gemm.k = 4096;
  Problem fp8 = gemm, cast = gemm;
  fp8.dtype = DType::kFp8;
  cast.dtype = DType::kFp8, cast.cast = CastOperand::kB;
  const std::map<size_t, ReplayCall> call_of{{0, ReplayCall{gemm}}};
  StepChange change;
  change.per_call[0] = {ReplayCall{fp8, BackendSpec(BackendKind::kCublasLt)}};
  change.per_step[0] = {ReplayCall{cast, BackendSpec(BackendKind::kCast)}};
  const auto casts = [&](const StepChange& c) {
    const std::vector<Problem> run = replay_problems(t, call_of, &c);
    return std::count(run.begin(), run.end(), cast);
  };
  EXPECT_EQ(casts(change), 4) << "each call its own weight (one micro-batch per step)";
  change.micro_batches = 2;
  EXPECT_EQ(casts(change), 2) << "two micro-batches share a weight's cast";
  const std::vector<Problem> unchanged = replay_problems(t, call_of, nullptr);
  EXPECT_EQ(std::count(unchanged.begin(), unchanged.end(), gemm), 4);
}

}  // namespace
}  // namespace shapescope
