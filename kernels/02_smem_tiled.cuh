// Kernel 02: shared-memory tiling — the CTA stages BM x BK of A and BK x BN of B in shared memory.
//
//   adds over 01:    shared-memory tiles. Each element a CTA loads from global memory is used 32
//                    times from shared memory instead of once; loads of both operands are
//                    coalesced in both layouts (nt loads B along K and stores it transposed).
//   block tile:      BM x BN x BK = 32 x 32 x 32
//   threads:         32 x 32 = 1024, one output each; each thread loads one element of As and of Bs
//                    per K-block
//   schedule:        data-parallel: grid (ceil(N/32), ceil(M/32), batch), one CTA per tile
//   warp tile:       none: a warp is one row of 32 outputs; stages: 1 (load, sync, compute, sync)
//   shared memory:   As[32][32] + Bs[32][33] floats = 8320 B static (converted from bf16 once, on
//                    the way in; Bs padded by one column so that nt's transposed store is
//                    free of bank conflicts)
//   requirements:    bf16, layouts nn and nt, any M, N, K >= 1, any lda/ldb/ldc and offsets (loads
//                    outside the matrix fill zeros, stores are bounds-checked), M <= 65535 * 32,
//                    batch <= 65535
//   measured share of cuBLAS on an NVIDIA H200 (4096^3 bf16 nn, cold L2, cuBLAS 13.1: 768.7 TFLOP/s):
//   8.9 TFLOP/s = 1.2 %
//
// Napkin math: per K-block a thread does 2 global loads and 32 FMAs, but also 2 shared loads per
// FMA (As[ty][kk] is a broadcast, Bs[kk][tx] is one word per lane): shared-memory bandwidth is the
// new ceiling, which 03 lifts by keeping a block of outputs in registers.
#pragma once
#include "kernels/common.cuh"
#include "kernels/tilings.hpp"

namespace shapescope::kernels::smem_tiled {

constexpr const tilings::Tiling& kTiling = tilings::only_row(tilings::Kernel::kSmemTiled);
constexpr int kBM = kTiling.bm, kBN = kTiling.bn, kBK = kTiling.bk;
constexpr int kThreads = tilings::threads(kTiling);
// The blockDim (kBN, kBM) thread block doubles as the loader of both tiles, one element per
// thread: A with (x, y) = (k, m), B with (n, k), and nt's B with (k, n).
static_assert(kBM == kBN && kBN == kBK,
              "BM, BN and BK must be equal: the square thread block loads every tile in one step");
constexpr int kSmemBytes = tilings::static_smem_bytes(kTiling);

template <bool kBTransposed>
__global__ void __launch_bounds__(kThreads) gemm(GemmArgs args) {
  __shared__ float As[kBM][kBK];
  __shared__ float Bs[kBK][kBN + 1];
  static_assert(sizeof(As) + sizeof(Bs) == kSmemBytes, "the registry's smem_bytes are these tiles");
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int m0 = blockIdx.y * kBM, n0 = blockIdx.x * kBN;
  const __nv_bfloat16* a = args.a + blockIdx.z * args.stride_a;
  const __nv_bfloat16* b = args.b + blockIdx.z * args.stride_b;

  float acc = 0.0f;
  for (int k0 = 0; k0 < args.k; k0 += kBK) {
    // A: a warp (fixed ty) reads 32 consecutive k of one row.
    {
      const int m = m0 + ty, k = k0 + tx;
      As[ty][tx] = m < args.m && k < args.k ? __bfloat162float(a[int64_t(m) * args.lda + k]) : 0.0f;
    }
    if constexpr (kBTransposed) {
      // B^T rows are along K: a warp reads 32 consecutive k of one stored row (one n) and writes
      // a column of Bs; the +1 padding spreads that column over all 32 banks.
      const int k = k0 + tx, n = n0 + ty;
      Bs[tx][ty] =
          k < args.k && n < args.n ? __bfloat162float(b[b_index<true>(k, n, args.ldb)]) : 0.0f;
    } else {
      const int k = k0 + ty, n = n0 + tx;
      Bs[ty][tx] =
          k < args.k && n < args.n ? __bfloat162float(b[b_index<false>(k, n, args.ldb)]) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) acc = fmaf(As[ty][kk], Bs[kk][tx], acc);
    __syncthreads();  // before the next K-block overwrites the tiles
  }
  const int row = m0 + ty, col = n0 + tx;
  if (row < args.m && col < args.n)
    args.c[blockIdx.z * args.stride_c + int64_t(row) * args.ldc + col] = __float2bfloat16(acc);
}

template <bool kBTransposed>
void launch(const GemmArgs& args, int batch, cudaStream_t stream) {
  gemm<kBTransposed><<<tile_grid(args, kBM, kBN, batch), dim3(kBN, kBM), 0, stream>>>(args);
  CHECK_CUDA(cudaGetLastError());
}

}  // namespace shapescope::kernels::smem_tiled
