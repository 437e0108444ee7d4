// A PyTorch profiler trace (the Chrome trace JSON that torch.profiler's export_chrome_trace writes,
// recorded with record_shapes=True) as a workload: every GEMM op the step ran, with the shapes,
// strides and dtypes the profiler recorded, mapped onto shapescope problems. Pure C++.
//
// What the trace holds (Kineto's output; each event {"ph": "X", "cat", "name", "pid", "tid", "ts",
// "dur" [us], "args"}):
//   cat "cpu_op"        an ATen op; args "External id", and with record_shapes "Input Dims"
//                       ([[M, K], [K, N]]; [] for a non-tensor argument), "Input Strides" (PyTorch
//                       2.4 and later) and "Input type" (["c10::BFloat16", "float", "Scalar", ...])
//   cat "cuda_runtime"  the launch (cudaLaunchKernel, cuLaunchKernelEx, ...); args "correlation"
//                       and the "External id" of the innermost op that was running
//   cat "kernel"        the GPU kernel; args "correlation" (the launch's) and "External id"
// A kernel is linked to its op through its launch's correlation id, or its own "External id".
//
// Which ops count: aten::mm, addmm, bmm, baddbmm, matmul, linear, _scaled_mm and _grouped_mm. They
// nest (aten::linear calls aten::addmm or aten::matmul, which calls aten::mm): only the innermost
// GEMM op on its thread is a call, so each GEMM counts once. Autograd's backward ops run on their
// own thread with the same nesting, and call aten::mm on transposed views: the strides say so.
//
// Layouts and leading dimensions come from the strides, with PyTorch's own rule for handing a
// tensor to cuBLAS: a [rows, cols] operand with strides [ld, 1] (ld >= cols) is stored as it is
// ("n"), one with strides [1, ld] (ld >= rows) is a transposed view ("t"); a slice keeps its ld.
// Strides that are neither (PyTorch copies the operand first) are listed as unmapped. The trace
// records no storage offsets, so offsets are 0. The output is a fresh contiguous tensor: ldc = N.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/workload.hpp"

namespace shapescope {

// The last two dimensions of an operand as the trace records them.
struct OperandView {
  int64_t rows = 0, cols = 0;
  int64_t row_stride = 0, col_stride = 0;  // elements between consecutive rows, columns
};
struct OperandLayout {
  bool transposed = false;  // stored cols x rows (a transposed view)
  int64_t ld = 0;           // elements between consecutive rows of the stored matrix
};
// nullopt when neither stride is 1 with the other at least the stored row length.
std::optional<OperandLayout> operand_layout(const OperandView& view);

// What the import looks for besides the GEMMs: the range that marks the fp8 casts (model/trace_casts.hpp).
struct TraceImportOptions {
  std::string cast_range = kDefaultCastRange;
};

// The GEMM ops of the trace, merged, and its fp8 casts (Workload::casts). Throws usage_error with one line starting with `origin` when
// the text is not JSON (or is truncated), is not a Chrome trace (no traceEvents), or was recorded
// without shapes (saying how to record one). A trace with no GEMM op at all gives an empty
// workload with a note.
Workload parse_torch_trace(std::string_view text, const std::string& origin, const TraceImportOptions& options = {});
// The same from a file; also throws usage_error when it cannot be read.
Workload load_torch_trace(const std::string& path, const std::string& origin, const TraceImportOptions& options = {});

}  // namespace shapescope
