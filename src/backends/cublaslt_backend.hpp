// cuBLASLt with its heuristic: "h0" is the heuristic's first choice (what a plain cublasLtMatmul
// user gets), "h1".. the next ones, timed when --lt-algos asks for them (heuristic regret).
// MEASURE.md: the workspace is set (cuBLASLt's default of none rules algorithms out) and the
// MIN_ALIGNMENT preferences carry the real pointer alignment (the default assumes 256 bytes).
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

 private:
  const DeviceBuffers& buffers_;  // read at prepare(), once allocated
  int algo_count_;
  cublasLtHandle_t handle_ = nullptr;
};

}  // namespace shapescope
