// measure()'s compared modes (measure.hpp: MeasureRequest::paired and ::replay): the request's calls,
// prepared and verified like any others, run together instead of one by one, and nothing stored.
// Paired passes (timing/paired_run.hpp) or a replayed step (timing/replay.hpp); both name calls by
// their request position, renamed here to the calls that could be prepared.
#pragma once
#include <atomic>
#include <map>
#include <vector>

#include "backends/backend.hpp"
#include "core/device_context.hpp"
#include "measure/measure.hpp"

namespace shapescope {

// The entries of the request that have a call, in entry order: the calls, their keys, and each one's
// request position (problem x backends + backend, or its index in `pairs`) -> the indices in `calls`
// of its algorithms' calls, in order (cuBLASLt's h0, h1, ...).
struct ComparedCalls {
  std::vector<GemmCall*> calls;
  std::vector<PointKey> keys;
  std::map<size_t, std::vector<size_t>> calls_at;
};

// Paired passes against calls[0]; the rule's sums named by position (a sum naming a position without
// a call is emptied: no ratio).
PairedComparison compare_paired(const ComparedCalls& c, PairedRule rule, const MeasureOptions& options,
                                const DeviceContext& device, const std::atomic<bool>* interrupted);
// The rule's steps replayed (their items named by position). A changed step naming a position without
// a call is not replayed (no ratio, and `not_replayed` says which); the step itself must be complete
// (Error(kNoGpu) naming a call it lacks otherwise).
ReplayComparison compare_replayed(const ComparedCalls& c, const ReplayRule& rule, const MeasureOptions& options,
                                  const DeviceContext& device, const std::atomic<bool>* interrupted);

}  // namespace shapescope
