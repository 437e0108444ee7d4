// A GPU's performance model (model/perf_model.hpp) used where nothing was measured: the model with the
// file it came from, whether it may answer for the GPU asked about, and what one prediction implies
// for the views: the tile grid and waves of the kernel it assumed, and a time pad's arithmetic reads.
// Pure C++.
#pragma once
#include <string>

#include "model/annotate.hpp"
#include "model/device_profile.hpp"
#include "model/pad.hpp"
#include "model/perf_model.hpp"

namespace shapescope {

struct GpuPerfModel {
  PerfModel model;
  std::string file;  // where it was read from (a shipped gpus/KEY.json, or --perf-model's)
};

// Whether `model` may predict for the GPU asked about: --gpu's profile where given (the model's GPU
// must be that product), else the GPU here (`device_name`: the same product, or the same name where
// the profiles lack it); with neither, the model's own GPU is the one predicted for.
bool perf_model_fits(const PerfModel& model, const GpuProfile* asked, const std::string& device_name);

// `model` (of a GPU the profiles know) made a model of the GPU `to`: its times scaled as PerfScaling
// says, from the model's measured SM clock (its profile's boost clock where none was recorded) and its
// profile's bandwidth to `to`'s boost clock and bandwidth. Its classes' bandwidths and held-out errors
// stay the measured GPU's (a time's memory share is read with those bandwidths). Error(kUsage) naming `option` when the profiles lack the
// model's GPU, or `to` is that GPU.
PerfModel scale_perf_model(const PerfModel& model, const GpuProfile& to, const std::string& option);

// The GPU the model was measured on, as the annotations see it: its profile's limits and vendor
// peaks where the profiles know it, its SM count from the model.
ModelGpu perf_model_gpu(const PerfModel& model);

// The problem's tile grid, waves and roofline under the kernel the prediction assumed (the nearest
// measured shape's: tile, split-K slices and slots); roofline.tflops stays empty (nothing measured).
Annotation predicted_annotation(const Problem& problem, const PerfPrediction& prediction, const ModelGpu& gpu);

// A predicted GEMM as pad's arithmetic reads a measured one: its time, and as its noise the median
// held-out error of its class, so that a saving counts only above the model's own error.
GemmTime predicted_gemm_time(const PerfPrediction& prediction);

}  // namespace shapescope
