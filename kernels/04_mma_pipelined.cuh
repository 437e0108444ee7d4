// Kernel 04: tensor cores. mma.sync m16n8k16 (bf16 in, fp32 accumulate) fed by ldmatrix from a
// multi-stage cp.async pipeline in swizzled shared memory.
//
//   adds over 03:    tensor cores instead of FMAs: each warp owns a WM x WN tile of C as
//                    (WM/16) x (WN/8) mma.sync.m16n8k16 accumulators, fed by ldmatrix.x4 (.trans
//                    for nn's B) from a multi-stage cp.async ring of bf16 in swizzled shared
//                    memory; persistent and stream-K schedules next to the data-parallel one.
//   block tile:      BM x BN x BK = 64 x 64 x 32, 128 x 128 x 64, 128 x 256 x 64, 256 x 128 x 64
//   warp tile:       WM x WN = 32 x 32 (2 x 2 warps), 64 x 32 (2 x 4), 64 x 64 (2 x 4; 4 x 2)
//   threads:         128, 256, 256, 256
//   stages:          4 (64x64), 3 (the others); the one-CTA-per-SM tiles (128x256, 256x128) also
//                    double-buffer their fragments (step kk + 1's ldmatrix before step kk's mma)
//   schedule:        dp: grid (ceil(N/BN), ceil(M/BM), batch), one CTA per tile, C staged through
//                    the idle ring and stored in 16-byte pieces of whole rows. persistent and
//                    streamk: one kernel on kernels/schedule.cuh's 1D plan (its header explains
//                    the split and the fixup); the loader walks the CTA's segments on its own,
//                    STAGES - 1 K-blocks ahead, so the next tile's loads overlap this epilogue.
//   shared memory:   dynamic, STAGES x (BM x BK + BK x BN) bf16 = 32, 96, 144 and 144 KiB
//   registers:       ptxas -v (CUDA 13.0, sm_80 / sm_90a), no spills: dp 94-96, 122-125, 218-231,
//                    218-229; persistent and streamk 108-116, 127-128, 234-247, 234-245
//   requirements:    bf16, nn and nt, cc >= 8.0 (cp.async, bf16 mma); lda, ldb and A's and B's
//                    offsets multiples of 8 elements (16-byte cp.async chunks); any M, N, K >= 1
//                    (chunks past the edges zero-filled through cp.async's src-size); any ldc; dp:
//                    M <= 65535 x BM, batch <= 65535; persistent, streamk: tiles x batch < 2^31
//
// Stream-K in 04 (schedule.cuh has the protocol): each CTA keeps a fixed piece (Cursor(plan,
// cta)). A contributor writes its fp32 accumulators to its workspace slot (float4 (i, j) of thread
// x at (i x kMmaN + j) x kThreads + x: coalesced), __threadfence, __syncthreads, st.release.gpu of
// its flag; the owner's thread 0 spins on each contributor's flag (ld.acquire.gpu), __syncthreads,
// and every thread adds its share (ld.global.cg). Workspace: G slots of BM x BN fp32, then G int
// flags (zeroed by a cudaMemsetAsync before each launch). Shared memory caps the CTAs per SM at
// 6, 2, 1 and 1, so a 132-SM GPU (H100, H200) needs at most 16.5 MiB: within the sweep's 32 MiB.
// 128x128 stays within the 128 registers of 2 CTAs/SM only because the cursors hold four ints and
// divide nothing, the loader recomputes its row strides, and add_partial() adds a row at a time.
//
// Napkin math (H100/H200: 132 SMs, ~1.9 GHz; dense bf16 peak ~990 TFLOP/s = 1024 bf16 FMA/clk
// per SM through wgmma; mma.sync reaches roughly two thirds of that):
//   - Shared memory feeds ldmatrix at 128 B/clk per SM. Per k16 step a warp reads WM x 16 +
//     16 x WN bf16 for (WM/16) x (WN/8) mma of 4096 flops: 64 x 64 is 4 KiB for 131 kflop =
//     32 flop/B, so 128 B/clk carry 4096 flop/clk, the tensor cores' whole rate; 64 x 32 gets
//     21 flop/B (~700 TFLOP/s on 132 SMs), 32 x 32 16 flop/B. Hence 64 x 64 warp tiles for the
//     big tiles, and 8 warps of them make 128 x 256 or 256 x 128.
//   - L2 -> SM: per K-block a CTA loads (BM + BN) x BK x 2 B for 2 x BM x BN x BK flops: 85
//     flop/B at 128 x 256, 64 at 128 x 128. 400 TFLOP/s at 85 flop/B is 4.7 TB/s from L2, and
//     A and B of a 4096^3 problem (64 MiB) stay mostly L2-resident because the CTAs running at
//     once share rows of A and all of B.
//   - Registers: 64 x 64 fp32 accumulators are 128 per thread, plus 32 for one k16 step's
//     fragments: the 128 x 256 and 256 x 128 tiles run one CTA (8 warps) per SM; 128 x 128 (64
//     accumulators) is held to 128 registers by __launch_bounds__ so that two CTAs fit.
//   - Issue slots: per K-block a warp of the 128 x 256 tile issues 64 mma, 16 ldmatrix and
//     ~60 instructions for its 6 cp.async a thread (one pointer and row mask per operand, set
//     up once per tile); the 2 warps of a sub-core keep its tensor core busy for ~128 mma x
//     ~7 cycles, ~900 cycles, against ~300 issue slots.
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type";
// g = lane / 4, t = lane % 4):
//   A (16 x 16, row): reg0 = A[g][2t, 2t+1], reg1 = A[g+8][2t..], reg2 = A[g][2t+8..],
//                     reg3 = A[g+8][2t+8..]: the 8 x 8 quadrants (rows 0-7 | 8-15) x
//                     (k 0-7 | 8-15) in the order TL, BL, TR, BR; low half = lower column.
//   B (16 x 8, col):  reg0 = B[2t, 2t+1][g], reg1 = B[2t+8, 2t+9][g]: k 0-7, then k 8-15.
//   C (16 x 8):       c0, c1 = C[g][2t, 2t+1]; c2, c3 = C[g+8][2t, 2t+1].
//   ldmatrix.x4: lanes 8j .. 8j+7 give the addresses of the 8 rows (16 B each) of matrix j, and
//   register j of lane l receives row l/4, elements 2(l%4) and 2(l%4)+1 of matrix j: the mma
//   layout of an 8 x 8 quadrant whose stored rows are the fragment's rows. With .trans it
//   receives column l/4, rows 2(l%4) and 2(l%4)+1: the B layout when the stored rows are k.
//   So: A (rows m, contiguous k): lane l addresses row l % 16, k-half l / 16.
//       nt's B (stored rows n, contiguous k): plain ldmatrix; lane l addresses n = l % 8 +
//       8 (l / 16), k-half (l / 8) % 2, and gets reg0, reg1 of n-tile 0, then of n-tile 1.
//       nn's B (stored rows k, contiguous n): ldmatrix.trans; lane l addresses k = l % 16,
//       n-half l / 16, same register order.
//
// Shared-memory swizzle of the ring's stages, and why: kernels/04_mma_pipelined_loader.cuh, with
// swizzled() and the loader that writes them.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "kernels/04_mma_pipelined_loader.cuh"
#include "kernels/common.cuh"
#include "kernels/schedule.cuh"
#include "kernels/tilings.hpp"

namespace shapescope::kernels::mma_pipelined {

// ---- Tiling ------------------------------------------------------------------------------------

template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, int kMinCtasPerSm_>
struct Tiling {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = STAGES_;
  static constexpr int kMinCtasPerSm = kMinCtasPerSm_;  // __launch_bounds__: caps registers
  // The same numbers as a row of kernels/tilings.hpp, whose formulas the registry shares.
  static constexpr tilings::Tiling kRow{tilings::Kernel::kMmaPipelined, BM, BN, BK, WM, WN, STAGES,
                                        1, kMinCtasPerSm};
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
  static constexpr int kThreads = tilings::threads(kRow);
  static constexpr int kMmaM = WM / 16, kMmaN = WN / 8;  // m16n8 accumulators of a warp
  static constexpr int kChunksK = BK / 8;  // 16-byte chunks per row of A, and of nt's B
  static constexpr int kChunksN = BN / 8;  // per row of nn's B
  static constexpr int kABytes = BM * BK * 2;
  static constexpr int kBBytes = BK * BN * 2;
  static constexpr int kStageBytes = kABytes + kBBytes;
  static constexpr int kSmemBytes = tilings::dynamic_smem_bytes(kRow);
  static constexpr int kLoadsA = BM * kChunksK / kThreads;  // cp.async per thread per K-block
  static constexpr int kLoadsB = BN * kChunksK / kThreads;

  static_assert(kThreads == kWarpsM * kWarpsN * 32, "a warp per warp tile");
  static_assert(kStageBytes == tilings::stage_bytes(kRow) && kSmemBytes == STAGES * kStageBytes,
                "the ring of STAGES stages is all of the dynamic shared memory");
  static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must cover the CTA tile exactly");
  static_assert(WM % 16 == 0, "WM must be a multiple of 16: mma.m16n8k16 has 16 rows");
  static_assert(WN % 16 == 0,
                "WN must be a multiple of 16: one ldmatrix.x4 loads B for two 8-column mma tiles");
  static_assert(BK % 16 == 0, "BK must be a multiple of 16: mma.m16n8k16 consumes k in 16s");
  static_assert(kChunksK == 4 || kChunksK % 8 == 0,
                "BK must be 32 or a multiple of 64: the swizzle needs 64-byte or 128-byte rows");
  static_assert(kChunksN % 8 == 0,
                "BN must be a multiple of 64: nn's B rows must be whole 128-byte lines to swizzle");
  static_assert(BM * kChunksK % kThreads == 0 && BN * kChunksK % kThreads == 0,
                "every thread must issue the same number of cp.async per K-block");
  static_assert(STAGES >= 2, "a pipeline needs at least 2 stages: one computed, one loading");
  static_assert(kThreads <= 1024, "a CTA has at most 1024 threads");
  static_assert(kSmemBytes <= 227 * 1024,
                "Hopper gives a CTA at most 227 KiB of shared memory (Ampere A100: 163 KiB)");
};

// Row kRow of kernels/tilings.hpp's table (launch.cu instantiates each row for nn and nt, dp,
// persistent and streamk).
template <int kRow>
struct TilingOfRow {
  static constexpr tilings::Tiling t = tilings::kTilings[kRow];
  static_assert(t.kernel == tilings::Kernel::kMmaPipelined && t.cluster == 1, "a row of 04");
  using type = Tiling<t.bm, t.bn, t.bk, t.wm, t.wn, t.stages, t.min_ctas_per_sm>;
};
template <int kRow>
using TilingOf = typename TilingOfRow<kRow>::type;

// Stream-K's workspace slot of one CTA: its partial accumulators, BM x BN fp32.
template <class T>
constexpr int64_t kStreamKSlotBytes = int64_t(T::BM) * T::BN * 4;


template <class T, bool kBTransposed>
struct Cta {
  using Acc = float[T::kMmaM][T::kMmaN][4];

  using AFrag = uint32_t[T::kMmaM][4];
  using BFrag = uint32_t[T::kMmaN][2];

  // This warp's A and B fragments of k16 step kk of the stage at smem address `stage`.
  static __device__ __forceinline__ void load_fragments(AFrag& a_frag, BFrag& b_frag,
                                                        uint32_t stage, int kk, int warp_m0,
                                                        int warp_n0) {
    const int lane = int(threadIdx.x) % 32;
    const uint32_t b_stage = stage + T::kABytes;
#pragma unroll
    for (int i = 0; i < T::kMmaM; ++i)
      ldmatrix_x4(a_frag[i], stage + swizzled<T::kChunksK>(warp_m0 + i * 16 + lane % 16,
                                                           kk / 8 + lane / 16));
#pragma unroll
    for (int j = 0; j < T::kMmaN; j += 2) {
      uint32_t r[4];
      if constexpr (kBTransposed)
        ldmatrix_x4(r, b_stage + swizzled<T::kChunksK>(warp_n0 + j * 8 + lane % 8 + lane / 16 * 8,
                                                       kk / 8 + lane / 8 % 2));
      else
        ldmatrix_x4_trans(r, b_stage + swizzled<T::kChunksN>(kk + lane % 16,
                                                             (warp_n0 + j * 8) / 8 + lane / 16));
      b_frag[j][0] = r[0];
      b_frag[j][1] = r[1];
      b_frag[j + 1][0] = r[2];
      b_frag[j + 1][1] = r[3];
    }
  }

  // acc += this warp's share of one K-block held in the stage at smem address `stage`. With
  // registers to spare (one CTA per SM: 128x256, 256x128) the fragments are double-buffered: step
  // kk + 1's ldmatrix are issued before step kk's mma, so the tensor cores need not wait for them.
  static __device__ __forceinline__ void compute_k_block(Acc& acc, uint32_t stage, int warp_m0,
                                                         int warp_n0) {
    constexpr bool kDoubleBuffer = T::kMinCtasPerSm == 1;
    constexpr int kSteps = T::BK / 16;
    AFrag a_frag[kDoubleBuffer ? 2 : 1];
    BFrag b_frag[kDoubleBuffer ? 2 : 1];
    if constexpr (kDoubleBuffer) load_fragments(a_frag[0], b_frag[0], stage, 0, warp_m0, warp_n0);
#pragma unroll
    for (int step = 0; step < kSteps; ++step) {
      const int cur = kDoubleBuffer ? step % 2 : 0;
      if constexpr (kDoubleBuffer) {
        if (step + 1 < kSteps)
          load_fragments(a_frag[(step + 1) % 2], b_frag[(step + 1) % 2], stage, (step + 1) * 16,
                         warp_m0, warp_n0);
      } else {
        load_fragments(a_frag[0], b_frag[0], stage, step * 16, warp_m0, warp_n0);
      }
#pragma unroll
      for (int i = 0; i < T::kMmaM; ++i)
#pragma unroll
        for (int j = 0; j < T::kMmaN; ++j) mma_16816(acc[i][j], a_frag[cur][i], b_frag[cur][j]);
    }
  }

  // Rounds the accumulators to bf16 and stores what lies inside C; zeroes them for the next tile.
  static __device__ __forceinline__ void store_tile(const GemmArgs& args, Acc& acc,
                                                    const TileCoord& tile, int warp_m0,
                                                    int warp_n0) {
    const int lane = int(threadIdx.x) % 32;
    __nv_bfloat16* c = args.c + tile.batch * args.stride_c;
    // Pairs of columns as one 4-byte store when every pair is 4-byte aligned (columns are even).
    const bool pairs = args.ldc % 2 == 0 && reinterpret_cast<uintptr_t>(args.c) % 4 == 0;
#pragma unroll
    for (int i = 0; i < T::kMmaM; ++i)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = tile.m0 + warp_m0 + i * 16 + lane / 4 + half * 8;
        if (row >= args.m) continue;
        __nv_bfloat16* c_row = c + int64_t(row) * args.ldc;
#pragma unroll
        for (int j = 0; j < T::kMmaN; ++j) {
          const int col = tile.n0 + warp_n0 + j * 8 + lane % 4 * 2;
          const float v0 = acc[i][j][2 * half], v1 = acc[i][j][2 * half + 1];
          if (pairs && col + 1 < args.n) {
            *reinterpret_cast<__nv_bfloat162*>(c_row + col) = __floats2bfloat162_rn(v0, v1);
          } else {
            if (col < args.n) c_row[col] = __float2bfloat16(v0);
            if (col + 1 < args.n) c_row[col + 1] = __float2bfloat16(v1);
          }
        }
      }
    zero(acc);
  }

  // dp's epilogue: the same values as store_tile(), staged through the idle pipeline ring (the
  // CTA's only tile is done, nothing is in flight) so that C is written in 16-byte pieces of
  // whole rows: straight from the fragments a warp store writes 4 bytes to each of 8 rows.
  // Chunk c of staged row r sits at chunk c ^ (r % 8): a warp's fragment writes (8 rows, one chunk
  // column) hit 32 different banks. The caller has waited for every cp.async and synchronised.
  static __device__ __forceinline__ void store_tile_staged(const GemmArgs& args, Acc& acc,
                                                           const TileCoord& tile, int warp_m0,
                                                           int warp_n0, uint32_t staging) {
    static_assert(T::BM * T::BN * 2 <= T::kSmemBytes, "the staged tile must fit in the ring");
    constexpr int kChunks = T::BN / 8;  // 16-byte chunks per row
    static_assert(kChunks >= 8, "the swizzle needs rows of at least 8 chunks");
    const int lane = int(threadIdx.x) % 32;
#pragma unroll
    for (int i = 0; i < T::kMmaM; ++i)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int r = warp_m0 + i * 16 + lane / 4 + half * 8;
#pragma unroll
        for (int j = 0; j < T::kMmaN; ++j) {
          const int chunk = warp_n0 / 8 + j;
          const __nv_bfloat162 pair =
              __floats2bfloat162_rn(acc[i][j][2 * half], acc[i][j][2 * half + 1]);
          st_shared_b32(staging + r * T::BN * 2 + staged_chunk(r, chunk) + lane % 4 * 4,
                        *reinterpret_cast<const uint32_t*>(&pair));
        }
      }
    __syncthreads();
    __nv_bfloat16* c = args.c + tile.batch * args.stride_c;
    const bool vectors = args.ldc % 8 == 0 && reinterpret_cast<uintptr_t>(args.c) % 16 == 0;
#pragma unroll 1
    for (int q = int(threadIdx.x); q < T::BM * kChunks; q += T::kThreads) {
      const int r = q / kChunks, chunk = q % kChunks;
      const int row = tile.m0 + r, col = tile.n0 + chunk * 8;
      if (row >= args.m || col >= args.n) continue;
      const uint4 v = ld_shared_v4(staging + r * T::BN * 2 + staged_chunk(r, chunk));
      store_chunk(c + int64_t(row) * args.ldc + col, v, args.n - col, vectors);
    }
  }

  static __device__ __forceinline__ void zero(Acc& acc) {
#pragma unroll
    for (int i = 0; i < T::kMmaM; ++i)
#pragma unroll
      for (int j = 0; j < T::kMmaN; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
  }

  // Stream-K's workspace slot of one CTA holds its partial accumulators as each thread's
  // fragments: float4 (i, j) of thread x at (i x kMmaN + j) x kThreads + x. Coalesced, and read
  // back by the same thread of the owner, whose warp layout is the same.
  static constexpr int kSlotFloat4s = int(kStreamKSlotBytes<T> / 16);
  static_assert(kSlotFloat4s == T::kMmaM * T::kMmaN * T::kThreads,
                "a slot holds exactly the CTA's accumulator fragments");

  // Writes this thread's accumulators to `slot` (through L2: the owner runs on another SM) and
  // zeroes them for the next segment.
  static __device__ __forceinline__ void store_partial(float4* slot, Acc& acc) {
#pragma unroll
    for (int i = 0; i < T::kMmaM; ++i)
#pragma unroll
      for (int j = 0; j < T::kMmaN; ++j)
        __stcg(slot + (i * T::kMmaN + j) * T::kThreads + int(threadIdx.x),
               make_float4(acc[i][j][0], acc[i][j][1], acc[i][j][2], acc[i][j][3]));
    zero(acc);
  }

  // acc += this thread's fragments of `slot`, one row of accumulators (kMmaN float4) per trip of
  // a loop that is not unrolled. Fully unrolled, ptxas issued all kMmaM x kMmaN loads before the
  // adds (up to 128 registers in flight next to the accumulators) and spilled: 128x256 at 255
  // registers; this way it stays at ~245 and 128x128 within its 128.
  static __device__ __forceinline__ void add_partial(const float4* slot, Acc& acc) {
#pragma unroll 1
    for (int i = 0; i < T::kMmaM; ++i)
#pragma unroll
      for (int r = 0; r < T::kMmaM; ++r)
        if (r == i)  // row r of acc by a constant index: a variable one would put acc in memory
#pragma unroll
          for (int j = 0; j < T::kMmaN; ++j) {
            const float4 p = __ldcg(slot + (r * T::kMmaN + j) * T::kThreads + int(threadIdx.x));
            acc[r][j][0] += p.x;
            acc[r][j][1] += p.y;
            acc[r][j][2] += p.z;
            acc[r][j][3] += p.w;
          }
  }

  // Stream-K, a contributor: a lower CTA computed the tile's first K-blocks. This is the first
  // segment of this CTA's range, so the CTA's one slot is free: publish the partial, then the flag.
  static __device__ __forceinline__ void publish(Acc& acc, float4* partials, int* flags) {
    store_partial(partials + int64_t(blockIdx.x) * kSlotFloat4s, acc);
    __threadfence();  // this thread's partial is visible GPU-wide ...
    __syncthreads();  // ... and everyone's, before the flag
    if (threadIdx.x == 0) schedule::store_release_gpu(flags + blockIdx.x, 1);
  }

  // Stream-K, the owner whose range ends inside `tile`: CTAs blockIdx.x + 1, ... computed the
  // rest, each as its first segment, published at the start of its range; this is the end of ours.
  static __device__ __forceinline__ void collect(Acc& acc, const schedule::Plan& plan, int tile,
                                                 const float4* partials, const int* flags) {
    for (int d = int(blockIdx.x) + 1; schedule::contributes(plan, d, tile); ++d) {
      if (threadIdx.x == 0) schedule::wait_flag(flags + d);
      __syncthreads();  // thread 0's acquire orders everyone's reads of slot d after it
      add_partial(partials + int64_t(d) * kSlotFloat4s, acc);
    }
  }
};

// ---- Schedules ---------------------------------------------------------------------------------

// The grid a kernel runs on: dp's 3D grid of tiles (a whole tile per CTA, from blockIdx), or a 1D
// grid whose CTAs walk a schedule::Plan (persistent and streamk: the plan says which).
enum class Grid { kTiles, kPlan };

// A CTA's segments, in order, and where their tiles lie. dp: the CTA's one whole tile.
template <class T, Grid kGrid>
class Segments {
 public:
  __device__ __forceinline__ explicit Segments(const schedule::Plan&) {}

  __device__ __forceinline__ bool next(const schedule::Plan& plan, schedule::Segment& s) {
    if (done_) return false;
    done_ = true;
    s = {0, 0, plan.k_blocks};
    return true;
  }

  __device__ __forceinline__ TileCoord coord(const schedule::Plan&, int) const {
    return {int(blockIdx.y) * T::BM, int(blockIdx.x) * T::BN, int(blockIdx.z)};
  }

 private:
  bool done_ = false;
};

// persistent and streamk: CTA blockIdx.x's segments of the plan (its stream-K range, then its
// whole tiles).
template <class T>
class Segments<T, Grid::kPlan> {
 public:
  __device__ __forceinline__ explicit Segments(const schedule::Plan& plan)
      : cursor_(plan, int(blockIdx.x)) {}

  __device__ __forceinline__ bool next(const schedule::Plan& plan, schedule::Segment& s) {
    return cursor_.next(plan, s);
  }

  __device__ __forceinline__ TileCoord coord(const schedule::Plan& plan, int tile) const {
    return plan.coord<T::BM, T::BN>(tile);
  }

 private:
  schedule::Cursor cursor_;
};

// C = A @ B over the CTA's segments (schedule.cuh; launch_streamk() for the workspace).
// `partials` and `flags`, stream-K's workspace, are touched only by split tiles (plan.sk_tiles >
// 0), so dp and persistent pass nullptr. One kernel serves persistent and streamk.
template <class T, bool kBTransposed, Grid kGrid>
__global__ void __launch_bounds__(T::kThreads, T::kMinCtasPerSm)
    gemm(GemmArgs args, schedule::Plan plan, float4* partials, int* flags) {
  extern __shared__ __align__(128) unsigned char mma_pipelined_smem[];
  using C = Cta<T, kBTransposed>;
  const uint32_t smem = smem_address(mma_pipelined_smem);
  const int warp = int(threadIdx.x) / 32;
  const int warp_m0 = warp / T::kWarpsN * T::WM, warp_n0 = warp % T::kWarpsN * T::WN;

  // The pipeline runs over the K-blocks of the CTA's segments in order. The loader walks the
  // segments on its own, STAGES - 1 K-blocks ahead of the consumer, and on into the next segment
  // when this one's K-blocks are all issued: the next tile's loads are in flight during this
  // tile's epilogue (and stream-K's fixup).
  Segments<T, kGrid> load_segments(plan), segments(plan);
  schedule::Segment load;
  Loader<T, kBTransposed> loader;
  int load_left = 0;  // K-blocks of the loader's segment still to issue; 0 past the last segment
  const auto next_load_segment = [&]() {
    if (load_segments.next(plan, load)) {
      loader.start(args, load_segments.coord(plan, load.tile));
      loader.skip(args, load.kb_begin);  // a stream-K segment can start inside its tile
      load_left = load.kb_end - load.kb_begin;
    }
  };
  next_load_segment();
  // Issues the next K-block into stage `load_stage`. Past the last K-block the group is empty:
  // commit anyway, so that "all but STAGES - 2 groups done" always means "the K-block about to be
  // computed has landed".
  const auto load_next = [&](int load_stage) {
    if (load_left > 0) {
      loader.issue(args, smem + load_stage * T::kStageBytes);
      if (--load_left == 0) next_load_segment();
    }
    cp_async_commit();
  };

#pragma unroll
  for (int s = 0; s < T::STAGES - 1; ++s) load_next(s);

  typename C::Acc acc;
  C::zero(acc);

  int stage = 0;
  schedule::Segment seg;
  while (segments.next(plan, seg)) {
    for (int kb = seg.kb_begin; kb < seg.kb_end; ++kb) {
      cp_async_wait<T::STAGES - 2>();  // this thread's copies of `stage` have landed ...
      __syncthreads();  // ... and everyone's; also, every warp is done with the stage computed last
      load_next(stage == 0 ? T::STAGES - 1 : stage - 1);  // refill the stage computed last step
      C::compute_k_block(acc, smem + stage * T::kStageBytes, warp_m0, warp_n0);
      stage = stage + 1 == T::STAGES ? 0 : stage + 1;
    }
    // The segment's end; every branch below is CTA-uniform.
    if constexpr (kGrid == Grid::kPlan) {
      if (seg.contributor()) {  // a lower CTA owns the tile and stores it
        C::publish(acc, partials, flags);
        continue;
      }
      if (seg.owner_with_fixup(plan.k_blocks)) C::collect(acc, plan, seg.tile, partials, flags);
    }
    if constexpr (kGrid == Grid::kTiles) {
      cp_async_wait<0>();  // only empty groups remain
      __syncthreads();     // every warp is done with the ring: it becomes the staging buffer
      C::store_tile_staged(args, acc, segments.coord(plan, seg.tile), warp_m0, warp_n0, smem);
    } else {
      C::store_tile(args, acc, segments.coord(plan, seg.tile), warp_m0, warp_n0);
    }
  }
  cp_async_wait<0>();  // only empty groups remain; leave nothing in flight at exit
}

// Once per device and kernel: opt in to the kernel's dynamic shared memory (above 48 KiB needs
// it), prefer shared memory over L1 (cp.async.cg bypasses L1 anyway), and count the CTAs that fit
// on the GPU at once (SMs x occupancy) for the persistent and stream-K grids. This runs at the
// first launch, which in shapescope is the check against cuBLAS, outside the graph captures that
// time kernels.
template <class T>
int count_resident_ctas(const void* kernel, std::mutex& mutex, std::vector<int>& per_device) {
  return schedule::once_per_device(mutex, per_device, [&](int device) {
    CHECK_CUDA(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes));
    CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                    int(cudaSharedmemCarveoutMaxShared)));
    int sms = 0, per_sm = 0;
    CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, T::kThreads,
                                                             size_t(T::kSmemBytes)));
    if (per_sm < 1)
      throw Error(ExitCode::kInternal,
                  "04_mma_pipelined: no CTA of " + std::to_string(T::kThreads) + " threads and " +
                      std::to_string(T::kSmemBytes) + " B of shared memory fits on an SM");
    return sms * per_sm;
  });
}

template <class T, bool kBTransposed, Grid kGrid>
int resident_ctas() {
  static std::mutex mutex;
  static std::vector<int> per_device;  // 0: not set up yet on that device
  return count_resident_ctas<T>(reinterpret_cast<const void*>(gemm<T, kBTransposed, kGrid>),
                                mutex, per_device);
}

template <schedule::Kind kKind>
constexpr Grid kGridOf = kKind == schedule::Kind::kDataParallel ? Grid::kTiles : Grid::kPlan;

// The plan of schedule kKind for the problem on the current device. persistent's and streamk's G
// is at most the CTAs resident at once: a stream-K owner waits for CTAs after it. Also sets the
// kernel up on the device, which dp needs as well (its dynamic shared memory).
template <class T, bool kBTransposed, schedule::Kind kKind>
schedule::Plan plan_for(const GemmArgs& args, int batch) {
  const int resident = resident_ctas<T, kBTransposed, kGridOf<kKind>>();
  return schedule::make_plan(kKind, args.m, args.n, args.k, batch, T::BM, T::BN, T::BK, resident);
}

// dp and persistent (streamk needs a workspace: launch_streamk()).
template <class T, bool kBTransposed, schedule::Kind kKind>
void launch(const GemmArgs& args, int batch, cudaStream_t stream) {
  static_assert(kKind != schedule::Kind::kStreamK, "stream-K takes a workspace: launch_streamk()");
  const schedule::Plan plan = plan_for<T, kBTransposed, kKind>(args, batch);
  const dim3 grid = kKind == schedule::Kind::kDataParallel
                        ? tile_grid(args, T::BM, T::BN, batch)
                        : dim3(unsigned(plan.ctas));
  gemm<T, kBTransposed, kGridOf<kKind>><<<grid, T::kThreads, T::kSmemBytes, stream>>>(
      args, plan, nullptr, nullptr);
  CHECK_CUDA(cudaGetLastError());
}

// Stream-K's workspace for `ctas` CTAs: their slots, then one int flag per CTA (zeroed before each
// launch).
template <class T>
constexpr int64_t streamk_workspace_bytes(int ctas) {
  return int64_t(ctas) * (kStreamKSlotBytes<T> + 4);
}

template <class T, bool kBTransposed>
int64_t workspace_streamk(const GemmArgs& args, int batch) {
  return streamk_workspace_bytes<T>(
      plan_for<T, kBTransposed, schedule::Kind::kStreamK>(args, batch).ctas);
}

// `workspace`: at least workspace_streamk() bytes, 16-byte aligned (launch.cu checks both).
template <class T, bool kBTransposed>
void launch_streamk(const GemmArgs& args, int batch, cudaStream_t stream, void* workspace,
                    int64_t workspace_bytes) {
  const schedule::Plan plan = plan_for<T, kBTransposed, schedule::Kind::kStreamK>(args, batch);
  const int64_t need = streamk_workspace_bytes<T>(plan.ctas);
  if (workspace_bytes < need)
    throw Error(ExitCode::kInternal, "04_mma_pipelined stream-K needs a workspace of " +
                                         std::to_string(need) + " B, got " +
                                         std::to_string(workspace_bytes));
  float4* partials = static_cast<float4*>(workspace);
  int* flags = reinterpret_cast<int*>(static_cast<char*>(workspace) +
                                      int64_t(plan.ctas) * kStreamKSlotBytes<T>);
  CHECK_CUDA(cudaMemsetAsync(flags, 0, size_t(plan.ctas) * sizeof(int), stream));
  gemm<T, kBTransposed, Grid::kPlan><<<plan.ctas, T::kThreads, T::kSmemBytes, stream>>>(
      args, plan, partials, flags);
  CHECK_CUDA(cudaGetLastError());
}

}  // namespace shapescope::kernels::mma_pipelined
