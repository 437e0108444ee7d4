#include "model/perf_predict.hpp"

#include <algorithm>

#include "core/device_context.hpp"

namespace shapescope {

bool perf_model_fits(const PerfModel& model, const GpuProfile* asked, const std::string& device_name) {
  const GpuProfile* of_model = profile_for_device_name(model.gpu);
  if (asked) return of_model == asked;
  if (device_name.empty()) return true;
  return of_model ? of_model == profile_for_device_name(device_name) : model.gpu == device_name;
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
