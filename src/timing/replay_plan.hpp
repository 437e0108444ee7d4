// A step replayed on the GPU (timing/replay.hpp runs it): its GEMM calls in the order the step ran
// them, with stand-in work where the step ran its other kernels and idle time where its GPU waited,
// in one CUDA graph launched again and again. The GPU then draws the step's power and settles at the
// clock the step itself runs at, which neither back-to-back GEMMs (the power cap) nor GEMMs with
// cool-downs (boost clocks) reproduce for a step between the two. Each call is timed inside the
// graph (event-record nodes); the stand-ins are not.
//
// Changed steps (a what-if applied: a GEMM replaced, a cast or a copy added) are replayed in the same
// passes as the step, one replay each between replays of the step, and compared by the ratio of their
// timed sums (timing/paired.hpp's order and statistics): the changed step measured as a step.
// Pure C++: the plan and its arithmetic; nothing here touches the GPU.
#pragma once
#include <cstddef>
#include <optional>
#include <vector>

#include "core/paired_ratio.hpp"
#include "timing/settle.hpp"

namespace shapescope {

struct ReplayItem {
  enum class Kind {
    kCall,         // one of the request's calls, timed
    kMemoryWork,   // stand-in for kernels that stream memory (elementwise, normalization, copies)
    kComputeWork,  // stand-in for attention: tensor-core work
    kIdle,         // the GPU waits (one thread sleeps)
  };
  Kind kind = Kind::kCall;
  size_t call = 0;  // kCall: the call (measure() names calls by their request position, then renames)
  size_t algo = 0;  // kCall: which of the position's algorithms (cuBLASLt's h0, h1, ...), in order
  double us = 0;    // the stand-ins and kIdle: how long
  size_t term = 0;  // kCall: which term of the step its time adds to (a GEMM of the step, its costs)
};

// A step's replay: its counted passes' time limit (s), once min_replays are in.
constexpr double kStepReplaySeconds = 4;

// The replay's warm-up watches the board power over this window (NVML's reading is a second's
// average): settled there, and the clock over its own 0.4 s, or warmup_seconds spent.
constexpr double kReplayPowerWindowS = 2;

struct ReplayRule {
  // [0]: the step; each other: a changed step, compared with [0] in the same passes.
  std::vector<std::vector<ReplayItem>> steps;
  size_t terms = 0;           // terms are 0..terms-1
  int min_replays = 6;        // counted replays of the step, at least
  int max_replays = 200;
  double target = 0.005;      // stop once the step's timed sum (and each ratio) is known within +-0.5 %
  double max_seconds = kStepReplaySeconds;  // of counted passes, at most (once min_replays are in)
  double warmup_seconds = 3;  // replays before counting, at most, waiting for the clock and power to settle
  // The changed steps (indices into `steps`) whose move, 1 - their ratio, is asked for within
  // `move_target` of itself (profile --what-if names them): the passes go on, within max_seconds,
  // until each one's interval is that narrow. A move of 5 % of the step, known to +-5 %, needs its
  // ratio to +-0.25 %, where the step's own rule (`target`) stops at +-0.5 %.
  std::vector<size_t> precise;
  double move_target = kMoveTarget;
  double move_floor = kMoveFloor;  // core/paired_ratio.hpp: move_known
};

struct ReplayOutcome {
  // Per step, per term: the median over the counted replays of the term's summed time (us) in one
  // replay of that step.
  std::vector<std::vector<double>> term_us;
  std::vector<double> term_half_width;  // the step's ([0]) terms: their median's 95 % interval, relative half-width
  std::vector<double> step_us;     // per step: the median of its replays' timed sums
  std::vector<PairedRatio> ratios; // per step: its timed sum over the step's ([0]: 1)
  size_t replays = 0, warmup_replays = 0;
  double seconds = 0;              // of counted replays
  double clock_low_mhz = 0, clock_median_mhz = 0, clock_high_mhz = 0;
  std::optional<double> power_w, power_max_w;
  SettleFacts settle;
  bool interrupted = false;
};

// Whether changed step `step` still runs in the passes, given every changed step's ratios so far (one
// per pass; [0] unused): every one does where the rule has no `precise` step. Where it has, the
// others leave once they have an interval (kMinAdaptiveSamples pairs), so that the passes that remain
// replay the step and the precise steps alone: a pass of the step and three changed steps replays 13
// times, of the step and one changed step 5 times, and the named change gets its pairs sooner.
bool replay_keeps(size_t step, const std::vector<std::vector<double>>& ratios, const ReplayRule& rule);

// One pass's replays, in order (`steps` of them in the rule, `seed` this pass's): the step between any
// two changed steps (timing/paired.hpp: pass_sequence), of the changed steps those still in the
// passes; the step alone where there is none.
std::vector<size_t> replay_pass(size_t steps, const std::vector<std::vector<double>>& ratios, const ReplayRule& rule,
                                unsigned long long seed);

// Whether the counted passes may stop, from the step's timed sums so far (one per replay of it), each
// changed step's ratios and the seconds of counted passes: at max_replays; never before min_replays,
// nor before every changed step still in the passes has min_replays pairs (unless the passes have run
// kHardLimit x max_seconds, or the rule has precise steps and each of them has an interval); at
// max_seconds; else once the step's sum and the other ratios still in the passes are known within
// `target`, and each `precise` step's move within `move_target` of itself (core/paired_ratio.hpp:
// move_known), whatever its ratio's width.
bool replay_done(const std::vector<double>& step_sums, const std::vector<std::vector<double>>& ratios,
                 const ReplayRule& rule, double seconds);

// `runnable`'s precise steps once only the steps `kept` of `rule` (their old numbers, in order) are
// replayed: a step left out before a precise one shifts it down; a precise step left out is gone, and
// where none is left the step's own limits (ReplayRule's max_seconds and max_replays) hold again.
void keep_precise(ReplayRule& runnable, const ReplayRule& rule, const std::vector<size_t>& kept);

// Merges consecutive stand-ins of one kind and idle gaps, and drops stand-ins shorter than `min_us`
// (a graph node costs about a microsecond to start: shorter work cannot be stood in for).
std::vector<ReplayItem> compact_replay(const std::vector<ReplayItem>& items, double min_us = 2);
// The summed length of the stand-ins and idle time of a sequence (us).
double standin_us(const std::vector<ReplayItem>& items);
// One replay's timed times (`us[i]` of the i-th kCall item, in order) summed per term.
std::vector<double> term_sums(const std::vector<ReplayItem>& items, const std::vector<double>& us, size_t terms);

}  // namespace shapescope
