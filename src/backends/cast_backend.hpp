// The quantization of one operand of an fp8 GEMM, timed like any point (backend "cast"): its problem
// is core/fp8.hpp's cast_problem(), its bf16 source the request's A buffer (a cast of A) or B buffer (of
// B), which measure() fills with data that reads as N(0,1) in bf16; its output, scales and amax
// scratch are the call's own. What it launches: backends/fp8_cast.hpp. A cost of fp8 beside its GEMM
// (explain, the precision what-ifs), never a --backend value.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace shapescope {

class CastBackend : public Backend {
 public:
  explicit CastBackend(const DeviceBuffers& buffers) : buffers_(buffers) {}
  BackendKind kind() const override { return BackendKind::kCast; }
  std::vector<std::string> algo_keys() const override { return {"default"}; }
  // Only a cast problem (Problem::cast set) with a source its leading dimension holds.
  std::optional<std::string> unsupported(const Problem& problem, const DeviceContext& device) const override;
  std::vector<PreparedCall> prepare(const Problem& problem, const std::vector<std::string>& wanted,
                                    std::string& why_missing) override;

 private:
  const DeviceBuffers& buffers_;
};

}  // namespace shapescope
