// Kernel 03: register blocking — each thread computes a TM x TN block of outputs from registers.
//
//   adds over 02:    a 2D thread tile (SGEMM_CUDA kernels 5-6). Per K step a thread reads TM
//                    values of A and TN of B from shared memory (as float4) and does TM * TN FMAs
//                    on them as an outer product; A is stored transposed in shared memory (As is
//                    k-major) so that a thread's TM values of one k are contiguous. Larger tiles
//                    (64 or 128 square, BK = 16) and a loop of loads per thread.
//   block tile:      BM x BN x BK = 128 x 128 x 16 (TM = TN = 8) and 64 x 64 x 16 (TM = TN = 4)
//   threads:         (BM / TM) x (BN / TN) = 256 for both, as a 1D block; thread t owns rows
//                    (t / (BN/TN)) * TM + [0, TM) and, in groups of 4, columns
//                    g * (BN / (TN/4)) + (t % (BN/TN)) * 4 + [0, 4) for g < TN / 4
//   schedule:        data-parallel: grid (ceil(N/BN), ceil(M/BM), batch), one CTA per tile
//   warp tile:       none yet (a warp is 2 thread rows x 16 thread columns of the CTA tile);
//                    stages: 1 (load, sync, compute, sync)
//   shared memory:   As[BK][BM + 4] + Bs[BK][BN + 4] floats: 16896 B (128) and 8704 B (64)
//                    static (bf16 converted to float on the way in, as in 02)
//   requirements:    bf16, layouts nn and nt, any M, N, K >= 1, any lda/ldb/ldc and offsets (loads
//                    element-wise, zero-filled outside the matrix; stores bounds-checked; no
//                    vectorized global access since alignment is arbitrary), M <= 65535 * BM,
//                    batch <= 65535
//   measured share of cuBLAS on an NVIDIA H200 (4096^3 bf16 nn, cold L2, cuBLAS 13.1: 768.7 TFLOP/s):
//   128x128: 39.0 TFLOP/s = 5.1 %; 64x64: 29.1 TFLOP/s = 3.8 %
//
// Napkin math (128 x 128, TM = TN = 8): per K step a thread issues 2 + 2 shared loads of 16 B and
// 64 FMAs, against 2 shared loads per FMA in 02: the FMA pipes, not shared memory, become the
// limit. A CTA's K-block is 2 x 128 x 16 bf16 = 8 KiB from global memory for 2 * 128^2 * 16
// flops, 64 flops per byte, above the H100/H200 ridge point for CUDA-core fp32 (~15-20).
//
// Shared-memory layout, and why:
//   - Global loads of A (row-major M x K) and of nt's B (stored N x K) run along K: 16 lanes read
//     16 consecutive bf16 (32 B) of a row. They land transposed (As[k][m]); rows of BM + 4 floats
//     put the 16 k of a warp's store in 8 different banks (a 2-way conflict; unpadded, all 16
//     would hit one bank) and keep every row 16 B aligned for the float4 reads.
//   - nn's B (K x N) is read along N and stored as is: a warp writes 32 consecutive floats.
//   - A thread's TN columns are TN / 4 groups of 4, BN / (TN/4) apart, not TN adjacent columns:
//     then the 16 lanes that read different columns of Bs read 256 contiguous bytes per float4
//     load (2 wavefronts, no conflicts) instead of 16 chunks 32 B apart (4-way conflicts).
#pragma once
#include "kernels/common.cuh"
#include "kernels/tilings.hpp"

namespace shapescope::kernels::register_blocked {

template <int BM, int BN, int BK, int TM, int TN>
struct Tiling {
  // The same numbers as a row of kernels/tilings.hpp, whose formulas the registry shares.
  static constexpr tilings::Tiling kRow{tilings::Kernel::kRegisterBlocked, BM, BN, BK, TM, TN, 1,
                                        1, 0};
  static constexpr int kThreads = tilings::threads(kRow);
  static constexpr int kThreadCols = BN / TN;     // threads along N
  static constexpr int kColGroups = TN / 4;       // float4 groups of a thread's columns
  static constexpr int kGroupStride = BN / kColGroups;
  static constexpr int kPad = tilings::kRegisterBlockedPad;
  static constexpr int kLdAs = BM + kPad;         // As[BK][kLdAs]: A transposed, k-major
  static constexpr int kLdBs = BN + kPad;         // Bs[BK][kLdBs]
  static constexpr int kSmemBytes = tilings::static_smem_bytes(kRow);
  // Loads along K (A, and nt's B): one step of the CTA covers kThreads / BK rows of BK.
  static constexpr int kRowsPerStep = kThreads / BK;
  static constexpr int kLoadsA = BM / kRowsPerStep;
  static constexpr int kLoadsBt = BN / kRowsPerStep;
  // Loads along N (nn's B): one step covers kThreads / BN k-rows of BN.
  static constexpr int kKRowsPerStep = kThreads / BN;
  static constexpr int kLoadsBn = BK / kKRowsPerStep;

  static_assert(BM % TM == 0 && BN % TN == 0,
                "BM must be a multiple of TM and BN of TN: each thread owns a whole TM x TN block");
  static_assert(
      TM % 4 == 0 && TN % 4 == 0,
      "TM and TN must be multiples of 4: fragments are read from shared memory as float4");
  static_assert(kPad % 4 == 0, "the padding must keep rows of As and Bs 16 B aligned for float4");
  static_assert(kThreads % BK == 0 && BM % kRowsPerStep == 0 && BN % kRowsPerStep == 0,
                "loads along K: the CTA must cover whole rows of BK, and BM and BN must be "
                "multiples of the rows one step covers, so that every thread loads the same count");
  static_assert(kThreads % BN == 0 && BK % kKRowsPerStep == 0,
                "nn's B loads along N: the CTA must cover whole rows of BN, and BK must be a "
                "multiple of the k-rows one step covers");
  static_assert(kThreads <= 1024, "a CTA has at most 1024 threads");
  static_assert(kSmemBytes <= 48 * 1024, "static shared memory is capped at 48 KiB per CTA");
};

template <int BM, int BN, int BK, int TM, int TN, bool kBTransposed>
__global__ void __launch_bounds__(Tiling<BM, BN, BK, TM, TN>::kThreads) gemm(GemmArgs args) {
  using T = Tiling<BM, BN, BK, TM, TN>;
  __shared__ __align__(16) float As[BK][T::kLdAs];
  __shared__ __align__(16) float Bs[BK][T::kLdBs];
  static_assert(sizeof(As) + sizeof(Bs) == T::kSmemBytes,
                "the registry's smem_bytes are these tiles");

  const int tid = threadIdx.x;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int tr = tid / T::kThreadCols, tc = tid % T::kThreadCols;

  // Loader: this thread's first element of each tile, then one step (rows apart) per load.
  const int a_k = tid % BK, a_m = tid / BK;
  const __nv_bfloat16* a = args.a + blockIdx.z * args.stride_a + int64_t(m0 + a_m) * args.lda + a_k;
  const int64_t a_step = int64_t(T::kRowsPerStep) * args.lda;
  const int b_k = kBTransposed ? tid % BK : tid / BN;
  const int b_n = kBTransposed ? tid / BK : tid % BN;
  const __nv_bfloat16* b =
      args.b + blockIdx.z * args.stride_b + b_index<kBTransposed>(b_k, n0 + b_n, args.ldb);
  const int64_t b_step = kBTransposed ? int64_t(T::kRowsPerStep) * args.ldb
                                      : int64_t(T::kKRowsPerStep) * args.ldb;
  const int64_t b_advance = kBTransposed ? BK : int64_t(BK) * args.ldb;  // per K-block

  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < args.k; k0 += BK) {
    // Global -> registers (all loads in flight together), zero outside the matrix.
    float a_val[T::kLoadsA];
#pragma unroll
    for (int i = 0; i < T::kLoadsA; ++i) {
      const bool in = m0 + a_m + i * T::kRowsPerStep < args.m && k0 + a_k < args.k;
      a_val[i] = in ? __bfloat162float(a[i * a_step]) : 0.0f;
    }
    constexpr int kLoadsB = kBTransposed ? T::kLoadsBt : T::kLoadsBn;
    float b_val[kLoadsB];
#pragma unroll
    for (int i = 0; i < kLoadsB; ++i) {
      const bool in = kBTransposed
                          ? n0 + b_n + i * T::kRowsPerStep < args.n && k0 + b_k < args.k
                          : k0 + b_k + i * T::kKRowsPerStep < args.k && n0 + b_n < args.n;
      b_val[i] = in ? __bfloat162float(b[i * b_step]) : 0.0f;
    }
    // Registers -> shared memory.
#pragma unroll
    for (int i = 0; i < T::kLoadsA; ++i) As[a_k][a_m + i * T::kRowsPerStep] = a_val[i];
#pragma unroll
    for (int i = 0; i < kLoadsB; ++i) {
      if constexpr (kBTransposed) Bs[b_k][b_n + i * T::kRowsPerStep] = b_val[i];
      else Bs[b_k + i * T::kKRowsPerStep][b_n] = b_val[i];
    }
    __syncthreads();

    // Outer products from registers.
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a_frag[TM], b_frag[TN];
#pragma unroll
      for (int i = 0; i < TM; i += 4) {
        const float4 v = *reinterpret_cast<const float4*>(&As[kk][tr * TM + i]);
        a_frag[i] = v.x;
        a_frag[i + 1] = v.y;
        a_frag[i + 2] = v.z;
        a_frag[i + 3] = v.w;
      }
#pragma unroll
      for (int g = 0; g < T::kColGroups; ++g) {
        const float4 v = *reinterpret_cast<const float4*>(&Bs[kk][g * T::kGroupStride + tc * 4]);
        b_frag[4 * g] = v.x;
        b_frag[4 * g + 1] = v.y;
        b_frag[4 * g + 2] = v.z;
        b_frag[4 * g + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a_frag[i], b_frag[j], acc[i][j]);
    }
    __syncthreads();  // before the next K-block overwrites the tiles
    a += BK;
    b += b_advance;
  }

  // Epilogue: round to bf16, store what lies inside C.
  const int row0 = m0 + tr * TM;
  __nv_bfloat16* c = args.c + blockIdx.z * args.stride_c + int64_t(row0) * args.ldc;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    if (row0 + i >= args.m) break;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int col = n0 + (j / 4) * T::kGroupStride + tc * 4 + j % 4;
      if (col < args.n) c[i * args.ldc + col] = __float2bfloat16(acc[i][j]);
    }
  }
}

template <int BM, int BN, int BK, int TM, int TN, bool kBTransposed>
void launch(const GemmArgs& args, int batch, cudaStream_t stream) {
  const dim3 grid = tile_grid(args, BM, BN, batch);
  gemm<BM, BN, BK, TM, TN, kBTransposed>
      <<<grid, Tiling<BM, BN, BK, TM, TN>::kThreads, 0, stream>>>(args);
  CHECK_CUDA(cudaGetLastError());
}

}  // namespace shapescope::kernels::register_blocked
