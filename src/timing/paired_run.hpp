// Paired passes on the GPU (timing/paired.hpp says why): every pass is one CUDA graph holding
// pass_sequence's samples (the reference between any two others), each as L2 flush -> event ->
// call -> event (event-record nodes, so no host gap is timed), captured anew in each pass's order.
// The first pass, and any pass before the warm-up's end, is not counted.
#pragma once
#include <atomic>
#include <optional>
#include <vector>

#include "backends/backend.hpp"
#include "device/nvml.hpp"
#include "timing/measure_options.hpp"
#include "timing/paired.hpp"

namespace shapescope {

// Measures `calls` (call 0 is the reference) in paired passes until `rule` says stop. `options`
// gives the flush buffer, hot, the warm-up (warmup_ms since warm_since) and the seed.
PairedOutcome run_paired(const std::vector<GemmCall*>& calls, const MeasureOptions& options, const PairedRule& rule,
                         const ClockSampler* clocks, const std::atomic<bool>* interrupted);

}  // namespace shapescope
