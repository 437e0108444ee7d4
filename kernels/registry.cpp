// The registry of kernels/NN_*.cuh: what each variant is and what it can run. Plain C++ (CPU core
// library): the numbers here mirror the constants in the .cuh files, and the GPU test
// (tests/gpu/test_custom_kernels.cpp) checks threads and smem_bytes against what the compiler made.
#include "kernels/registry.hpp"

#include <fmt/format.h>

#include <climits>

#include "common/error.hpp"

namespace shapescope::kernels {

namespace {

// The build ships sm_80 SASS (+ compute_80 PTX) and sm_90a SASS (CMakeLists.txt), so nothing in
// it loads on a GPU older than cc 8.0, although these kernels use no Ampere-only instructions.
constexpr int kOldestShippedSm = 80;

// CUDA caps grid y and z at 65535 CTAs; the kernels put M-tiles on y and the batch on z.
constexpr int64_t kMaxGridYZ = 65535;

constexpr int64_t smem_floats(int64_t floats) { return floats * int64_t(sizeof(float)); }

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
  return v;
}

}  // namespace

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
  if (cc < known->min_sm)
    return fmt::format("{} needs compute capability {}.{} or newer; this GPU is {}.{}", name,
                       known->min_sm / 10, known->min_sm % 10, cc / 10, cc % 10);
  if (p.m < 1 || p.n < 1 || p.k < 1) return fmt::format("{} needs M, N, K >= 1", name);
  // The kernels index rows and columns with int (64-bit only for the products with ld).
  if (p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX)
    return fmt::format("{} needs M, N, K below 2^31", name);
  if (p.batch < 1 || p.batch > kMaxGridYZ)
    return fmt::format("{} runs batch 1 to {} (one grid z slice per matrix)", name, kMaxGridYZ);
  if ((p.m + known->bm - 1) / known->bm > kMaxGridYZ)
    return fmt::format("{} runs M up to {} ({} CTA rows of {} on grid y)", name,
                       kMaxGridYZ * known->bm, kMaxGridYZ, known->bm);
  // Rows must not overlap, or the kernel would read past what the operand is said to hold.
  if (p.lda < p.a_cols() || p.ldb < p.b_cols() || p.ldc < p.n)
    return fmt::format("{} needs lda >= {}, ldb >= {}, ldc >= {} (got {}, {}, {})", name,
                       p.a_cols(), p.b_cols(), p.n, p.lda, p.ldb, p.ldc);
  return "";
}

}  // namespace shapescope::kernels
