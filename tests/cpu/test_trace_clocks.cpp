// The clock a recorded step ran at (model/trace_clocks.hpp): NVML's samples in a trace's
// "shapescopeClocks", summarized over the samples taken while the trace's kernels ran; every kind of
// broken key gets a note and no crash; a trace without the key has no recorded clocks.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/trace_clocks.hpp"
#include "model/trace_import.hpp"

namespace shapescope {
namespace {

using Json = nlohmann::json;

Json kernel(double ts, double dur) {
  return {{"ph", "X"}, {"cat", "kernel"}, {"name", "k"}, {"pid", 0}, {"tid", 7}, {"ts", ts}, {"dur", dur}};
}

Json clocks_with(Json samples) {
  return {{"version", 1},
          {"source", "NVML"},
          {"device", "NVIDIA H100 80GB HBM3"},
          {"uuid", "GPU-0123"},
          {"interval_ms", 1},
          {"max_sm_clock_mhz", 1980},
          {"power_limit_w", 700.0},
          {"columns", {"t_us", "sm_clock_mhz", "power_w", "gpu_util_pct"}},
          {"samples", std::move(samples)}};
}

// Kernels over [1000, 3000] (two that touch) and [10000, 12000] us; a sample every 1000 us from 0 to
// 14000. Busy: a kernel ran in the 1000 us before the sample (1000..4000 and 10000..13000).
Json step_trace() {
  Json samples = Json::array();
  const std::vector<double> busy_mhz = {1980, 1965, 1950, 1935, 1700, 1755, 1800, 1830};
  const std::vector<double> busy_w = {400, 410, 420, 430, 600, 650, 680, 690};
  size_t next = 0;
  for (int t = 0; t <= 14000; t += 1000) {
    const bool busy = (t >= 1000 && t <= 4000) || (t >= 10000 && t <= 13000);
    if (busy) {
      samples.push_back({t, busy_mhz[next], busy_w[next], 100});
      ++next;
    } else {
      samples.push_back({t, 345, 70.5, 0});
    }
  }
  return {{"traceEvents", {kernel(1000, 500), kernel(1500, 1500), kernel(10000, 2000)}},
          {"shapescopeClocks", clocks_with(samples)}};
}

TEST(TraceClocks, TheBusySamplesGiveTheClockAndPower) {
  std::vector<std::string> notes;
  const std::optional<RecordedClocks> c = read_recorded_clocks(step_trace(), notes);
  ASSERT_TRUE(c);
  EXPECT_TRUE(notes.empty()) << notes.front();
  EXPECT_EQ(c->device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(c->uuid, "GPU-0123");
  EXPECT_EQ(c->interval_ms, 1);
  EXPECT_EQ(c->max_sm_clock_mhz, 1980);
  EXPECT_EQ(c->power_limit_w, 700);
  EXPECT_EQ(c->samples, 15);
  EXPECT_EQ(c->busy_samples, 8);
  // 1700 1755 1800 1830 | 1935 1950 1965 1980: the idle 345 MHz samples are not in it.
  EXPECT_DOUBLE_EQ(c->sm_clock_median_mhz, (1830 + 1935) / 2.0);
  EXPECT_EQ(c->sm_clock_low_mhz, 1700);
  EXPECT_EQ(c->sm_clock_high_mhz, 1980);
  EXPECT_DOUBLE_EQ(*c->power_median_w, (430 + 600) / 2.0);
  EXPECT_EQ(c->power_max_w, 690);
}

TEST(TraceClocks, TheTraceParserFillsTheWorkload) {
  const Workload w = parse_torch_trace(step_trace().dump(), "--trace 'step.json'");
  ASSERT_TRUE(w.recorded_clocks);
  EXPECT_EQ(w.recorded_clocks->busy_samples, 8);
  EXPECT_EQ(w.recorded_clocks->sm_clock_high_mhz, 1980);
}

TEST(TraceClocks, ATraceWithoutTheKeyHasNoneAndNoNote) {
  const Workload w = load_torch_trace(std::string(SHAPESCOPE_TEST_DATA) + "/traces/gpt2.json", "--trace 'gpt2.json'");
  EXPECT_FALSE(w.recorded_clocks);
  for (const std::string& note : w.notes) EXPECT_EQ(note.find("shapescopeClocks"), std::string::npos) << note;
}

TEST(TraceClocks, SamplesOutsideTheKernelsAreAllCountedWithANote) {
  Json trace = step_trace();
  trace["traceEvents"] = {kernel(900000, 10)};  // another time base: no sample near a kernel
  std::vector<std::string> notes;
  std::optional<RecordedClocks> c = read_recorded_clocks(trace, notes);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->busy_samples, 15);
  EXPECT_EQ(c->sm_clock_low_mhz, 345);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "none of the 15 samples of \"shapescopeClocks\" was taken while the trace's kernels ran: the "
                      "recorded clock is over all of them");
  trace.erase("traceEvents");  // no kernels at all
  notes.clear();
  c = read_recorded_clocks(trace, notes);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->busy_samples, 15);
  EXPECT_EQ(notes.size(), 1u);
}

TEST(TraceClocks, MalformedSamplesAreLeftOutWithOneNote) {
  Json trace = step_trace();
  Json& samples = trace["shapescopeClocks"]["samples"];
  samples.push_back({11500, "1980", 500, 100});   // a clock as text
  samples.push_back({11600, -5, 500, 100});       // a negative clock
  samples.push_back({11700, 1980, 500, 150});     // utilization over 100 %
  samples.push_back({11800});                     // too short
  samples.push_back("11900 1980");                // not an array
  samples.push_back({11950, 1990, nullptr, nullptr});  // NVML gave no power: a sample all the same
  std::vector<std::string> notes;
  const std::optional<RecordedClocks> c = read_recorded_clocks(trace, notes);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->samples, 16);
  EXPECT_EQ(c->busy_samples, 9);
  EXPECT_EQ(c->sm_clock_high_mhz, 1990);
  EXPECT_EQ(c->power_max_w, 690);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "5 of the 21 samples of \"shapescopeClocks\" are not [t_us, sm_clock_mhz, power_w, gpu_util_pct] "
                      "with a positive clock (the first: [11500,\"1980\",500,100]): left out");
}

TEST(TraceClocks, AKeyThatCannotBeReadGivesOneNote) {
  const auto note_of = [](const Json& clocks) {
    Json trace = step_trace();
    trace["shapescopeClocks"] = clocks;
    std::vector<std::string> notes;
    EXPECT_FALSE(read_recorded_clocks(trace, notes)) << clocks.dump();
    EXPECT_EQ(notes.size(), 1u) << clocks.dump();
    return notes.empty() ? std::string() : notes[0];
  };
  EXPECT_EQ(note_of(Json::array()), "\"shapescopeClocks\" is not an object: the recorded clocks are left out");
  Json c = clocks_with(Json::array({{1000, 1980, 400, 100}}));
  c["version"] = 2;
  EXPECT_EQ(note_of(c), "\"shapescopeClocks\" has version 2 where this shapescope reads 1: the recorded clocks are "
                        "left out");
  c.erase("version");
  EXPECT_EQ(note_of(c), "\"shapescopeClocks\" has version null where this shapescope reads 1: the recorded clocks "
                        "are left out");
  c = clocks_with(Json::array({{1000, 1980, 400, 100}}));
  c["columns"] = {"t_ms", "sm_clock_mhz", "power_w", "gpu_util_pct"};
  EXPECT_EQ(note_of(c), "\"shapescopeClocks\" has columns [\"t_ms\",\"sm_clock_mhz\",\"power_w\",\"gpu_ut... "
                        "where this shapescope reads [\"t_us\",\"sm_clock_mhz\",\"power_w\",\"gpu_util_pct\"]: the "
                        "recorded clocks are left out");
  c = clocks_with(Json::object());
  EXPECT_EQ(note_of(c), "\"shapescopeClocks\" has no \"samples\" array: the recorded clocks are left out");
  c = clocks_with(Json::array({{1000, 0, 400, 100}, {2000}}));
  EXPECT_EQ(note_of(c), "\"shapescopeClocks\" holds no well-formed sample (2 in all): the recorded clocks are left out");
  EXPECT_EQ(note_of(clocks_with(Json::array())),
            "\"shapescopeClocks\" holds no well-formed sample (0 in all): the recorded clocks are left out");
}

TEST(TraceClocks, LimitsOutOfRangeAreNotKept) {
  Json trace = step_trace();
  trace["shapescopeClocks"]["max_sm_clock_mhz"] = -1;
  trace["shapescopeClocks"]["power_limit_w"] = "700";
  trace["shapescopeClocks"]["interval_ms"] = 1e300;
  trace["shapescopeClocks"].erase("device");
  std::vector<std::string> notes;
  const std::optional<RecordedClocks> c = read_recorded_clocks(trace, notes);
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->max_sm_clock_mhz);
  EXPECT_FALSE(c->power_limit_w);
  EXPECT_EQ(c->interval_ms, 0);
  EXPECT_EQ(c->device, "");
  EXPECT_EQ(c->busy_samples, 8);  // the window is the samples' own spacing
}

}  // namespace
}  // namespace shapescope
