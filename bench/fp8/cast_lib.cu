// shapescope's fp8 cast kernels (src/backends/fp8_cast.cu) behind a C ABI, for PyTorch steps that
// quantize their operands with exactly the kernels `profile` and `explain` price their fp8 what-ifs
// with (scripts/fp8_linear.py --casts shapescope, through ctypes). A changed step recorded this way
// tests profile's changed-step measurement on its own, apart from how fast a framework's casts are.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <exception>
#include <string>

#include "backends/fp8_cast.hpp"

extern "C" {

// Casts a bf16 source (rows x k, or stored k x rows when `transposed`) into fp8 rows x k (`format` 0:
// e4m3, 1: e5m2) and writes its dequantization scales in cuBLASLt's layout (`grain` 0 tensor, 1 row,
// 2 1x128, 3 128x128 with `k_blocks`, `ld` and `count` as core/fp8.hpp's ScaleLayout). `amax` is a
// scratch of `count` floats for tensor and row grains. Enqueued on `stream`. Returns null, or why not.
const char* shapescope_cast(const void* source, int64_t rows, int64_t k, int64_t ld_source, int transposed,
                            int format, void* out, int64_t ld_out, float* scales, int grain, int64_t k_blocks,
                            int64_t ld, int64_t count, float* amax, void* stream) {
  static thread_local std::string why;
  using namespace shapescope;
  if (format < 0 || format > 1 || grain < 0 || grain > 3) return "shapescope_cast: format or grain out of range";
  CastArgs a;
  a.source = source;
  a.rows = rows;
  a.k = k;
  a.ld_source = ld_source;
  a.transposed = transposed != 0;
  a.format = format == 1 ? Fp8Format::kE5m2 : Fp8Format::kE4m3;
  a.out = out;
  a.ld_out = ld_out;
  a.scales = scales;
  a.layout.grain = static_cast<ScaleGrain>(grain);
  a.layout.rows = rows;
  a.layout.k_blocks = k_blocks;
  a.layout.ld = ld;
  a.layout.count = count;
  a.amax = amax;
  try {
    enqueue_cast(a, static_cast<cudaStream_t>(stream));
  } catch (const std::exception& e) {
    why = e.what();
    return why.c_str();
  }
  return nullptr;
}
}
