#include "backends/custom_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "common/error.hpp"

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

class CustomCall : public GemmCall {
 public:
  CustomCall(const kernels::Variant& variant, const Problem& problem, const DeviceBuffers& buffers)
      : variant_(variant), problem_(problem), pointers_(operand_pointers(problem, buffers)),
        workspace_(buffers.workspace), workspace_bytes_(buffers.workspace_bytes) {}
  void enqueue(cudaStream_t stream) override {
    // Stream-K keeps partials and flags in the shared workspace; the calls run one at a time on
    // one stream, so no two use it at once.
    kernels::launch(variant_, problem_, pointers_.a, pointers_.b, pointers_.c, stream, workspace_,
                    workspace_bytes_);
  }

 private:
  const kernels::Variant& variant_;
  Problem problem_;
  OperandPointers pointers_;
  void* workspace_;
  int64_t workspace_bytes_;
};

}  // namespace

std::vector<const kernels::Variant*> select_variants(const std::string& spec) {
  const std::vector<std::string> parts = split(spec, ':');
  if (parts.empty() || parts.front() != "custom" || parts.size() > 4)
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

CustomBackend::CustomBackend(const std::string& spec, const DeviceBuffers& buffers)
    : variants_(select_variants(spec)), buffers_(buffers) {}

std::vector<std::string> CustomBackend::algo_keys() const {
  std::vector<std::string> keys;
  for (const kernels::Variant* v : variants_) keys.push_back(v->key());
  return keys;
}

std::string CustomBackend::unsupported_here(const kernels::Variant& v, const Problem& problem) const {
  std::string why = kernels::unsupported(v, problem, cc_);
  if (why.empty()) why = kernels::missing_code(v);
  return why;
}

std::optional<std::string> CustomBackend::unsupported(const Problem& problem, const DeviceContext& device) const {
  // The backend as a whole is unsupported only when no selected variant can run the problem; single
  // variants that cannot are left out at prepare() with their reason.
  const_cast<CustomBackend*>(this)->cc_ = device.cc_major * 10 + device.cc_minor;
  std::string reasons;
  for (const kernels::Variant* v : variants_) {
    const std::string why = unsupported_here(*v, problem);
    if (why.empty()) return std::nullopt;
    if (reasons.find(why) == std::string::npos) reasons += (reasons.empty() ? "" : "; ") + why;
  }
  return reasons;
}

std::vector<PreparedCall> CustomBackend::prepare(const Problem& problem, const std::vector<std::string>& wanted,
                                                 std::string& why_missing) {
  std::vector<PreparedCall> calls;
  for (const kernels::Variant* v : variants_) {
    if (std::find(wanted.begin(), wanted.end(), v->key()) == wanted.end()) continue;
    const std::string why = unsupported_here(*v, problem);
    if (!why.empty()) {
      why_missing += (why_missing.empty() ? "" : "; ") + why;
      continue;
    }
    calls.push_back({v->key(), std::make_unique<CustomCall>(*v, problem, buffers_)});
  }
  return calls;
}

}  // namespace shapescope
