// A backend turns a Problem into something that can be enqueued on a stream: one cuBLAS call,
// or one cuBLASLt call with a chosen algorithm. The timing engine captures those calls into CUDA
// graphs; trace/graph_kernels reads the kernels a call launches from such a graph (CUPTI only for
// calls that launch several).
//
// Row-major to column-major (llm.c explains the same trick): cuBLAS is column-major, and a
// row-major X with leading dimension ld is, read column-major, X^T with the same ld. So
//   C = A @ B  (row-major)   <=>   C^T = B^T @ A^T  (column-major)
// and every backend calls the library with m = N, n = M, the B buffer first and the A buffer second.
// An operand stored transposed (layout nt/tn/tt) is read with CUBLAS_OP_T.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/variants.hpp"
#include "core/backend_kind.hpp"
#include "core/device_context.hpp"
#include "core/problem.hpp"
#include "core/records.hpp"

namespace shapescope {

// Device buffers shared by every point of a sweep: operands at the largest size, and a workspace.
struct DeviceBuffers {
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  void* workspace = nullptr;
  int64_t workspace_bytes = 0;
};

// An fp8 GEMM as its call reads it: the operands, their scales (core/fp8.hpp's layouts of the
// problem's recipe) and its output. The scales' layout is ours to get right, so such a call is
// checked against the fp32 product of its dequantized operands before it is timed (measure/verify).
struct Fp8Operands {
  Problem problem;
  const void* a = nullptr;
  const void* b = nullptr;
  const float* scale_a = nullptr;
  const float* scale_b = nullptr;
  const void* c = nullptr;
};

// One problem bound to one backend and algorithm, ready to enqueue (again and again).
class GemmCall {
 public:
  virtual ~GemmCall() = default;
  virtual void enqueue(cudaStream_t stream) = 0;
  // cuBLASLt's description of the algorithm, where there is one.
  virtual std::optional<LtAlgoConfig> lt_config() const { return std::nullopt; }
  // An fp8 GEMM's operands and scales, to check it against its dequantized product.
  virtual std::optional<Fp8Operands> fp8_operands() const { return std::nullopt; }
};

struct PreparedCall {
  std::string algo;  // the PointKey's algo: "default", "h0", "h1", ...
  std::unique_ptr<GemmCall> call;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // The store's backend of its points.
  virtual BackendKind kind() const = 0;
  // The algo keys this backend will measure for a problem (known before any GPU work, so that a
  // resumed sweep can skip what the store has).
  virtual std::vector<std::string> algo_keys() const = 0;
  // The algo keys measured for this problem: algo_keys(), or (our kernels) those of the variants that
  // run its kind of call, grouped or single, so that a broad selection is not one skip line per
  // variant of the other kind at every point.
  virtual std::vector<std::string> algo_keys_for(const Problem& problem) const { return algo_keys(); }
  // Why this backend cannot run the problem on this GPU, or nullopt if it can.
  virtual std::optional<std::string> unsupported(const Problem& problem,
                                                 const DeviceContext& device) const = 0;
  // Calls for the wanted algo keys. A key the library cannot provide (the heuristic returned fewer
  // algorithms) is left out; `why_missing` says why.
  virtual std::vector<PreparedCall> prepare(const Problem& problem,
                                            const std::vector<std::string>& wanted,
                                            std::string& why_missing) = 0;
  // Our own kernels are checked against cuBLAS before they are timed; the libraries are the oracle.
  virtual bool needs_verification() const { return false; }
};

// The backend of a spec (our kernels: the variants it selects); lt_algos is how many of cuBLASLt's
// heuristic choices to time (>= 1). The backend keeps a reference to `buffers`, read when calls are
// prepared (after allocation).
std::unique_ptr<Backend> make_backend(const BackendSpec& spec, const DeviceBuffers& buffers, int lt_algos);

// Why a backend of single GEMMs (cuBLAS, cuBLASLt, our kernels) cannot run a problem: a grouped call.
std::optional<std::string> grouped_unsupported(const Problem& problem);

// Where each operand of `problem` starts inside the shared buffers.
struct OperandPointers {
  const void* a;
  const void* b;
  void* c;
};
OperandPointers operand_pointers(const Problem& problem, const DeviceBuffers& buffers);
// Largest power of two dividing the address, capped at 256 (what cuBLASLt's MIN_ALIGNMENT wants).
int pointer_alignment(const void* pointer);

}  // namespace shapescope
