#include "model/perf_predict.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.hpp"

#include "core/device_context.hpp"

namespace shapescope {

bool perf_model_fits(const PerfModel& model, const GpuProfile* asked, const std::string& device_name) {
  const GpuProfile* of_model = profile_for_device_name(model.gpu);
  if (asked) return of_model == asked;
  if (device_name.empty()) return true;
  return of_model ? of_model == profile_for_device_name(device_name) : model.gpu == device_name;
}

PerfModel scale_perf_model(const PerfModel& model, const GpuProfile& to, const std::string& option) {
  const GpuProfile* from = profile_for_device_name(model.gpu);
  if (!from)
    throw usage_error(fmt::format("{}: '{}': the model is of {}, which the GPU profiles lack (its clock and bandwidth "
                                  "are what scaling needs)",
                                  option, to.key, model.gpu));
  if (from == &to || model.scaled)
    throw usage_error(fmt::format("{}: '{}': the model is {} of that GPU already", option, to.key,
                                  model.scaled ? "a scaled model" : "a model"));
  PerfModel out = model;
  PerfScaling s;
  s.from_gpu = model.gpu;
  s.from_key = from->key;
  s.from_clock_mhz = model.clock_mhz > 0 ? model.clock_mhz : from->boost_clock_mhz;
  s.to_clock_mhz = to.boost_clock_mhz;
  s.from_bandwidth_gbs = from->bandwidth_gbs;
  s.to_bandwidth_gbs = to.bandwidth_gbs;
  out.gpu = to.name;
  out.clock_mhz = s.to_clock_mhz;
  out.scaled = s;
  return out;
}

ModelGpu perf_model_gpu(const PerfModel& model) {
  if (const GpuProfile* profile = profile_for_device_name(model.gpu)) {
    ModelGpu gpu = model_gpu(*profile);
    gpu.name = model.gpu;
    if (model.sm_count > 0) gpu.sm_count = model.sm_count;
    return gpu;
  }
  DeviceContext device;
  device.gpu_name = model.gpu;
  device.sm_count = model.sm_count;
  return model_gpu(device);
}

Annotation predicted_annotation(const Problem& problem, const PerfPrediction& prediction, const ModelGpu& gpu) {
  const PerfKernelConfig& k = *prediction.config;
  const int ctas_per_sm = gpu.sm_count > 0 ? int(std::max<int64_t>(1, k.slots / gpu.sm_count)) : 1;
  Annotation a = predict(problem, gpu, k.tile_m, k.tile_n, ctas_per_sm);
  a.tile_source = "performance model: the kernel of the nearest measured shape";
  a.occupancy.limiter = "measured slots";
  a.grid = problem_tile_grid(problem, k.tile_m, k.tile_n, k.splits, &a.group_grids);
  a.splits = k.splits;
  if (k.splits > 1) a.split_source = "performance model";
  // The slots the measured kernel ran (a persistent grid's, or its CTAs per SM times the SMs).
  a.data_parallel_slots = k.slots;
  a.waves = waves_of(a.grid.tiles, k.slots);
  return a;
}

GemmTime predicted_gemm_time(const PerfPrediction& prediction) {
  return {prediction.us, prediction.cls ? prediction.cls->accuracy.median : 0};
}

}  // namespace shapescope
