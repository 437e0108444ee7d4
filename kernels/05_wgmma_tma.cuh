// Kernel 05: Hopper. TMA loads into a multi-stage shared-memory ring completed on mbarriers,
// wgmma by two consumer warpgroups, a producer warpgroup, the schedules of kernels/schedule.cuh.
// This file is its device side: the tiling, the shared storage, the producer and the consumers,
// the prologue every entry point runs, and the dense entry point `gemm`. The host side (TMA maps,
// clusters, launches) is kernels/05_wgmma_tma_host.cuh; kernels/05_wgmma_tma_grouped.cuh runs the
// same producer and consumers over grouped calls (gemm_grouped, gemm_grouped_k).
//
//   adds over 04:    the sm_90a path: one producer thread issues TMA copies of whole A and B
//                    tiles into a ring whose stages complete on mbarriers ("full": the bytes
//                    arrived; "empty": the consumers' wgmma have read it); two consumer warpgroups
//                    run wgmma straight from shared memory through matrix descriptors, one K-block
//                    in flight. TMA computes the addresses, zero-fills past M, N and K and writes
//                    the 128-byte swizzle wgmma reads; 04's loader, swizzle code and ldmatrix are
//                    gone. 128x128 runs as a cluster of 2 CTAs stacked along M that share B: each
//                    loads half of B's K-block and multicasts it into both rings.
//   block tile:      BM x BN x BK = 128 x 128 x 64 and 128 x 256 x 64
//   warp tile:       warpgroup tile 64 x BN: consumer w computes rows 64w .. 64w + 63 with
//                    wgmma.m64nBNk16 (4 per K-block); 64 or 128 fp32 accumulators a thread
//   threads:         384 = a producer warpgroup (setmaxnreg.dec to 40) and 2 consumer warpgroups
//                    (setmaxnreg.inc to 232: 128 x 40 + 256 x 232 = 64512 of 65536 registers)
//   stages:          6 (128x128, 32 KiB a stage) and 4 (128x256, 48 KiB); the producer runs up to
//                    STAGES K-blocks ahead, across tiles, so the next tile's loads overlap this
//                    tile's epilogue
//   schedule:        one kernel for all three, on kernels/schedule.cuh's plan in units of clusters
//                    (128x128: plan tiles of 256 x 128). dp: a unit per tile (1D grid); persistent:
//                    the units that fit at once (cudaOccupancyMaxActiveClusters) loop over the
//                    tiles; streamk: whole tiles, then the last wave's tiles in K-pieces, each
//                    unit taking its piece from an atomic counter when its whole tiles are done
//   grouped:         Schedule::kGrouped (kernels/05_wgmma_tma_grouped.cuh): one persistent launch
//                    over the tiles of every group of a grouped call, on this file's producer and
//                    consumers, one CTA a cluster
//   shared memory:   dynamic: mbarriers and the stream-K piece (256 B), the epilogue's staging
//                    buffers (16 x 128 bf16 per consumer warp, 32 KiB), 1 KiB to align the ring,
//                    the ring: 225.25 KiB of the 227 KiB a CTA may have; one CTA per SM
//   registers:       gemm: 168 a thread at compile time, no spills (ptxas -v, CUDA 13.0)
//   requirements:    sm_90a (compute capability 9.0 exactly: wgmma and setmaxnreg are
//                    architecture-specific; the sm_80 build compiles this kernel to nothing).
//                    bf16, nn and nt, any M, N, K >= 1; lda, ldb and A's and B's offsets
//                    multiples of 8 elements (TMA: 16-byte aligned rows), as 04; any ldc;
//                    tiles x batch < 2^31
//
// Stream-K in 05: the consumers publish and collect partials as schedule.cuh describes, in the
// workspace slot of their piece (pieces are per cluster: an owner of rank r collects from the
// rank-r CTAs of later pieces). Rank 0's producer takes the piece and announces it to the cluster
// on an mbarrier. With the 128x128 pair an odd number of 128-row tiles leaves the last pair's
// second CTA with nothing inside M: it still loads its half of B.
//
// Shared-memory layouts (PTX ISA, "Matrix Descriptor" and the canonical layouts of wgmma), all
// with the 128-byte swizzle: a swizzle atom is 8 rows of 128 B (64 bf16), 1024 B, in which the
// 16-byte chunk c of row r is stored at chunk c ^ r.
//   A, and nt's B (K-major: rows of m or n, 64 contiguous k): TMA box {64 k, BM or BN rows},
//     row r at r x 128 B. Descriptor: SBO = 1024 B (the next 8 rows), LBO unused (the K extent of
//     one wgmma, 16 k = 32 B, lies inside the atom); the k16 step kk starts at + 32 kk bytes.
//   nn's B (MN-major: rows of k, contiguous n): BN / 64 TMA boxes of {64 n, 64 k rows}, 8 KiB
//     each. Descriptor: LBO = 8192 B (the next 64 columns of n: the next box), SBO = 1024 B (the
//     next 8 k-rows); the k16 step kk starts at + 2048 kk bytes; wgmma's transpose-B bit is set.
//   tn's A (the grouped K form, MN-major): kernels/05_wgmma_tma_grouped.cuh.
//
// Napkin math (H100/H200 SXM: 132 SMs, dense bf16 ~990 TFLOP/s at 1.98 GHz, ~1.6 GHz power-capped):
//   - Per K-block a CTA loads (BM + BN) x 64 x 2 B = 32 KiB (128x128) or 48 KiB (128x256) for
//     2 x BM x BN x 64 flops: 64 or 85 flop/B. 700 TFLOP/s at 85 flop/B is 8.2 TB/s across the
//     chip from L2, within what L2 gives when the CTAs running at once share rows of A and B.
//   - A 128x256 K-block is 4.2 Mflop, ~1.1 us of one SM's tensor cores at 3.75 Tflop/s; a TMA of
//     48 KiB takes ~0.4 us at ~120 B/clk per SM: 4 stages hide ~3 us of latency, plenty.
//   - Registers: a 64 x 256 warpgroup tile is 128 fp32 a thread; 232 leaves ~100 for descriptors,
//     addresses and the epilogue, without spills.
//   - The epilogue (staged through shared memory, Consumer::store) is a few % of a 4096-deep
//     tile's time, overlapped with the producer's next loads.
#pragma once
#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/schedule.cuh"
#include "kernels/tilings.hpp"

// wgmma, setmaxnreg and the sm_90a forms of the TMA and mbarrier instructions are compiled for the
// sm_90a target only; the sm_80 (and compute_80 PTX) build of 05's entry points (here and in
// 05_wgmma_tma_grouped.cuh) gets empty kernels that the registry never launches there
// (unsupported(): compute capability 9.0 only).
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SHAPESCOPE_SM90A 1
#else
#define SHAPESCOPE_SM90A 0
#endif

namespace shapescope::kernels::wgmma_tma {

template <int BN_, int STAGES_, int CLUSTER_>
struct Tiling {
  static constexpr int BM = 128, BN = BN_, BK = 64, STAGES = STAGES_;
  // CTAs per cluster, stacked along M: they compute the tiles (m, n) and (m + 1, n), so they need
  // the same B; each loads 1 / CLUSTER of it and multicasts it to all.
  static constexpr int CLUSTER = CLUSTER_;
  // The same numbers as a row of kernels/tilings.hpp, whose formulas the registry shares:
  // consumer warpgroups of 64 x BN.
  static constexpr tilings::Tiling kRow{tilings::Kernel::kWgmmaTma, BM, BN, BK, 64, BN, STAGES,
                                        CLUSTER, 1};
  static constexpr int kBRowsPerCta = BN / CLUSTER;  // nt's B^T rows a CTA loads
  static constexpr int kBBoxesPerCta = BN / 64 / CLUSTER;  // nn's {64 n, 64 k} boxes a CTA loads
  static constexpr int kConsumers = tilings::wgmma_consumers(kRow);  // warpgroups, 64 rows each
  static constexpr int kThreads = tilings::threads(kRow);  // + the producer warpgroup
  static constexpr int kConsumerThreads = kConsumers * 128;
  static constexpr int kAccumulators = BN / 2;  // fp32 a consumer thread: 64 x BN / 128
  static constexpr int kABytes = BM * BK * 2;
  static constexpr int kBBytes = BK * BN * 2;
  static constexpr int kStageBytes = kABytes + kBBytes;
  // Dynamic shared memory: the barriers (full[STAGES], empty[STAGES], 8 B each, and the stream-K
  // piece), the staging buffers, then the ring, aligned up to 1024 B.
  static constexpr int kBarrierBytes = tilings::kWgmmaBarrierBytes;
  // The epilogue's staging buffer of each consumer warp: 16 rows x 128 columns of C in bf16.
  static constexpr int kStagingBytes = tilings::kWgmmaStagingBytes;
  static constexpr int kEpilogueBytes = kConsumers * 4 * kStagingBytes;
  static constexpr int kSmemBytes = tilings::dynamic_smem_bytes(kRow);
  static_assert(kThreads == (1 + kConsumers) * 128, "consumer warpgroups and a producer");
  static_assert(kSmemBytes == kBarrierBytes + kEpilogueBytes + 1024 + STAGES * kStageBytes,
                "barriers, staging, 1 KiB to align the ring, the ring");
  static_assert(BK * 2 == 128, "BK must be 64: one 128-byte swizzle row of bf16 per TMA box row");
  static_assert(BN == 128 || BN == 256, "wgmma wrappers exist for n128 and n256");
  static_assert(CLUSTER == 1 || CLUSTER == 2, "clusters of 1 or 2 CTAs");
  static_assert(kABytes % 1024 == 0 && kBBytes % 1024 == 0,
                "every stage's A and B must start on a 1024-byte swizzle-atom boundary");
  static_assert(2 * STAGES * 8 + 8 + 4 <= kBarrierBytes,
                "the mbarriers and the stream-K piece must fit their space");
  static_assert(kSmemBytes <= 227 * 1024, "Hopper gives a CTA at most 227 KiB of shared memory");
};

// Row kRow of kernels/tilings.hpp's table (launch.cu instantiates each row for nn and nt).
template <int kRow>
struct TilingOfRow {
  static constexpr tilings::Tiling t = tilings::kTilings[kRow];
  static_assert(t.kernel == tilings::Kernel::kWgmmaTma && t.bm == 128 && t.bk == 64 &&
                    t.wm == 64 && t.wn == t.bn && t.min_ctas_per_sm == 1,
                "05 has BM = 128, BK = 64, consumer warpgroups of 64 x BN, one CTA per SM");
  using type = Tiling<t.bn, t.stages, t.cluster>;
};
template <int kRow>
using TilingOf = typename TilingOfRow<kRow>::type;

// ---- The kernel --------------------------------------------------------------------------------

// One workspace slot per CTA for stream-K: BM x BN fp32, as the consumers' fragments (float4 j of
// consumer thread x at j x 256 + x: coalesced, and read back by the same thread of the owner).
template <class T>
constexpr int64_t kSlotBytes = int64_t(T::BM) * T::BN * 4;

template <class T>
constexpr int64_t streamk_workspace_bytes(int ctas) {
  return int64_t(ctas) * (kSlotBytes<T> + 4) + 4;  // + the piece counter
}

// The CTA's dynamic shared memory (Tiling: barriers, staging buffers, the ring) and its barriers.
template <class T>
struct SharedStorage {
  uint64_t* full;   // full[s]: the producer's arrive.expect_tx, completed by stage s's TMA bytes
  uint64_t* empty;  // empty[s]: every consumer warp of the cluster is done reading stage s
  // Stream-K: the piece this CTA (its cluster) got, and the barrier it is announced on.
  uint64_t* piece_ready;
  int* piece_slot;
  uint32_t staging;  // the consumer warps' epilogue buffers
  uint32_t ring;     // STAGES x (A, B), aligned up to 1024 B for the 128-byte swizzle

  __device__ __forceinline__ explicit SharedStorage(unsigned char* smem)
      : full(reinterpret_cast<uint64_t*>(smem)),
        empty(full + T::STAGES),
        piece_ready(empty + T::STAGES),
        piece_slot(reinterpret_cast<int*>(piece_ready + 1)),
        staging(smem_address(smem) + T::kBarrierBytes),
        ring((smem_address(smem) + T::kBarrierBytes + T::kEpilogueBytes + 1023) & ~1023u) {}

  // One thread, before any other uses them.
  __device__ __forceinline__ void init_barriers() const {
#pragma unroll
    for (int s = 0; s < T::STAGES; ++s) {
      mbarrier_init(smem_address(&full[s]), 1);  // the producer's arrive.expect_tx (+ bytes)
      // Every consumer warp of every CTA in the cluster: each stage is written by all of them.
      mbarrier_init(smem_address(&empty[s]), T::CLUSTER * T::kConsumers * 4);
    }
    mbarrier_init(smem_address(piece_ready), 1);  // rank 0's producer, once
    mbarrier_init_fence();
  }

  // The piece rank 0's producer took, for everyone else of the cluster.
  __device__ __forceinline__ int announced_piece() const {
    mbarrier_wait_cluster(smem_address(piece_ready), 0);
    return *reinterpret_cast<volatile int*>(piece_slot);
  }
};

// A position in the ring: the stage, and the parity of the phase its barriers are in.
template <class T>
struct RingPosition {
  int stage = 0, phase = 0;
  __device__ __forceinline__ void advance() {
    if (++stage == T::STAGES) {
      stage = 0;
      phase ^= 1;
    }
  }
};

// The segments a CTA computes: its whole tiles first; then, once they are done, the stream-K
// piece that its cluster takes from the counter (flags[ctas]), so that the pieces go to the SMs
// that finish their whole tiles first, as the hardware gives dp's last wave to the SMs that are
// free first (schedule.cuh: fixed pieces landed on SMs that had been slow). The producer and the
// consumers each walk them.
class Segments {
 public:
  __device__ __forceinline__ Segments(const schedule::Plan& plan, int cluster)
      : cursor_(schedule::Cursor::whole_tiles(plan, cluster)), piece_taken_(plan.sk_ctas == 0) {}

  // The next segment, taking the piece when the whole tiles are done. `take` returns the piece.
  template <class Take>
  __device__ __forceinline__ bool next(const schedule::Plan& plan, schedule::Segment& s,
                                       Take take) {
    if (cursor_.next(plan, s)) return true;
    if (piece_taken_) return false;
    piece_taken_ = true;
    piece_ = take();
    cursor_ = schedule::Cursor::piece(plan, piece_);
    return cursor_.next(plan, s);
  }

  __device__ __forceinline__ int piece() const { return piece_; }

 private:
  schedule::Cursor cursor_;
  bool piece_taken_;
  int piece_ = 0;
};

// The plan's tile is the cluster's (CLUSTER x BM) x BN; CTA `rank`'s rows start rank x BM down.
template <class T>
__device__ __forceinline__ schedule::TileCoord tile_of(const schedule::Plan& plan,
                                                       const schedule::Segment& s, int rank) {
  schedule::TileCoord tile = plan.coord<T::BM * T::CLUSTER, T::BN>(s.tile);
  tile.m0 += rank * T::BM;
  return tile;
}

// Warpgroup 0: one thread issues every TMA copy, up to STAGES K-blocks ahead of the consumers,
// across tiles and segments, so the next tile's loads are in flight during this tile's epilogue.
// kGrouped: A is one 2D matrix of every group's rows (its third coordinate 0); B's is the group.
template <class T, bool kBTransposed, bool kGrouped = false>
struct Producer {
  // K-block kb of `tile` into the stage whose A starts at `a`, completing bytes on barrier `bar`:
  // this CTA's rows of A, and its share of B, multicast into every CTA of the cluster.
  static __device__ __forceinline__ void load_k_block(const CUtensorMap& map_a,
                                                      const CUtensorMap& map_b, uint32_t bar,
                                                      uint32_t a, const schedule::TileCoord& tile,
                                                      int kb, int rank) {
    const uint32_t b = a + T::kABytes;
    tma_load_3d(a, &map_a, bar, kb * T::BK, tile.m0, kGrouped ? 0 : tile.batch);
    constexpr uint16_t kAll = (1 << T::CLUSTER) - 1;
    if constexpr (kBTransposed) {
      const int row = rank * T::kBRowsPerCta;
      if constexpr (T::CLUSTER > 1)
        tma_load_3d_multicast(b + row * 128, &map_b, bar, kb * T::BK, tile.n0 + row, tile.batch,
                              kAll);
      else
        tma_load_3d(b, &map_b, bar, kb * T::BK, tile.n0, tile.batch);
    } else {
#pragma unroll
      for (int i = 0; i < T::kBBoxesPerCta; ++i) {
        const int j = rank * T::kBBoxesPerCta + i;  // box j: columns n0 + 64 j
        if constexpr (T::CLUSTER > 1)
          tma_load_3d_multicast(b + j * 64 * 128, &map_b, bar, tile.n0 + j * 64, kb * T::BK,
                                tile.batch, kAll);
        else
          tma_load_3d(b + j * 64 * 128, &map_b, bar, tile.n0 + j * 64, kb * T::BK, tile.batch);
      }
    }
  }

  // Rank 0 takes the cluster's stream-K piece from the counter and announces it to every CTA of
  // the cluster; the other ranks' producers learn it from the barrier, like the consumers.
  static __device__ __forceinline__ int take_piece(const schedule::Plan& plan, int* flags,
                                                   const SharedStorage<T>& smem, int rank) {
    if (rank != 0) return smem.announced_piece();
    const int p = atomicAdd(flags + plan.ctas * T::CLUSTER, 1);
#pragma unroll
    for (int r = 0; r < T::CLUSTER; ++r)
      store_and_arrive_cluster(smem_address(smem.piece_slot), p, smem_address(smem.piece_ready), r);
    return p;
  }

  // tile_of(segment): the segment's tile, this CTA's rows of it.
  template <class TileOf>
  static __device__ __forceinline__ void run(const CUtensorMap& map_a, const CUtensorMap& map_b,
                                             const schedule::Plan& plan, int* flags,
                                             const SharedStorage<T>& smem, Segments& segments,
                                             int rank, const TileOf& tile_of) {
    RingPosition<T> ring;
    schedule::Segment segment;
    while (segments.next(plan, segment, [&]() { return take_piece(plan, flags, smem, rank); })) {
      const schedule::TileCoord tile = tile_of(segment);
      for (int kb = segment.kb_begin; kb < segment.kb_end; ++kb) {
        // Free in every CTA of the cluster: this CTA's share of B lands in all of them.
        mbarrier_wait(smem_address(&smem.empty[ring.stage]), ring.phase ^ 1);
        const uint32_t bar = smem_address(&smem.full[ring.stage]);
        mbarrier_arrive_expect_tx(bar, T::kStageBytes);  // own A, everyone's shares of B
        load_k_block(map_a, map_b, bar, smem.ring + ring.stage * T::kStageBytes, tile, kb, rank);
        ring.advance();
      }
    }
  }
};

// kATransposed: A is MN-major in shared memory (tn's A, rows of k: the grouped schedule's K form).
template <class T, bool kBTransposed, bool kATransposed = false>
struct Consumer {
  using Acc = float[T::kAccumulators];
  static constexpr int kFloat4s = T::kAccumulators / 4;  // per thread, in a slot

  // acc (+)= one K-block from the stage at `stage`: 4 wgmma of k16; scale 0 on the segment's
  // first step starts the accumulators afresh.
  static __device__ __forceinline__ void mma_k_block(Acc& acc, uint32_t stage, int warpgroup,
                                                     bool first) {
    // This warpgroup's 64 rows of A: 64 rows of 64 k (K-major), or one {64 m, 64 k-rows} box
    // (MN-major); 8 KiB either way.
    const uint32_t a = stage + warpgroup * 64 * 128;
    const uint32_t b = stage + T::kABytes;
#pragma unroll
    for (int kk = 0; kk < T::BK / 16; ++kk) {
      // MN-major A as nn's B: the k16 step is 16 k-rows (2048 B) down, SBO the next 8 k-rows; LBO
      // (the next 64 m) lies outside a wgmma's 64 rows, set as B's for form.
      const uint64_t desc_a = kATransposed ? matrix_descriptor(a + kk * 2048, 8192, 1024)
                                           : matrix_descriptor(a + kk * 32, 16, 1024);
      const uint64_t desc_b = kBTransposed ? matrix_descriptor(b + kk * 32, 16, 1024)
                                           : matrix_descriptor(b + kk * 2048, 8192, 1024);
      const int scale_d = first && kk == 0 ? 0 : 1;
      if constexpr (T::BN == 256)
        wgmma_m64n256<kBTransposed ? 0 : 1, kATransposed ? 1 : 0>(acc, desc_a, desc_b, scale_d);
      else
        wgmma_m64n128<kBTransposed ? 0 : 1, kATransposed ? 1 : 0>(acc, desc_a, desc_b, scale_d);
    }
  }

  // Rounds to bf16 and stores what lies inside C, through this warp's staging buffer at
  // `staging` (16 rows x 128 columns, 128 columns at a time). Fragment layout of wgmma m64nN (PTX
  // ISA): warp w of the warpgroup holds rows 16w .. 16w + 15; accumulators 4j .. 4j + 3 are the
  // 16 x 8 block j: 4j, 4j + 1 at row lane / 4, columns 8j + 2 (lane % 4) + {0, 1}; 4j + 2, 4j + 3
  // eight rows below. Stored straight from the fragments, each warp store would write 4 bytes to
  // each of 8 rows (8 L2 transactions of 16 B; measured 3-4 % of a 4096-deep tile); staged, a
  // warp writes 2 whole rows of 256 B with 16 B a lane. In the buffer, 16-byte chunk c of row r
  // sits at chunk c ^ (r % 8): the fragment writes of a warp (8 rows, one chunk column) then hit
  // 32 different banks.
  static __device__ __forceinline__ void store(const GemmArgs& args, const Acc& acc,
                                               const schedule::TileCoord& tile, int warpgroup,
                                               uint32_t staging) {
    const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32 % 4;
    __nv_bfloat16* c = args.c + tile.batch * args.stride_c;
    const bool vectors = args.ldc % 8 == 0 && reinterpret_cast<uintptr_t>(args.c) % 16 == 0;
    const int row0 = tile.m0 + warpgroup * 64 + warp * 16;
#pragma unroll
    for (int part = 0; part < T::BN / 128; ++part) {
#pragma unroll
      for (int j = 0; j < 16; ++j) {
        const int f = part * 16 + j;  // the fragment's 8-column block
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int r = lane / 4 + half * 8;
          const __nv_bfloat162 pair =
              __floats2bfloat162_rn(acc[4 * f + 2 * half], acc[4 * f + 2 * half + 1]);
          st_shared_b32(staging + r * 256 + staged_chunk(r, j) + lane % 4 * 4,
                        *reinterpret_cast<const uint32_t*>(&pair));
        }
      }
      __syncwarp();
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int r = 2 * i + lane / 16, chunk = lane % 16;
        const uint4 v = ld_shared_v4(staging + r * 256 + staged_chunk(r, chunk));
        const int row = row0 + r, col = tile.n0 + part * 128 + chunk * 8;
        if (row >= tile.m_end || col >= args.n) continue;
        store_chunk(c + int64_t(row) * args.ldc + col, v, args.n - col, vectors);
      }
      __syncwarp();  // the buffer is read before the next part overwrites it
    }
  }

  // Stream-K: this CTA's partial of a tile it does not own, to slot `cta` (its piece's); then
  // the flag.
  static __device__ __forceinline__ void publish(const Acc& acc, float4* partials, int* flags,
                                                 int cta, int consumer_thread) {
    float4* slot = partials + int64_t(cta) * (kSlotBytes<T> / 16);
#pragma unroll
    for (int j = 0; j < kFloat4s; ++j)
      __stcg(slot + j * T::kConsumerThreads + consumer_thread,
             make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]));
    __threadfence();                         // this thread's partial is visible GPU-wide ...
    consumer_sync<T::kConsumerThreads>();  // ... and every consumer's, before the flag
    if (consumer_thread == 0) schedule::store_release_gpu(flags + cta, 1);
  }

  // Stream-K: the owner (of piece `piece`) adds the partials of the pieces after it that began
  // inside `tile` (pieces are per cluster): from the CTA of the same rank in each.
  static __device__ __forceinline__ void collect(Acc& acc, const schedule::Plan& plan, int tile,
                                                 int piece, int rank, const float4* partials,
                                                 const int* flags, int consumer_thread) {
    for (int d = piece + 1; schedule::contributes(plan, d, tile); ++d) {
      const int cta = d * T::CLUSTER + rank;
      if (consumer_thread == 0) schedule::wait_flag(flags + cta);
      consumer_sync<T::kConsumerThreads>();  // orders everyone's reads of the slot after the acquire
      const float4* slot = partials + int64_t(cta) * (kSlotBytes<T> / 16);
#pragma unroll
      for (int j = 0; j < kFloat4s; ++j) {
        const float4 p = __ldcg(slot + j * T::kConsumerThreads + consumer_thread);
        acc[4 * j] += p.x;
        acc[4 * j + 1] += p.y;
        acc[4 * j + 2] += p.z;
        acc[4 * j + 3] += p.w;
      }
    }
  }

  // The stage's wgmma are done: free it in every CTA of the cluster (each CTA's producer
  // multicasts into this one's copy too). One arrival per warp.
  static __device__ __forceinline__ void release(const SharedStorage<T>& smem, int s) {
    if (threadIdx.x % 32 != 0) return;
    if constexpr (T::CLUSTER > 1) {
#pragma unroll
      for (int r = 0; r < T::CLUSTER; ++r) mbarrier_arrive_cluster(smem_address(&smem.empty[s]), r);
    } else {
      mbarrier_arrive(smem_address(&smem.empty[s]));
    }
  }

  // acc = the segment's K-blocks, each read once its TMA bytes have landed. One K-block's wgmma
  // stay in flight while the stage before it is released.
  static __device__ __forceinline__ void mainloop(Acc& acc, const schedule::Segment& segment,
                                                  const SharedStorage<T>& smem,
                                                  RingPosition<T>& ring, int warpgroup) {
    int previous = -1;  // the stage whose wgmma may still be reading it
    for (int kb = segment.kb_begin; kb < segment.kb_end; ++kb) {
      mbarrier_wait(smem_address(&smem.full[ring.stage]), ring.phase);
      wgmma_fence();
      mma_k_block(acc, smem.ring + ring.stage * T::kStageBytes, warpgroup, kb == segment.kb_begin);
      wgmma_commit();
      wgmma_wait<1>();  // the previous K-block's wgmma are done: its stage can be refilled
      if (previous >= 0) release(smem, previous);
      previous = ring.stage;
      ring.advance();
    }
    wgmma_wait<0>();
    fence_accumulators(acc);
    release(smem, previous);
  }

  // Consumer warpgroup `warpgroup` (0 or 1): per segment the mainloop, then the epilogue: a
  // stream-K contributor publishes its partial; an owner first adds the others' partials; whole
  // tiles and owners store C.
  template <class TileOf, class Walk>
  static __device__ __forceinline__ void run(const GemmArgs& args, const schedule::Plan& plan,
                                             float4* partials, int* flags,
                                             const SharedStorage<T>& smem, Walk& segments,
                                             int rank, int warpgroup, const TileOf& tile_of) {
    const int consumer_thread = int(threadIdx.x) - 128;
    Acc acc;
    RingPosition<T> ring;
    schedule::Segment segment;
    while (segments.next(plan, segment, [&]() { return smem.announced_piece(); })) {
      mainloop(acc, segment, smem, ring, warpgroup);
      if (segment.contributor()) {
        publish(acc, partials, flags, segments.piece() * T::CLUSTER + rank, consumer_thread);
        continue;
      }
      if (segment.owner_with_fixup(plan.k_blocks))
        collect(acc, plan, segment.tile, segments.piece(), rank, partials, flags, consumer_thread);
      store(args, acc, tile_of(segment), warpgroup,
            smem.staging + (consumer_thread / 32) * T::kStagingBytes);
    }
  }
};

// ---- The entry points --------------------------------------------------------------------------

// Every entry point's prologue: the CTA's dynamic shared memory carved into its storage, whose
// barriers one thread initialises; every thread of the CTA (in a cluster, of every CTA: the peers
// multicast into this CTA's ring and arrive on its barriers) waits for that before any role starts.
// Each entry point then splits its warpgroups into the producer and the consumers itself: with the
// split in a function taking the two roles as lambdas, the compiler laid gemm_grouped's segment
// walk out differently (8 to 16 more instructions), where this way every kernel's code is the same.
template <class T>
__device__ __forceinline__ SharedStorage<T> prologue() {
  extern __shared__ __align__(16) unsigned char wgmma_tma_smem[];
  const SharedStorage<T> smem(wgmma_tma_smem);
  if (threadIdx.x == 0) smem.init_barriers();
  if constexpr (T::CLUSTER > 1)
    cluster_sync();
  else
    __syncthreads();
  return smem;
}

// map_a: A as {K, M, batch}, boxes {64, BM}. map_b: nt's B^T as {K, N, batch}, boxes {64, BN /
// CLUSTER}; nn's B as {N, K, batch}, boxes {64, 64}. The plan's units are clusters, its tiles
// (CLUSTER x BM) x BN; rank r of a cluster computes rows r x BM of each. partials and flags:
// stream-K's workspace (null when plan.sk_tiles == 0), one slot and flag per CTA.
template <class T, bool kBTransposed>
__global__ void __launch_bounds__(T::kThreads, 1)
    gemm(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
         GemmArgs args, schedule::Plan plan, float4* partials, int* flags) {
#if SHAPESCOPE_SM90A
  const int cluster = int(blockIdx.x) / T::CLUSTER, rank = int(blockIdx.x) % T::CLUSTER;
  const SharedStorage<T> smem = prologue<T>();
  Segments segments(plan, cluster);
  // The tile's rows end at M.
  const auto tile = [&](const schedule::Segment& s) {
    schedule::TileCoord t = tile_of<T>(plan, s, rank);
    t.m_end = args.m;
    return t;
  };
  const int warpgroup = int(threadIdx.x) / 128;
  if (warpgroup == 0) {
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0)
      Producer<T, kBTransposed>::run(map_a, map_b, plan, flags, smem, segments, rank, tile);
  } else {
    setmaxnreg_inc<232>();
    Consumer<T, kBTransposed>::run(args, plan, partials, flags, smem, segments, rank,
                                   warpgroup - 1, tile);
  }
  // No CTA leaves while a peer may still arrive on its barriers.
  if constexpr (T::CLUSTER > 1) cluster_sync();
#endif
}

}  // namespace shapescope::kernels::wgmma_tma
