#include "measure/verify.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "common/check.hpp"

namespace shapescope {

namespace {

constexpr int kShown = 3;  // wrong elements quoted in the message

// C (M x N of batch 0) as floats, whatever the output dtype.
std::vector<float> read_c(const Problem& p, const DeviceBuffers& buffers, cudaStream_t stream) {
  const int bytes = output_bytes(p.dtype);
  std::vector<unsigned char> raw(size_t(p.m) * size_t(p.n) * size_t(bytes));
  const void* c = operand_pointers(p, buffers).c;
  CHECK_CUDA(cudaMemcpy2DAsync(raw.data(), size_t(p.n) * bytes, c, size_t(p.ldc) * bytes, size_t(p.n) * bytes,
                               size_t(p.m), cudaMemcpyDeviceToHost, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  std::vector<float> out(size_t(p.m) * size_t(p.n));
  for (size_t i = 0; i < out.size(); ++i) {
    if (bytes == 4) {
      std::memcpy(&out[i], &raw[i * 4], 4);
    } else if (p.dtype == DType::kFp16) {
      __half h;
      std::memcpy(&h, &raw[i * 2], 2);
      out[i] = __half2float(h);
    } else {
      __nv_bfloat16 h;
      std::memcpy(&h, &raw[i * 2], 2);
      out[i] = __bfloat162float(h);
    }
  }
  return out;
}

}  // namespace

double verify_tolerance(double want, int64_t k, DType dtype) {
  const double relative = output_bytes(dtype) == 4 ? 1e-3 : 1.0 / 64;  // two bf16 ulps (2^-7 each)
  return relative * std::fabs(want) + 1e-3 * std::sqrt(double(std::max<int64_t>(k, 1)));
}

std::optional<std::string> verify_against(GemmCall& call, GemmCall& reference, const Problem& p,
                                          const DeviceBuffers& buffers) {
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  reference.enqueue(stream);
  const std::vector<float> want = read_c(p, buffers, stream);
  call.enqueue(stream);
  const std::vector<float> got = read_c(p, buffers, stream);
  CHECK_CUDA(cudaStreamDestroy(stream));

  size_t wrong = 0;
  std::string first;
  for (size_t i = 0; i < got.size(); ++i) {
    const double tol = verify_tolerance(want[i], p.k, p.dtype);
    if (std::fabs(double(got[i]) - double(want[i])) <= tol) continue;  // NaN fails this too
    if (wrong < kShown)
      first += fmt::format("{}(row {}, col {}): got {:.4g}, want {:.4g}", wrong ? "; " : "", i / size_t(p.n),
                           i % size_t(p.n), got[i], want[i]);
    ++wrong;
  }
  if (wrong == 0) return std::nullopt;
  return fmt::format("failed verification against cuBLAS: {} of {} elements off; {}", wrong, got.size(), first);
}

}  // namespace shapescope
