#include "model/step_timeline.hpp"

#include <algorithm>
#include <cctype>

namespace shapescope {

double StepTimeline::gemm_us() const {
  double total = 0;
  for (const TimelineSegment& s : segments)
    if (s.kind == TimelineSegment::Kind::kGemm) total += s.us;
  return total;
}

double StepTimeline::other_us() const {
  double total = 0;
  for (const TimelineSegment& s : segments)
    if (s.kind == TimelineSegment::Kind::kOtherKernels) total += s.us;
  return total;
}

double StepTimeline::idle_us() const {
  double total = 0;
  for (const TimelineSegment& s : segments)
    if (s.kind == TimelineSegment::Kind::kIdle) total += s.us;
  return total;
}

size_t StepTimeline::gemm_calls() const {
  return size_t(std::count_if(segments.begin(), segments.end(),
                              [](const TimelineSegment& s) { return s.kind == TimelineSegment::Kind::kGemm; }));
}

bool is_attention_kernel(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  for (const char* word : {"flash", "fmha", "attention", "attn", "sdpa"})
    if (lower.find(word) != std::string::npos) return true;
  return false;
}

std::optional<StepTimeline> build_timeline(std::vector<TimelineKernel> kernels) {
  if (std::none_of(kernels.begin(), kernels.end(), [](const TimelineKernel& k) { return k.gemm.has_value(); }))
    return std::nullopt;
  std::stable_sort(kernels.begin(), kernels.end(),
                   [](const TimelineKernel& a, const TimelineKernel& b) { return a.ts < b.ts; });
  StepTimeline t;
  using Kind = TimelineSegment::Kind;
  double busy_until = kernels.front().ts;
  std::optional<int64_t> last_call;  // the call of the GEMM segment at the back, if it is one
  for (const TimelineKernel& k : kernels) {
    const double gap = k.ts - busy_until;
    if (gap >= kTimelineIdleFromUs) {
      t.segments.push_back({Kind::kIdle, 0, gap, 0});
      last_call.reset();
    }
    busy_until = std::max(busy_until, k.ts + std::max(0.0, k.dur));
    const double dur = std::max(0.0, k.dur);
    if (k.gemm) {
      // A split-K GEMM's second kernel (the reduction) joins its call's segment.
      if (last_call && k.call && *last_call == *k.call && t.segments.back().gemm == *k.gemm) {
        t.segments.back().us += dur;
        continue;
      }
      t.segments.push_back({Kind::kGemm, *k.gemm, dur, 0});
      last_call = k.call;
      continue;
    }
    last_call.reset();
    const double attention = is_attention_kernel(k.name) ? dur : 0;
    if (!t.segments.empty() && t.segments.back().kind == Kind::kOtherKernels) {
      t.segments.back().us += dur;
      t.segments.back().attention_us += attention;
    } else {
      t.segments.push_back({Kind::kOtherKernels, 0, dur, attention});
    }
  }
  t.span_us = busy_until - kernels.front().ts;
  return t;
}

}  // namespace shapescope
