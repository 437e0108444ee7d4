// The tilings of shapescope's kernels: one constexpr table that both the kernels (their template
// arguments, threads and shared memory, through launch.cu) and the registry (registry.cpp, plain
// C++) read, so that no number is written down twice. Plain C++17, no CUDA headers.
#pragma once
#include <cstdint>
#include <string_view>

namespace shapescope::kernels {

// How a kernel hands out its tiles (kernels/schedule.cuh): one CTA per tile; a grid of the CTAs
// that fit at once walking the tiles; that, with the last wave's tiles split along K; and for
// grouped calls (Problem::groups) persistent over the tiles of all groups (kernels/group_table.hpp).
enum class Schedule { kDataParallel, kPersistent, kStreamK, kGrouped };

namespace tilings {

// The ladder, kernels/NN_*.cuh.
enum class Kernel { kNaive, kSmemTiled, kRegisterBlocked, kMmaPipelined, kWgmmaTma };

constexpr std::string_view kernel_name(Kernel k) {
  switch (k) {
    case Kernel::kNaive: return "01_naive";
    case Kernel::kSmemTiled: return "02_smem_tiled";
    case Kernel::kRegisterBlocked: return "03_register_blocked";
    case Kernel::kMmaPipelined: return "04_mma_pipelined";
    case Kernel::kWgmmaTma: return "05_wgmma_tma";
  }
  return "";
}

struct Tiling {
  Kernel kernel;
  int bm, bn, bk;  // CTA tile along the user's (row-major) M, N, and the K-block
  // What one thread (03: TM x TN outputs), one warp (04) or one consumer warpgroup (05: 64 x BN)
  // computes; 1 x 1 for 01 and 02 (one output a thread).
  int wm, wn;
  int stages;           // K-blocks in shared memory at once (1: load, sync, compute, sync)
  int cluster;          // CTAs per thread-block cluster, stacked along M (05's 128x128: 2)
  int min_ctas_per_sm;  // __launch_bounds__' second argument (caps registers); 0: none
};

// One row per tiling; the registry lists each row once per schedule it runs, in this order.
// Rows of a kernel are adjacent. Why these numbers (H200, 4096^3 bf16, share of cuBLAS; the
// kernels' headers and bench/kernels/results/*/README.md have more):
//   - 04: BK = 64 with 3 stages halves the barriers per FLOP against BK = 32 with 4 (5 % faster
//     at 128x128, 17 % at 128x256); 4 stages for 128x256 and 256x128 gained nothing, and 192 KiB
//     would shut out the A100's 163 KiB. 2 CTAs/SM cap 128x128 at 128 registers.
//   - 05: the 128x128 pair (cluster 2, sharing B) reached 88.2 % against 84.3 % alone; 128x256
//     did not gain from one (89.0 % against 90.3 %).
inline constexpr Tiling kTilings[] = {
    // kernel                   BM   BN  BK  WM   WN  stages cluster CTAs/SM
    {Kernel::kNaive,             16,  16,  1,  1,   1,     1,     1,      0},
    {Kernel::kSmemTiled,         32,  32, 32,  1,   1,     1,     1,      0},
    {Kernel::kRegisterBlocked,  128, 128, 16,  8,   8,     1,     1,      0},
    {Kernel::kRegisterBlocked,   64,  64, 16,  4,   4,     1,     1,      0},
    {Kernel::kMmaPipelined,      64,  64, 32, 32,  32,     4,     1,      4},
    {Kernel::kMmaPipelined,     128, 128, 64, 64,  32,     3,     1,      2},
    {Kernel::kMmaPipelined,     128, 256, 64, 64,  64,     3,     1,      1},
    {Kernel::kMmaPipelined,     256, 128, 64, 64,  64,     3,     1,      1},
    {Kernel::kWgmmaTma,         128, 128, 64, 64, 128,     6,     2,      1},
    {Kernel::kWgmmaTma,         128, 256, 64, 64, 256,     4,     1,      1},
};
inline constexpr int kRows = int(sizeof(kTilings) / sizeof(kTilings[0]));

// The row of a kernel that has only one (01, 02).
constexpr const Tiling& only_row(Kernel k) {
  int found = -1;
  for (int i = 0; i < kRows; ++i)
    if (kTilings[i].kernel == k) found = found < 0 ? i : kRows;  // kRows: a second row
  return kTilings[found];  // out of bounds (a compile error in a constant expression) unless one
}

// 03 pads each row of its shared tiles by 4 floats (As[BK][BM + 4], Bs[BK][BN + 4]; why: 03's
// header).
inline constexpr int kRegisterBlockedPad = 4;

// 05's dynamic shared memory, in this order: the mbarriers and the stream-K piece, the epilogue's
// staging buffer of each consumer warp (16 rows x 128 columns of C in bf16), 1 KiB to align the
// ring to the 128-byte swizzle's 1024-byte atoms, the ring.
inline constexpr int kWgmmaBarrierBytes = 256;
inline constexpr int kWgmmaStagingBytes = 16 * 128 * 2;
constexpr int wgmma_consumers(const Tiling& t) { return t.bm / t.wm; }  // warpgroups, 64 rows each

// Threads per CTA.
constexpr int threads(const Tiling& t) {
  switch (t.kernel) {
    case Kernel::kNaive:
    case Kernel::kSmemTiled: return t.bm * t.bn;  // one output each
    case Kernel::kRegisterBlocked: return (t.bm / t.wm) * (t.bn / t.wn);  // a TM x TN block each
    case Kernel::kMmaPipelined: return (t.bm / t.wm) * (t.bn / t.wn) * 32;  // a warp per warp tile
    case Kernel::kWgmmaTma: return (1 + wgmma_consumers(t)) * 128;  // + the producer warpgroup
  }
  return 0;
}

// Bytes of one pipeline stage: BM x BK of A and BK x BN of B in bf16 (04, 05).
constexpr int stage_bytes(const Tiling& t) { return (t.bm * t.bk + t.bk * t.bn) * 2; }

// Static shared memory per CTA: 02 and 03 convert the operands to fp32 on the way in.
constexpr int static_smem_bytes(const Tiling& t) {
  switch (t.kernel) {
    case Kernel::kSmemTiled:  // As[BM][BK] + Bs[BK][BN + 1]: Bs padded (nt stores it transposed)
      return int(sizeof(float)) * (t.bm * t.bk + t.bk * (t.bn + 1));
    case Kernel::kRegisterBlocked:  // As[BK][BM + pad] (A transposed) + Bs[BK][BN + pad]
      return int(sizeof(float)) * t.bk * (t.bm + kRegisterBlockedPad + t.bn + kRegisterBlockedPad);
    default: return 0;
  }
}

// Dynamic shared memory per CTA, requested at launch (04, 05; above 48 KiB needs an opt-in).
constexpr int dynamic_smem_bytes(const Tiling& t) {
  switch (t.kernel) {
    case Kernel::kMmaPipelined: return t.stages * stage_bytes(t);
    case Kernel::kWgmmaTma:
      return kWgmmaBarrierBytes + wgmma_consumers(t) * 4 * kWgmmaStagingBytes + 1024 +
             t.stages * stage_bytes(t);
    default: return 0;
  }
}

// The build ships sm_80 SASS (+ compute_80 PTX) and sm_90a SASS (CMakeLists.txt), so nothing in
// it loads on a GPU older than cc 8.0, although 01-03 use no Ampere-only instructions; 04 needs
// cp.async and bf16 mma.sync (8.0). 05's wgmma and setmaxnreg are sm_90a code, which runs on
// compute capability 9.0 and nothing newer: max_sm == min_sm.
constexpr int min_sm(const Tiling& t) { return t.kernel == Kernel::kWgmmaTma ? 90 : 80; }
constexpr int max_sm(const Tiling& t) { return t.kernel == Kernel::kWgmmaTma ? 90 : 0; }

// 01-03 run data-parallel only; 04 and 05 also persistent and stream-K (kernels/schedule.cuh).
constexpr bool all_schedules(Kernel k) {
  return k == Kernel::kMmaPipelined || k == Kernel::kWgmmaTma;
}

// 05 also runs grouped calls (Schedule::kGrouped), every tile without a cluster: a cluster's CTAs
// share B, which two groups do not.
constexpr bool runs_grouped(Kernel k) { return k == Kernel::kWgmmaTma; }

// Rules every row must keep for the registry's sake; each kernel's own rules are static_asserts
// in its Tiling.
constexpr bool rows_are_valid() {
  for (int i = 0; i < kRows; ++i) {
    const Tiling& t = kTilings[i];
    if (threads(t) > 1024) return false;                        // a CTA has at most 1024 threads
    if (static_smem_bytes(t) > 48 * 1024) return false;         // static shared memory: 48 KiB
    if (dynamic_smem_bytes(t) > 227 * 1024) return false;       // Hopper: 227 KiB a CTA
    if (i > 0 && kTilings[i - 1].kernel != t.kernel)            // rows of a kernel adjacent
      for (int j = 0; j < i - 1; ++j)
        if (kTilings[j].kernel == t.kernel) return false;
  }
  return true;
}
static_assert(rows_are_valid(),
              "every tiling fits a CTA (threads, 48 KiB static and 227 KiB dynamic shared memory), "
              "and the rows of a kernel are adjacent (the registry lists them in table order)");

}  // namespace tilings
}  // namespace shapescope::kernels
