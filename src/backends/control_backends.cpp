#include "backends/control_backends.hpp"

#include <fmt/format.h>

#include "common/check.hpp"

namespace shapescope {
namespace {

constexpr int kAligned = 16;  // the layout the copy targets: aligned_layout(problem, 16)

// One operand's rows, copied between two layouts of the same matrix (batch matrices stacked).
struct Copy2D {
  void* dst;
  size_t dst_pitch;
  const void* src;
  size_t src_pitch;
  size_t width_bytes;
  size_t rows;
};

class CopyCall : public GemmCall {
 public:
  CopyCall(const Problem& p, const DeviceBuffers& buffers) {
    const Problem q = aligned_layout(p, kAligned);
    const OperandCopies copies = unaligned_operands(p, kAligned);
    const OperandPointers from = operand_pointers(p, buffers);
    const size_t in = size_t(input_bytes(p.dtype)), out = size_t(output_bytes(p.dtype));
    // A batch is contiguous matrices of rows x ld: copying batch x rows rows covers it.
    if (copies.a)
      add(from.a, size_t(p.lda) * in, size_t(q.lda) * in, size_t(p.a_cols()) * in, size_t(p.a_rows() * p.batch), true);
    if (copies.b)
      add(from.b, size_t(p.ldb) * in, size_t(q.ldb) * in, size_t(p.b_cols()) * in, size_t(p.b_rows() * p.batch), true);
    if (copies.c)
      add(from.c, size_t(p.ldc) * out, size_t(q.ldc) * out, size_t(p.n) * out, size_t(p.m * p.batch), false);
  }
  ~CopyCall() override {
    for (void* buffer : scratch_) cudaFree(buffer);
  }
  void enqueue(cudaStream_t stream) override {
    for (const Copy2D& c : copies_)
      CHECK_CUDA(cudaMemcpy2DAsync(c.dst, c.dst_pitch, c.src, c.src_pitch, c.width_bytes, c.rows,
                                   cudaMemcpyDeviceToDevice, stream));
  }

 private:
  // An input is copied from its layout into an aligned scratch buffer; the output from an aligned
  // scratch buffer back into its layout.
  void add(const void* operand, size_t pitch, size_t aligned_pitch, size_t width, size_t rows, bool input) {
    void* buffer = nullptr;
    CHECK_CUDA(cudaMalloc(&buffer, aligned_pitch * rows));
    scratch_.push_back(buffer);
    // Real values in the scratch of C (what an aligned GEMM would have written): a copy of zeros
    // could be faster than a copy of data (DESIGN.md: never time zeros).
    if (!input) CHECK_CUDA(cudaMemcpy2D(buffer, aligned_pitch, operand, pitch, width, rows, cudaMemcpyDeviceToDevice));
    if (input) copies_.push_back({buffer, aligned_pitch, operand, pitch, width, rows});
    else copies_.push_back({const_cast<void*>(operand), pitch, buffer, aligned_pitch, width, rows});
  }
  std::vector<Copy2D> copies_;
  std::vector<void*> scratch_;
};

class EmptyCall : public GemmCall {
 public:
  void enqueue(cudaStream_t stream) override { enqueue_empty_kernel(stream); }
};

}  // namespace

std::optional<std::string> CopyBackend::unsupported(const Problem& problem, const DeviceContext&) const {
  if (!unaligned_operands(problem, kAligned).any())
    return std::string("every operand is already 16-byte aligned: nothing to copy");
  return std::nullopt;
}

std::vector<PreparedCall> CopyBackend::prepare(const Problem& problem, const std::vector<std::string>& wanted,
                                               std::string& why_missing) {
  std::vector<PreparedCall> calls;
  if (wanted.empty()) return calls;
  if (auto why = unsupported(problem, DeviceContext{})) {
    why_missing = *why;
    return calls;
  }
  calls.push_back({"default", std::make_unique<CopyCall>(problem, buffers_)});
  return calls;
}

std::vector<PreparedCall> LaunchFloorBackend::prepare(const Problem&, const std::vector<std::string>& wanted,
                                                      std::string&) {
  std::vector<PreparedCall> calls;
  if (!wanted.empty()) calls.push_back({"default", std::make_unique<EmptyCall>()});
  return calls;
}

}  // namespace shapescope
