// Which kernels a call launched, through CUPTI's concurrent-kernel activity records
// (CUPTI_ACTIVITY_KIND_KERNEL would serialize kernels). Used only before or after timing, never
// while timing: CUPTI's records perturb timings.
//
//   KernelTrace trace;                 // enables the activity kinds
//   trace.push(tag); launch(); trace.pop();   // every kernel launched in between carries `tag`
//   auto kernels = trace.collect();    // synchronizes the device, flushes, groups by tag
#pragma once
#include <cstdint>
#include <map>
#include <vector>

#include "core/records.hpp"

namespace shapescope {

class KernelTrace {
 public:
  // Throws Error(ExitCode::kInternal) naming the CUPTI call and its error string on failure.
  KernelTrace();
  ~KernelTrace();  // disables the activity kinds it enabled
  KernelTrace(const KernelTrace&) = delete;
  KernelTrace& operator=(const KernelTrace&) = delete;

  // External correlation (CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) around the launches of one point.
  void push(uint64_t tag);
  void pop();

  // Kernels seen since the last collect(), by tag, each list in start-time order.
  // Kernels launched outside any push/pop are dropped.
  std::map<uint64_t, std::vector<KernelRecord>> collect();
};

}  // namespace shapescope
