// What explain's analysis of measured points (explain.cpp) and its prediction without them
// (explain_prediction.cpp) share: the thresholds and the pieces of an effect and a fix.
#pragma once
#include <optional>
#include <vector>

#include "model/explain.hpp"

namespace shapescope {

// Below this relative difference two times are the same, whatever their noise (the p95 of repeated
// sweeps is ~2-5 %).
inline constexpr double kMinDifference = 0.05;
// An effect smaller than this share of the target's time is left to "unexplained".
inline constexpr double kMinEffectShare = 0.01;

// The evidence of an effect between two points (the second one, where there is one).
Evidence between(size_t state, std::optional<size_t> against);
// What the point the target would become costs in FLOPs and operand memory, relative to the target's.
void set_extra_work(const ExplainPoint& t, const ExplainPoint& p, Fix& f);
// Nothing measured (points[0] has no time): the model's view.
Explanation explain_prediction(const std::vector<ExplainPoint>& points);

}  // namespace shapescope
