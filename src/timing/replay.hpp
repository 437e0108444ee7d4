// A step replayed on the GPU (timing/replay_plan.hpp says what and why): each step of the rule is
// captured once into a CUDA graph (its calls between event-record nodes, its stand-ins as kernels),
// the step's graph is launched back to back until the SM clock has settled, and then the steps are
// replayed in paired passes (the step between any two changed steps, timing/paired.hpp's order),
// each replay's timed calls read from its events.
#pragma once
#include <atomic>
#include <vector>

#include "backends/backend.hpp"
#include "device/nvml.hpp"
#include "timing/replay_plan.hpp"

namespace shapescope {

// What the stand-ins need: a buffer larger than L2 to stream (the flush buffer) and the GPU's SMs.
struct ReplayResources {
  const void* buffer = nullptr;
  int64_t buffer_bytes = 0;
  int sms = 0;
  unsigned long long seed = 1;  // of the passes' orders
};

ReplayOutcome run_replay(const std::vector<GemmCall*>& calls, const ReplayRule& rule, const ReplayResources& resources,
                         const ClockSampler* clocks, const std::atomic<bool>* interrupted);

}  // namespace shapescope
