// Kernel 05: Hopper. TMA loads into a multi-stage shared-memory ring completed on mbarriers,
// wgmma by two consumer warpgroups, a producer warpgroup, the schedules of kernels/schedule.cuh.
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
//   grouped:         Schedule::kGrouped, for grouped calls (Problem::groups: an MoE layer's
//                    experts, PyTorch's _grouped_mm): gemm_grouped, one persistent launch over the
//                    tiles of every group, numbered group by group (kernels/group_table.hpp: the
//                    table rides in the kernel parameters, __grid_constant__, <= 1024 groups; a CTA
//                    finds its tile's group by binary search). A is one TMA map over all groups'
//                    stacked rows (a tile's rows past its group's end read the next group's and
//                    are not stored), B a 3D map whose third coordinate is the group (zeros past
//                    each group's N and K), C stored up to the group's end row. No cluster: a
//                    cluster's CTAs share B, which two groups do not (128x128 runs alone here).
//                    Requires bf16, nn or nt, every group's N, K, lda, ldb, ldc equal (M varies),
//                    lda, ldb, ldc multiples of 8 (the groups' rows then stack in the buffers).
//                    The K form (tn, an MoE layer's weight gradient: every group's M, N, lda, ldb,
//                    ldc equal, K = the expert's tokens varies, >= 1): gemm_grouped_k; every group
//                    has the same tiles (group_table.hpp's make_group_table_k), each tile runs its
//                    own group's ceil(K_g / 64) K-blocks through its group's own TMA maps (A_g
//                    {M, K_g}, B_g {N, K_g}: zeros past K_g, not the next group's rows), encoded on
//                    the host when the call is prepared (kernels::prepare_launch) and read from
//                    global memory (2 x 128 B a group; the producer acquires them with
//                    fence.proxy.tensormap when its tile's group changes). A is MN-major in shared
//                    memory (below), C one matrix of all groups' M x N blocks.
//                    ptxas: 128x256 grouped spills 10 B (8 B stack) under the 168-register compile
//                    cap, 128x128 grouped none, the K form (both tiles) none. Measured on an H100
//                    (Qwen-MoE widths, 60 experts, burst clocks; PyTorch's CUTLASS 3 sm90 grouped
//                    kernel per call in the recorded step in brackets): nt forward 328 us [329], nn
//                    input gradient 354 us [318], tn weight gradient 292 us [363];
//                    bench/workloads/results/applied-what-ifs-h100-2026-11-26/final-kernel/.
//   shared memory:   dynamic: mbarriers and the stream-K piece (256 B), the epilogue's staging
//                    buffers (16 x 128 bf16 per consumer warp, 32 KiB), 1 KiB to align the ring,
//                    the ring: 225.25 KiB of the 227 KiB a CTA may have; one CTA per SM
//   registers:       168 a thread at compile time, no spills (ptxas -v, CUDA 13.0)
//   requirements:    sm_90a (compute capability 9.0 exactly: wgmma and setmaxnreg are
//                    architecture-specific; the sm_80 build compiles this kernel to nothing).
//                    bf16, nn and nt, any M, N, K >= 1; lda, ldb and A's and B's offsets
//                    multiples of 8 elements (TMA: 16-byte aligned rows), as 04; any ldc;
//                    tiles x batch < 2^31
//   measured share of cuBLAS on an NVIDIA H200 (4096^3 bf16, cold L2, cuBLAS 13.1 in the same
//   run, tests/data/h200-2026-11-21-ladder): 128x256 persistent 97.5 % (nn), 97.9 % (nt);
//   streamk 96.5 %, dp 95 %; 128x128 persistent 88 %, dp 83 %
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
//   tn's A (grouped K form; MN-major: rows of k, contiguous m): BM / 64 = 2 TMA boxes of {64 m,
//     64 k rows}, 8 KiB each, box w the rows of consumer warpgroup w. Descriptor as nn's B: SBO =
//     1024 B (the next 8 k-rows), the k16 step at + 2048 kk bytes, LBO = 8192 B (the next 64 m,
//     outside a wgmma's 64 rows); wgmma's transpose-A bit is set (Consumer's kATransposed).
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
#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "common/check.hpp"
#include "common/error.hpp"
#include "kernels/common.cuh"
#include "kernels/group_table.hpp"
#include "kernels/schedule.cuh"
#include "kernels/tilings.hpp"

namespace shapescope::kernels::wgmma_tma {

// wgmma, setmaxnreg and the sm_90a forms of the TMA and mbarrier instructions are compiled for the
// sm_90a target only; the sm_80 (and compute_80 PTX) build of this file gets an empty kernel that
// the registry never launches there (unsupported(): compute capability 9.0 only).
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SHAPESCOPE_SM90A 1
#else
#define SHAPESCOPE_SM90A 0
#endif

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

// The grouped schedule's tile t: its rows among all groups' stacked rows (A and C are one matrix of
// them), its group (B's third coordinate) and the end of the group's rows (C's row limit).
template <class T>
__device__ __forceinline__ schedule::TileCoord grouped_tile_of(const GroupTable& groups, int t) {
  const GroupTile g = groups.tile<T::BM, T::BN>(t);
  return {g.m0, g.n0, g.group, g.m_end};
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

// The grouped schedule's K form (tn: groups differ in K): the persistent walk's tiles, each with
// its own group's K-blocks [0, ceil(K_g / BK)). No stream-K: piece() is never asked for a share.
template <class T>
class GroupKSegments {
 public:
  __device__ __forceinline__ GroupKSegments(const schedule::Plan& plan, int cta,
                                            const GroupTable& groups)
      : cursor_(schedule::Cursor::whole_tiles(plan, cta)), groups_(groups) {}

  template <class Take>
  __device__ __forceinline__ bool next(const schedule::Plan& plan, schedule::Segment& s, Take) {
    if (!cursor_.next(plan, s)) return false;
    s.kb_end = (groups_.k(groups_.group_of_k(s.tile)) + T::BK - 1) / T::BK;  // >= 1: K_g >= 1
    return true;
  }

  __device__ __forceinline__ int piece() const { return 0; }

 private:
  schedule::Cursor cursor_;
  const GroupTable& groups_;
};

// The K form's producer: each tile reads its group's own TMA maps (maps[2g]: A_g stored K_g x M,
// {M, K_g}; maps[2g + 1]: B_g stored K_g x N, {N, K_g}; in global memory, written by the host
// before the launch), so that TMA fills zeros past K_g rather than reading group g + 1's rows. A
// stage's A is BM / 64 boxes of {64 m, 64 k-rows} (box i: the rows of consumer warpgroup i), its B
// BN / 64 boxes of {64 n, 64 k-rows}, as nn's.
template <class T>
struct ProducerK {
  static __device__ __forceinline__ void run(const CUtensorMap* maps, const GroupTable& groups,
                                             const schedule::Plan& plan,
                                             const SharedStorage<T>& smem,
                                             GroupKSegments<T>& segments) {
    RingPosition<T> ring;
    schedule::Segment segment;
    int fenced = -1;  // the group whose maps this thread has acquired
    while (segments.next(plan, segment, []() { return 0; })) {
      const GroupTile tile = groups.tile_k<T::BM, T::BN>(segment.tile);
      const CUtensorMap* map_a = maps + 2 * tile.group;
      const CUtensorMap* map_b = map_a + 1;
      if (tile.group != fenced) {
        fence_tensormap_acquire(map_a);
        fence_tensormap_acquire(map_b);
        fenced = tile.group;
      }
      const int m0 = tile.m0 - tile.group * groups.m;  // the tile's rows inside its group
      for (int kb = segment.kb_begin; kb < segment.kb_end; ++kb) {
        mbarrier_wait(smem_address(&smem.empty[ring.stage]), ring.phase ^ 1);
        const uint32_t bar = smem_address(&smem.full[ring.stage]);
        mbarrier_arrive_expect_tx(bar, T::kStageBytes);  // boxes past M, N, K_g count in full
        const uint32_t a = smem.ring + ring.stage * T::kStageBytes, b = a + T::kABytes;
#pragma unroll
        for (int i = 0; i < T::BM / 64; ++i)
          tma_load_3d(a + i * 64 * 128, map_a, bar, m0 + i * 64, kb * T::BK, 0);
#pragma unroll
        for (int j = 0; j < T::BN / 64; ++j)
          tma_load_3d(b + j * 64 * 128, map_b, bar, tile.n0 + j * 64, kb * T::BK, 0);
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

// map_a: A as {K, M, batch}, boxes {64, BM}. map_b: nt's B^T as {K, N, batch}, boxes {64, BN /
// CLUSTER}; nn's B as {N, K, batch}, boxes {64, 64}. The plan's units are clusters, its tiles
// (CLUSTER x BM) x BN; rank r of a cluster computes rows r x BM of each. partials and flags:
// stream-K's workspace (null when plan.sk_tiles == 0), one slot and flag per CTA.
template <class T, bool kBTransposed>
__global__ void __launch_bounds__(T::kThreads, 1)
    gemm(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
         GemmArgs args, schedule::Plan plan, float4* partials, int* flags) {
#if SHAPESCOPE_SM90A
  extern __shared__ __align__(16) unsigned char wgmma_tma_smem[];
  const SharedStorage<T> smem(wgmma_tma_smem);
  const int warpgroup = int(threadIdx.x) / 128;
  const int cluster = int(blockIdx.x) / T::CLUSTER, rank = int(blockIdx.x) % T::CLUSTER;
  if (threadIdx.x == 0) smem.init_barriers();
  // The peers' barriers must be initialised before anyone multicasts into them or arrives there.
  if constexpr (T::CLUSTER > 1)
    cluster_sync();
  else
    __syncthreads();

  Segments segments(plan, cluster);
  // The tile's rows end at M.
  const auto tile = [&](const schedule::Segment& s) {
    schedule::TileCoord t = tile_of<T>(plan, s, rank);
    t.m_end = args.m;
    return t;
  };
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

// The grouped schedule (one CTA a cluster): persistent over `groups`' tiles, plan.tiles of them;
// CTA c computes tiles c, c + G, ... (schedule.cuh's persistent walk), each mapped to its group by
// groups.tile(). map_a: every group's rows of A as one {K, rows, 1}, boxes {64, BM}; a tile's rows
// past its group's end read the next group's rows (their outputs are not stored), past the last
// group's TMA fills zeros. map_b: {K, N, groups} (nt) or {N, K, groups} (nn), zeros past each
// group's K and N. C: args.c, every group's rows stacked (args.stride_c 0), stored up to the tile's
// group end. No stream-K: partials and flags are not used.
template <class T, bool kBTransposed>
__global__ void __launch_bounds__(T::kThreads, 1)
    gemm_grouped(const __grid_constant__ CUtensorMap map_a,
                 const __grid_constant__ CUtensorMap map_b, GemmArgs args, schedule::Plan plan,
                 const __grid_constant__ GroupTable groups) {
  static_assert(T::CLUSTER == 1, "a cluster's CTAs share B, which two groups do not");
#if SHAPESCOPE_SM90A
  extern __shared__ __align__(16) unsigned char wgmma_tma_smem[];
  const SharedStorage<T> smem(wgmma_tma_smem);
  const int warpgroup = int(threadIdx.x) / 128;
  if (threadIdx.x == 0) smem.init_barriers();
  __syncthreads();

  Segments segments(plan, int(blockIdx.x));
  const auto tile = [&](const schedule::Segment& s) { return grouped_tile_of<T>(groups, s.tile); };
  // C is one matrix of all groups' rows: its "batch" is 0.
  const auto c_tile = [&](const schedule::Segment& s) {
    schedule::TileCoord t = grouped_tile_of<T>(groups, s.tile);
    t.batch = 0;
    return t;
  };
  if (warpgroup == 0) {
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0)
      Producer<T, kBTransposed, true>::run(map_a, map_b, plan, nullptr, smem, segments, 0, tile);
  } else {
    setmaxnreg_inc<232>();
    Consumer<T, kBTransposed>::run(args, plan, nullptr, nullptr, smem, segments, 0, warpgroup - 1,
                                   c_tile);
  }
#endif
}

// The grouped schedule's K form (tn: A_g stored K_g x M, B_g stored K_g x N, every group's M, N
// equal; one CTA a cluster): persistent over `groups`' tiles (make_group_table_k: every group has
// the same tiles), each tile running its group's ceil(K_g / 64) K-blocks. maps: 2 per group in
// global memory (ProducerK). A is MN-major in shared memory (wgmma's transpose-A bit), B as nn's.
// C: args.c, every group's M x N block stacked (group g's rows from g x M; args.stride_c 0), stored
// up to the group's end. No stream-K.
template <class T>
__global__ void __launch_bounds__(T::kThreads, 1)
    gemm_grouped_k(const CUtensorMap* maps, GemmArgs args, schedule::Plan plan,
                   const __grid_constant__ GroupTable groups) {
  static_assert(T::CLUSTER == 1, "a cluster's CTAs share B, which two groups do not");
  static_assert(T::BM == 2 * 64, "A: one {64 m, 64 k} box per consumer warpgroup");
#if SHAPESCOPE_SM90A
  extern __shared__ __align__(16) unsigned char wgmma_tma_smem[];
  const SharedStorage<T> smem(wgmma_tma_smem);
  const int warpgroup = int(threadIdx.x) / 128;
  if (threadIdx.x == 0) smem.init_barriers();
  __syncthreads();

  GroupKSegments<T> segments(plan, int(blockIdx.x), groups);
  if (warpgroup == 0) {
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0) ProducerK<T>::run(maps, groups, plan, smem, segments);
  } else {
    setmaxnreg_inc<232>();
    // C is one matrix of all groups' rows: its "batch" is 0.
    const auto c_tile = [&](const schedule::Segment& s) {
      const GroupTile g = groups.tile_k<T::BM, T::BN>(s.tile);
      return schedule::TileCoord{g.m0, g.n0, 0, g.m_end};
    };
    Consumer<T, false, true>::run(args, plan, nullptr, nullptr, smem, segments, 0, warpgroup - 1,
                                  c_tile);
  }
#endif
}

// ---- Host side ---------------------------------------------------------------------------------

// cuTensorMapEncodeTiled is a driver API function; the runtime hands out its address, so that
// shapescope needs no link against libcuda.
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static std::mutex mutex;
  static PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
  const std::lock_guard<std::mutex> lock(mutex);
  if (encode == nullptr) {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CHECK_CUDA(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000,
                                                cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || function == nullptr)
      throw Error(ExitCode::kInternal,
                  "05_wgmma_tma: the CUDA driver has no cuTensorMapEncodeTiled (needs 12.0+)");
    encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
  }
  return encode;
}

// A TMA map of `batch` row-major bf16 matrices of rows x cols (ld elements between rows, stride
// between matrices), boxes of box_rows x 64 columns with the 128-byte swizzle; zeros outside.
inline CUtensorMap tensor_map(const void* base, int64_t rows, int64_t cols, int64_t ld,
                              int64_t stride, int batch, int box_rows) {
  CUtensorMap map{};
  const cuuint64_t dims[3] = {cuuint64_t(cols), cuuint64_t(rows), cuuint64_t(batch)};
  // Byte strides of dimensions 1 and 2 (multiples of 16: lda, ldb multiples of 8 elements). A
  // single matrix gets rows x ld, which nothing reads.
  const cuuint64_t strides[2] = {cuuint64_t(ld) * 2,
                                 cuuint64_t(batch > 1 ? stride : rows * ld) * 2};
  const cuuint32_t box[3] = {64, cuuint32_t(box_rows), 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult result = tensor_map_encoder()(
      &map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<void*>(base), dims, strides, box,
      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS)
    throw Error(ExitCode::kInternal,
                "05_wgmma_tma: cuTensorMapEncodeTiled failed (CUresult " +
                    std::to_string(int(result)) + ") for " + std::to_string(batch) + " x " +
                    std::to_string(rows) + " x " + std::to_string(cols) + ", ld " +
                    std::to_string(ld) + ", stride " + std::to_string(stride));
  return map;
}

// The launch configuration of `units` plan units (clusters of T::CLUSTER CTAs).
template <class T>
struct LaunchConfig {
  cudaLaunchAttribute attribute[1];
  cudaLaunchConfig_t config{};
  LaunchConfig(int units, cudaStream_t stream) {
    attribute[0].id = cudaLaunchAttributeClusterDimension;
    attribute[0].val.clusterDim.x = T::CLUSTER;
    attribute[0].val.clusterDim.y = 1;
    attribute[0].val.clusterDim.z = 1;
    config.gridDim = dim3(unsigned(units) * T::CLUSTER);
    config.blockDim = dim3(T::kThreads);
    config.dynamicSmemBytes = size_t(T::kSmemBytes);
    config.stream = stream;
    config.attrs = attribute;
    config.numAttrs = 1;
  }
};

// The kernel of tiling T that a launch runs: gemm, gemm_grouped or gemm_grouped_k.
enum class KernelKind { kGemm, kGrouped, kGroupedK };

// Once per device and kernel: opt in to the dynamic shared memory and count the clusters that fit
// on the GPU at once (cudaOccupancyMaxActiveClusters: one CTA per SM, and a cluster's CTAs in one
// GPC) for the persistent, stream-K and grouped grids.
template <class T, bool kBTransposed, KernelKind kKind = KernelKind::kGemm>
int resident_clusters() {
  static std::mutex mutex;
  static std::vector<int> per_device;  // 0: not set up yet on that device
  return schedule::once_per_device(mutex, per_device, [](int) {
    const void* kernel = nullptr;
    if constexpr (kKind == KernelKind::kGrouped)
      kernel = reinterpret_cast<const void*>(gemm_grouped<T, kBTransposed>);
    else if constexpr (kKind == KernelKind::kGroupedK)
      kernel = reinterpret_cast<const void*>(gemm_grouped_k<T>);
    else
      kernel = reinterpret_cast<const void*>(gemm<T, kBTransposed>);
    CHECK_CUDA(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes));
    const LaunchConfig<T> launch(1, nullptr);
    int clusters = 0;
    CHECK_CUDA(cudaOccupancyMaxActiveClusters(&clusters, kernel, &launch.config));
    if (clusters < 1)
      throw Error(ExitCode::kInternal,
                  "05_wgmma_tma: no cluster of " + std::to_string(T::CLUSTER) + " CTAs of " +
                      std::to_string(T::kThreads) + " threads and " +
                      std::to_string(T::kSmemBytes) + " B of shared memory fits on the GPU");
    return clusters;
  });
}

template <class T, bool kBTransposed>
schedule::Plan plan_for(schedule::Kind kind, const GemmArgs& args, int batch) {
  return schedule::make_plan(kind, args.m, args.n, args.k, batch, T::BM * T::CLUSTER, T::BN,
                             T::BK, resident_clusters<T, kBTransposed>());
}

template <class T, bool kBTransposed>
int64_t workspace_streamk(const GemmArgs& args, int batch) {
  const schedule::Plan plan = plan_for<T, kBTransposed>(schedule::Kind::kStreamK, args, batch);
  return plan.sk_tiles > 0 ? streamk_workspace_bytes<T>(plan.ctas * T::CLUSTER) : 0;
}

template <class T, bool kBTransposed>
void run(schedule::Kind kind, const GemmArgs& args, int batch, cudaStream_t stream,
         void* workspace, int64_t workspace_bytes) {
  const schedule::Plan plan = plan_for<T, kBTransposed>(kind, args, batch);
  float4* partials = nullptr;
  int* flags = nullptr;
  if (plan.sk_tiles > 0) {
    const int ctas = plan.ctas * T::CLUSTER;
    const int64_t need = streamk_workspace_bytes<T>(ctas);
    if (workspace == nullptr || workspace_bytes < need)
      throw Error(ExitCode::kInternal, "05_wgmma_tma stream-K needs a workspace of " +
                                           std::to_string(need) + " B, got " +
                                           std::to_string(workspace_bytes));
    partials = static_cast<float4*>(workspace);
    flags = reinterpret_cast<int*>(static_cast<char*>(workspace) + ctas * kSlotBytes<T>);
    // The flags, then the counter that hands out the stream-K pieces (flags[ctas]).
    CHECK_CUDA(cudaMemsetAsync(flags, 0, size_t(ctas + 1) * sizeof(int), stream));
  }
  const CUtensorMap map_a = tensor_map(args.a, args.m, args.k, args.lda, args.stride_a, batch,
                                       T::BM);
  const CUtensorMap map_b =
      kBTransposed ? tensor_map(args.b, args.n, args.k, args.ldb, args.stride_b, batch,
                                T::kBRowsPerCta)
                   : tensor_map(args.b, args.k, args.n, args.ldb, args.stride_b, batch, 64);
  const LaunchConfig<T> launch(plan.ctas, stream);
  CHECK_CUDA(cudaLaunchKernelEx(&launch.config, gemm<T, kBTransposed>, map_a, map_b, args, plan,
                                partials, flags));
  CHECK_CUDA(cudaGetLastError());
}

// The grouped schedule's plan: groups.tiles() tiles, the CTAs that fit at once (at most one per tile)
// walking them.
template <class T, bool kBTransposed>
schedule::Plan grouped_plan(const GemmArgs& args, const GroupTable& groups) {
  schedule::Plan plan;
  plan.tiles_n = groups.tiles_n;
  plan.tiles = groups.tiles();
  plan.k_blocks = (args.k + T::BK - 1) / T::BK;
  plan.ctas = std::min(plan.tiles, resident_clusters<T, kBTransposed, KernelKind::kGrouped>());
  return plan;
}

// A grouped call (Schedule::kGrouped): args.a, args.b, args.c are the shared buffers, args.m all
// groups' rows, args.stride_b the elements between groups' B (the registry's unsupported() checks
// that the groups' A and C rows are stacked and their B evenly spaced), args.stride_a and
// args.stride_c 0.
template <class T, bool kBTransposed>
void launch_grouped(const GemmArgs& args, const GroupTable& groups, cudaStream_t stream) {
  const schedule::Plan plan = grouped_plan<T, kBTransposed>(args, groups);
  const CUtensorMap map_a = tensor_map(args.a, args.m, args.k, args.lda, 0, 1, T::BM);
  const CUtensorMap map_b =
      kBTransposed ? tensor_map(args.b, args.n, args.k, args.ldb, args.stride_b, groups.count,
                                T::kBRowsPerCta)
                   : tensor_map(args.b, args.k, args.n, args.ldb, args.stride_b, groups.count, 64);
  const LaunchConfig<T> launch(plan.ctas, stream);
  CHECK_CUDA(cudaLaunchKernelEx(&launch.config, gemm_grouped<T, kBTransposed>, map_a, map_b, args,
                                plan, groups));
  CHECK_CUDA(cudaGetLastError());
}

// The K form (tn, groups differ in K; make_group_table_k): the TMA maps of every group, 2 a group
// (A_g as {M, K_g} of rows lda apart from args.a + row_start[g] x lda, B_g as {N, K_g} from args.b +
// row_start[g] x ldb: the registry's unsupported() checked that the groups' K rows stack), boxes
// of 64 x 64 (A: the rows of one consumer warpgroup; B: as nn's). The caller copies them to the
// device once (kernels::prepare_launch) and hands them to every launch.
template <class T>
std::vector<CUtensorMap> grouped_k_maps(const GemmArgs& args, const GroupTable& groups) {
  std::vector<CUtensorMap> maps;
  maps.reserve(size_t(groups.count) * 2);
  for (int g = 0; g < groups.count; ++g) {
    const int64_t first = groups.row_start[g], k = groups.k(g);
    maps.push_back(tensor_map(args.a + first * args.lda, k, args.m, args.lda, 0, 1, 64));
    maps.push_back(tensor_map(args.b + first * args.ldb, k, args.n, args.ldb, 0, 1, 64));
  }
  return maps;
}

// A K-form grouped call: args.c the shared C buffer (every group's M x N block after the previous
// one's, rows ldc apart), args.m, args.n every group's; maps the device copy of grouped_k_maps().
// The plan's k_blocks is the largest group's (each tile runs its own group's).
template <class T>
void launch_grouped_k(const GemmArgs& args, const GroupTable& groups, const void* maps,
                      cudaStream_t stream) {
  schedule::Plan plan;
  plan.tiles_n = groups.tiles_n;
  plan.tiles = groups.tiles();
  int k = 1;
  for (int g = 0; g < groups.count; ++g) k = std::max(k, groups.k(g));
  plan.k_blocks = (k + T::BK - 1) / T::BK;
  plan.ctas = std::min(plan.tiles, resident_clusters<T, false, KernelKind::kGroupedK>());
  const LaunchConfig<T> launch(plan.ctas, stream);
  CHECK_CUDA(cudaLaunchKernelEx(&launch.config, gemm_grouped_k<T>,
                                static_cast<const CUtensorMap*>(maps), args, plan, groups));
  CHECK_CUDA(cudaGetLastError());
}

template <class T, bool kBTransposed, schedule::Kind kKind>
void launch(const GemmArgs& args, int batch, cudaStream_t stream) {
  run<T, kBTransposed>(kKind, args, batch, stream, nullptr, 0);
}

template <class T, bool kBTransposed>
void launch_streamk(const GemmArgs& args, int batch, cudaStream_t stream, void* workspace,
                    int64_t workspace_bytes) {
  run<T, kBTransposed>(schedule::Kind::kStreamK, args, batch, stream, workspace, workspace_bytes);
}

#undef SHAPESCOPE_SM90A

}  // namespace shapescope::kernels::wgmma_tma
