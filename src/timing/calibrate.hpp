// `shapescope info --calibrate`: the ceilings every later "% of peak" is taken against.
#pragma once
#include <atomic>
#include <vector>

#include "core/device_context.hpp"
#include "core/records.hpp"

namespace shapescope {

// Dense GEMM TFLOP/s per dtype the GPU runs (a large square GEMM, L2 not flushed: the peak is the
// point), and device-to-device copy bandwidth (bytes read + written). Each is the median of 20
// samples after a warm-up, timed by the same engine as sweeps.
std::vector<Calibration> calibrate(const DeviceContext& device, const std::atomic<bool>* interrupted);

}  // namespace shapescope
