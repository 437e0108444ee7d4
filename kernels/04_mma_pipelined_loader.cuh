// Kernel 04's loader (the kernel: kernels/04_mma_pipelined.cuh): each thread's cp.async of its
// 16-byte chunks of A and B into a stage of the shared-memory ring, K-block by K-block, and the
// swizzle the stages are written in (the kernel's ldmatrix reads them through the same swizzled()).
//
// Shared-memory swizzle, and why: ldmatrix reads 8 rows of 16 B per 8 x 8 matrix at the same
// column, and a cp.async warp writes 32 chunks of 16 B; both are conflict-free only when the 8
// chunks of each quarter warp fall in 8 different 16-byte bank groups of a 128-byte line.
//   - Rows of 8 chunks or more (nn's B: BN bf16; A with BK = 64): chunk c of row r is stored at
//     c ^ (r % 8). Unswizzled, 8 consecutive rows at the same column would hit one bank group.
//   - Rows of 4 chunks (BK = 32: A and nt's B): two rows share a 128-byte line and chunk c of
//     row r is stored at c ^ ((r / 2) % 4): rows r and r+1 cover the line's two halves, and the
//     four row pairs of 8 consecutive rows use four different permutations of each half.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/schedule.cuh"

namespace shapescope::kernels::mma_pipelined {

// Byte offset of 16-byte chunk `chunk` of row `row` in a shared tile of kChunks chunks per row,
// swizzled as the header explains.
template <int kChunks>
__host__ __device__ constexpr int swizzled(int row, int chunk) {
  static_assert(kChunks == 4 || kChunks % 8 == 0,
                "swizzle: rows must be 64 bytes (two per 128-byte line) or whole 128-byte lines");
  const int stored = kChunks == 4 ? chunk ^ ((row >> 1) & 3) : chunk ^ (row & 7);
  return (row * kChunks + stored) * 16;
}

using schedule::TileCoord;

// The cp.async side of a thread: its 16-byte chunks of A and B in the tile being loaded, walked
// K-block by K-block. Every chunk of a thread has the same column (kThreads is a multiple of the
// chunks per row) and its rows are kRowsStep apart, so one pointer, one stride and a bit mask of
// rows inside the matrix describe them all; per K-block only the K (nn's B: k-row) bound moves.
// The strides (kRowsStep x lda, ldb) are recomputed from the kernel's parameters at each use
// rather than held: the persistent and stream-K kernel needs those 4 registers for its segment
// walk (ptxas -v: 128x128 spilled with them).
template <class T, bool kBTransposed>
struct Loader {
  static constexpr int kRowsStepK = T::kThreads / T::kChunksK;  // A and nt's B: rows of m or n
  static constexpr int kRowsStepN = T::kThreads / T::kChunksN;  // nn's B: rows of k
  static constexpr int kRowsStepB = kBTransposed ? kRowsStepK : kRowsStepN;
  static_assert(T::kThreads % T::kChunksK == 0 && T::kThreads % T::kChunksN == 0,
                "each thread must keep one chunk column: kThreads a multiple of chunks per row");
  static_assert(kRowsStepK % 8 == 0 && kRowsStepN % 8 == 0,
                "a thread's chunks must be a multiple of 8 rows apart to share one swizzle");
  static_assert(T::kLoadsA <= 32 && T::kLoadsB <= 32, "row masks are 32 bits");

  const __nv_bfloat16* a;  // this thread's first chunk of A in the next K-block
  const __nv_bfloat16* b;  // and of B
  int k_left;              // K minus the first k of the next K-block
  uint32_t a_rows;         // bit i: chunk i's row of A is inside M
  uint32_t b_rows;         // nt: bit i: chunk i's row of B^T is inside N
  int b_cols;              // nn: elements of this thread's B chunks inside N (0 to 8)

  static constexpr int kChunksB = kBTransposed ? T::kChunksK : T::kChunksN;  // per row of B

  // This thread's first chunk: its column (in chunks) and row within the tile.
  static __device__ __forceinline__ int column() { return int(threadIdx.x) % T::kChunksK; }
  static __device__ __forceinline__ int row() { return int(threadIdx.x) / T::kChunksK; }
  static __device__ __forceinline__ int b_column() { return int(threadIdx.x) % kChunksB; }
  static __device__ __forceinline__ int b_row() { return int(threadIdx.x) / kChunksB; }

  // Points the loader at K-block 0 of `tile`.
  __device__ __forceinline__ void start(const GemmArgs& args, const TileCoord& tile) {
    const int m = tile.m0 + row();
    a = args.a + tile.batch * args.stride_a + int64_t(m) * args.lda + column() * 8;
    a_rows = 0;
#pragma unroll
    for (int i = 0; i < T::kLoadsA; ++i) a_rows |= uint32_t(m + i * kRowsStepK < args.m) << i;
    const __nv_bfloat16* b_matrix = args.b + tile.batch * args.stride_b;
    if constexpr (kBTransposed) {  // B^T tile: rows of n, contiguous k, like A
      const int n = tile.n0 + b_row();
      b = b_matrix + int64_t(n) * args.ldb + b_column() * 8;
      b_rows = 0;
#pragma unroll
      for (int i = 0; i < T::kLoadsB; ++i) b_rows |= uint32_t(n + i * kRowsStepB < args.n) << i;
      b_cols = 0;
    } else {  // B tile: rows of k, contiguous n
      const int n = tile.n0 + b_column() * 8;
      b = b_matrix + int64_t(b_row()) * args.ldb + n;
      b_rows = 0;
      b_cols = min(max(args.n - n, 0), 8);
    }
    k_left = args.k;
  }

  // Moves the loader on by `k_blocks` K-blocks without loading them (stream-K: a CTA's range can
  // start inside a tile).
  __device__ __forceinline__ void skip(const GemmArgs& args, int k_blocks) {
    a += int64_t(k_blocks) * T::BK;
    if constexpr (kBTransposed)
      b += int64_t(k_blocks) * T::BK;
    else
      b += int64_t(k_blocks) * T::BK * args.ldb;
    k_left -= k_blocks * T::BK;
  }

  // Issues this thread's cp.async of the next K-block into the stage at smem address `stage`,
  // then moves on by one K-block. Chunks outside the matrix read nothing (src-size 0) from a
  // valid address (the matrix's start) and land as zeros.
  __device__ __forceinline__ void issue(const GemmArgs& args, uint32_t stage) {
    const int a_bytes = min(max(k_left - column() * 8, 0), 8) * 2;  // K bound, all chunks alike
    const uint32_t a_dst = stage + swizzled<T::kChunksK>(row(), column());
#pragma unroll
    for (int i = 0; i < T::kLoadsA; ++i) {
      const int bytes = (a_rows >> i & 1) ? a_bytes : 0;
      cp_async_16(a_dst + i * kRowsStepK * T::BK * 2,
                  bytes > 0 ? a + i * kRowsStepK * args.lda : args.a, bytes);
    }
    const uint32_t b_stage = stage + T::kABytes;
    if constexpr (kBTransposed) {
      const uint32_t b_dst = b_stage + swizzled<T::kChunksK>(b_row(), b_column());
#pragma unroll
      for (int i = 0; i < T::kLoadsB; ++i) {
        const int bytes = (b_rows >> i & 1) ? a_bytes : 0;
        cp_async_16(b_dst + i * kRowsStepB * T::BK * 2,
                    bytes > 0 ? b + i * kRowsStepB * args.ldb : args.b, bytes);
      }
      b += T::BK;
    } else {
      const uint32_t b_dst = b_stage + swizzled<T::kChunksN>(b_row(), b_column());
#pragma unroll
      for (int i = 0; i < T::kLoadsB; ++i) {
        const int bytes = b_row() + i * kRowsStepB < k_left ? b_cols * 2 : 0;
        cp_async_16(b_dst + i * kRowsStepB * T::BN * 2,
                    bytes > 0 ? b + i * kRowsStepB * args.ldb : args.b, bytes);
      }
      b += int64_t(T::BK) * args.ldb;
    }
    a += T::BK;
    k_left -= T::BK;
  }
};

}  // namespace shapescope::kernels::mma_pipelined
