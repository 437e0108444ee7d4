#include "backends/cast_backend.hpp"

#include "backends/fp8_cast.hpp"
#include "common/check.hpp"

namespace shapescope {
namespace {

class CastCall : public GemmCall {
 public:
  CastCall(const Problem& p, const DeviceBuffers& buffers) {
    const ScaleLayout layout = scale_layout(p, p.cast);
    args_.source = p.cast == CastOperand::kB ? buffers.b : buffers.a;
    args_.rows = cast_rows(p);
    args_.k = p.k;
    args_.ld_source = cast_source_ld(p);
    args_.transposed = cast_transposes(p);
    args_.format = cast_format(p);
    args_.ld_out = p.k;
    args_.layout = layout;
    CHECK_CUDA(cudaMalloc(&out_, size_t(args_.rows * p.k)));
    args_.out = out_;
    CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&scales_), sizeof(float) * size_t(layout.count)));
    // The 128x128 layout's padding (its K blocks rounded up to 4) is never written: zeros, not garbage.
    CHECK_CUDA(cudaMemset(scales_, 0, sizeof(float) * size_t(layout.count)));
    args_.scales = scales_;
    if (layout.grain == ScaleGrain::kTensor || layout.grain == ScaleGrain::kRow) {
      CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&amax_), sizeof(float) * size_t(layout.count)));
      args_.amax = amax_;
    }
  }
  ~CastCall() override {
    cudaFree(out_);
    cudaFree(scales_);
    cudaFree(amax_);
  }
  void enqueue(cudaStream_t stream) override { enqueue_cast(args_, stream); }

 private:
  CastArgs args_;
  void* out_ = nullptr;
  float* scales_ = nullptr;
  float* amax_ = nullptr;
};

}  // namespace

std::optional<std::string> CastBackend::unsupported(const Problem& problem, const DeviceContext&) const {
  return cast_unsupported(problem);
}

std::vector<PreparedCall> CastBackend::prepare(const Problem& problem, const std::vector<std::string>& wanted,
                                               std::string& why_missing) {
  std::vector<PreparedCall> calls;
  if (wanted.empty()) return calls;
  if (auto why = cast_unsupported(problem)) {
    why_missing = *why;
    return calls;
  }
  calls.push_back({"default", std::make_unique<CastCall>(problem, buffers_)});
  return calls;
}

}  // namespace shapescope
