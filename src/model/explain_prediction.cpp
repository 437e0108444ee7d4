// explain without measurements (`explain SHAPE --gpu KEY --tile BMxBN`): the target's losses in the
// model's terms and the sizes the model's time prefers, from the points' annotations alone.
#include <cstdint>

#include "model/explain_rules.hpp"

namespace shapescope {
namespace {

// The model's time of a point, relative (a prediction has no times): the rounds of tiles the GPU
// runs one after another, each one tile's K loop long, four times that with rows off the 16-byte rule
// (DESIGN.md: the library's fast kernels are locked out; measured 4-5x on an H200).
constexpr double kUnalignedCost = 4;
// With a performance model's times (the target's), those instead: a point without one is left out (0).
double predicted_cost(const ExplainPoint& p, const ExplainPoint& target) {
  if (target.predicted_us) return p.predicted_us.value_or(0);
  const Annotation& a = p.annotation;
  return double(a.waves.rounds) * double(p.candidate.problem.k) * (a.alignment.ok() ? 1 : kUnalignedCost);
}

// The prediction's size fixes, chosen as size_fixes() chooses measured ones, on the model's time:
// padding up keeps the computation, so the model's time decides (of the larger sizes within
// kMinDifference of the fastest, the one that adds least); a smaller size changes the model, so the
// work per unit of the model's time decides.
void predicted_size_fixes(const std::vector<ExplainPoint>& points, Explanation& e) {
  const ExplainPoint& t = points.front();
  const double cost = predicted_cost(t, t);
  if (!(cost > 0)) return;
  const auto rate = [&](const ExplainPoint& p) { return p.candidate.problem.flops() / predicted_cost(p, t); };
  std::optional<double> fastest;
  for (size_t i = 1; i < points.size(); ++i) {
    const double c = predicted_cost(points[i], t);
    if (!(c > 0)) continue;
    if (points[i].candidate.problem.flops() > t.candidate.problem.flops() && c < cost * (1 - kMinDifference) &&
        (!fastest || c < *fastest))
      fastest = c;
  }
  std::optional<size_t> up, down;
  for (size_t i = 1; i < points.size(); ++i) {
    const ExplainPoint& p = points[i];
    if (!(predicted_cost(p, t) > 0)) continue;
    if (p.candidate.problem.flops() > t.candidate.problem.flops()) {
      if (fastest && predicted_cost(p, t) <= *fastest * (1 + kMinDifference) &&
          (!up || p.candidate.problem.flops() < points[*up].candidate.problem.flops()))
        up = i;
    } else if (rate(p) > rate(t) * (1 + kMinDifference) && (!down || rate(p) > rate(points[*down]))) {
      down = i;
    }
  }
  const auto fix = [&](FixKind kind, size_t i, double speedup) {
    Fix f;
    f.kind = kind;
    f.point = i;
    f.speedup = speedup;
    set_extra_work(t, points[i], f);
    e.fixes.push_back(f);
  };
  if (up) fix(FixKind::kPadUp, *up, cost / predicted_cost(points[*up], t));
  if (down && (!up || rate(points[*down]) > rate(points[*up]) * (1 + kMinDifference)))
    fix(FixKind::kShrink, *down, rate(points[*down]) / rate(t));
}

}  // namespace

// Nothing measured: the target's own losses in the model's terms (waves, tiles, 16-byte rows), and
// the sizes the model's time prefers as fixes (no times: a fix's speedup is the model's), each term
// against the fix's size that does best in it, where that is better than the target.
Explanation explain_prediction(const std::vector<ExplainPoint>& points) {
  Explanation e;
  e.verdict.kind = VerdictKind::kPrediction;
  const Annotation& a = points.front().annotation;
  predicted_size_fixes(points, e);
  const auto against = [&](double (*term)(const Annotation&)) {
    std::optional<size_t> best;
    for (const Fix& f : e.fixes)
      if (term(points[*f.point].annotation) > (best ? term(points[*best].annotation) : term(a))) best = f.point;
    return best;
  };
  const auto waves = [](const Annotation& x) { return x.waves.efficiency; };
  const auto tiles = [](const Annotation& x) { return x.grid.efficiency; };
  const auto aligned = [](const Annotation& x) { return x.alignment.ok() ? 1.0 : 0.0; };
  // A loss under kMinEffectShare is none, as for a measured effect.
  if (a.waves.slots > 0 && a.waves.efficiency < 1 - kMinEffectShare)
    e.effects.push_back({EffectKind::kWaveQuantization, 0, false, between(0, against(waves)), false});
  if (a.grid.tiles > 0 && a.grid.efficiency < 1 - kMinEffectShare)
    e.effects.push_back({EffectKind::kTileQuantization, 0, false, between(0, against(tiles)), false});
  if (!a.alignment.ok()) e.effects.push_back({EffectKind::kAlignment16, 0, false, between(0, against(aligned)), false});
  return e;
}

}  // namespace shapescope
