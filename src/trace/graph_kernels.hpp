// Which kernels a call launches, read from a CUDA graph of it: the call is stream-captured (nothing
// runs on the GPU) and each kernel node's function, launch dimensions, cluster and shared memory are
// read back through the driver. The timing engine times exactly such graphs, so these are the
// kernels that were timed. What a graph cannot give is each kernel's own duration: a record's
// duration_us is 0 here (measure() asks CUPTI, after timing, where a call launches several).
//
//   GraphKernels kernels;                  // resolves the driver's entry points
//   std::vector<KernelRecord> k = kernels.of(call);
#pragma once
#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "backends/backend.hpp"
#include "core/records.hpp"

namespace shapescope {

class GraphKernels {
 public:
  // Throws Error(ExitCode::kInternal) when the driver lacks an entry point (CUDA 12.3 or newer
  // drivers have them all) or a CUDA call fails.
  GraphKernels();
  ~GraphKernels();
  GraphKernels(const GraphKernels&) = delete;
  GraphKernels& operator=(const GraphKernels&) = delete;

  // The kernels one enqueue() of `call` launches, in launch (dependency) order.
  std::vector<KernelRecord> of(GemmCall& call);

  // The kernel nodes of a captured graph, in dependency order.
  std::vector<KernelRecord> in(cudaGraph_t graph) const;

 private:
  struct Driver;
  std::unique_ptr<Driver> driver_;
  cudaStream_t stream_ = nullptr;
};

}  // namespace shapescope
