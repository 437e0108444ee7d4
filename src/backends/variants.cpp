// Which of our kernels' variants a --backend value selects. Plain C++ (the registry describes the
// kernels; launching them is custom_backend.cpp's), so that plans and messages work without a GPU.
#include "backends/variants.hpp"

#include <fmt/format.h>

#include <set>
#include <sstream>

#include "common/error.hpp"
#include "core/backend_kind.hpp"

namespace shapescope {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, sep);) parts.push_back(part);
  if (!text.empty() && text.back() == sep) parts.push_back("");
  return parts;
}

std::string joined(const std::set<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// The variants "custom[:<kernel>[:<BMxBN>[:<schedule>]]]" selects, as the user wrote it: each part
// compared as written, so that a refusal names the part and what it could have been.
std::vector<const kernels::Variant*> select_written(const std::string& spec, const std::vector<std::string>& parts) {
  if (parts.empty() || parts.front() != to_string(BackendKind::kCustom) || parts.size() > 4)
    throw usage_error(fmt::format("--backend: '{}' is not custom[:<kernel>[:<BMxBN>[:<schedule>]]]", spec));
  std::set<std::string> kernel_names, tiles, schedules;
  std::vector<const kernels::Variant*> chosen;
  for (const kernels::Variant& v : kernels::registry()) {
    kernel_names.insert(v.kernel);
    if (parts.size() > 1 && v.kernel != parts[1]) continue;
    tiles.insert(fmt::format("{}x{}", v.bm, v.bn));
    if (parts.size() > 2 && fmt::format("{}x{}", v.bm, v.bn) != parts[2]) continue;
    schedules.insert(std::string(kernels::schedule_name(v.schedule)));
    if (parts.size() > 3 && kernels::schedule_name(v.schedule) != parts[3]) continue;
    chosen.push_back(&v);
  }
  if (chosen.empty()) {
    if (parts.size() > 1 && tiles.empty())
      throw usage_error(fmt::format("--backend: '{}': no kernel '{}' (kernels: {})", spec, parts[1], joined(kernel_names)));
    if (parts.size() > 2 && schedules.empty())
      throw usage_error(fmt::format("--backend: '{}': {} has no tile {} (tiles: {})", spec, parts[1], parts[2], joined(tiles)));
    throw usage_error(fmt::format("--backend: '{}': {} {} has no schedule '{}' (schedules: {})", spec, parts[1],
                                  parts.size() > 2 ? parts[2] : "", parts.size() > 3 ? parts[3] : "", joined(schedules)));
  }
  return chosen;
}

bool picks(const VariantSelection& s, const kernels::Variant& v) {
  return (s.kernel.empty() || v.kernel == s.kernel) && (!s.tile || *s.tile == std::make_pair(v.bm, v.bn)) &&
         (s.schedule.empty() || kernels::schedule_name(v.schedule) == s.schedule);
}

}  // namespace

std::vector<const kernels::Variant*> select_variants(const BackendSpec& spec) {
  if (spec.kind != BackendKind::kCustom)
    throw usage_error(fmt::format("--backend: '{}' is not custom[:<kernel>[:<BMxBN>[:<schedule>]]]", spec.text()));
  std::vector<const kernels::Variant*> chosen;
  for (const kernels::Variant& v : kernels::registry())
    if (picks(spec.variants, v)) chosen.push_back(&v);
  if (chosen.empty())
    throw usage_error(fmt::format("--backend: '{}' selects none of our kernels' variants", spec.text()));
  return chosen;
}

VariantSelection selection_of(const kernels::Variant& v) {
  return VariantSelection{v.kernel, std::make_pair(v.bm, v.bn), std::string(kernels::schedule_name(v.schedule))};
}

std::optional<BackendSpec> stored_variant_spec(const std::string& algo) {
  const kernels::Variant* v = kernels::find_variant(algo);
  if (!v) return std::nullopt;
  return BackendSpec(BackendKind::kCustom, selection_of(*v));
}

BackendSpec parse_backend_spec(const std::string& text) {
  for (BackendKind kind : {BackendKind::kCublas, BackendKind::kCublasLt, BackendKind::kCublasGrouped})
    if (text == to_string(kind)) return BackendSpec(kind);
  const std::string custom(to_string(BackendKind::kCustom));
  if (text != custom && text.rfind(custom + ":", 0) != 0)
    throw usage_error(fmt::format("--backend: '{}' is not a backend (cublas, cublaslt, cublas_grouped, "
                                  "custom[:<kernel>[:<BMxBN>[:<schedule>]]])",
                                  text));
  // Refuses an unknown kernel, tile or schedule; a selection of one variant is kept as its whole key,
  // which is the algo its points are stored under. The parts given are taken from the variants they
  // matched, typed.
  const std::vector<std::string> parts = split(text, ':');
  const std::vector<const kernels::Variant*> chosen = select_written(text, parts);
  const kernels::Variant& first = *chosen.front();
  if (chosen.size() == 1) return BackendSpec(BackendKind::kCustom, selection_of(first));
  VariantSelection s;
  if (parts.size() > 1) s.kernel = first.kernel;
  if (parts.size() > 2) s.tile = std::make_pair(first.bm, first.bn);
  if (parts.size() > 3) s.schedule = std::string(kernels::schedule_name(first.schedule));
  return BackendSpec(BackendKind::kCustom, s);
}

}  // namespace shapescope
