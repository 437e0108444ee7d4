// fp8_cast.hpp's kernels: one block of 256 threads per 128 x 128 tile of the output (128 rows, 128
// elements of K), the tile staged in shared memory in the source's orientation so that both the read
// of a row-major source and of a transposed one are coalesced.
//
// Napkin math: a cast moves 3 bytes per element (2 read, 1 written); 8192 x 7168 on an H100
// (~3 TB/s) is ~60 us for one pass, plus a second read of the source (~40 us) for tensor and row
// scaling, whose amax spans more than one tile.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "backends/fp8_cast.hpp"
#include "common/check.hpp"

namespace shapescope {
namespace {

constexpr int kTile = 128;                    // output rows and K elements per block
constexpr int kThreads = 256;                 // 8 warps
constexpr int kWarps = kThreads / 32;
constexpr int kRowsPerWarp = kTile / kWarps;  // 16 output rows per warp
constexpr int kPerLane = kTile / 32;          // each lane holds K = j * 32 + lane, j < 4, of a row
constexpr int kChunk = 8;                     // bf16 per 16-byte load
// Shared rows of 130 bf16 = 65 words: 32 lanes reading one column of a transposed tile (32
// consecutive rows) hit 32 different banks.
constexpr int kPad = 2;
static_assert(kTile % kWarps == 0 && kTile % 32 == 0, "a tile splits evenly into warps and lanes");
static_assert((kTile * kTile / kChunk) % kThreads == 0, "every thread loads the same number of chunks");

enum class Pass { kAmax, kCast };

struct TileParams {
  const __nv_bfloat16* source;
  int64_t rows, k, ld_source;
  uint8_t* out;
  int64_t ld_out;
  float* scales;
  ScaleLayout layout;
  float* amax;
  float fmax;
  __nv_fp8_interpretation_t format;
  bool vector_loads;  // the source's rows and base are 16-byte aligned
};

using Tile = __nv_bfloat16[kTile][kTile + kPad];

// tile[i][j] = source[(s0 + i) * ld + t0 + j]: the tile in the source's orientation (s0 = r0 for a
// row-major source, k0 for a transposed one), zeros outside the matrix.
template <bool kTransposed>
__device__ void load_tile(const TileParams& p, int64_t r0, int64_t k0, Tile& tile) {
  const int64_t s0 = kTransposed ? k0 : r0, t0 = kTransposed ? r0 : k0;
  const int64_t s_extent = kTransposed ? p.k : p.rows, t_extent = kTransposed ? p.rows : p.k;
#pragma unroll
  for (int step = 0; step < kTile * kTile / kChunk / kThreads; ++step) {
    const int c = step * kThreads + int(threadIdx.x);
    const int i = c / (kTile / kChunk), j = (c % (kTile / kChunk)) * kChunk;
    const int64_t s = s0 + i, t = t0 + j;
    if (p.vector_loads && s < s_extent && t + kChunk <= t_extent) {
      const uint4 v = *reinterpret_cast<const uint4*>(p.source + s * p.ld_source + t);
      // Shared rows are 260 bytes apart: 4-byte stores (a 16-byte one would be misaligned).
      uint32_t* to = reinterpret_cast<uint32_t*>(&tile[i][j]);
      to[0] = v.x;
      to[1] = v.y;
      to[2] = v.z;
      to[3] = v.w;
    } else {
      for (int e = 0; e < kChunk; ++e)
        tile[i][j + e] = (s < s_extent && t + e < t_extent) ? p.source[s * p.ld_source + t + e] : __float2bfloat16(0.0f);
    }
  }
}

// Output element (r, kk) of the tile, r and kk within it.
template <bool kTransposed>
__device__ float at(const Tile& tile, int r, int kk) {
  return __bfloat162float(kTransposed ? tile[kk][r] : tile[r][kk]);
}

__device__ float warp_max(float m) {
  for (int offset = 16; offset > 0; offset /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
  return m;
}

// Non-negative floats order like their bit patterns as ints, so atomicMax on the bits is a float max
// (the amax buffer starts at +0).
__device__ void atomic_max(float* at, float value) { atomicMax(reinterpret_cast<int*>(at), __float_as_int(value)); }

// kAmax: the tile's part of each row's (row grain) or the tensor's amax, into p.amax.
// kCast: the tile quantized and written, with its scales.
template <bool kTransposed, Pass kPass>
__global__ void __launch_bounds__(kThreads) cast_tile_kernel(TileParams p) {
  __shared__ Tile tile;
  __shared__ float warp_amax[kWarps];
  const int64_t k0 = int64_t(blockIdx.x) * kTile, r0 = int64_t(blockIdx.y) * kTile;
  load_tile<kTransposed>(p, r0, k0, tile);
  __syncthreads();
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  const ScaleGrain grain = p.layout.grain;

  float v[kRowsPerWarp][kPerLane];
  float row_amax[kRowsPerWarp];
  float warp_amax_here = 0;
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) {
    float m = 0;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      v[i][j] = at<kTransposed>(tile, warp * kRowsPerWarp + i, j * 32 + lane);
      m = fmaxf(m, fabsf(v[i][j]));
    }
    row_amax[i] = warp_max(m);
    warp_amax_here = fmaxf(warp_amax_here, row_amax[i]);
  }

  // The whole tile's amax: the tensor's part (kAmax) or a 128x128 block's scale (kCast).
  float tile_amax = 0;
  if (grain == ScaleGrain::kTensor || grain == ScaleGrain::kBlock128) {
    if (lane == 0) warp_amax[warp] = warp_amax_here;
    __syncthreads();
    for (int w = 0; w < kWarps; ++w) tile_amax = fmaxf(tile_amax, warp_amax[w]);
  }

  if constexpr (kPass == Pass::kAmax) {
    if (grain == ScaleGrain::kRow && lane == 0) {
      for (int i = 0; i < kRowsPerWarp; ++i) {
        const int64_t r = r0 + warp * kRowsPerWarp + i;
        if (r < p.rows) atomic_max(&p.amax[r], row_amax[i]);
      }
    }
    if (grain == ScaleGrain::kTensor && threadIdx.x == 0) atomic_max(p.amax, tile_amax);
    return;
  } else {
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) {
      const int64_t r = r0 + warp * kRowsPerWarp + i;
      if (r >= p.rows) continue;
      float amax = row_amax[i];  // kVec128: this row's 128 elements
      if (grain == ScaleGrain::kTensor) amax = p.amax[0];
      if (grain == ScaleGrain::kRow) amax = p.amax[r];
      if (grain == ScaleGrain::kBlock128) amax = tile_amax;
      amax = fmaxf(amax, kAmaxFloor);
      const float multiplier = p.fmax / amax;
#pragma unroll
      for (int j = 0; j < kPerLane; ++j) {
        const int64_t kk = k0 + j * 32 + lane;
        if (kk < p.k) p.out[r * p.ld_out + kk] = __nv_cvt_float_to_fp8(v[i][j] * multiplier, __NV_SATFINITE, p.format);
      }
      if (lane != 0) continue;
      const float scale = amax / p.fmax;
      // Each scale is written by exactly one thread: its row's tile (1x128), its tile (128x128), the
      // first K tile of its row (row), the first tile (tensor).
      const bool writes = grain == ScaleGrain::kVec128 || (grain == ScaleGrain::kBlock128 && warp == 0 && i == 0) ||
                          (grain == ScaleGrain::kRow && blockIdx.x == 0) ||
                          (grain == ScaleGrain::kTensor && blockIdx.x == 0 && blockIdx.y == 0 && warp == 0 && i == 0);
      if (writes) p.scales[p.layout.index(r, k0)] = scale;
    }
  }
}

template <Pass kPass>
void launch(const TileParams& p, bool transposed, dim3 grid, cudaStream_t stream) {
  if (transposed) cast_tile_kernel<true, kPass><<<grid, kThreads, 0, stream>>>(p);
  else cast_tile_kernel<false, kPass><<<grid, kThreads, 0, stream>>>(p);
  CHECK_CUDA(cudaGetLastError());
}

}  // namespace

const char* cast_args_problem(const CastArgs& a) {
  if (!a.source || !a.out || !a.scales) return "a cast needs its source, output and scales";
  if (a.rows < 1 || a.k < 1) return "a cast of an empty matrix";
  if (a.ld_source < (a.transposed ? a.rows : a.k)) return "the source's leading dimension is shorter than its rows";
  if (a.ld_out < a.k) return "the output's leading dimension is shorter than K";
  if ((a.layout.grain == ScaleGrain::kTensor || a.layout.grain == ScaleGrain::kRow) && !a.amax)
    return "tensor and row scaling need an amax scratch";
  if ((a.rows + kTile - 1) / kTile > 65535) return "more than 65535 x 128 rows (the grid's y limit)";
  return nullptr;
}

void enqueue_cast(const CastArgs& a, cudaStream_t stream) {
  if (const char* why = cast_args_problem(a)) throw Error(ExitCode::kInternal, std::string("enqueue_cast: ") + why);
  TileParams p{};
  p.source = static_cast<const __nv_bfloat16*>(a.source);
  p.rows = a.rows;
  p.k = a.k;
  p.ld_source = a.ld_source;
  p.out = static_cast<uint8_t*>(a.out);
  p.ld_out = a.ld_out;
  p.scales = a.scales;
  p.layout = a.layout;
  p.amax = a.amax;
  p.fmax = fp8_max(a.format);
  p.format = a.format == Fp8Format::kE5m2 ? __NV_E5M2 : __NV_E4M3;
  p.vector_loads = a.ld_source % kChunk == 0 && reinterpret_cast<uintptr_t>(a.source) % 16 == 0;
  const dim3 grid(unsigned((a.k + kTile - 1) / kTile), unsigned((a.rows + kTile - 1) / kTile));
  const ScaleGrain grain = a.layout.grain;
  if (grain == ScaleGrain::kTensor || grain == ScaleGrain::kRow) {
    CHECK_CUDA(cudaMemsetAsync(a.amax, 0, sizeof(float) * size_t(grain == ScaleGrain::kRow ? a.rows : 1), stream));
    launch<Pass::kAmax>(p, a.transposed, grid, stream);
  }
  launch<Pass::kCast>(p, a.transposed, grid, stream);
}

}  // namespace shapescope
