// Kernel 05's grouped schedules (Schedule::kGrouped), for grouped calls (Problem::groups: an MoE
// layer's experts, PyTorch's _grouped_mm): one persistent launch over the tiles of every group, on
// the producer, consumers and prologue of kernels/05_wgmma_tma.cuh, one CTA a cluster (a cluster's
// CTAs share B, which two groups do not: 128x128 runs alone here).
//
//   gemm_grouped:    nn and nt, M varies by group. The tiles of every group are numbered group by
//                    group (kernels/group_table.hpp: the table rides in the kernel parameters,
//                    __grid_constant__, <= 1024 groups; a CTA finds its tile's group by binary
//                    search). A is one TMA map over all groups' stacked rows (a tile's rows past its
//                    group's end read the next group's and are not stored), B a 3D map whose third
//                    coordinate is the group (zeros past each group's N and K), C stored up to the
//                    group's end row. Requires bf16, every group's N, K, lda, ldb, ldc equal, lda,
//                    ldb, ldc multiples of 8 (the groups' rows then stack in the buffers).
//   gemm_grouped_k:  the K form (tn, an MoE layer's weight gradient: every group's M, N, lda, ldb,
//                    ldc equal, K = the expert's tokens varies, >= 1). Every group has the same
//                    tiles (group_table.hpp's make_group_table_k); each tile runs its own group's
//                    ceil(K_g / 64) K-blocks through its group's own TMA maps (A_g {M, K_g}, B_g
//                    {N, K_g}: zeros past K_g, not the next group's rows), encoded on the host when
//                    the call is prepared (kernels::prepare_launch) and read from global memory
//                    (2 x 128 B a group; the producer acquires them with fence.proxy.tensormap when
//                    its tile's group changes). C is one matrix of all groups' M x N blocks.
//   tn's A in shared memory (MN-major: rows of k, contiguous m): BM / 64 = 2 TMA boxes of {64 m,
//     64 k rows}, 8 KiB each, box w the rows of consumer warpgroup w. Descriptor as nn's B: SBO =
//     1024 B (the next 8 k-rows), the k16 step at + 2048 kk bytes, LBO = 8192 B (the next 64 m,
//     outside a wgmma's 64 rows); wgmma's transpose-A bit is set (Consumer's kATransposed).
//   registers:       ptxas (CUDA 13.0): 128x256 gemm_grouped spills 10 B (8 B stack) under the
//                    168-register compile cap, 128x128 none, the K form (both tiles) none.
#pragma once
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <vector>

#include "common/check.hpp"
#include "kernels/05_wgmma_tma.cuh"
#include "kernels/05_wgmma_tma_host.cuh"
#include "kernels/common.cuh"
#include "kernels/group_table.hpp"
#include "kernels/schedule.cuh"

namespace shapescope::kernels::wgmma_tma {

// The grouped schedule's tile t: its rows among all groups' stacked rows (A and C are one matrix of
// them), its group (B's third coordinate) and the end of the group's rows (C's row limit).
template <class T>
__device__ __forceinline__ schedule::TileCoord grouped_tile_of(const GroupTable& groups, int t) {
  const GroupTile g = groups.tile<T::BM, T::BN>(t);
  return {g.m0, g.n0, g.group, g.m_end};
}

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
  const SharedStorage<T> smem = prologue<T>();
  Segments segments(plan, int(blockIdx.x));
  const auto tile = [&](const schedule::Segment& s) { return grouped_tile_of<T>(groups, s.tile); };
  // C is one matrix of all groups' rows: its "batch" is 0.
  const auto c_tile = [&](const schedule::Segment& s) {
    schedule::TileCoord t = grouped_tile_of<T>(groups, s.tile);
    t.batch = 0;
    return t;
  };
  const int warpgroup = int(threadIdx.x) / 128;
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
  const SharedStorage<T> smem = prologue<T>();
  GroupKSegments<T> segments(plan, int(blockIdx.x), groups);
  // C is one matrix of all groups' rows: its "batch" is 0.
  const auto c_tile = [&](const schedule::Segment& s) {
    const GroupTile g = groups.tile_k<T::BM, T::BN>(s.tile);
    return schedule::TileCoord{g.m0, g.n0, 0, g.m_end};
  };
  const int warpgroup = int(threadIdx.x) / 128;
  if (warpgroup == 0) {
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0) ProducerK<T>::run(maps, groups, plan, smem, segments);
  } else {
    setmaxnreg_inc<232>();
    Consumer<T, false, true>::run(args, plan, nullptr, nullptr, smem, segments, 0, warpgroup - 1,
                                  c_tile);
  }
#endif
}

// ---- Host side ---------------------------------------------------------------------------------

// The clusters of gemm_grouped and of gemm_grouped_k that fit at once (05_wgmma_tma_host.cuh).
template <class T, bool kBTransposed>
int grouped_resident_clusters() {
  static std::mutex mutex;
  static std::vector<int> per_device;
  return count_resident_clusters<T>(reinterpret_cast<const void*>(gemm_grouped<T, kBTransposed>),
                                    mutex, per_device);
}

template <class T>
int grouped_k_resident_clusters() {
  static std::mutex mutex;
  static std::vector<int> per_device;
  return count_resident_clusters<T>(reinterpret_cast<const void*>(gemm_grouped_k<T>), mutex,
                                    per_device);
}

// A grouped schedule's plan: groups.tiles() tiles of ceil(k / BK) K-blocks (k: the deepest
// group's), walked by the `resident` CTAs that fit at once, at most one per tile.
template <class T>
schedule::Plan grouped_plan(const GroupTable& groups, int k, int resident) {
  schedule::Plan plan;
  plan.tiles_n = groups.tiles_n;
  plan.tiles = groups.tiles();
  plan.k_blocks = (k + T::BK - 1) / T::BK;
  plan.ctas = std::min(plan.tiles, resident);
  return plan;
}

// A grouped call (Schedule::kGrouped): args.a, args.b, args.c are the shared buffers, args.m all
// groups' rows, args.stride_b the elements between groups' B (the registry's unsupported() checks
// that the groups' A and C rows are stacked and their B evenly spaced), args.stride_a and
// args.stride_c 0.
template <class T, bool kBTransposed>
void launch_grouped(const GemmArgs& args, const GroupTable& groups, cudaStream_t stream) {
  const schedule::Plan plan =
      grouped_plan<T>(groups, args.k, grouped_resident_clusters<T, kBTransposed>());
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
  int k = 1;
  for (int g = 0; g < groups.count; ++g) k = std::max(k, groups.k(g));
  const schedule::Plan plan = grouped_plan<T>(groups, k, grouped_k_resident_clusters<T>());
  const LaunchConfig<T> launch(plan.ctas, stream);
  CHECK_CUDA(cudaLaunchKernelEx(&launch.config, gemm_grouped_k<T>,
                                static_cast<const CUtensorMap*>(maps), args, plan, groups));
  CHECK_CUDA(cudaGetLastError());
}

}  // namespace shapescope::kernels::wgmma_tma
