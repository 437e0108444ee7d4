// What the staged epilogues of 04 (dp) and 05 share: one 16-byte chunk of a row of C.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>

namespace shapescope::kernels {

// Stores the 8 bf16 of `v` at `out`, of which `left` (> 0) lie inside the row: one 16-byte store
// when `vectors` (C's rows 16-byte aligned) and the whole chunk is inside, else element by element.
__device__ __forceinline__ void store_chunk(__nv_bfloat16* out, const uint4& v, int left,
                                            bool vectors) {
  if (vectors && left >= 8) {
    *reinterpret_cast<uint4*>(out) = v;
    return;
  }
  const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int x = 0; x < 8; ++x)
    if (x < left) out[x] = __ushort_as_bfloat16(static_cast<unsigned short>(words[x / 2] >> (x % 2 * 16)));
}

}  // namespace shapescope::kernels
