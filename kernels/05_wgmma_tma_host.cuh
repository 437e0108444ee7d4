// Kernel 05's host side (the kernel: kernels/05_wgmma_tma.cuh): the TMA maps of A and B, the
// launch configuration of a grid of clusters, the clusters that fit on the GPU at once, and the
// launches of the dense kernel in its three schedules (dp, persistent, streamk). The grouped
// schedules' launches (kernels/05_wgmma_tma_grouped.cuh) use the same pieces.
#pragma once
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "common/check.hpp"
#include "common/error.hpp"
#include "kernels/05_wgmma_tma.cuh"
#include "kernels/common.cuh"
#include "kernels/schedule.cuh"

namespace shapescope::kernels::wgmma_tma {

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

// Once per device and kernel: opt in to the dynamic shared memory and count the clusters that fit
// on the GPU at once (cudaOccupancyMaxActiveClusters: one CTA per SM, and a cluster's CTAs in one
// GPC) for the persistent, stream-K and grouped grids. Each kernel keeps its own mutex and
// per_device (0: not set up yet on that device).
template <class T>
int count_resident_clusters(const void* kernel, std::mutex& mutex, std::vector<int>& per_device) {
  return schedule::once_per_device(mutex, per_device, [kernel](int) {
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

// The clusters of the dense kernel that fit at once.
template <class T, bool kBTransposed>
int resident_clusters() {
  static std::mutex mutex;
  static std::vector<int> per_device;
  return count_resident_clusters<T>(reinterpret_cast<const void*>(gemm<T, kBTransposed>), mutex,
                                    per_device);
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

template <class T, bool kBTransposed, schedule::Kind kKind>
void launch(const GemmArgs& args, int batch, cudaStream_t stream) {
  run<T, kBTransposed>(kKind, args, batch, stream, nullptr, 0);
}

template <class T, bool kBTransposed>
void launch_streamk(const GemmArgs& args, int batch, cudaStream_t stream, void* workspace,
                    int64_t workspace_bytes) {
  run<T, kBTransposed>(schedule::Kind::kStreamK, args, batch, stream, workspace, workspace_bytes);
}

}  // namespace shapescope::kernels::wgmma_tma
