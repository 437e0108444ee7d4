// The fp8 casts a recorded step ran: the GPU kernels of a PyTorch profiler trace that quantized the
// operands of its fp8 GEMMs (amax, scale, cast), so that `profile` can put the step's casts as the
// step ran them beside the casts shapescope measures. Pure C++.
//
// A kernel is a cast only on evidence, never by a guess:
//   1. by a range: a kernel launched by an op inside a range of the given name (a
//      torch.profiler.record_function("shapescope_fp8_cast") around the quantization, as
//      scripts/fp8_linear.py puts one; the trace holds it as a "user_annotation" or "cpu_op" event on
//      the thread that ran it). An op is inside when it starts and ends within the range on the same
//      thread; its kernels are linked to it as the GEMMs' are (the launch's correlation id, or the
//      kernel's own "External id"). The range's own id counts too (a launch made directly inside it),
//      and so does a launch (a "cuda_runtime" or "cuda_driver" event) made inside the range on its
//      thread whatever op id it carries: a kernel called outside any op (through ctypes, or a Triton
//      kernel launched from Python) takes the id of the op around the range.
//   2. where the trace holds no such range, by name: Transformer Engine's cast, cast-transpose and
//      amax kernels (known_cast_kernel: each name cited from its source).
// A kernel of a GEMM call the workload holds is never a cast, even inside the range.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/step_timeline.hpp"
#include "model/workload.hpp"

namespace shapescope {

// The Transformer Engine kernel a kernel's name (as a trace records it, demangled, with its template
// arguments and namespaces) is one of: the cited identifier; nullopt for any other name.
std::optional<std::string_view> known_cast_kernel(std::string_view kernel_name);

// The casts of a trace whose events are `events` (its "traceEvents") and whose kernels are `kernels`
// (each with its op's External id in `call` and, for a kernel of a mapped GEMM call, `gemm` set).
TraceCasts find_trace_casts(const nlohmann::json& events, const std::vector<TimelineKernel>& kernels,
                            const std::string& range);

}  // namespace shapescope
