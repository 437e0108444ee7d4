// `profile`'s fp8 casts of a traced step: the casts as the step ran them (the trace's own cast kernels,
// model/trace_casts.hpp), the step's GEMMs and casts against the trace's, and the casts shapescope
// measures with its own cast kernels as a what-if (ProfileResult::fp8_casts). Lines and JSON.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "views/profile.hpp"

namespace shapescope {

// The numbers per step (a trace's times over its steps).
struct StepCastsCompared {
  double steps = 1;
  double trace_us = 0, kernels = 0, ranges = 0;  // the trace's casts
  // GEMMs + casts with the trace's casts: the GEMMs measured here and the trace's, over the GEMMs both
  // have (ProfileTotals' compared ones); nullopt without a GEMM compared or without casts found.
  std::optional<double> gemms_and_casts_us, trace_gemms_and_casts_us, ratio;
  // The what-if: shapescope's casts (every cast measured) in place of the trace's; saving > 0 is less.
  std::optional<double> ours_us, saving_us;
};
// nullopt unless the workload is a trace (Workload::casts searched).
std::optional<StepCastsCompared> compare_step_casts(const ProfileResult& result);

// The lines `profile` prints after its total: the trace's casts (or, for a step with fp8 GEMMs, the one
// line that none were found), GEMMs + casts against the trace, and the what-if; empty when there is
// nothing to say (a trace with neither casts nor fp8 GEMMs).
std::vector<std::string> trace_casts_lines(const ProfileResult& result);
// The same as JSON ("TraceCasts" of report/json_records.cpp); null unless the workload is a trace.
nlohmann::ordered_json trace_casts_json(const ProfileResult& result);

}  // namespace shapescope
