#include "backends/custom_backend.hpp"


#include <fmt/format.h>

#include <algorithm>

#include "common/error.hpp"

namespace shapescope {

namespace {

class CustomCall : public GemmCall {
 public:
  CustomCall(const kernels::Variant& variant, const Problem& problem, const DeviceBuffers& buffers)
      : variant_(variant), problem_(problem), pointers_(operand_pointers(problem, buffers)),
        workspace_(buffers.workspace), workspace_bytes_(buffers.workspace_bytes),
        data_(kernels::prepare_launch(variant, problem, pointers_.a, pointers_.b)) {}
  void enqueue(cudaStream_t stream) override {
    // Stream-K keeps partials and flags in the shared workspace; the calls run one at a time on
    // one stream, so no two use it at once. data_: what the launch reads on the device besides the
    // operands (a tn grouped call's TMA maps), made here once; enqueue only launches.
    kernels::launch(variant_, problem_, pointers_.a, pointers_.b, pointers_.c, stream, workspace_,
                    workspace_bytes_, data_.get());
  }

 private:
  const kernels::Variant& variant_;
  Problem problem_;
  OperandPointers pointers_;
  void* workspace_;
  int64_t workspace_bytes_;
  std::unique_ptr<kernels::LaunchData> data_;  // null for most variants
};

}  // namespace

CustomBackend::CustomBackend(const BackendSpec& spec, const DeviceBuffers& buffers)
    : variants_(select_variants(spec)), buffers_(buffers) {}

std::vector<std::string> CustomBackend::algo_keys() const {
  std::vector<std::string> keys;
  for (const kernels::Variant* v : variants_) keys.push_back(v->key());
  return keys;
}

std::vector<std::string> CustomBackend::algo_keys_for(const Problem& problem) const {
  std::vector<std::string> keys;
  for (const kernels::Variant* v : variants_for(problem)) keys.push_back(v->key());
  return keys.empty() ? algo_keys() : keys;
}

std::vector<const kernels::Variant*> CustomBackend::variants_for(const Problem& problem) const {
  std::vector<const kernels::Variant*> out;
  for (const kernels::Variant* v : variants_)
    if ((v->schedule == kernels::Schedule::kGrouped) == problem.grouped()) out.push_back(v);
  return out;
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
  // A selection without a variant of the problem's kind (grouped or single) gets one reason: theirs.
  std::vector<const kernels::Variant*> candidates = variants_for(problem);
  if (candidates.empty() && problem.grouped()) return grouped_unsupported(problem);
  if (candidates.empty()) candidates = variants_;
  std::string reasons;
  for (const kernels::Variant* v : candidates) {
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
