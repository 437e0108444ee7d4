// Correct first: one of our kernels is compared with cuBLAS on the same operands before it is
// timed, and a kernel that fails is reported, never timed. The comparison runs on the GPU (one
// reduction kernel per check: how many elements are off, the worst error against the tolerance and
// the first bad element); only that verdict and the first bad pair are copied back, and all checks
// of a sweep are queued on one stream and read after one synchronization.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace shapescope {

// An fp8 GEMM's tolerance against the product of its dequantized operands: two bf16 steps of the
// element (its output is bf16) plus 2^-10 of the sum of the products' magnitudes (what fp32 and the
// fp8 tensor cores' narrower accumulation may lose over K; a scale read from the wrong place moves a
// whole block of 128 products by a factor of 2 or more).
constexpr double kFp8WantRelative = 1.0 / 64, kFp8SumRelative = 1.0 / 1024;

// Relative and absolute tolerance of one element: bf16 output rounding (2^-8 relative) on both
// sides, plus differences at the scale of the sums, which grows with K (random normal operands make
// |C| ~ sqrt(K): two bf16 steps of sqrt(K) for 16-bit outputs, where a split-K library rounds its
// partial sums; 1e-3 sqrt(K) for fp32); the absolute term also covers elements that cancel to zero.
double verify_tolerance(double want, int64_t k, DType dtype);

// Bytes of the reference copy a check of `problem` needs (its C, batch 0, packed; a grouped call:
// every group's C).
int64_t reference_bytes(const Problem& problem);

class Verifier {
 public:
  // `reference` is device memory of at least reference_bytes() of every problem checked: cuBLAS's C
  // is copied there before the checked call overwrites C.
  Verifier(const DeviceBuffers& buffers, void* reference, int64_t reference_capacity);
  ~Verifier();
  Verifier(const Verifier&) = delete;
  Verifier& operator=(const Verifier&) = delete;

  // Queues one check: `reference` (cuBLAS) runs, its C is copied aside, `call` runs, the two are
  // compared on the GPU. Returns the check's index for results(). A grouped call's reference is a
  // cublas_grouped call of it (the same C buffer, every group's C).
  size_t queue(GemmCall& call, GemmCall& reference, const Problem& problem);
  // Queues one check of an fp8 GEMM: `call` runs, its C is compared with the product of its
  // dequantized operands (timing/device_kernels.hpp's launch_fp8_check, on 64 rows and 64 columns of
  // C). Returns the check's index for results().
  size_t queue_fp8(GemmCall& call, const Fp8Operands& operands);
  // Waits for every queued check; per check, nullopt when every element is within verify_tolerance,
  // else one line: how many are off, the worst error against the tolerance, the first bad element.
  std::vector<std::optional<std::string>> results();

 private:
  const DeviceBuffers& buffers_;
  void* reference_;
  int64_t capacity_;
  void* stream_ = nullptr;  // cudaStream_t
  std::vector<Problem> checked_;       // per queued check
  std::vector<bool> fp8_;              // per queued check: against the dequantized product
  // Blocks of CompareResult, one per check: where the GPU reduces (device memory, so that its
  // atomics stay on the GPU) and where the host reads them (pinned, copied after each check).
  std::vector<void*> device_blocks_, host_blocks_;
};

// One check on its own (allocates its reference copy): what a test or a single point needs.
std::optional<std::string> verify_against(GemmCall& call, GemmCall& reference, const Problem& problem,
                                          const DeviceBuffers& buffers);

}  // namespace shapescope
