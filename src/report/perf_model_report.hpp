// A performance model (model/perf_model.hpp) as text: what `calibrate-model` and `info --model`
// print: where it came from, and per class its held-out error, bandwidth and kernels.
#pragma once
#include <ostream>

#include "model/perf_model.hpp"

namespace shapescope {

void write_perf_model_text(std::ostream& out, const PerfModel& model);

}  // namespace shapescope
