// explain's two controls that are not GEMMs, timed like any point (same graphs, flush and events):
//  - "copy": what padding at run time costs. The operands of a problem whose rows or base pointer
//    are not 16-byte aligned are copied (cudaMemcpy2DAsync) between their layout and the aligned one
//    (core/problem.hpp: aligned_layout): A and B in, C back out. Its time plus the aligned GEMM's is
//    the what-if that He's post asks about ("why doesn't the kernel just pad?").
//  - "empty": one empty kernel, the floor of launch and latency under which no GEMM can run.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace shapescope {

class CopyBackend : public Backend {
 public:
  explicit CopyBackend(const DeviceBuffers& buffers) : buffers_(buffers) {}
  BackendKind kind() const override { return BackendKind::kCopy; }
  std::vector<std::string> algo_keys() const override { return {"default"}; }
  // Only a problem with something to copy: every operand aligned leaves nothing to time.
  std::optional<std::string> unsupported(const Problem& problem, const DeviceContext& device) const override;
  std::vector<PreparedCall> prepare(const Problem& problem, const std::vector<std::string>& wanted,
                                    std::string& why_missing) override;

 private:
  const DeviceBuffers& buffers_;
};

class LaunchFloorBackend : public Backend {
 public:
  BackendKind kind() const override { return BackendKind::kLaunchFloor; }
  std::vector<std::string> algo_keys() const override { return {"default"}; }
  std::optional<std::string> unsupported(const Problem&, const DeviceContext&) const override { return std::nullopt; }
  std::vector<PreparedCall> prepare(const Problem& problem, const std::vector<std::string>& wanted,
                                    std::string& why_missing) override;
};

// Enqueues one empty kernel (launch_floor.cu).
void enqueue_empty_kernel(cudaStream_t stream);

}  // namespace shapescope
