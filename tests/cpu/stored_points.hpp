// Stores built by hand for the command tests: a fixture H100 and a point stored on it (or on a GPU
// the test describes), with every statistic at the given median.
#pragma once
#include <string>

#include "core/backend_kind.hpp"
#include "core/device_context.hpp"
#include "core/records.hpp"
#include "store/store.hpp"

namespace shapescope {

inline DeviceContext h100() {
  DeviceContext d;
  d.gpu_name = "NVIDIA H100 80GB HBM3";
  d.gpu_uuid = "GPU-fixture";
  d.sm_count = 132;
  d.cc_major = 9;
  d.driver = "580.0";
  d.cuda_runtime = "13.0";
  d.cublas = d.cublaslt = "13.1.0";
  return d;
}

inline void save(Store& store, const Problem& p, BackendKind backend, double median_us,
                 const DeviceContext& device = h100()) {
  PointResult r;
  r.timing.median_us = r.timing.min_us = r.timing.max_us = r.timing.q1_us = r.timing.q3_us = median_us;
  r.timing.samples = 10;
  r.measured_at = "2026-11-25T00:00:00Z";
  r.command = "fixture";
  store.save_point(device, PointKey{backend, std::string(default_algo(backend)), p, false}, r);
}

}  // namespace shapescope
