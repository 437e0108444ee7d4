// The registry of kernels/NN_*.cuh: what each variant is and what it can run. Plain C++ (CPU core
// library): every number comes from kernels/tilings.hpp, the table the kernels are instantiated
// from, and the GPU test (tests/gpu/test_custom_kernels.cpp) checks threads and smem_bytes against
// what the compiler made.
#include "kernels/registry.hpp"

#include <fmt/format.h>

#include <climits>
#include <utility>

#include "common/error.hpp"
#include "kernels/group_table.hpp"

namespace shapescope::kernels {

namespace {

// CUDA caps grid y and z at 65535 CTAs; the kernels put M-tiles on y and the batch on z.
constexpr int64_t kMaxGridYZ = 65535;

constexpr Schedule kSchedules[] = {Schedule::kDataParallel, Schedule::kPersistent,
                                   Schedule::kStreamK, Schedule::kGrouped};

bool runs(tilings::Kernel k, Schedule s) {
  if (s == Schedule::kDataParallel) return true;
  if (s == Schedule::kGrouped) return tilings::runs_grouped(k);
  return tilings::all_schedules(k);
}

Variant variant_of(int row, Schedule schedule) {
  const tilings::Tiling& t = tilings::kTilings[row];
  Variant v;
  v.kernel = std::string(tilings::kernel_name(t.kernel));
  v.bm = t.bm;
  v.bn = t.bn;
  v.bk = t.bk;
  v.schedule = schedule;
  v.threads = tilings::threads(t);
  v.min_sm = tilings::min_sm(t);
  v.smem_bytes = tilings::static_smem_bytes(t);
  v.dynamic_smem_bytes = tilings::dynamic_smem_bytes(t);
  v.max_sm = tilings::max_sm(t);
  v.tiling = row;
  return v;
}

// Kernel by kernel (rows of a kernel are adjacent), schedule by schedule, row by row:
// 04_mma_pipelined's four dp tiles, then its four persistent ones, ...
std::vector<Variant> make_registry() {
  std::vector<Variant> v;
  for (int first = 0, end = 0; first < tilings::kRows; first = end) {
    end = first;
    while (end < tilings::kRows && tilings::kTilings[end].kernel == tilings::kTilings[first].kernel)
      ++end;
    for (Schedule schedule : kSchedules) {
      if (!runs(tilings::kTilings[first].kernel, schedule)) continue;
      for (int row = first; row < end; ++row) v.push_back(variant_of(row, schedule));
    }
  }
  return v;
}

}  // namespace

bool loads_16_byte_chunks(const Variant& v) {
  return v.kernel == tilings::kernel_name(tilings::Kernel::kMmaPipelined) ||
         v.kernel == tilings::kernel_name(tilings::Kernel::kWgmmaTma);
}

std::string_view schedule_name(Schedule s) {
  switch (s) {
    case Schedule::kDataParallel: return "dp";
    case Schedule::kPersistent: return "persistent";
    case Schedule::kStreamK: return "streamk";
    case Schedule::kGrouped: return "grouped";
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

namespace {

// Why a grouped call's group g does not fit group 0: what the form needs, and both groups' sizes.
std::string groups_differ(const std::string& name, const char* needs, size_t g, const GroupShape& s,
                          const GroupShape& first) {
  return fmt::format("{} (grouped) {}; group {} is {}x{}x{} ld {} {} {}, group 0 {}x{}x{} ld {} {} {}", name, needs, g,
                     s.m, s.n, s.k, s.lda, s.ldb, s.ldc, first.m, first.n, first.k, first.lda, first.ldb, first.ldc);
}

// The weight-gradient form (tn, kernels/group_table.hpp's K form): every group's M, N, lda, ldb, ldc
// equal, K >= 1 per group. With lda, ldb, ldc multiples of 8, group g's A and B rows (K_g each)
// follow group g - 1's and its C block (M rows) follows group g - 1's: the kernel's per-group maps
// start at the stacked K row, its C is one matrix of count x M rows.
std::string unsupported_grouped_k(const std::string& name, const Problem& p) {
  const GroupShape& first = p.groups.front();
  int64_t k_rows = 0;
  for (size_t g = 0; g < p.groups.size(); ++g) {
    const GroupShape& s = p.groups[g];
    if (s.m != first.m || s.n != first.n || s.lda != first.lda || s.ldb != first.ldb ||
        s.ldc != first.ldc)
      return groups_differ(name, "tn needs every group's M, N, lda, ldb, ldc equal (K may differ)", g, s, first);
    if (s.k < 1) return fmt::format("{} (grouped) needs K >= 1 in every group", name);
    k_rows += s.k;
  }
  if (first.m < 1 || first.n < 1) return fmt::format("{} (grouped) needs M, N >= 1", name);
  const int64_t groups = int64_t(p.groups.size());
  // (at most: BM is 128, BN 128 or 256)
  const int64_t tiles = (first.m + 127) / 128 * ((first.n + 127) / 128) * groups;
  if (k_rows > INT_MAX || first.n > INT_MAX || first.m * groups > INT_MAX || tiles > INT_MAX)
    return fmt::format("{} (grouped) needs all groups' K, all groups' C rows, N and tiles below "
                       "2^31",
                       name);
  return "";
}

// The forward and input-gradient form (nn, nt): groups differ in M only. With every group's N, K,
// lda, ldb, ldc equal and lda, ldb, ldc multiples of 8 elements, each group's operands are whole
// 16-byte units, so Problem's starts need no rounding: A's and C's rows of group g follow group
// g - 1's (one matrix of all rows, what the kernel reads and writes) and B's groups lie stride_b()
// apart.
std::string unsupported_grouped_m(const std::string& name, const Problem& p) {
  const GroupShape& first = p.groups.front();
  int64_t rows = 0, tiles = 0;
  for (size_t g = 0; g < p.groups.size(); ++g) {
    const GroupShape& s = p.groups[g];
    if (s.n != first.n || s.k != first.k || s.lda != first.lda || s.ldb != first.ldb ||
        s.ldc != first.ldc)
      return groups_differ(name, "needs every group's N, K, lda, ldb, ldc equal (M may differ)", g, s, first);
    if (s.m < 1) return fmt::format("{} (grouped) needs M >= 1 in every group", name);
    rows += s.m;
    tiles += (s.m + 127) / 128;  // (BM is 128 for every tile of 05)
  }
  if (first.n < 1 || first.k < 1) return fmt::format("{} (grouped) needs N, K >= 1", name);
  tiles *= (first.n + 127) / 128;  // (at most: BN is 128 or 256)
  if (rows > INT_MAX || first.n > INT_MAX || first.k > INT_MAX || tiles > INT_MAX)
    return fmt::format("{} (grouped) needs all groups' rows, N, K and tiles below 2^31", name);
  return "";
}

// The grouped schedule's rules (after the dtype and the GPU): an MoE layer's grouped calls.
std::string unsupported_grouped(const std::string& name, const Problem& p) {
  if (!p.grouped()) return fmt::format("{} (grouped) runs grouped calls only", name);
  if (p.layout == Layout::kTT)
    return fmt::format("{} (grouped) runs layouts nn and nt (groups that differ in M: an MoE "
                       "layer's forward and input-gradient calls) and tn (groups that differ in "
                       "K: its weight gradient), not tt",
                       name);
  if (p.groups.size() > size_t(GroupTable::kMaxGroups))
    return fmt::format("{} (grouped) runs up to {} groups; this call has {}", name,
                       GroupTable::kMaxGroups, p.groups.size());
  const std::string why =
      p.layout == Layout::kTN ? unsupported_grouped_k(name, p) : unsupported_grouped_m(name, p);
  if (!why.empty()) return why;
  if (p.lda < p.a_cols() || p.ldb < p.b_cols() || p.ldc < p.n)
    return fmt::format("{} needs lda >= {}, ldb >= {}, ldc >= {} (got {}, {}, {})", name,
                       p.a_cols(), p.b_cols(), p.n, p.lda, p.ldb, p.ldc);
  if (p.lda % 8 != 0 || p.ldb % 8 != 0 || p.ldc % 8 != 0)
    return fmt::format("{} (grouped) needs lda, ldb and ldc that are multiples of 8 elements (rows "
                       "of 16-byte chunks, the groups' rows stacked); got {}, {}, {}",
                       name, p.lda, p.ldb, p.ldc);
  return "";
}

}  // namespace

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
  if (known->schedule == Schedule::kGrouped) {
    if (std::string why = unsupported_gpu(*known, cc); !why.empty()) return why;
    return unsupported_grouped(name, p);
  }
  if (p.grouped())
    return fmt::format("{} ({}) runs single GEMMs; grouped calls run on 05_wgmma_tma's grouped "
                       "schedule",
                       name, schedule_name(known->schedule));
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
