#include "views/explain_names.hpp"

#include <fmt/format.h>

#include "core/backend_kind.hpp"

namespace shapescope {

std::string size_label(const ShapeArg& shape, const Problem& p) {
  return shape.square ? std::to_string(p.n) : fmt::format("{}x{}x{}", p.m, p.n, p.k);
}

std::string describe_problem(const Problem& p, const BackendSpec& backend) {
  // Everything that tells the problem apart from the packed one of its sizes: a store that holds
  // 4096 packed does not hold 4096 with lda 4097 and offset 1, and the line must say which was asked.
  std::string layout;
  if (p.lda != p.a_cols()) layout += fmt::format(", lda {}", p.lda);
  if (p.ldb != p.b_cols()) layout += fmt::format(", ldb {}", p.ldb);
  if (p.ldc != p.n) layout += fmt::format(", ldc {}", p.ldc);
  if (p.off_a != 0 && p.off_a == p.off_b) {
    layout += fmt::format(", offset {}", p.off_a);
  } else {
    if (p.off_a != 0) layout += fmt::format(", offset of A {}", p.off_a);
    if (p.off_b != 0) layout += fmt::format(", offset of B {}", p.off_b);
  }
  if (p.off_c != 0) layout += fmt::format(", offset of C {}", p.off_c);
  return fmt::format("{} {} {}{} ({})", p.shape_string(), to_string(p.dtype), to_string(p.layout), layout,
                     backend.text());
}

std::string ld_label(const Problem& p) { return fmt::format("lda {} ldb {} ldc {}", p.lda, p.ldb, p.ldc); }

// The fixed-kernel control on this GPU: our Hopper kernel 05 (one 128x256 tile, data-parallel, so
// that its waves are exactly the model's) on compute capability 9.0, else the mma.sync kernel 04
// with the same tile on 8.x and newer. None for our own kernels as the backend (they are fixed).
std::optional<BackendSpec> fixed_spec(const ExplainRequest& o, const DeviceContext& d) {
  if (!o.controls || o.backend.kind == BackendKind::kCustom) return std::nullopt;
  const int cc = d.cc_major * 10 + d.cc_minor;
  const auto fixed = [](const char* kernel) {
    return BackendSpec(BackendKind::kCustom, VariantSelection{kernel, std::make_pair(128, 256), "dp"});
  };
  if (cc == 90) return fixed("05_wgmma_tma");
  if (cc >= 80) return fixed("04_mma_pipelined");
  return std::nullopt;
}

// The backend that runs the target in another precision: the library asked for (cuBLAS has no fp8:
// cuBLASLt runs it).
BackendSpec precision_backend(const ExplainRequest& o, DType dtype) {
  return dtype == DType::kFp8 ? BackendSpec(BackendKind::kCublasLt) : o.backend;
}

std::string sampling_text(const MeasureOptions& m) {
  const StopRule rule = m.stop_rule();
  if (rule.min_samples == rule.max_samples) return fmt::format("{} samples", rule.min_samples);
  return fmt::format("{}..{} samples (stopping at a {:.1f} % interval)", rule.min_samples, rule.max_samples,
                     rule.target * 100);
}

std::optional<Problem> compared_problem(const ExplainReport& report) {
  const auto& against = report.explanation.verdict.against;
  if (!against || report.points[*against].role != Role::kNeighbour) return std::nullopt;
  return report.points[*against].candidate.problem;
}

}  // namespace shapescope
