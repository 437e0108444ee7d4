// The sweep's lines on stderr around its results: method, sentinel re-runs, summary, --verbose.
#include "report/sweep_report.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace shapescope {
namespace {

MeasureOutcome sample_outcome() {
  MeasureOutcome o;
  o.measured = 3;
  o.annotated = 3;
  o.gpu_floor_s = 2.0;
  o.flush_us = 18.9;
  o.median_clock_mhz = 1755;
  for (int samples : {4, 4, 23}) {
    TimingStats t;
    t.samples = samples;
    t.stop = samples == 23 ? StopReason::kCap : StopReason::kConverged;
    o.timings.push_back(t);
    StoredPoint p;
    p.result.timing = t;
    p.result.timing.drifted = samples == 23;
    o.points.push_back(p);
  }
  o.sentinel = sentinel_key({}, false, ClockState::kSustained);
  SentinelCheck first;
  o.sentinel_checks.push_back(first);
  SentinelCheck again;
  again.chunk = 4;
  again.sentinel_us = 31.2;
  again.reference_us = 25.1;
  again.drift = 31.2 / 25.1 - 1;
  again.limit = 0.05;
  again.remeasured = true;
  o.sentinel_checks.push_back(again);
  again.attempt = 2;
  again.remeasured = false;
  again.kept_drifted = true;
  o.sentinel_checks.push_back(again);
  o.phases.trace = 1.1;
  o.phases.trace_cupti = 0.2;
  o.phases.traced_by_cupti = 733;
  o.phases.timing = 4.4;
  o.phases.engine.graphs = 120;
  o.phases.engine.gpu_busy = 3.9;
  o.phases.engine.gpu_gaps = 0.1;
  return o;
}

TEST(SweepReport, MethodLineNamesTheStateAndTheRule) {
  MeasureOptions m;
  const std::string line = sweep_method_line(m, 50ll << 20, "s.db");
  EXPECT_NE(line.find("cold L2 (flush 50 MiB"), std::string::npos) << line;
  EXPECT_NE(line.find("sustained clocks (the default"), std::string::npos) << line;
  EXPECT_NE(line.find("4..40 samples per point"), std::string::npos) << line;
  m.samples = 10;
  m.clocks = ClockState::kBurst;
  const std::string fixed = sweep_method_line(m, 50ll << 20, "s.db");
  EXPECT_NE(fixed.find("10 samples per point (--samples)"), std::string::npos) << fixed;
  EXPECT_NE(fixed.find("burst clocks"), std::string::npos) << fixed;
}

TEST(SweepReport, SentinelReRunsAreOneLineEach) {
  std::ostringstream out;
  write_sentinel_events(out, sample_outcome());
  const std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
  EXPECT_NE(text.find("chunk 5 (measurement 1) read cublas 2048x2048x2048 at 31.2 us against 25.1 us (+24.30 %"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("measured again"), std::string::npos) << text;
  EXPECT_NE(text.find("kept and flagged drifted (D)"), std::string::npos) << text;
}

TEST(SweepReport, SummaryCarriesFloorSamplesClockAndSentinel) {
  std::ostringstream out;
  SweepTimes times;
  times.wall = 6.5;
  write_sweep_summary(out, sample_outcome(), times, false, ClockState::kSustained);
  const std::string line = out.str();
  EXPECT_NE(line.find("measured 3 points, reused 0, annotated 3 in 6.50 s wall"), std::string::npos) << line;
  EXPECT_NE(line.find("GPU-time floor 2.00 s"), std::string::npos) << line;
  EXPECT_NE(line.find("wall/floor 3.25"), std::string::npos) << line;
  EXPECT_NE(line.find("samples median 4, max 23"), std::string::npos) << line;
  EXPECT_NE(line.find("median SM clock 1755 MHz (sustained)"), std::string::npos) << line;
  EXPECT_NE(line.find("3 checks, largest drift 24.3 %, 1 chunks re-measured, 1 kept drifted"), std::string::npos)
      << line;
  EXPECT_NE(line.find("1 drifted"), std::string::npos) << line;
}

TEST(SweepReport, VerboseHasPhasesAndTheHistogram) {
  std::ostringstream out;
  SweepTimes times;
  times.wall = 6.5;
  times.startup = 0.6;
  write_sweep_details(out, sample_outcome(), times);
  const std::string text = out.str();
  EXPECT_NE(text.find("start-up 0.60"), std::string::npos) << text;
  EXPECT_NE(text.find("kernels read from graphs 1.10, CUPTI 0.20 (733 calls), timing 4.40"), std::string::npos) << text;
  EXPECT_NE(text.find("GPU busy 3.90, GPU idle between graphs 0.10"), std::string::npos) << text;
  EXPECT_NE(text.find("120 graphs"), std::string::npos) << text;
  EXPECT_NE(text.find("samples per point: 1-4: 2; 17-32: 1;"), std::string::npos) << text;
  EXPECT_NE(text.find("stopped: 2 converged, 1 at the cap, 0 fixed"), std::string::npos) << text;
  EXPECT_NE(text.find("none (sets the reference)"), std::string::npos) << text;
}

}  // namespace
}  // namespace shapescope
