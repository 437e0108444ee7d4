#include "views/explain_names.hpp"

#include <fmt/format.h>

#include "core/backend_kind.hpp"

namespace shapescope {

std::string size_label(const ShapeArg& shape, const Problem& p) {
  return shape.square ? std::to_string(p.n) : fmt::format("{}x{}x{}", p.m, p.n, p.k);
}

std::string describe_problem(const Problem& p, const BackendSpec& backend) {
  return fmt::format("{} {} {} ({})", p.shape_string(), to_string(p.dtype), to_string(p.layout), backend.text());
}

std::string ld_label(const Problem& p) { return fmt::format("lda {} ldb {} ldc {}", p.lda, p.ldb, p.ldc); }

// The fixed-kernel control on this GPU: our Hopper kernel 05 (one 128x256 tile, data-parallel, so
// that its waves are exactly the model's) on compute capability 9.0, else the mma.sync kernel 04
// with the same tile on 8.x and newer. None for our own kernels as the backend (they are fixed).
std::optional<BackendSpec> fixed_spec(const ExplainRequest& o, const DeviceContext& d) {
  if (!o.controls || o.backend.kind == BackendKind::kCustom) return std::nullopt;
  const int cc = d.cc_major * 10 + d.cc_minor;
  if (cc == 90) return BackendSpec(BackendKind::kCustom, "05_wgmma_tma:128x256:dp");
  if (cc >= 80) return BackendSpec(BackendKind::kCustom, "04_mma_pipelined:128x256:dp");
  return std::nullopt;
}

// The backend that runs the target in another precision: the library asked for (cuBLAS has no fp8:
// cuBLASLt runs it).
BackendSpec precision_backend(const ExplainRequest& o, DType dtype) {
  return dtype == DType::kFp8 ? BackendSpec(BackendKind::kCublasLt) : o.backend;
}

}  // namespace shapescope
