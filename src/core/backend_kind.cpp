#include "core/backend_kind.hpp"

#include <functional>
#include <tuple>

namespace shapescope {

std::string_view to_string(BackendKind kind) {
  switch (kind) {
    case BackendKind::kCublas: return "cublas";
    case BackendKind::kCublasLt: return "cublaslt";
    case BackendKind::kCustom: return "custom";
    case BackendKind::kCublasGrouped: return "cublas_grouped";
    case BackendKind::kCopy: return "copy";
    case BackendKind::kLaunchFloor: return "empty";
    case BackendKind::kCast: return "cast";
  }
  return "";
}

std::optional<BackendKind> parse_backend_kind(std::string_view text) {
  for (BackendKind kind : {BackendKind::kCublas, BackendKind::kCublasLt, BackendKind::kCustom, BackendKind::kCublasGrouped,
                           BackendKind::kCopy, BackendKind::kLaunchFloor, BackendKind::kCast})
    if (text == to_string(kind)) return kind;
  return std::nullopt;
}

std::string VariantSelection::text() const {
  std::string out = kernel;
  if (tile) out += ":" + std::to_string(tile->first) + "x" + std::to_string(tile->second);
  if (!schedule.empty()) out += ":" + schedule;
  return out;
}

std::string BackendSpec::text() const {
  const std::string name(to_string(kind));
  const std::string selection = kind == BackendKind::kCustom ? variants.text() : "";
  return selection.empty() ? name : name + ":" + selection;
}

std::string BackendSpec::algo() const {
  return kind == BackendKind::kCustom ? variants.text() : std::string(default_algo(kind));
}

bool BackendSpec::operator<(const BackendSpec& o) const {
  return std::make_tuple(to_string(kind), std::cref(variants)) <
         std::make_tuple(to_string(o.kind), std::cref(o.variants));
}

std::string_view default_algo(BackendKind kind) {
  switch (kind) {
    case BackendKind::kCublas: return "default";
    case BackendKind::kCublasLt: return "h0";
    case BackendKind::kCustom: return "";
    case BackendKind::kCublasGrouped:
    case BackendKind::kCopy:
    case BackendKind::kLaunchFloor:
    case BackendKind::kCast: return "default";
  }
  return "";
}

}  // namespace shapescope
