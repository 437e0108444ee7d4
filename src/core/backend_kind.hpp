// The backends a point can be measured with, and what "the library's own choice" is called for
// each: one place for the names the store, the options and the views share.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace shapescope {

// kCublasGrouped: cublasGemmGroupedBatchedEx, for grouped calls (an MoE layer's experts as one call).
// kCopy and kLaunchFloor are explain's controls, not GEMMs: the copy of a problem's unaligned
// operands into the aligned layout (the price of padding at run time), and an empty kernel in the
// same timing harness (the launch and latency floor). They are not --backend values.
enum class BackendKind { kCublas, kCublasLt, kCustom, kCublasGrouped, kCopy, kLaunchFloor };

// "cublas", "cublaslt", "custom", "cublas_grouped", "copy", "empty": the store's backend column and the
// --backend items.
std::string_view to_string(BackendKind kind);
// The kind of a store key or a --backend item ("custom:<kernel>..." is kCustom); nullopt otherwise.
std::optional<BackendKind> parse_backend_kind(std::string_view text);

// The algo key of the call a user gets without choosing: cuBLAS has one ("default"); cuBLASLt's is
// its heuristic's first choice ("h0"). Our kernels' algo is the variant, so they have none ("").
std::string_view default_algo(BackendKind kind);
// The same for a store key ("cublas", "cublaslt", "custom"); "default" for any other name, as the
// views always treated one.
std::string default_algo(std::string_view backend);

}  // namespace shapescope
