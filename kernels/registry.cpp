// The registry of kernels/NN_*.cuh: what each variant is and what it can run. Plain C++ (CPU core
// library): the numbers here mirror the constants in the .cuh files, and the GPU test
// (tests/gpu/test_custom_kernels.cpp) checks threads and smem_bytes against what the compiler made.
#include "kernels/registry.hpp"

#include <fmt/format.h>

#include <climits>
#include <utility>

#include "common/error.hpp"

namespace shapescope::kernels {

namespace {

// The build ships sm_80 SASS (+ compute_80 PTX) and sm_90a SASS (CMakeLists.txt), so nothing in
// it loads on a GPU older than cc 8.0, although these kernels use no Ampere-only instructions.
constexpr int kOldestShippedSm = 80;
// wgmma and setmaxnreg: sm_90a SASS, which runs on compute capability 9.0 and nothing newer.
constexpr int kSm90a = 90;

// CUDA caps grid y and z at 65535 CTAs; the kernels put M-tiles on y and the batch on z.
constexpr int64_t kMaxGridYZ = 65535;

constexpr int64_t smem_floats(int64_t floats) { return floats * int64_t(sizeof(float)); }
// STAGES x (BM x BK of A + BK x BN of B) bf16.
constexpr int64_t mma_smem_bytes(int64_t bm, int64_t bn, int64_t bk, int64_t stages) {
  return stages * (bm * bk + bk * bn) * 2;
}

std::vector<Variant> make_registry() {
  std::vector<Variant> v;
  // 01_naive.cuh: 16 x 16 threads, one output each; no K-blocking (bk = 1: one k at a time).
  v.push_back({"01_naive", 16, 16, 1, Schedule::kDataParallel, 16 * 16, kOldestShippedSm, 0});
  // 02_smem_tiled.cuh: As[32][32] + Bs[32][32 + 1] floats (Bs padded: nt stores it transposed).
  v.push_back({"02_smem_tiled", 32, 32, 32, Schedule::kDataParallel, 32 * 32, kOldestShippedSm,
               smem_floats(32 * 32 + 32 * (32 + 1))});
  // 03_register_blocked.cuh: As[BK][BM + 4] + Bs[BK][BN + 4] floats; (BM/TM) x (BN/TN) threads.
  // 128 x 128 x 16 with TM = TN = 8; 64 x 64 x 16 with TM = TN = 4.
  v.push_back({"03_register_blocked", 128, 128, 16, Schedule::kDataParallel, (128 / 8) * (128 / 8),
               kOldestShippedSm, smem_floats(16 * (128 + 4) + 16 * (128 + 4))});
  v.push_back({"03_register_blocked", 64, 64, 16, Schedule::kDataParallel, (64 / 4) * (64 / 4),
               kOldestShippedSm, smem_floats(16 * (64 + 4) + 16 * (64 + 4))});
  // 04_mma_pipelined.cuh: 64x64 with BK = 32 and 4 stages, the others BK = 64 and 3 stages, of
  // BM x BK + BK x BN bf16 in dynamic shared memory; warp tiles 32x32, 64x32, 64x64, 64x64 (4,
  // 8, 8, 8 warps). cp.async and bf16 mma.sync need cc 8.0. Every tile runs dp, persistent and
  // stream-K (kernels/schedule.cuh's hybrid). Stream-K's workspace is one BM x BN fp32 slot (+ a
  // 4-byte flag) per CTA of its grid, at most SMs x resident CTAs per SM; on a 132-SM GPU (H100,
  // H200), where shared memory caps those at 6, 2, 1 and 1 per SM: 12.4, 16.5, 16.5 and 16.5 MiB,
  // within the sweep's 32 MiB workspace (launch() checks).
  for (Schedule schedule :
       {Schedule::kDataParallel, Schedule::kPersistent, Schedule::kStreamK}) {
    v.push_back({"04_mma_pipelined", 64, 64, 32, schedule, 4 * 32, kOldestShippedSm, 0,
                 mma_smem_bytes(64, 64, 32, 4)});
    v.push_back({"04_mma_pipelined", 128, 128, 64, schedule, 8 * 32, kOldestShippedSm, 0,
                 mma_smem_bytes(128, 128, 64, 3)});
    v.push_back({"04_mma_pipelined", 128, 256, 64, schedule, 8 * 32, kOldestShippedSm, 0,
                 mma_smem_bytes(128, 256, 64, 3)});
    v.push_back({"04_mma_pipelined", 256, 128, 64, schedule, 8 * 32, kOldestShippedSm, 0,
                 mma_smem_bytes(256, 128, 64, 3)});
  }
  // 05_wgmma_tma.cuh: 3 warpgroups (a producer, two consumers); all dynamic shared memory: 256 B
  // of mbarriers, the epilogue's staging buffers (16 x 128 bf16 per consumer warp), 1 KiB to
  // align the ring, the ring of STAGES x (128 x 64 + 64 x BN) bf16;
  // 128x128 with 6 stages, 128x256 with 4. One kernel serves all three schedules.
  for (Schedule schedule : {Schedule::kDataParallel, Schedule::kPersistent, Schedule::kStreamK})
    for (const auto& [bn, stages] : {std::pair{128, 6}, std::pair{256, 4}})
      v.push_back({"05_wgmma_tma", 128, bn, 64, schedule, 3 * 128, kSm90a, 0,
                   256 + 8 * 16 * 128 * 2 + 1024 + mma_smem_bytes(128, bn, 64, stages), kSm90a});
  return v;
}


}  // namespace

bool loads_16_byte_chunks(const Variant& v) {
  return v.kernel == "04_mma_pipelined" || v.kernel == "05_wgmma_tma";
}

std::string_view schedule_name(Schedule s) {
  switch (s) {
    case Schedule::kDataParallel: return "dp";
    case Schedule::kPersistent: return "persistent";
    case Schedule::kStreamK: return "streamk";
  }
  throw Error(ExitCode::kInternal,
              fmt::format("internal error: unknown Schedule value {}", static_cast<int>(s)));
}

std::string Variant::key() const {
  return fmt::format("{}:{}x{}:{}", kernel, bm, bn, schedule_name(schedule));
}

const std::vector<Variant>& registry() {
  static const std::vector<Variant> variants = make_registry();
  return variants;
}

const Variant* find_variant(const std::string& key) {
  for (const Variant& v : registry())
    if (v.key() == key) return &v;
  return nullptr;
}

std::string unsupported_gpu(const Variant& v, int cc) {
  if (v.max_sm > 0 && cc != v.min_sm)  // (the registry's max_sm is min_sm: sm_90a)
    return fmt::format("{} needs compute capability {}.{} exactly (sm_{}a code); this GPU is {}.{}",
                       v.kernel, v.min_sm / 10, v.min_sm % 10, v.min_sm, cc / 10, cc % 10);
  if (cc < v.min_sm)
    return fmt::format("{} needs compute capability {}.{} or newer; this GPU is {}.{}", v.kernel,
                       v.min_sm / 10, v.min_sm % 10, cc / 10, cc % 10);
  return "";
}

std::string unsupported(const Variant& v, const Problem& p, int cc) {
  // launch() calls this before every launch: match fields rather than format keys, so that the
  // answer "" costs no allocation.
  const Variant* known = nullptr;
  for (const Variant& r : registry())
    if (r.kernel == v.kernel && r.bm == v.bm && r.bn == v.bn && r.schedule == v.schedule)
      known = &r;
  if (known == nullptr) return fmt::format("no registered kernel variant {}", v.key());
  const std::string& name = v.kernel;
  if (p.dtype != DType::kBf16) return fmt::format("{} runs bf16 only", name);
  if (p.layout != Layout::kNN && p.layout != Layout::kNT)
    return fmt::format("{} runs layouts nn and nt only", name);
  if (std::string why = unsupported_gpu(*known, cc); !why.empty()) return why;
  if (p.m < 1 || p.n < 1 || p.k < 1) return fmt::format("{} needs M, N, K >= 1", name);
  // The kernels index rows and columns with int (64-bit only for the products with ld).
  if (p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX)
    return fmt::format("{} needs M, N, K below 2^31", name);
  // 04's persistent and stream-K grids and all of 05's are 1D lists of tiles x batch.
  const bool tile_list = known->schedule != Schedule::kDataParallel || name == "05_wgmma_tma";
  if (tile_list) {
    // One 1D grid walks all tiles of all matrices; the kernel numbers them with int.
    const int64_t tiles = (p.m + known->bm - 1) / known->bm * ((p.n + known->bn - 1) / known->bn);
    if (p.batch < 1) return fmt::format("{} needs batch >= 1", name);
    if (tiles > INT_MAX / p.batch)
      return fmt::format("{} ({}) needs tiles x batch below 2^31 ({} tiles of {}x{} per "
                         "matrix, batch {})",
                         name, schedule_name(known->schedule), tiles, known->bm, known->bn,
                         p.batch);
  } else {
    if (p.batch < 1 || p.batch > kMaxGridYZ)
      return fmt::format("{} runs batch 1 to {} (one grid z slice per matrix)", name, kMaxGridYZ);
    if ((p.m + known->bm - 1) / known->bm > kMaxGridYZ)
      return fmt::format("{} runs M up to {} ({} CTA rows of {} on grid y)", name,
                         kMaxGridYZ * known->bm, kMaxGridYZ, known->bm);
  }
  // Rows must not overlap, or the kernel would read past what the operand is said to hold.
  if (p.lda < p.a_cols() || p.ldb < p.b_cols() || p.ldc < p.n)
    return fmt::format("{} needs lda >= {}, ldb >= {}, ldc >= {} (got {}, {}, {})", name,
                       p.a_cols(), p.b_cols(), p.n, p.lda, p.ldb, p.ldc);
  if (loads_16_byte_chunks(v) &&
      (p.lda % 8 != 0 || p.ldb % 8 != 0 || p.off_a % 8 != 0 || p.off_b % 8 != 0))
    return fmt::format("{} needs lda, ldb and offsets that are multiples of 8 elements (rows of "
                       "16-byte chunks); got lda {}, ldb {}, offsets {} and {}",
                       name, p.lda, p.ldb, p.off_a, p.off_b);
  return "";
}

}  // namespace shapescope::kernels
