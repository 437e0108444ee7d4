#include "backends/cuda_types.hpp"

#include <fmt/format.h>

namespace shapescope {

std::optional<std::string> dtype_unsupported(DType dtype, const DeviceContext& device) {
  const int need = min_compute_capability(dtype);
  if (device.cc_major * 10 + device.cc_minor >= need) return std::nullopt;
  return fmt::format("--dtype: {} needs compute capability {}.{} or newer; {} is {}.{}",
                     to_string(dtype), need / 10, need % 10, device.gpu_name, device.cc_major,
                     device.cc_minor);
}

}  // namespace shapescope
