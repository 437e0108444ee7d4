// shapescope's own GEMM kernels (kernels/NN_*.cuh), described in one registry. Plain C++, no CUDA
// headers: the registry lives in the CPU core library (registry.cpp); launch() and
// kernel_attributes() live in the GPU library (launch.cu), next to the kernels they dispatch to.
//
// Every variant computes C = A @ B (row-major, beta = 0) in bf16 with fp32 accumulation and
// bf16 output, for layouts nn and nt, any M, N, K >= 1 and strided batches (the grouped schedule
// also tn, below). 01-03 take any
// leading dimensions and offsets (element-wise loads with bounds checks); 04 (cp.async) and 05
// (TMA) load 16-byte chunks and need lda, ldb and A's and B's offsets to be multiples of 8
// elements; 05 runs on compute capability 9.0 only (sm_90a). unsupported() says what each variant
// cannot run. The stream-K schedules also need a workspace (workspace_bytes()). 05's grouped
// schedule (key "05_wgmma_tma:<BMxBN>:grouped") runs grouped calls only (Problem::groups, launched on
// the whole shared buffers: each group's operands after the previous group's), and every other
// variant single GEMMs only: an MoE layer's forward and input-gradient calls (nn, nt; groups differ
// in M) and its weight-gradient call (tn; groups differ in K). The tn form reads per-group TMA maps
// from device memory that prepare_launch() makes once per prepared call (LaunchData).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/problem.hpp"
#include "kernels/tilings.hpp"

namespace shapescope::kernels {

// Schedule (dp, persistent, streamk) is in kernels/tilings.hpp.
std::string_view schedule_name(Schedule s);  // "dp", "persistent", "streamk"

struct Variant {
  std::string kernel;         // "01_naive", "02_smem_tiled", "03_register_blocked", ...
  int bm = 0, bn = 0, bk = 0;  // CTA tile along the user's (row-major) M, N, and the K-block
  Schedule schedule = Schedule::kDataParallel;
  int threads = 0;            // threads per CTA
  int min_sm = 0;             // oldest compute capability it runs on, e.g. 80 (cc 8.0)
  int64_t smem_bytes = 0;     // static shared memory per CTA
  int64_t dynamic_smem_bytes = 0;  // dynamic shared memory per CTA, requested at launch
  // Newest compute capability it runs on, 0: any. Only used for architecture-specific code
  // (sm_90a: wgmma), which runs on its own architecture only: max_sm == min_sm.
  int max_sm = 0;
  // Its row of tilings::kTilings (kernels/tilings.hpp), where the numbers above come from;
  // launch() finds the variant's kernels by it.
  int tiling = -1;
  // "01_naive:16x16:dp" — the PointKey algo this variant is stored under.
  std::string key() const;
};

const std::vector<Variant>& registry();
// The variant with this key, or nullptr.
const Variant* find_variant(const std::string& key);
// Why the variant cannot run the problem on a GPU of compute capability cc (e.g. 90), or "" if it
// can. Reasons start with the kernel's name: "01_naive runs bf16 only".
std::string unsupported(const Variant& v, const Problem& p, int cc);
// Why the variant cannot run on a GPU of compute capability cc at all, or "".
std::string unsupported_gpu(const Variant& v, int cc);
// 04 (cp.async) and 05 (TMA) copy A and B in 16-byte chunks: every row of A and B, and each
// operand's first element, must start on a 16-byte boundary (unsupported() checks lda, ldb and
// the offsets; launch() the pointers, which cudaMalloc aligns to 256 B).
bool loads_16_byte_chunks(const Variant& v);

// What a launch needs on the device besides the operands and the workspace, made once when a call is
// prepared (prepare_launch) and owned by it: the grouped schedule's tn form keeps its groups' TMA
// maps there (2 x 128 B a group). Freed (cudaFree) by the destructor, defined in launch.cu.
struct LaunchData {
  LaunchData() = default;
  LaunchData(const LaunchData&) = delete;
  LaunchData& operator=(const LaunchData&) = delete;
  ~LaunchData();
  void* device = nullptr;  // cudaMalloc'ed
  int64_t bytes = 0;
  const void* a = nullptr;  // the operands it was made for (launch() checks them)
  const void* b = nullptr;
};
// The variant's LaunchData for the problem on these operands (as launch() gets them), or null when
// its launches need none (every variant but the grouped schedule's tn form). Allocates and copies
// (synchronously): call outside graph captures. Throws like launch(). Defined in launch.cu.
std::unique_ptr<LaunchData> prepare_launch(const Variant& v, const Problem& p, const void* a,
                                           const void* b);

// Launch on `stream` (a cudaStream_t passed as void*). a, b, c point at the operands' first
// elements (offsets already applied); strides from the Problem (lda/ldb/ldc, stride_a() ... for
// batches). C = A @ B (beta = 0), fp32 accumulation, bf16 output. Throws shapescope::Error:
// kInternal when the launch fails (CHECK_CUDA) or when unsupported(v, p, v.min_sm) is not empty
// (calling it with a problem the variant cannot run is the caller's bug). Defined in launch.cu.
void launch(const Variant& v, const Problem& p, const void* a, const void* b, void* c,
            void* stream);
// The same, for any variant: those that need a workspace (workspace_bytes() > 0, the stream-K
// schedule) get `workspace`, a device buffer of `workspace_bytes` bytes, 16-byte aligned; the
// others ignore it. Throws Error(kInternal) when the variant needs a workspace and gets none, one
// that is too small, or one that is not 16-byte aligned. A workspace is used by one launch at a
// time: stream-K zeroes its flags (cudaMemsetAsync on `stream`) before each kernel.
void launch(const Variant& v, const Problem& p, const void* a, const void* b, void* c,
            void* stream, void* workspace, int64_t workspace_bytes);
// The same with the call's LaunchData (prepare_launch(v, p, a, b); null where it made none).
// Throws Error(kInternal) when the variant needs LaunchData and gets none, or one made for other
// operands. Enqueues the kernel only: capturable into a CUDA graph.
void launch(const Variant& v, const Problem& p, const void* a, const void* b, void* c,
            void* stream, void* workspace, int64_t workspace_bytes, const LaunchData* data);
// Bytes of workspace launch() needs for the problem on the current device (0: none). Stream-K:
// one BM x BN fp32 slot and one flag per CTA of its grid (SMs x resident CTAs per SM, fewer for
// small problems). Throws like launch() when unsupported(v, p, v.min_sm) is not empty, and
// sets the kernel up on the device (cudaFuncSetAttribute) like the first launch does: call it
// outside graph captures. Defined in launch.cu.
int64_t workspace_bytes(const Variant& v, const Problem& p);

// Why this build cannot run the variant on the current device although the registry says the
// GPU can, or "": architecture-specific code (05's sm_90a) exists only when the build asked for it
// (CMAKE_CUDA_ARCHITECTURES with 90a); an sm_80-only build carries an empty stand-in that must not
// run. Reads cudaFuncGetAttributes (ptxVersion). Defined in launch.cu.
std::string missing_code(const Variant& v);

// What the compiler made of the variant's kernel for `layout` (nn or nt; tn: the grouped
// schedule's K form, nn's kernel for every other variant) on the current device
// (cudaFuncGetAttributes): lets tests check the registry's threads and smem_bytes against the
// kernels, and reports registers per thread for occupancy. Defined in launch.cu.
struct KernelAttributes {
  int max_threads_per_block = 0;
  int64_t static_smem_bytes = 0;
  int64_t dynamic_smem_bytes = 0;  // what launch() requests (the kernel's own constant)
  int registers_per_thread = 0;
  int64_t local_bytes_per_thread = 0;  // > 0: registers spilled (or local arrays)
};
KernelAttributes kernel_attributes(const Variant& v, Layout layout);

}  // namespace shapescope::kernels
