// The backends a point can be measured with, and what "the library's own choice" is called for
// each: one place for the names the store, the options and the views share.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

namespace shapescope {

// kCublasGrouped: cublasGemmGroupedBatchedEx, for grouped calls (an MoE layer's experts as one call).
// kCopy and kLaunchFloor are explain's controls, not GEMMs: the copy of a problem's unaligned
// operands into the aligned layout (the price of padding at run time), and an empty kernel in the
// same timing harness (the launch and latency floor). They are not --backend values.
// kCast is an fp8 GEMM's quantization of one operand (amax, scale, cast into the layout the GEMM
// reads: backends/cast_backend.hpp), a cost of fp8 beside its GEMM; its problems are core/fp8.hpp's
// cast_problem(). Not a --backend value either.
enum class BackendKind { kCublas, kCublasLt, kCustom, kCublasGrouped, kCopy, kLaunchFloor, kCast };

// "cublas", "cublaslt", "custom", "cublas_grouped", "copy", "empty", "cast": the store's backend column
// and the --backend items.
std::string_view to_string(BackendKind kind);
// The kind a store's backend column names ("cublas", ..., "empty"); nullopt for any other text.
std::optional<BackendKind> parse_backend_kind(std::string_view text);

// Which of our kernels' variants a custom backend runs: a kernel, then one of its tiles, then a
// schedule, each part not given selecting every one ("custom", "custom:05_wgmma_tma",
// "custom:05_wgmma_tma:128x256:dp"). parse_backend_spec() (backends/variants.hpp) makes it from a
// --backend item, checked against the registry; select_variants() picks the variants from its parts.
struct VariantSelection {
  std::string kernel;                       // "05_wgmma_tma"; "": every kernel
  std::optional<std::pair<int, int>> tile;  // BM x BN, with a kernel; none: every tile
  std::string schedule;                     // "dp", "persistent", "streamk", "grouped", with a tile; "": every one
  // "05_wgmma_tma:128x256:dp" (a variant's key, the algo its points are stored under), "05_wgmma_tma", "".
  std::string text() const;
  bool operator==(const VariantSelection& o) const {
    return kernel == o.kernel && tile == o.tile && schedule == o.schedule;
  }
  bool operator!=(const VariantSelection& o) const { return !(*this == o); }
  bool operator<(const VariantSelection& o) const {
    return std::tie(kernel, tile, schedule) < std::tie(o.kernel, o.tile, o.schedule);
  }
};

// What measures a request's points, from the command line down: the kind and, for our kernels, which
// variants. parse_backend_spec() (backends/variants.hpp) reads and checks a --backend item, text()
// writes it back for display; a point's key holds the kind, which the store writes as its backend column.
struct BackendSpec {
  BackendKind kind = BackendKind::kCublas;
  VariantSelection variants;  // our kernels only

  BackendSpec() = default;
  explicit BackendSpec(BackendKind k, VariantSelection v = {}) : kind(k), variants(std::move(v)) {}
  // "cublas", "cublaslt", "custom", "custom:05_wgmma_tma:128x256:dp": as --backend takes it.
  std::string text() const;
  // The algo of the point a command reads for this backend: the library's own choice ("default",
  // cuBLASLt's "h0"), or for our kernels the selection's text (parse_backend_spec makes a selection of
  // one variant that variant's whole key).
  std::string algo() const;
  bool operator==(const BackendSpec& o) const { return kind == o.kind && variants == o.variants; }
  bool operator!=(const BackendSpec& o) const { return !(*this == o); }
  // By the backend's name, then the selection: the order of the backends' names (views measure one
  // backend after another in this order).
  bool operator<(const BackendSpec& o) const;
};

// The algo key of the call a user gets without choosing: cuBLAS has one ("default"); cuBLASLt's is
// its heuristic's first choice ("h0"). Our kernels' algo is the variant, so they have none ("").
std::string_view default_algo(BackendKind kind);

}  // namespace shapescope
