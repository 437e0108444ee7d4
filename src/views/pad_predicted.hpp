// pad --predict: pad's analysis with every GEMM's time from a GPU's performance model instead of a
// measurement (model/perf_predict.hpp): the wave-filling candidates from the kernels it assumed, each
// saving counted only above the model's held-out error (its GEMMs' median, weighted by their time),
// as a measured one counts only above the noise. A GEMM the model cannot predict has no time, and a
// step with one is unknown, never guessed.
#pragma once
#include <memory>

#include "model/perf_predict.hpp"
#include "views/pad.hpp"
#include "views/pad_sizes.hpp"

namespace shapescope {

PadResult pad_predict(const ModelConfig& config, const PadRequest& request,
                      const std::shared_ptr<const GpuPerfModel>& model);
SizePadResult pad_sizes_predict(const Workload& workload, const std::shared_ptr<const GpuPerfModel>& model);

}  // namespace shapescope
