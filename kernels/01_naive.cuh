// Kernel 01: naive — one thread per output element.
//
//   adds over the previous one: nothing; the baseline of the ladder (GemmArgs, the arguments
//                    every kernel takes, is in common.cuh).
//   block tile:      BM x BN x BK = 16 x 16 x 1 (no K-blocking: each thread walks K one by one)
//   threads:         16 x 16 = 256, one output each; threadIdx.x runs along N
//   warp tile:       none (warps are not given tiles of their own); stages: none (no staging)
//   schedule:        data-parallel: grid (ceil(N/16), ceil(M/16), batch), one CTA per tile
//   shared memory:   none
//   requirements:    bf16, layouts nn and nt, any M, N, K >= 1, any lda/ldb/ldc and offsets
//                    (element-wise loads, bounds-checked), M <= 65535 * 16, batch <= 65535
//   measured share of cuBLAS on an NVIDIA H200 (4096^3 bf16 nn, cold L2, cuBLAS 13.1: 768.7 TFLOP/s):
//   4.6 TFLOP/s = 0.6 %
//
// Napkin math: each output reads a full row of A and column of B from global memory, 2K loads
// for 2K flops, so it runs at cache bandwidth at best. threadIdx.x along N makes a warp's B loads
// (nn) and C stores coalesced and its A loads a broadcast; with nt every B load of a warp is a
// different row (ldb apart): uncoalesced, which is what 02 fixes.
#pragma once
#include "kernels/common.cuh"
#include "kernels/tilings.hpp"

namespace shapescope::kernels::naive {

constexpr const tilings::Tiling& kTiling = tilings::only_row(tilings::Kernel::kNaive);
constexpr int kBM = kTiling.bm, kBN = kTiling.bn;
constexpr int kThreads = tilings::threads(kTiling);

template <bool kBTransposed>
__global__ void __launch_bounds__(kThreads) gemm(GemmArgs args) {
  const int col = blockIdx.x * kBN + threadIdx.x;
  const int row = blockIdx.y * kBM + threadIdx.y;
  if (row >= args.m || col >= args.n) return;
  const __nv_bfloat16* a = args.a + blockIdx.z * args.stride_a + int64_t(row) * args.lda;
  const __nv_bfloat16* b = args.b + blockIdx.z * args.stride_b;
  float acc = 0.0f;
  for (int k = 0; k < args.k; ++k)
    acc = fmaf(__bfloat162float(a[k]), __bfloat162float(b[b_index<kBTransposed>(k, col, args.ldb)]),
               acc);
  args.c[blockIdx.z * args.stride_c + int64_t(row) * args.ldc + col] = __float2bfloat16(acc);
}

template <bool kBTransposed>
void launch(const GemmArgs& args, int batch, cudaStream_t stream) {
  gemm<kBTransposed><<<tile_grid(args, kBM, kBN, batch), dim3(kBN, kBM), 0, stream>>>(args);
  CHECK_CUDA(cudaGetLastError());
}

}  // namespace shapescope::kernels::naive
