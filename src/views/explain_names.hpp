// explain's names for what it measures: the labels of sizes and problems, the fixed-kernel control's variant on a GPU, the backend of a
// precision control, the sampling, the neighbour a verdict compares with. Used by views/explain.cpp only.
#pragma once
#include <optional>
#include <string>

#include "core/backend_kind.hpp"
#include "core/device_context.hpp"
#include "core/problem.hpp"
#include "timing/measure_options.hpp"
#include "views/explain.hpp"

namespace shapescope {

std::string size_label(const ShapeArg& shape, const Problem& p);
std::string describe_problem(const Problem& p, const BackendSpec& backend);
std::string ld_label(const Problem& p);
std::optional<BackendSpec> fixed_spec(const ExplainRequest& o, const DeviceContext& d);
BackendSpec precision_backend(const ExplainRequest& o, DType dtype);
// The neighbour the verdict compares the target with, when it is one (not a control).
std::optional<Problem> compared_problem(const ExplainReport& report);
// "10 samples", "4..40 samples (stopping at a 2.0 % interval)": how a point was sampled.
std::string sampling_text(const MeasureOptions& m);

}  // namespace shapescope
