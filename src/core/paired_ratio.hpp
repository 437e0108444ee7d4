// A paired comparison's result for one side against the reference, and what its interval says
// (timing/paired.hpp measures it). Plain C++: the model's verdicts read it.
#pragma once
#include <cstddef>
#include <string_view>

namespace shapescope {

// Below this relative difference two paired times are the same.
constexpr double kMinPairedEffect = 0.02;

// One call against the reference: ratio = its time / the reference's time (< 1: it is faster).
struct PairedRatio {
  double median = 1, low = 1, high = 1;  // the median ratio and its 95 % interval
  double coverage = 0;                   // the interval's actual coverage (below 6 pairs, < 95 %)
  size_t pairs = 0;
  double relative_half_width() const { return median > 0 ? (high - low) / 2 / median : 0; }
  // As a speed-up of the call over the reference (reference time / its time): the median and the
  // interval's ends.
  double speedup() const { return median > 0 ? 1 / median : 0; }
  double speedup_low() const { return high > 0 ? 1 / high : 0; }
  double speedup_high() const { return low > 0 ? 1 / low : 0; }
};
// The level an interval is printed at: 95 % from six pairs on, below that its own coverage (75 % for
// three pairs: the interval is their least and largest; below three, no interval: level 0).
inline double interval_level(const PairedRatio& r) {
  if (r.pairs < 3) return 0;
  return r.pairs >= 6 || r.coverage >= 0.95 ? 0.95 : r.coverage;
}
// A changed step's move (1 - its ratio: the share of the step it saves) is known when its 95 %
// interval's half-width is within kMoveTarget of the move, or within kMoveFloor of the step for a move
// near nothing (whose 5 % no interval reaches). profile --what-if replays its step until it is. An
// interval at a lower level (fewer than six pairs: 75 % for three) knows nothing at 95 %.
constexpr double kMoveTarget = 0.05, kMoveFloor = 0.001;
inline bool move_known(const PairedRatio& r, double move_target = kMoveTarget, double move_floor = kMoveFloor) {
  const double move = r.median < 1 ? 1 - r.median : r.median - 1;
  const double bound = move_target * move > move_floor ? move_target * move : move_floor;
  return interval_level(r) >= 0.95 && (r.high - r.low) / 2 <= bound;
}
// What the interval says of the call against the reference, with `min_effect` (e.g. 0.02):
//   faster      the whole interval is below 1 - min_effect;
//   slower      the whole interval is above 1 + min_effect;
//   same        the whole interval is within 1 +- min_effect;
//   cannot tell the interval straddles 1 +- min_effect (more pairs, or --clocks burst, would tell).
enum class PairedVerdict { kFaster, kSlower, kSame, kCannotTell };
inline PairedVerdict judge(const PairedRatio& r, double min_effect = kMinPairedEffect) {
  if (r.pairs == 0) return PairedVerdict::kCannotTell;
  if (r.high < 1 - min_effect) return PairedVerdict::kFaster;
  if (r.low > 1 + min_effect) return PairedVerdict::kSlower;
  if (r.low >= 1 - min_effect && r.high <= 1 + min_effect) return PairedVerdict::kSame;
  return PairedVerdict::kCannotTell;
}
inline std::string_view paired_verdict_name(PairedVerdict v) {
  switch (v) {
    case PairedVerdict::kFaster: return "faster";
    case PairedVerdict::kSlower: return "slower";
    case PairedVerdict::kSame: return "same";
    case PairedVerdict::kCannotTell: return "cannot tell";
  }
  return "";
}

}  // namespace shapescope
