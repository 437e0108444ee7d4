// The lines a measuring sweep writes on stderr around its results: the method (how the points are
// measured: L2, clock state, samples), the sentinel's re-runs, the summary (what was measured, wall
// against the GPU-time floor, clocks), and with --verbose where the time went and how many samples
// the points took.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>

#include "measure/measure.hpp"

namespace shapescope {

// "cold L2 (flush 50 MiB before each sample); sustained clocks (...); 4..40 samples per point ..."
std::string sweep_method_line(const MeasureOptions& options, int64_t l2_bytes, const std::string& db);

// The process's own times around measure(): before it (start-up: CUDA, the store, NVML, planning)
// and after it (annotations, output), and the whole.
struct SweepTimes {
  double startup = 0, after = 0, wall = 0;
};

// One line per sentinel check that sent a chunk round again or kept it drifted.
void write_sentinel_events(std::ostream& out, const MeasureOutcome& outcome);
// The last line: measured/reused/annotated, wall, floor, samples, clock and state, sentinel, flags.
void write_sweep_summary(std::ostream& out, const MeasureOutcome& outcome, const SweepTimes& times, bool hot,
                         ClockState clocks);
// The GPU's health while it measured, when it was not healthy (GpuHealth): "GPU 1 (GPU-...): under
// load its SM clock was 1120 MHz, 57 % of its 1980 MHz maximum; shared with 1 other process: ...";
// empty when healthy.
std::string health_warning(const DeviceContext& device, const GpuHealth& health);
// Before measuring: other processes already on the GPU (empty when none, or NVML cannot say).
std::string shared_gpu_warning(const DeviceContext& device, std::optional<size_t> other_processes);

// --verbose: the wall time phase by phase, the samples histogram and stop reasons, the sentinel.
void write_sweep_details(std::ostream& out, const MeasureOutcome& outcome, const SweepTimes& times);

}  // namespace shapescope
