// Which points explain's paired passes measure again (views/explain.cpp). A pass holds every point
// twice with the target before and after each sample (timing/paired.hpp), so it costs about twice
// the target's time per point: a GEMM of 7 ms cannot pair its ~100 neighbours and controls in a few
// seconds. The passes pair first what the survey's explanation rests on (its verdict's comparison,
// each fix, each effect's evidence, the yardsticks it names), the same-work layout controls and the
// other precisions, whatever the budget; then the other points, the fastest per FLOP first (the
// likeliest to become the comparison or a fix), our fixed kernel where its library point is paired,
// and cuBLASLt's alternatives at the neighbour last, as long as the passes fit their budget. Points
// left out keep their survey times and compare with nothing (model/explain.hpp:
// left_out_of_pairing). Pure C++.
#pragma once
#include <cstddef>
#include <vector>

#include "model/explain.hpp"

namespace shapescope {

// The paired passes' budget: `passes` passes of the chosen points (the fewest pairs the rule takes
// and the warm-up pass) within `seconds`.
struct PairingBudget {
  double seconds = 1;
  int passes = 9;
};

struct PairingChoice {
  std::vector<size_t> paired;  // indices into the points, ascending: the target (0) first
  size_t needed = 0;           // how many of them the survey's explanation needs (the target included)
  double pass_us = 0;          // one pass of the chosen points, estimated from their survey times
  double all_pass_us = 0;      // one pass of every point the passes could compare
};

// One pass of these points (indices; the target's, 0, is the reference), estimated from the points'
// times: the target once, then each point's two samples, each followed by the target.
double pass_estimate_us(const std::vector<ExplainPoint>& points, const std::vector<size_t>& chosen);

// `points` as explain has them before the pairing ([0] the target, every other point's time its
// survey's), `survey` the explanation of them. Nothing when the target has no time.
PairingChoice choose_paired(const std::vector<ExplainPoint>& points, const Explanation& survey,
                            const PairingBudget& budget);

}  // namespace shapescope
