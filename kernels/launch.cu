// The CUDA side of kernels/registry.hpp: each row of kernels/tilings.hpp's table instantiates its
// kernel (nn and nt, every schedule it runs), so that what is compiled is what the registry lists.
#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/check.hpp"
#include "common/error.hpp"
#include "kernels/01_naive.cuh"
#include "kernels/02_smem_tiled.cuh"
#include "kernels/03_register_blocked.cuh"
#include "kernels/04_mma_pipelined.cuh"
#include "kernels/05_wgmma_tma_grouped.cuh"
#include "kernels/05_wgmma_tma_host.cuh"
#include "kernels/group_table.hpp"
#include "kernels/registry.hpp"
#include "kernels/tilings.hpp"

namespace shapescope::kernels {
namespace {

using Launcher = void (*)(const GemmArgs& args, int batch, cudaStream_t stream);
// Kernels that need a workspace (stream-K's partials and flags): its size for a problem on the
// current device, and the launcher that takes it.
using WorkspaceLauncher = void (*)(const GemmArgs& args, int batch, cudaStream_t stream,
                                   void* workspace, int64_t workspace_bytes);
using WorkspaceSize = int64_t (*)(const GemmArgs& args, int batch);
// The grouped schedule's: the shared buffers and the groups' table (kernels/group_table.hpp).
using GroupedLauncher = void (*)(const GemmArgs& args, const GroupTable& groups,
                                 cudaStream_t stream);
// The grouped schedule's K form (tn): its groups' TMA maps, made on the host, and the launcher that
// takes their device copy.
using GroupedKMaps = std::vector<CUtensorMap> (*)(const GemmArgs& args, const GroupTable& groups);
using GroupedKLauncher = void (*)(const GemmArgs& args, const GroupTable& groups, const void* maps,
                                  cudaStream_t stream);

// A variant's launchers and kernels, nn and nt.
struct Entry {
  Launcher launch_nn = nullptr, launch_nt = nullptr;
  const void* kernel_nn = nullptr;  // for cudaFuncGetAttributes
  const void* kernel_nt = nullptr;
  int64_t dynamic_smem_bytes = 0;  // what the launchers request
  // Set instead of launch_nn and launch_nt by kernels that need a workspace.
  WorkspaceLauncher workspace_launch_nn = nullptr, workspace_launch_nt = nullptr;
  WorkspaceSize workspace_nn = nullptr, workspace_nt = nullptr;
  // Set instead of the others by the grouped schedule.
  GroupedLauncher grouped_launch_nn = nullptr, grouped_launch_nt = nullptr;
  GroupedKMaps grouped_k_maps = nullptr;  // tn
  GroupedKLauncher grouped_launch_tn = nullptr;
  const void* kernel_tn = nullptr;
};

template <typename Kernel>
const void* address(Kernel* kernel) {
  return reinterpret_cast<const void*>(kernel);
}

// A row's entries by Schedule (dp, persistent, streamk, grouped); empty where the kernel lacks a
// schedule.
using RowEntries = std::array<Entry, 4>;

// 01, 02 and 03: data-parallel only, no dynamic shared memory.
template <class KernelFn>
RowEntries dp_only(Launcher launch_nn, Launcher launch_nt, KernelFn* kernel_nn,
                   KernelFn* kernel_nt) {
  return {Entry{launch_nn, launch_nt, address(kernel_nn), address(kernel_nt)}};
}

namespace mp = mma_pipelined;

// 04_mma_pipelined's dp or persistent entry for tiling T: nn and nt.
template <class T, Schedule kSchedule>
Entry mma_pipelined_entry() {
  constexpr mp::Grid kGrid = mp::kGridOf<kSchedule>;
  return {mp::launch<T, false, kSchedule>, mp::launch<T, true, kSchedule>,
          address(mp::gemm<T, false, kGrid>), address(mp::gemm<T, true, kGrid>), T::kSmemBytes};
}

// 04_mma_pipelined's stream-K entry for tiling T: nn and nt, with a workspace. The kernel is
// persistent's; the plan differs.
template <class T>
Entry mma_pipelined_streamk_entry() {
  return {nullptr,
          nullptr,
          address(mp::gemm<T, false, mp::Grid::kPlan>),
          address(mp::gemm<T, true, mp::Grid::kPlan>),
          T::kSmemBytes,
          mp::launch_streamk<T, false>,
          mp::launch_streamk<T, true>,
          mp::workspace_streamk<T, false>,
          mp::workspace_streamk<T, true>};
}

namespace wt = wgmma_tma;

// 05_wgmma_tma's entry for tiling T and a schedule: one kernel per layout serves all three.
template <class T, Schedule kSchedule>
Entry wgmma_tma_entry() {
  Entry e{nullptr, nullptr, address(wt::gemm<T, false>), address(wt::gemm<T, true>),
          T::kSmemBytes};
  if constexpr (kSchedule == Schedule::kStreamK) {
    e.workspace_launch_nn = wt::launch_streamk<T, false>;
    e.workspace_launch_nt = wt::launch_streamk<T, true>;
    e.workspace_nn = wt::workspace_streamk<T, false>;
    e.workspace_nt = wt::workspace_streamk<T, true>;
  } else {
    e.launch_nn = wt::launch<T, false, kSchedule>;
    e.launch_nt = wt::launch<T, true, kSchedule>;
  }
  return e;
}

// 05_wgmma_tma's grouped entry for row kRow: its tile without a cluster (a cluster shares B, which
// two groups do not), nn and nt.
template <int kRow>
Entry wgmma_tma_grouped_entry() {
  constexpr tilings::Tiling t = tilings::kTilings[kRow];
  using T = wt::Tiling<t.bn, t.stages, 1>;
  Entry e{nullptr, nullptr, address(wt::gemm_grouped<T, false>),
          address(wt::gemm_grouped<T, true>), T::kSmemBytes};
  e.grouped_launch_nn = wt::launch_grouped<T, false>;
  e.grouped_launch_nt = wt::launch_grouped<T, true>;
  e.grouped_k_maps = wt::grouped_k_maps<T>;
  e.grouped_launch_tn = wt::launch_grouped_k<T>;
  e.kernel_tn = address(wt::gemm_grouped_k<T>);
  return e;
}

// The entries of row kRow of tilings::kTilings: its kernel instantiated with the row's numbers.
template <int kRow>
RowEntries row_entries() {
  using tilings::Kernel;
  constexpr tilings::Tiling t = tilings::kTilings[kRow];
  constexpr Schedule kDp = Schedule::kDataParallel, kPersistent = Schedule::kPersistent;
  if constexpr (t.kernel == Kernel::kNaive) {
    return dp_only(naive::launch<false>, naive::launch<true>, naive::gemm<false>,
                   naive::gemm<true>);
  } else if constexpr (t.kernel == Kernel::kSmemTiled) {
    return dp_only(smem_tiled::launch<false>, smem_tiled::launch<true>, smem_tiled::gemm<false>,
                   smem_tiled::gemm<true>);
  } else if constexpr (t.kernel == Kernel::kRegisterBlocked) {
    namespace rb = register_blocked;
    return dp_only(rb::launch<t.bm, t.bn, t.bk, t.wm, t.wn, false>,
                   rb::launch<t.bm, t.bn, t.bk, t.wm, t.wn, true>,
                   rb::gemm<t.bm, t.bn, t.bk, t.wm, t.wn, false>,
                   rb::gemm<t.bm, t.bn, t.bk, t.wm, t.wn, true>);
  } else if constexpr (t.kernel == Kernel::kMmaPipelined) {
    using T = mp::TilingOf<kRow>;
    return {mma_pipelined_entry<T, kDp>(), mma_pipelined_entry<T, kPersistent>(),
            mma_pipelined_streamk_entry<T>()};
  } else {
    static_assert(t.kernel == Kernel::kWgmmaTma, "a kernel of the table without launchers");
    using T = wt::TilingOf<kRow>;
    return {wgmma_tma_entry<T, kDp>(), wgmma_tma_entry<T, kPersistent>(),
            wgmma_tma_entry<T, Schedule::kStreamK>(), wgmma_tma_grouped_entry<kRow>()};
  }
}

template <int... kRows>
std::array<RowEntries, sizeof...(kRows)> make_entries(std::integer_sequence<int, kRows...>) {
  return {row_entries<kRows>()...};
}

// Every row of the table, instantiated (and nothing else).
const std::array<RowEntries, tilings::kRows> kEntries =
    make_entries(std::make_integer_sequence<int, tilings::kRows>());

// The entry of a variant of registry(), found by its row of the table.
const Entry& entry_for(const Variant& v) {
  if (v.tiling >= 0 && v.tiling < tilings::kRows) {
    const tilings::Tiling& t = tilings::kTilings[v.tiling];
    const Entry& e = kEntries[size_t(v.tiling)][size_t(v.schedule)];
    if (v.kernel == tilings::kernel_name(t.kernel) && v.bm == t.bm && v.bn == t.bn &&
        e.kernel_nn != nullptr)
      return e;
  }
  throw Error(ExitCode::kInternal, "internal error: no kernel compiled for variant " + v.key());
}

GemmArgs gemm_args(const Problem& p, const void* a, const void* b, void* c) {
  GemmArgs args;
  args.a = static_cast<const __nv_bfloat16*>(a);
  args.b = static_cast<const __nv_bfloat16*>(b);
  args.c = static_cast<__nv_bfloat16*>(c);
  args.m = int(p.m);
  args.n = int(p.n);
  args.k = int(p.k);
  args.lda = p.lda;
  args.ldb = p.ldb;
  args.ldc = p.ldc;
  args.stride_a = p.stride_a();
  args.stride_b = p.stride_b();
  args.stride_c = p.stride_c();
  return args;
}

// A grouped call's arguments for the grouped schedule: the shared buffers (each group's operands
// follow the previous group's: A's and C's rows stack, B's are stride_b apart, as unsupported()
// checked), all groups' rows as M.
GemmArgs grouped_args(const Problem& p, const void* a, const void* b, void* c) {
  GemmArgs args = gemm_args(p.group(0), a, b, c);
  int64_t rows = 0;
  for (const GroupShape& g : p.groups) rows += g.m;
  args.m = int(rows);
  args.stride_a = 0;
  args.stride_b = p.groups.size() > 1 ? p.group_b_start(1) : 0;
  args.stride_c = 0;
  return args;
}

// The K form (tn, unsupported() let through only groups that differ in K): the shared buffers, every
// group's M and N; the groups' K rows of A and B stack, their C blocks too (group g's rows from g x M).
GemmArgs grouped_k_args(const Problem& p, const void* a, const void* b, void* c) {
  GemmArgs args = gemm_args(p.group(0), a, b, c);
  args.stride_a = 0;
  args.stride_b = 0;
  args.stride_c = 0;
  return args;
}

GroupTable group_table(const Problem& p, const Variant& v) {
  std::vector<int64_t> sizes;  // M per group, or K (tn)
  sizes.reserve(p.groups.size());
  for (const GroupShape& g : p.groups) sizes.push_back(p.layout == Layout::kTN ? g.k : g.m);
  if (p.layout == Layout::kTN) return make_group_table_k(sizes, int(p.m), int(p.n), v.bm, v.bn);
  return make_group_table(sizes, int(p.n), v.bm, v.bn, p.layout == Layout::kNT);
}

// The variant's entry, after checking that it can run the problem (a caller's bug otherwise).
const Entry& checked_entry(const Variant& v, const Problem& p) {
  // The device check is the caller's (it knows the GPU): pass the variant's own minimum.
  if (const std::string why = unsupported(v, p, v.min_sm); !why.empty())
    throw Error(ExitCode::kInternal, "kernels::launch(" + v.key() + "): " + why);
  return entry_for(v);
}

}  // namespace

void launch(const Variant& v, const Problem& p, const void* a, const void* b, void* c,
            void* stream) {
  launch(v, p, a, b, c, stream, nullptr, 0);
}

LaunchData::~LaunchData() {
  if (device != nullptr) cudaFree(device);  // (no throw from a destructor)
}

std::unique_ptr<LaunchData> prepare_launch(const Variant& v, const Problem& p, const void* a,
                                           const void* b) {
  const Entry& e = checked_entry(v, p);
  if (e.grouped_k_maps == nullptr || p.layout != Layout::kTN) return nullptr;
  const std::vector<CUtensorMap> maps =
      e.grouped_k_maps(grouped_k_args(p, a, b, nullptr), group_table(p, v));
  auto data = std::make_unique<LaunchData>();
  data->bytes = int64_t(maps.size() * sizeof(CUtensorMap));
  data->a = a;
  data->b = b;
  // cudaMalloc aligns to 256 B; TMA wants its maps 64-byte aligned (CUtensorMap's alignas(64)).
  CHECK_CUDA(cudaMalloc(&data->device, size_t(data->bytes)));
  CHECK_CUDA(cudaMemcpy(data->device, maps.data(), size_t(data->bytes), cudaMemcpyHostToDevice));
  return data;
}

void launch(const Variant& v, const Problem& p, const void* a, const void* b, void* c,
            void* stream, void* workspace, int64_t workspace_bytes) {
  launch(v, p, a, b, c, stream, workspace, workspace_bytes, nullptr);
}

void launch(const Variant& v, const Problem& p, const void* a, const void* b, void* c,
            void* stream, void* workspace, int64_t workspace_bytes, const LaunchData* data) {
  const Entry& e = checked_entry(v, p);
  // unsupported() checked the offsets; this catches a caller whose buffers are not cudaMalloc'ed.
  if (loads_16_byte_chunks(v) &&
      (reinterpret_cast<uintptr_t>(a) % 16 != 0 || reinterpret_cast<uintptr_t>(b) % 16 != 0))
    throw Error(ExitCode::kInternal,
                "kernels::launch(" + v.key() + "): A and B must start on 16-byte boundaries");
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (e.grouped_launch_tn != nullptr && p.layout == Layout::kTN) {
    if (data == nullptr || data->device == nullptr || data->a != a || data->b != b)
      throw Error(ExitCode::kInternal,
                  "kernels::launch(" + v.key() + "): a tn grouped call needs the LaunchData that "
                  "kernels::prepare_launch() made for these operands");
    e.grouped_launch_tn(grouped_k_args(p, a, b, c), group_table(p, v), data->device, s);
    return;
  }
  if (e.grouped_launch_nn != nullptr) {
    // (unsupported() let only grouped calls through)
    const GroupedLauncher run = p.b_transposed() ? e.grouped_launch_nt : e.grouped_launch_nn;
    run(grouped_args(p, a, b, c), group_table(p, v), s);  // checks cudaGetLastError()
    return;
  }
  const GemmArgs args = gemm_args(p, a, b, c);
  if (e.workspace_launch_nn != nullptr) {
    // Checked before anything touches the GPU; the size needs the device (resident CTAs).
    if (workspace == nullptr || reinterpret_cast<uintptr_t>(workspace) % 16 != 0)
      throw Error(ExitCode::kInternal,
                  "kernels::launch(" + v.key() +
                      "): needs a 16-byte aligned device workspace (kernels::workspace_bytes())");
    const int64_t need = (p.b_transposed() ? e.workspace_nt : e.workspace_nn)(args, int(p.batch));
    if (workspace_bytes < need)
      throw Error(ExitCode::kInternal, "kernels::launch(" + v.key() + "): needs a workspace of " +
                                           std::to_string(need) + " B for " + p.shape_string() +
                                           ", got " + std::to_string(workspace_bytes) + " B");
    const WorkspaceLauncher run = p.b_transposed() ? e.workspace_launch_nt : e.workspace_launch_nn;
    run(args, int(p.batch), s, workspace, workspace_bytes);  // checks cudaGetLastError()
    return;
  }
  const Launcher run = p.b_transposed() ? e.launch_nt : e.launch_nn;
  run(args, int(p.batch), s);  // checks cudaGetLastError()
}

int64_t workspace_bytes(const Variant& v, const Problem& p) {
  const Entry& e = checked_entry(v, p);
  const WorkspaceSize size = p.b_transposed() ? e.workspace_nt : e.workspace_nn;
  if (size == nullptr) return 0;
  return size(gemm_args(p, nullptr, nullptr, nullptr), int(p.batch));
}

std::string missing_code(const Variant& v) {
  if (v.max_sm == 0) return "";  // portable code: the PTX of the oldest architecture JITs anywhere
  const Entry& e = entry_for(v);
  cudaFuncAttributes attr{};
  CHECK_CUDA(cudaFuncGetAttributes(&attr, e.kernel_nn));
  if (attr.ptxVersion >= v.min_sm) return "";
  return v.kernel + " has no sm_" + std::to_string(v.min_sm) +
         "a code in this build (its kernels came from compute_" + std::to_string(attr.ptxVersion) +
         "; build with CMAKE_CUDA_ARCHITECTURES including " + std::to_string(v.min_sm) + "a)";
}

KernelAttributes kernel_attributes(const Variant& v, Layout layout) {
  const Entry& e = entry_for(v);
  cudaFuncAttributes attr{};
  const void* kernel = layout == Layout::kNT ? e.kernel_nt : e.kernel_nn;
  if (layout == Layout::kTN && e.kernel_tn != nullptr) kernel = e.kernel_tn;
  CHECK_CUDA(cudaFuncGetAttributes(&attr, kernel));
  KernelAttributes out;
  out.max_threads_per_block = attr.maxThreadsPerBlock;
  out.static_smem_bytes = int64_t(attr.sharedSizeBytes);
  out.dynamic_smem_bytes = e.dynamic_smem_bytes;
  out.registers_per_thread = attr.numRegs;
  out.local_bytes_per_thread = int64_t(attr.localSizeBytes);
  return out;
}

}  // namespace shapescope::kernels
