#include "core/backend_kind.hpp"

namespace shapescope {

std::string_view to_string(BackendKind kind) {
  switch (kind) {
    case BackendKind::kCublas: return "cublas";
    case BackendKind::kCublasLt: return "cublaslt";
    case BackendKind::kCustom: return "custom";
    case BackendKind::kCublasGrouped: return "cublas_grouped";
    case BackendKind::kCopy: return "copy";
    case BackendKind::kLaunchFloor: return "empty";
  }
  return "";
}

std::optional<BackendKind> parse_backend_kind(std::string_view text) {
  if (text == "cublas") return BackendKind::kCublas;
  if (text == "cublaslt") return BackendKind::kCublasLt;
  if (text == "cublas_grouped") return BackendKind::kCublasGrouped;
  if (text == "custom" || text.rfind("custom:", 0) == 0) return BackendKind::kCustom;
  if (text == "copy") return BackendKind::kCopy;
  if (text == "empty") return BackendKind::kLaunchFloor;
  return std::nullopt;
}

std::string_view default_algo(BackendKind kind) {
  switch (kind) {
    case BackendKind::kCublas: return "default";
    case BackendKind::kCublasLt: return "h0";
    case BackendKind::kCustom: return "";
    case BackendKind::kCublasGrouped:
    case BackendKind::kCopy:
    case BackendKind::kLaunchFloor: return "default";
  }
  return "";
}

std::string default_algo(std::string_view backend) {
  // Every caller before this one read "cublaslt ? h0 : default", custom included.
  return backend == "cublaslt" ? "h0" : "default";
}

}  // namespace shapescope
