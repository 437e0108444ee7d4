// The option groups and checks that several commands share, written once.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "core/backend_kind.hpp"
#include "shape/plan.hpp"

namespace shapescope {

void add_problem_options(CLI::App* cmd, ShapeOptions& shape) {
  cmd->add_option("--dtype", shape.dtype, "bf16 | fp16 | fp32 | tf32 | fp8 (e4m3, layout nt)");
  cmd->add_option("--layout", shape.layout, "nn (torch.mm(a, b)) | nt (x @ W.t()) | tn | tt; row-major, as PyTorch");
  cmd->add_option("--ld-pad", shape.ld_pad, "elements added to every leading dimension");
  cmd->add_option("--lda", shape.lda, "explicit leading dimension of A (elements)");
  cmd->add_option("--ldb", shape.ldb, "explicit leading dimension of B (elements)");
  cmd->add_option("--ldc", shape.ldc, "explicit leading dimension of C (elements)");
  cmd->add_option("--offset", shape.offset, "base-pointer offset of A and B in elements (the x[..., 1:] case)");
}

void check_samples(int samples) {
  if (samples < 1 || samples > 100000)
    throw usage_error(fmt::format("--samples: {} must be between 1 and 100000", samples));
}

void check_fp8_backend(DType dtype, const std::string& backend) {
  if (dtype == DType::kFp8 && backend == to_string(BackendKind::kCublas))
    throw usage_error("--backend: 'cublas' has no fp8 (cublasGemmEx); use --backend cublaslt");
}

}  // namespace shapescope
