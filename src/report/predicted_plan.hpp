// sweep --dry-run --predict: the plan with each point's predicted time (model/perf_predict.hpp), its
// class's held-out error and where it lies outside the measured range, and the total.
#pragma once
#include <ostream>
#include <vector>

#include "core/problem.hpp"
#include "model/perf_predict.hpp"

namespace shapescope {

void write_predicted_plan(std::ostream& out, const std::vector<Problem>& problems, const GpuPerfModel& model);

}  // namespace shapescope
