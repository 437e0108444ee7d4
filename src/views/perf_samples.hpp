// A store's points as a performance model's samples (model/perf_model.hpp): the library's default
// algorithm (cuBLAS's; fp8: cuBLASLt's first heuristic choice under the tensor recipe), cold L2, one
// GPU, each point with the tile, split-K slices and slots its kernel ran.
#pragma once
#include <string>
#include <vector>

#include "model/perf_model.hpp"
#include "store/store.hpp"

namespace shapescope {

struct PerfSamples {
  PerfSampleSet set;
  size_t skipped = 0;  // points of the GPU left out (another backend or algorithm, hot L2, grouped, casts)
};

// Refuses (Error, kUsage) a store holding points of several GPUs (a model is one GPU's: the message
// names them) and one with no point the fit can read.
PerfSamples perf_samples(const Store& store, const std::string& db);

}  // namespace shapescope
