#include "model/explain_pairing.hpp"

#include <algorithm>
#include <optional>
#include <tuple>

namespace shapescope {
namespace {

bool timed(const ExplainPoint& p) { return p.time_us && *p.time_us > 0; }

// What pairing a point adds to a pass: the point twice, each time with the target after it.
double pair_cost_us(const ExplainPoint& p, const ExplainPoint& target) { return 2 * (*p.time_us + *target.time_us); }

// The order of the points the survey's explanation does not need: the library's points (the size
// neighbours, cuBLASLt's alternatives at the target) before our fixed kernel (a control of the shape,
// never a fix) and the alternatives at the neighbour (shown, never compared).
int group(Role role) {
  switch (role) {
    case Role::kFixedKernel: return 1;
    case Role::kNeighbourAlternative: return 2;
    default: return 0;
  }
}

// What the target would take at p's throughput: the fastest per FLOP first.
double at_target_work(const ExplainPoint& t, const ExplainPoint& p) {
  const double flops = p.candidate.problem.flops();
  return flops > 0 ? *p.time_us * t.candidate.problem.flops() / flops : *p.time_us;
}

}  // namespace

double pass_estimate_us(const std::vector<ExplainPoint>& points, const std::vector<size_t>& chosen) {
  if (points.empty() || !timed(points.front())) return 0;
  const ExplainPoint& target = points.front();
  double us = *target.time_us;
  for (size_t i : chosen)
    if (i != 0 && i < points.size() && timed(points[i])) us += pair_cost_us(points[i], target);
  return us;
}

PairingChoice choose_paired(const std::vector<ExplainPoint>& points, const Explanation& survey,
                            const PairingBudget& budget) {
  PairingChoice choice;
  if (points.empty() || !timed(points.front())) return choice;
  const ExplainPoint& t = points.front();
  const auto pairable = [&](size_t i) { return i > 0 && i < points.size() && paired_role(points[i].role) && timed(points[i]); };
  std::vector<bool> in(points.size(), false);
  in[0] = true;
  const auto need = [&](std::optional<size_t> i) {
    if (i && pairable(*i)) in[*i] = true;
  };
  need(survey.verdict.against);
  for (const Fix& f : survey.fixes) need(f.point);
  for (const Effect& x : survey.effects)
    for (size_t i : x.evidence.indices()) need(i);
  need(survey.reference.best_alternative);
  need(survey.reference.best_aligned);
  for (size_t i = 1; i < points.size(); ++i) {
    const ExplainPoint& p = points[i];
    // The same work with aligned rows and in another precision: a cause or a fix whatever the
    // survey read; cuBLASLt's first choice: the regret's other side.
    if (p.role == Role::kAligned16 || p.role == Role::kAligned32 || p.role == Role::kPrecision ||
        (p.role == Role::kAlternative && p.algo == "h0" && survey.reference.best_alternative))
      need(i);
  }
  choice.needed = size_t(std::count(in.begin(), in.end(), true));

  std::vector<size_t> rest, all;
  for (size_t i = 1; i < points.size(); ++i) {
    if (!pairable(i)) continue;
    all.push_back(i);
    if (!in[i]) rest.push_back(i);
  }
  std::stable_sort(rest.begin(), rest.end(), [&](size_t a, size_t b) {
    return std::make_tuple(group(points[a].role), at_target_work(t, points[a])) <
           std::make_tuple(group(points[b].role), at_target_work(t, points[b]));
  });
  std::vector<size_t> chosen;
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i]) chosen.push_back(i);
  double pass = pass_estimate_us(points, chosen);
  const double limit_us = budget.seconds * 1e6 / std::max(1, budget.passes);
  for (size_t i : rest) {
    const ExplainPoint& p = points[i];
    // Our kernel shows the shape's part of a comparison of its library point: alone it shows nothing.
    if (p.role == Role::kFixedKernel && !(p.of && *p.of < in.size() && in[*p.of])) continue;
    const double more = pair_cost_us(p, t);
    if (pass + more > limit_us) continue;  // a slower point (an unaligned size) may leave room for faster ones
    in[i] = true;
    pass += more;
  }
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i]) choice.paired.push_back(i);
  choice.pass_us = pass;
  choice.all_pass_us = pass_estimate_us(points, all);
  return choice;
}

}  // namespace shapescope
