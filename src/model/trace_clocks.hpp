// The clock a recorded step ran at: the NVML samples that scripts/record_trace.py and shapescope's
// record() keep in the trace beside its events, read back and summarized. Pure C++.
//
// The trace's top-level key (Chrome trace JSON allows keys besides "traceEvents"; docs/method.md):
//   "shapescopeClocks": {
//     "version": 1, "source": "NVML", "device": "NVIDIA H100 80GB HBM3", "uuid": "GPU-...",
//     "interval_ms": 20, "max_sm_clock_mhz": 1980, "power_limit_w": 700.0,
//     "columns": ["t_us", "sm_clock_mhz", "power_w", "gpu_util_pct"],
//     "samples": [[4687119147900, 1980, 412.5, 100], ...]
//   }
// t_us is on the trace's own timeline (its events' "ts": baseTimeNanoseconds + 1000 x t_us is the
// Unix time in ns), so a sample lines up with the kernels that ran; power_w and gpu_util_pct are
// null where NVML could not read them. The samples cover the profiled step(s) only.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/workload.hpp"

namespace shapescope {

constexpr const char* kClocksKey = "shapescopeClocks";
constexpr int kClocksVersion = 1;

// The summary of the trace's "shapescopeClocks" (model/workload.hpp: RecordedClocks). nullopt without
// the key. A key this reader cannot use (not an object, another version or columns, no samples, no
// well-formed sample) gives nullopt and one note saying why; malformed samples are left out with one
// note; samples that do not overlap the trace's kernels in time are all counted, with a note.
std::optional<RecordedClocks> read_recorded_clocks(const nlohmann::json& trace, std::vector<std::string>& notes);

}  // namespace shapescope
