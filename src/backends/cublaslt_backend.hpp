// cuBLASLt with its heuristic: "h0" is the heuristic's first choice (what a plain cublasLtMatmul
// user gets), "h1".. the next ones, timed when --lt-algos asks for them (heuristic regret).
// MEASURE.md: the workspace is set (cuBLASLt's default of none rules algorithms out) and the
// MIN_ALIGNMENT preferences carry the real pointer alignment (the default assumes 256 bytes).
//
// fp8 runs under its recipe (core/fp8_recipe.hpp): each operand's type (e4m3, e5m2), scale mode
// (scalar, outer vector, 1x128, 128x128) and fp32 scales in the layout core/fp8.hpp gives. The
// scales are the call's own (deterministic powers of two from 1/4 to 4, different from block to
// block, so that a scale read from the wrong place changes the product and the check before timing
// fails), unless use_scales() hands it real ones (the numerical error's quantized operands).
#pragma once
#include <cublasLt.h>

#include "backends/backend.hpp"

namespace shapescope {

class CublasLtBackend : public Backend {
 public:
  CublasLtBackend(const DeviceBuffers& buffers, int algo_count);
  ~CublasLtBackend() override;
  BackendKind kind() const override { return BackendKind::kCublasLt; }
  std::vector<std::string> algo_keys() const override;
  std::optional<std::string> unsupported(const Problem& problem,
                                         const DeviceContext& device) const override;
  std::vector<PreparedCall> prepare(const Problem& problem, const std::vector<std::string>& wanted,
                                    std::string& why_missing) override;
  // The fp8 scales the next prepared calls read (device memory the caller keeps alive, in the
  // problem's layouts) instead of their own.
  void use_scales(const float* a, const float* b) {
    scale_a_ = a;
    scale_b_ = b;
  }

 private:
  const DeviceBuffers& buffers_;  // read at prepare(), once allocated
  int algo_count_;
  cublasLtHandle_t handle_ = nullptr;
  const float* scale_a_ = nullptr;
  const float* scale_b_ = nullptr;
};

}  // namespace shapescope
