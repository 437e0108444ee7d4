// A workload's step replayed on this GPU (timing/replay_plan.hpp says why): the trace's timeline
// (model/step_timeline.hpp) becomes a replay of its GEMM calls in order, each run by the spec that
// runs its GEMM, with stand-in work for the other kernels and idle time for the gaps; changed steps
// (what-ifs applied) are replayed in the same passes and compared with it. measure() runs it (its
// replay mode: every call prepared and verified like any other, nothing stored).
#pragma once
#include <atomic>
#include <map>
#include <optional>
#include <vector>

#include "core/backend_kind.hpp"
#include "core/device_context.hpp"
#include "core/paired_ratio.hpp"
#include "core/problem.hpp"
#include "model/step_timeline.hpp"
#include "store/store.hpp"
#include "timing/settle.hpp"

namespace shapescope {

// One call as the replay runs it.
struct ReplayCall {
  Problem problem;
  BackendSpec spec{BackendKind::kCublas};
  int lt_rank = 0;  // cuBLASLt: its heuristic's choice (h0, h1, ...) to run
  bool operator==(const ReplayCall& o) const { return problem == o.problem && spec == o.spec && lt_rank == o.lt_rank; }
};

// The step with a change applied: for some of the workload's GEMMs (by index into Workload::gemms),
// the calls that run in place of each of its calls (the changed GEMM and what it adds: a cast of
// its activation, a copy), and the calls it adds once per step (a weight's cast), run before its
// first call.
struct StepChange {
  std::map<size_t, std::vector<ReplayCall>> per_call;
  // What a GEMM's change adds once per step for each of its weights (a weight's fp8 cast): run before
  // every `micro_batches`-th call of it in the timeline (the first of each), so that a timeline of
  // several steps and layers pays one per weight per step.
  std::map<size_t, std::vector<ReplayCall>> per_step;
  int micro_batches = 1;
  // Its move asked for within ReplayRule::move_target (profile --what-if): the replay goes on for up to
  // replay_step's `precise_seconds` until it is known that well.
  bool precise = false;
};

struct StepReplayFacts {
  size_t replays = 0, warmup_replays = 0;
  double seconds = 0;  // of counted replays
  double clock_low_mhz = 0, clock_median_mhz = 0, clock_high_mhz = 0;
  std::optional<double> power_w, power_max_w;
  SettleFacts settle;
  double memory_us = 0, compute_us = 0, idle_us = 0;  // the stand-ins of one replay
  size_t calls = 0;                                    // GEMM calls in one replay
};

struct StepReplay {
  StepReplayFacts facts;
  // Per GEMM (index into Workload::gemms): its time per call in the replayed step (us), the median
  // over the replays of its calls' summed time over their number; nullopt where the step has none.
  std::vector<std::optional<double>> per_call_us;
  std::vector<double> per_call_noise;  // per GEMM: the relative half-width of that median's 95 % interval
  double step_us = 0;  // the step's GEMM time in one replay (median)
  // Per change: its GEMM time's ratio to the step's (the changed calls and what they add), both sides
  // in the same passes; nullopt where it could not run (`why_not` says why).
  std::vector<std::optional<PairedRatio>> change_ratio;
  std::vector<std::string> why_not;
  bool interrupted = false;
};

// The problems one replay runs, in order (the GEMM calls as `call_of` says or `change` replaces them,
// with what the change adds), stand-ins left out: what replay_step times, without a GPU.
std::vector<Problem> replay_problems(const StepTimeline& timeline, const std::map<size_t, ReplayCall>& call_of,
                                     const StepChange* change);

// `precise_seconds`: the counted replays' limit when a change is `precise` (else the rule's default).
StepReplay replay_step(const StepTimeline& timeline, const std::map<size_t, ReplayCall>& call_of,
                       const std::vector<StepChange>& changes, size_t gemms, const DeviceContext& device, Store& store,
                       double precise_seconds, const std::atomic<bool>* interrupted);

}  // namespace shapescope
