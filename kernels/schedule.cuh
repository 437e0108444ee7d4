// Schedules for the tensor-core kernels (04, 05): which (tile, K-blocks) segments each CTA of a
// 1D grid computes, and the flags that stream-K's partial tiles are handed over with.
//
// Tiles are numbered along N, then M, then batch: t -> (n = t % tiles_n, m = t / tiles_n %
// tiles_m, batch = t / (tiles_n x tiles_m)). A MAC-iteration is one K-block of one tile; the
// iterations of a set of tiles are numbered tile-major.
//
//   dp:          G = tiles CTAs, CTA c computes tile c (05; 04 keeps its 3D grid).
//   persistent:  G = min(tiles, resident CTAs); CTA c computes tiles c, c + G, c + 2G, ...
//   streamk:     a hybrid in the spirit of Osama et al. ("Stream-K", PPoPP 2023, section 5:
//                data-parallel waves plus stream-K for the rest). G = resident CTAs. With T tiles
//                and r = T % G > 0 (r = T when T < G), the whole waves' T - r tiles run as in
//                persistent, and the r tiles of the partial last wave, sk_tiles = r, are split
//                by MAC-iterations evenly over sk_ctas = r x pieces CTAs: CTA c < sk_ctas gets
//                iterations [begin(c), begin(c + 1)), begin(c) = floor(c x total / sk_ctas),
//                about K / pieces of one tile. pieces = min(G / r, k_blocks / 8, 4), at least 1:
//                as many as there are CTAs to spare, none shorter than 8 K-blocks, and at most 4
//                contributions per tile (the owner adds them one after the other). A CTA runs its
//                whole tiles first, then a piece: piece c (Cursor(plan, c), 04), or the next piece
//                of an atomic counter when its whole tiles are done (Cursor::whole_tiles, then
//                Cursor::piece: 05), so that the pieces go to the SMs that are free first; with
//                fixed pieces some landed on SMs that had been slow with their whole tile (05 at
//                2112^2 x 8448: 150 us, handed out 124-128 us, dp 163 us). The fixup below holds
//                with piece numbers in place of CTA numbers: every piece < sk_ctas is taken,
//                since every unit takes one and there are ctas >= sk_ctas of them.
//                T % G = 0: no stream-K part (persistent).
//                T < G: G = sk_ctas CTAs, all stream-K.
//                Measured on an H200 and kept in the comments: two earlier splits lost to this
//                one. Plain stream-K (every tile split) and "one full wave plus the partial one,
//                split over all CTAs" both start the CTAs at scattered K offsets, so the CTAs
//                running at once read all of K instead of one K-slice: at 2112 x 2112 x 8448
//                (05, 128x256) Nsight Compute saw DRAM reads of 604 MB against dp's 108 MB, L2
//                hit rate 42 % against 73 %, L2 throughput 93 % against 48 %, and the K-blocks ran
//                at half speed. Whole waves in step and a few piece offsets keep dp's locality.
//
// Stream-K fixup (the kernels implement it with these flags): a tile's OWNER is the CTA whose
// range holds the tile's first K-block. Every other contributor starts inside the tile, so the tile
// is the first segment of its range: it writes its partial to its own workspace slot and then
// releases its flag (after its whole tiles, which wait for nothing). The owner reaches the tile at
// the end of its range, takes CTAs c + 1, c + 2, ... while they begin before the tile's end
// (d < sk_ctas and begin(d) < (tile + 1) x k_blocks), acquires each flag, adds the slot and stores
// C. A CTA writes at most one slot; contributors publish at the start of their ranges and owners
// wait at the end of theirs, so the waits are short. An owner waits on higher-numbered CTAs only
// and no CTA waits before it has published, so there is no cycle, provided all G CTAs are resident
// at once (G <= SMs x occupancy, and nothing else runs on the GPU; the launch is not cooperative,
// so CUDA does not promise it). launch() zeroes the flags (cudaMemsetAsync on the launch's
// stream, a memset node inside graph captures) before each launch.
#pragma once
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <vector>

#include "common/check.hpp"
#include "kernels/tilings.hpp"

namespace shapescope::kernels::schedule {

// One output tile: its first row and column and its matrix of the batch; m_end bounds its rows
// besides M (the grouped schedule: the end of its group's rows, kernels/group_table.hpp).
struct TileCoord {
  int m0, n0, batch;
  int m_end = 0x7fffffff;
};

// A CTA's grid-wide plan, computed on the host (make_plan) and passed by value to the kernel.
struct Plan {
  int tiles_n = 0, tiles_m = 0;
  int tiles = 0;     // tiles_n x tiles_m x batch (< 2^31: the registry checks)
  int k_blocks = 0;  // K-blocks per tile
  int ctas = 0;      // G, the 1D grid
  int sk_tiles = 0;  // tiles [0, sk_tiles) are split by MAC-iterations; the rest are whole
  int sk_ctas = 0;   // CTAs [0, sk_ctas) share the split tiles' iterations (<= ctas)
  int64_t sk_q = 0, sk_r = 0;  // sk_tiles x k_blocks = sk_q x sk_ctas + sk_r

  // First stream-K iteration of CTA c, floor(c x total / sk_ctas) computed without overflowing
  // int64; CTAs from sk_ctas on have none (their ranges are empty, at the end).
  __host__ __device__ int64_t sk_begin(int c) const {
    const int64_t k = c < sk_ctas ? c : sk_ctas;
    return sk_ctas == 0 ? 0 : k * sk_q + k * sk_r / sk_ctas;
  }

  template <int BM, int BN>
  __host__ __device__ TileCoord coord(int t) const {
    const int n = t % tiles_n;
    t /= tiles_n;
    return {t % tiles_m * BM, n * BN, t / tiles_m};
  }
};

using Kind = Schedule;  // tilings.hpp's: kDataParallel, kPersistent, kStreamK, kGrouped

// The plan for an M x N x K problem in `batch` matrices, BM x BN x BK tiles, `resident` CTAs that
// fit on the GPU at once (SMs x occupancy).
inline Plan make_plan(Kind kind, int m, int n, int k, int batch, int bm, int bn, int bk,
                      int resident) {
  Plan p;
  p.tiles_n = (n + bn - 1) / bn;
  p.tiles_m = (m + bm - 1) / bm;
  p.tiles = p.tiles_n * p.tiles_m * batch;
  p.k_blocks = (k + bk - 1) / bk;
  switch (kind) {
    case Kind::kDataParallel:
      p.ctas = p.tiles;
      break;
    case Kind::kPersistent:
    case Kind::kGrouped:  // (05 plans a grouped call over its group table: grouped_plan())
      p.ctas = std::min(p.tiles, resident);
      break;
    case Kind::kStreamK: {
      // The partial last wave's r tiles (all tiles when there are fewer than `resident`), each
      // split into `pieces` K-ranges on r x pieces CTAs: as many pieces as there are CTAs to
      // spare, but at most kMaxPieces (an owner adds pieces - 1 partials, one after the other)
      // and none shorter than kMinPieceKBlocks (the fixup costs about as much as a few K-blocks).
      constexpr int kMaxPieces = 4, kMinPieceKBlocks = 8;
      const int r = p.tiles % resident;
      const int pieces =
          std::max(1, std::min({resident / std::max(r, 1), p.k_blocks / kMinPieceKBlocks,
                                kMaxPieces}));
      p.sk_tiles = r;
      p.sk_ctas = r * pieces;
      p.ctas = p.tiles >= resident ? resident : p.sk_ctas;
      break;
    }
  }
  if (p.sk_ctas > 0) {
    const int64_t sk_iters = int64_t(p.sk_tiles) * p.k_blocks;
    p.sk_q = sk_iters / p.sk_ctas;
    p.sk_r = sk_iters % p.sk_ctas;
  }
  return p;
}

// A value worked out once per device (at the first launch there, outside graph captures): the
// kernels' resident CTA counts. compute(device) must return > 0 (0 means "not yet").
template <class Compute>
int once_per_device(std::mutex& mutex, std::vector<int>& per_device, Compute compute) {
  int device = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(mutex);
  if (size_t(device) >= per_device.size()) per_device.resize(size_t(device) + 1, 0);
  int& value = per_device[size_t(device)];
  if (value == 0) value = compute(device);
  return value;
}

// A run of K-blocks [kb_begin, kb_end) of one tile that a CTA computes in one go.
struct Segment {
  int tile = 0, kb_begin = 0, kb_end = 0;
  // Stream-K roles (both false for a whole tile): a contributor publishes its partial; an owner
  // (holds the first K-block, not the last) adds the contributors' partials before storing C.
  __host__ __device__ bool contributor() const { return kb_begin != 0; }
  __host__ __device__ bool owner_with_fixup(int k_blocks) const {
    return kb_begin == 0 && kb_end < k_blocks;
  }
};

// Walks CTA `cta`'s segments in order: its stream-K range, then its whole tiles. The state is
// four ints (a kernel holds two cursors, the loader's and the consumer's, next to 64 to 128
// accumulators), and next() divides nothing.
class Cursor {
 public:
  __host__ __device__ Cursor(const Plan& plan, int cta) : next_tile_(plan.sk_tiles + cta) {
    const int64_t begin = plan.sk_begin(cta);
    tile_ = int(begin / plan.k_blocks);
    kb_ = int(begin % plan.k_blocks);
    left_ = int(plan.sk_begin(cta + 1) - begin);  // <= k_blocks (sk_ctas >= sk_tiles)
  }

  // The same walk in two parts, for kernels that hand out the stream-K pieces in the order the
  // CTAs finish their whole tiles (05): CTA `cta`'s whole tiles only, and piece `piece`'s
  // stream-K range only (empty for piece >= sk_ctas).
  __host__ __device__ static Cursor whole_tiles(const Plan& plan, int cta) {
    Cursor c(plan, cta);
    c.left_ = 0;
    return c;
  }
  __host__ __device__ static Cursor piece(const Plan& plan, int piece) {
    Cursor c(plan, piece);
    c.next_tile_ = plan.tiles;
    return c;
  }

  // Whole tiles first, then the stream-K range: every CTA's whole tiles run in step (the same
  // K-block at the same time, which keeps the operands' K-slices in L2 for all of them), and the
  // split tiles come last, in pieces that start at a few K offsets only.
  __host__ __device__ bool next(const Plan& plan, Segment& s) {
    if (next_tile_ < plan.tiles) {
      s = {next_tile_, 0, plan.k_blocks};
      next_tile_ += plan.ctas;
      return true;
    }
    if (left_ > 0) {
      s.tile = tile_;
      s.kb_begin = kb_;
      // Not std::min: a host function, which device code may call only with
      // --expt-relaxed-constexpr (nvcc warns otherwise).
      s.kb_end = left_ < plan.k_blocks - kb_ ? kb_ + left_ : plan.k_blocks;
      left_ -= s.kb_end - kb_;
      ++tile_;
      kb_ = 0;
      return true;
    }
    return false;
  }

 private:
  int tile_, kb_;  // the next stream-K segment's tile and first K-block
  int left_;       // stream-K iterations left
  int next_tile_;  // the next whole tile
};

// The CTAs after `cta` whose ranges begin inside `tile` (the contributors an owner waits for):
// d = cta + 1 .. while d < sk_ctas and sk_begin(d) < (tile + 1) x k_blocks.
__host__ __device__ inline bool contributes(const Plan& plan, int d, int tile) {
  // sk_begin(d) = d x sk_q + floor(d x sk_r / sk_ctas) < end without the division (a slow
  // subroutine on the GPU, called with the accumulators live): floor(x / n) < y <=> x < y x n,
  // y > 0.
  const int64_t y = int64_t(tile + 1) * plan.k_blocks - d * plan.sk_q;
  return d < plan.sk_ctas && y > 0 && d * plan.sk_r < y * plan.sk_ctas;
}

// Release / acquire at GPU scope on a flag in global memory (sm_70+).
__device__ __forceinline__ void store_release_gpu(int* flag, int value) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(flag), "r"(value) : "memory");
}

__device__ __forceinline__ int load_acquire_gpu(const int* flag) {
  int value;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(value) : "l"(flag) : "memory");
  return value;
}

__device__ __forceinline__ void wait_flag(const int* flag) {
  while (load_acquire_gpu(flag) == 0) {
  }
}

}  // namespace shapescope::kernels::schedule
