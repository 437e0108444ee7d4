// The CUDA side of kernels/registry.hpp: one table row per registered variant, holding the nn and
// nt instantiations of its kernel. Only what the registry lists is instantiated (compile time).
#include <cuda_runtime_api.h>

#include "common/check.hpp"
#include "common/error.hpp"
#include "kernels/01_naive.cuh"
#include "kernels/02_smem_tiled.cuh"
#include "kernels/03_register_blocked.cuh"
#include "kernels/registry.hpp"

namespace shapescope::kernels {
namespace {

using Launcher = void (*)(const GemmArgs& args, int batch, cudaStream_t stream);

struct Entry {
  const char* kernel;
  int bm, bn;
  Launcher launch_nn, launch_nt;
  const void* kernel_nn;  // for cudaFuncGetAttributes
  const void* kernel_nt;
};

template <typename Kernel>
const void* address(Kernel* kernel) {
  return reinterpret_cast<const void*>(kernel);
}

namespace rb = register_blocked;

// Must list exactly the variants of registry.cpp (all data-parallel); the GPU test launches every
// registered variant, so a missing row fails there.
const Entry kEntries[] = {
    {"01_naive", naive::kBM, naive::kBN, naive::launch<false>, naive::launch<true>,
     address(naive::gemm<false>), address(naive::gemm<true>)},
    {"02_smem_tiled", smem_tiled::kBM, smem_tiled::kBN, smem_tiled::launch<false>,
     smem_tiled::launch<true>, address(smem_tiled::gemm<false>), address(smem_tiled::gemm<true>)},
    {"03_register_blocked", 128, 128, rb::launch<128, 128, 16, 8, 8, false>,
     rb::launch<128, 128, 16, 8, 8, true>, address(rb::gemm<128, 128, 16, 8, 8, false>),
     address(rb::gemm<128, 128, 16, 8, 8, true>)},
    {"03_register_blocked", 64, 64, rb::launch<64, 64, 16, 4, 4, false>,
     rb::launch<64, 64, 16, 4, 4, true>, address(rb::gemm<64, 64, 16, 4, 4, false>),
     address(rb::gemm<64, 64, 16, 4, 4, true>)},
};

const Entry& entry_for(const Variant& v) {
  for (const Entry& e : kEntries)
    if (v.kernel == e.kernel && v.bm == e.bm && v.bn == e.bn &&
        v.schedule == Schedule::kDataParallel)
      return e;
  throw Error(ExitCode::kInternal, "internal error: no kernel compiled for variant " + v.key());
}

}  // namespace

void launch(const Variant& v, const Problem& p, const void* a, const void* b, void* c,
            void* stream) {
  // The device check is the caller's (it knows the GPU): pass the variant's own minimum.
  if (const std::string why = unsupported(v, p, v.min_sm); !why.empty())
    throw Error(ExitCode::kInternal, "kernels::launch(" + v.key() + "): " + why);
  const Entry& e = entry_for(v);
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
  const Launcher run = p.b_transposed() ? e.launch_nt : e.launch_nn;
  run(args, int(p.batch), static_cast<cudaStream_t>(stream));  // checks cudaGetLastError()
}

KernelAttributes kernel_attributes(const Variant& v, Layout layout) {
  const Entry& e = entry_for(v);
  cudaFuncAttributes attr{};
  CHECK_CUDA(cudaFuncGetAttributes(&attr, layout == Layout::kNT ? e.kernel_nt : e.kernel_nn));
  KernelAttributes out;
  out.max_threads_per_block = attr.maxThreadsPerBlock;
  out.static_smem_bytes = int64_t(attr.sharedSizeBytes);
  out.registers_per_thread = attr.numRegs;
  return out;
}

}  // namespace shapescope::kernels
