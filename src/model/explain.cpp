#include "model/explain.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "model/explain_fp8.hpp"
#include "model/explain_rules.hpp"

namespace shapescope {

Evidence between(size_t state, std::optional<size_t> against) {
  Evidence evidence;
  evidence.state = state;
  evidence.against = against;
  return evidence;
}

void set_extra_work(const ExplainPoint& t, const ExplainPoint& p, Fix& f) {
  f.extra_flops = p.candidate.problem.flops() / t.candidate.problem.flops() - 1;
  f.extra_bytes = double(p.candidate.problem.bytes()) / double(t.candidate.problem.bytes()) - 1;
}

namespace {

// Launch-bound: the roofline time is under this share of the measured time, and the time is under
// kLaunchFloors empty kernels (or kLaunchUs without a measured floor).
constexpr double kRoofShare = 0.25;
constexpr double kLaunchFloors = 4;
constexpr double kLaunchUs = 8;

// Two points measured in the same passes: the difference must clear the minimum effect by both
// intervals' widths (the target's is none); else by the noise of each.
double threshold(const ExplainPoint& a, const ExplainPoint& b) {
  if (a.paired && b.paired)
    return kMinPairedEffect + a.paired->relative_half_width() + b.paired->relative_half_width();
  return std::max(kMinDifference, 3 * std::max(a.noise, b.noise));
}

// The verdict's threshold: with pairs, the most any point measured could gain in throughput by its
// interval's optimistic end (its work over its lowest time ratio), at least the minimum effect; else
// 3x the target's noise.
double verdict_threshold(const std::vector<ExplainPoint>& points) {
  const ExplainPoint& t = points.front();
  if (!t.paired) return std::max(kMinDifference, 3 * t.noise);
  double most = kMinPairedEffect;
  for (const ExplainPoint& p : points) {
    if (!p.paired || p.role == Role::kTarget || p.role == Role::kLaunchFloor || p.role == Role::kCopy) continue;
    if (p.role == Role::kFixedKernel || p.paired->low <= 0) continue;  // ours: a control of the shape, not a fix
    if (p.role == Role::kPrecision) continue;  // other numbers, not the same GEMM: judged on their own (precision_effect)
    const double work = p.candidate.problem.flops() / t.candidate.problem.flops();
    most = std::max(most, work / p.paired->low - 1);
  }
  return most;
}

bool timed(const ExplainPoint& p) { return p.time_us && *p.time_us > 0; }

std::optional<size_t> first_with(const std::vector<ExplainPoint>& points, Role role) {
  for (size_t i = 0; i < points.size(); ++i)
    if (points[i].role == role && timed(points[i])) return i;
  return std::nullopt;
}

// The fixed kernel's point at the problem of library point i.
std::optional<size_t> fixed_at(const std::vector<ExplainPoint>& points, size_t i) {
  // An alternative algorithm runs the target's problem.
  if (points[i].role == Role::kAlternative) i = 0;
  for (size_t j = 0; j < points.size(); ++j)
    if (points[j].role == Role::kFixedKernel && points[j].of == i && timed(points[j])) return j;
  return std::nullopt;
}

// The time of point p scaled to the target's work: what the target would take at p's throughput.
double at_target_work(const ExplainPoint& target, const ExplainPoint& p) {
  return *p.time_us * target.candidate.problem.flops() / p.candidate.problem.flops();
}

int64_t distance(const ExplainPoint& target, const ExplainPoint& p) {
  return std::llabs(p.candidate.value - dim_value(target.candidate.problem, p.candidate.dim));
}

// A view: leading dimensions or offsets other than the packed layout's (x[..., 1:], a slice).
bool is_view(const Problem& p) {
  return p.lda != p.a_cols() || p.ldb != p.b_cols() || p.ldc != p.n || p.off_a || p.off_b || p.off_c;
}

// Every row length (A's, B's, C's as stored) a multiple of 16 bytes: what the libraries' fast kernels
// need of the sizes themselves, whatever the leading dimensions (measured on cuBLAS 13.1: 1793 with
// 16-byte rows still runs an align1 kernel).
bool row_lengths_aligned(const Problem& p) {
  const int in = input_bytes(p.dtype), out = output_bytes(p.dtype);
  return (p.a_cols() * in) % 16 == 0 && (p.b_cols() * in) % 16 == 0 && (p.n * out) % 16 == 0;
}

// The library's part of a gap between two kernels: the size rule when the state's sizes break it
// and the neighbour's do not, else its choice of kernel.
EffectKind library_effect(const ExplainPoint& s, const ExplainPoint& r) {
  return !row_lengths_aligned(s.candidate.problem) && row_lengths_aligned(r.candidate.problem)
             ? EffectKind::kSizeAlignment
             : EffectKind::kKernelChoice;
}

// The fixed kernel at the state's work: at the state itself, else at the layout controls (the
// same work with aligned rows), the fastest.
std::optional<size_t> fixed_same_work(const std::vector<ExplainPoint>& points, size_t state) {
  if (auto f = fixed_at(points, state)) return f;
  std::optional<size_t> best;
  for (Role role : {Role::kAligned16, Role::kAligned32}) {
    const auto c = first_with(points, role);
    const auto f = c ? fixed_at(points, *c) : std::nullopt;
    if (f && (!best || *points[*f].time_us < *points[*best].time_us)) best = f;
  }
  return best;
}

// The neighbour the verdict compares with: the nearest size that runs clearly faster per FLOP;
// among equally near ones, the fastest.
std::optional<size_t> compared_neighbour(const std::vector<ExplainPoint>& points) {
  const ExplainPoint& t = points.front();
  std::optional<size_t> best;
  for (size_t i = 1; i < points.size(); ++i) {
    const ExplainPoint& p = points[i];
    if (p.role != Role::kNeighbour || !timed(p) || !p.tflops()) continue;
    if (*p.tflops() <= *t.tflops() * (1 + threshold(t, p))) continue;
    if (!best || distance(t, p) < distance(t, points[*best]) ||
        (distance(t, p) == distance(t, points[*best]) && *p.tflops() > *points[*best].tflops()))
      best = i;
  }
  return best;
}

void classify_bound(const std::vector<ExplainPoint>& points, Verdict& v) {
  const ExplainPoint& t = points.front();
  const Roofline& r = t.annotation.roofline;
  const double compute_us = r.peak_tflops.value > 0 ? r.flops / (r.peak_tflops.value * 1e6) : 0;
  const double memory_us = r.bandwidth_gbs.value > 0 ? r.min_bytes / (r.bandwidth_gbs.value * 1e3) : 0;
  v.roof_us = std::max(compute_us, memory_us);
  v.floor = first_with(points, Role::kLaunchFloor);
  const double time = *t.time_us;
  const bool near_floor = v.floor ? time < kLaunchFloors * *points[*v.floor].time_us : time < kLaunchUs;
  if (v.roof_us > 0 && v.roof_us < kRoofShare * time && near_floor) v.bound = Bound::kLaunch;
  else if (r.bound == RoofBound::kMemory) v.bound = Bound::kMemory;
  else if (r.bound == RoofBound::kCompute) v.bound = Bound::kCompute;
}

// The same work with one thing changed: each control takes what it gains over the best time
// reached before it. Returns the index of the point at the best time (0: the target itself).
size_t same_work_effects(const std::vector<ExplainPoint>& points, Explanation& e) {
  const ExplainPoint& t = points.front();
  size_t best = 0;
  const auto step = [&](std::optional<size_t> c, EffectKind kind, std::optional<size_t> also) {
    if (!c) return;
    const double now = *points[best].time_us, then = *points[*c].time_us;
    if (now - then <= now * threshold(points[best], points[*c])) return;
    Effect effect{kind, now - then, true, {best, c, fixed_at(points, best), fixed_at(points, *c), {}}, false};
    if (also) effect.evidence.also.push_back(*also);
    e.effects.push_back(std::move(effect));
    best = *c;
  };
  step(first_with(points, Role::kAligned16), is_view(t.candidate.problem) ? EffectKind::kLayout : EffectKind::kAlignment16,
       first_with(points, Role::kCopy));
  step(first_with(points, Role::kAligned32), EffectKind::kSector32, std::nullopt);
  step(e.reference.best_alternative, EffectKind::kHeuristicRegret, std::nullopt);
  return best;
}

// Waves and tiles between two points as the model sees them: the relative time the state point
// loses against the reference point through each (0 where it does not lose).
std::pair<double, double> wave_tile_loss(const Annotation& s, const Annotation& r) {
  double wave = 0, tile = 0;
  if (s.waves.slots > 0 && r.waves.slots > 0 && s.waves.efficiency > 0)
    wave = std::max(0.0, r.waves.efficiency / s.waves.efficiency - 1);
  if (s.grid.tiles > 0 && r.grid.tiles > 0 && s.grid.efficiency > 0)
    tile = std::max(0.0, r.grid.efficiency / s.grid.efficiency - 1);
  return {wave, tile};
}

void push(Explanation& e, EffectKind kind, double cost, bool measured, Evidence evidence, bool in_fixed = false) {
  if (cost > 0) e.effects.push_back({kind, cost, measured, std::move(evidence), in_fixed});
}

// The rest of the gap to the compared neighbour r, from the state point s (the target, or the
// same-work control that ran it fastest). `residual` is s's time minus r's at the target's work.
void neighbour_effects(const std::vector<ExplainPoint>& points, size_t s, size_t r, double residual, Explanation& e) {
  const ExplainPoint& t = points.front();
  const double r_time = at_target_work(t, points[r]);
  const bool kernels_differ = points[s].kernel != points[r].kernel || points[s].kernel.empty();
  const auto fs = fixed_same_work(points, s), fr = fixed_at(points, r);
  if (fs && fr) {
    // The fixed kernel's own loss between the two problems is the shape's cost.
    const double loss = at_target_work(t, points[*fs]) / at_target_work(t, points[*fr]) - 1;
    e.reference.fixed_loss = loss;
    const double shape = std::clamp(loss * r_time, 0.0, residual);
    const auto [wave, tile] = wave_tile_loss(points[*fs].annotation, points[*fr].annotation);
    const double predicted = std::min(shape, (wave + tile) * r_time);
    const Evidence evidence{s, r, fs, fr, {}};
    if (wave + tile > 0) {
      push(e, EffectKind::kWaveQuantization, predicted * wave / (wave + tile), true, evidence);
      push(e, EffectKind::kTileQuantization, predicted * tile / (wave + tile), true, evidence);
    }
    push(e, EffectKind::kUnexplained, shape - predicted, true, evidence, true);
    Evidence library = evidence;
    for (Role role : {Role::kAligned16, Role::kAligned32})
      if (auto c = first_with(points, role)) library.also.push_back(*c);
    push(e, kernels_differ ? library_effect(points[s], points[r]) : EffectKind::kUnexplained, residual - shape, true,
         library);
    return;
  }
  // No fixed kernel at both: the model's waves and tiles of the library's own kernels, computed.
  const ExplainPoint& sp = points[s];
  const auto [wave, tile] = wave_tile_loss(sp.annotation, points[r].annotation);
  const double wave_us = std::min(residual, wave * r_time);
  const double tile_us = std::min(residual - wave_us, tile * r_time);
  push(e, EffectKind::kWaveQuantization, wave_us, false, between(s, r));
  push(e, EffectKind::kTileQuantization, tile_us, false, between(s, r));
  const double rest = residual - wave_us - tile_us;
  // The 16-byte control ran and gained nothing (no layout effect before this): the rows are not what
  // locks the fast kernels out; the sizes are, where they break the rule.
  const bool rows_tried = first_with(points, Role::kAligned16).has_value();
  const bool size_rule = !row_lengths_aligned(sp.candidate.problem) && row_lengths_aligned(points[r].candidate.problem);
  if (kernels_differ && size_rule && rows_tried)
    push(e, EffectKind::kSizeAlignment, rest, false, between(s, r));
  else if (kernels_differ && !sp.annotation.alignment.ok() && points[r].annotation.alignment.ok())
    push(e, EffectKind::kAlignment16, rest, false, between(s, r));
  else
    push(e, kernels_differ ? library_effect(sp, points[r]) : EffectKind::kUnexplained, rest, false, between(s, r));
}

void fill_reference(const std::vector<ExplainPoint>& points, Reference& ref) {
  std::optional<size_t> h0;
  for (size_t i = 0; i < points.size(); ++i) {
    const ExplainPoint& p = points[i];
    if (!timed(p)) continue;
    const bool library = p.role == Role::kTarget || p.role == Role::kNeighbour || p.role == Role::kAligned16 ||
                         p.role == Role::kAligned32;
    if (library && p.annotation.alignment.ok() && p.tflops() &&
        (!ref.best_aligned || *p.tflops() > *points[*ref.best_aligned].tflops()))
      ref.best_aligned = i;
    if (p.role == Role::kAlternative) {
      if (!ref.best_alternative || *p.time_us < *points[*ref.best_alternative].time_us) ref.best_alternative = i;
      if (p.algo == "h0") h0 = i;
    }
  }
  if (h0 && ref.best_alternative) ref.regret = *points[*h0].time_us / *points[*ref.best_alternative].time_us - 1;
}

// The neighbour with the most work that takes no more time than the target (more work for free).
std::optional<size_t> free_growth(const std::vector<ExplainPoint>& points) {
  const ExplainPoint& t = points.front();
  std::optional<size_t> best;
  for (size_t i = 1; i < points.size(); ++i) {
    const ExplainPoint& p = points[i];
    if (p.role != Role::kNeighbour || !timed(p) || p.candidate.problem.flops() <= t.candidate.problem.flops()) continue;
    if (*p.time_us <= *t.time_us * (1 + threshold(t, p)) &&
        (!best || p.candidate.problem.flops() > points[*best].candidate.problem.flops()))
      best = i;
  }
  return best;
}

Fix fix_at(const ExplainPoint& t, const std::vector<ExplainPoint>& points, FixKind kind, size_t i) {
  Fix f;
  f.kind = kind;
  f.point = i;
  f.time_us = *points[i].time_us;
  f.speedup = *t.time_us / *f.time_us;
  set_extra_work(t, points[i], f);
  return f;
}

// Size fixes: padding up keeps the computation, so time decides (of the larger sizes within the
// noise of the fastest, the one that adds least); a smaller size changes the model, so throughput
// decides (the best TFLOP/s clearly above the target's).
void size_fixes(const std::vector<ExplainPoint>& points, Explanation& e) {
  const ExplainPoint& t = points.front();
  const double time = *t.time_us;
  const auto larger = [&](const ExplainPoint& p) {
    return p.candidate.value > dim_value(t.candidate.problem, p.candidate.dim);
  };
  std::optional<double> fastest;
  for (const ExplainPoint& p : points)
    if (p.role == Role::kNeighbour && timed(p) && larger(p) && *p.time_us < time * (1 - threshold(t, p)) &&
        (!fastest || *p.time_us < *fastest))
      fastest = *p.time_us;
  std::optional<size_t> up, down;
  for (size_t i = 1; i < points.size(); ++i) {
    const ExplainPoint& p = points[i];
    if (p.role != Role::kNeighbour || !timed(p)) continue;
    if (larger(p)) {
      if (fastest && *p.time_us <= *fastest * (1 + threshold(t, p)) &&
          (!up || p.candidate.problem.flops() < points[*up].candidate.problem.flops()))
        up = i;
    } else if (p.tflops() && *p.tflops() > *t.tflops() * (1 + threshold(t, p)) &&
               (!down || *p.tflops() > *points[*down].tflops())) {
      down = i;
    }
  }
  if (up) e.fixes.push_back(fix_at(t, points, FixKind::kPadUp, *up));
  if (down && (!up || *points[*down].tflops() > *points[*up].tflops() * (1 + kMinDifference))) {
    Fix f = fix_at(t, points, FixKind::kShrink, *down);
    f.speedup = *points[*down].tflops() / *t.tflops();  // per FLOP: the work changes
    e.fixes.push_back(f);
  }
}

void control_fixes(const std::vector<ExplainPoint>& points, Explanation& e) {
  const ExplainPoint& t = points.front();
  for (const Effect& effect : e.effects) {
    if (!effect.measured || !effect.evidence.against) continue;
    const size_t at = *effect.evidence.against;
    if (effect.kind == EffectKind::kLayout || effect.kind == EffectKind::kAlignment16) {
      Fix f = fix_at(t, points, FixKind::kAlignLayout, at);
      f.copy = first_with(points, Role::kCopy);
      e.fixes.push_back(f);
    } else if (effect.kind == EffectKind::kSector32) {
      e.fixes.push_back(fix_at(t, points, FixKind::kAlignSector, at));
    }
  }
  // Sizes the library will not run fast: pad them at run time (copy in, the aligned size's GEMM, copy
  // out), priced with the measured copy and the smallest larger neighbour whose row lengths align.
  const auto copy = first_with(points, Role::kCopy);
  if (copy && !row_lengths_aligned(t.candidate.problem)) {
    std::optional<size_t> up;
    for (size_t i = 1; i < points.size(); ++i) {
      const ExplainPoint& p = points[i];
      if (p.role != Role::kNeighbour || !timed(p) || !row_lengths_aligned(p.candidate.problem) ||
          p.candidate.value <= dim_value(t.candidate.problem, p.candidate.dim))
        continue;
      if (!up || p.candidate.problem.flops() < points[*up].candidate.problem.flops()) up = i;
    }
    if (up) {
      Fix f = fix_at(t, points, FixKind::kPadAtRunTime, *up);
      f.copy = copy;
      f.time_us = *f.time_us + *points[*copy].time_us;
      f.speedup = *t.time_us / *f.time_us;
      f.extra_flops = 0;  // the result is the target's; the padded work is counted in the time
      if (f.speedup > 1 + threshold(t, points[*up])) e.fixes.push_back(f);
    }
  }
  // Another of the library's algorithms is a fix of its own, whatever the attribution gave it.
  if (const auto alt = e.reference.best_alternative) {
    if (*points[*alt].time_us < *t.time_us * (1 - threshold(t, points[*alt])))
      e.fixes.push_back(fix_at(t, points, FixKind::kAlgorithm, *alt));
  }
}

void drop_small_effects(const ExplainPoint& t, Explanation& e) {
  e.effects.erase(std::remove_if(e.effects.begin(), e.effects.end(),
                                 [&](const Effect& x) { return x.cost_us < *t.time_us * kMinEffectShare; }),
                  e.effects.end());
}

// The verdict's comparison: with the neighbour, or (none clearly faster) the best same-work control.
void compare(const std::vector<ExplainPoint>& points, std::optional<size_t> r, size_t state, Explanation& e) {
  const ExplainPoint& t = points.front();
  Verdict& v = e.verdict;
  const double time = *t.time_us;
  const double best_same = *points[state].time_us;
  const bool neighbour_better = r && at_target_work(t, points[*r]) < best_same;
  const std::optional<size_t> against = neighbour_better ? r : (state != 0 ? std::optional<size_t>(state) : r);
  if (!against) return;
  const ExplainPoint& p = points[*against];
  v.against = against;
  v.time_ratio = time / *p.time_us;
  v.work_ratio = p.candidate.problem.flops() / t.candidate.problem.flops();
  v.throughput_ratio = *p.tflops() / *t.tflops();
  v.gap_us = time - std::min(best_same, r ? at_target_work(t, points[*r]) : best_same);
  if (v.bound == Bound::kCompute || v.bound == Bound::kUnknown) {
    // Paired: the gap must clear the minimum effect by the compared point's interval.
    const double decide = t.paired && p.paired ? kMinPairedEffect + p.paired->relative_half_width() : v.threshold;
    if (v.gap_us > time * decide) {
      v.kind = VerdictKind::kSlower;
      v.threshold = decide;  // what the gap had to clear (a fast verdict keeps the most anything could gain)
    }
    if (neighbour_better) neighbour_effects(points, state, *r, best_same - at_target_work(t, points[*r]), e);
  }
}

// The fastest timed point of another precision.
std::optional<size_t> fastest_precision(const std::vector<ExplainPoint>& points) {
  std::optional<size_t> best;
  for (size_t i = 1; i < points.size(); ++i)
    if (points[i].role == Role::kPrecision && timed(points[i]) && (!best || *points[i].time_us < *points[*best].time_us))
      best = i;
  return best;
}

// An fp32 GEMM against the same GEMM in a tensor-core precision: what that gains over the best time
// the same precision reached (the gap so far) is precision's, and the verdict compares with it.
void precision_effect(const std::vector<ExplainPoint>& points, Explanation& e) {
  const ExplainPoint& t = points.front();
  if (!precision_is_cause(t.candidate.problem.dtype)) return;
  const std::optional<size_t> p = fastest_precision(points);
  if (!p) return;
  Verdict& v = e.verdict;
  const double reached = *t.time_us - v.gap_us, then = *points[*p].time_us;
  const double decide = threshold(t, points[*p]);
  if (reached - then <= reached * decide) return;
  push(e, EffectKind::kPrecision, reached - then, true, between(0, p));
  v.against = p;
  v.time_ratio = *t.time_us / then;
  v.work_ratio = 1;
  v.throughput_ratio = v.time_ratio;
  v.gap_us = *t.time_us - then;
  if (v.bound == Bound::kCompute || v.bound == Bound::kUnknown) {
    v.kind = VerdictKind::kSlower;
    v.threshold = decide;
  }
}

// Each other precision that runs the GEMM clearly faster, its fp8 casts paid, is a fix, at the error
// measured with it. An fp8 point whose casts were not all measured is no fix: its price is unknown.
void precision_fixes(const std::vector<ExplainPoint>& points, Explanation& e) {
  const ExplainPoint& t = points.front();
  for (size_t i = 1; i < points.size(); ++i) {
    const ExplainPoint& p = points[i];
    if (p.role != Role::kPrecision || !timed(p)) continue;
    double per_call = 0, per_step = 0;
    size_t casts = 0;  // timed: both operands' (explain's fp8 controls keep no weight in fp8)
    for (const ExplainPoint& c : points)
      if (c.role == Role::kCast && c.of == i && timed(c)) {
        (c.per_call ? per_call : per_step) += *c.time_us;
        ++casts;
      }
    if (p.candidate.problem.dtype == DType::kFp8 && casts < 2) continue;
    if (*p.time_us + per_call >= *t.time_us * (1 - threshold(t, p))) continue;
    Fix f = fix_at(t, points, FixKind::kPrecision, i);
    f.casts_us = per_call;
    f.per_step_us = per_step;
    f.time_us = *f.time_us + per_call;
    f.speedup = *t.time_us / *f.time_us;
    e.fixes.push_back(f);
  }
}

}  // namespace

std::vector<size_t> Evidence::indices() const {
  std::vector<size_t> all = {state};
  for (const std::optional<size_t>& i : {against, fixed_state, fixed_against})
    if (i) all.push_back(*i);
  all.insert(all.end(), also.begin(), also.end());
  std::vector<size_t> once;
  for (size_t i : all)
    if (std::find(once.begin(), once.end(), i) == once.end()) once.push_back(i);
  return once;
}

std::vector<DType> precision_dtypes(const Problem& target, int compute_capability) {
  if (target.grouped()) return {};
  std::vector<DType> wanted;
  switch (target.dtype) {
    case DType::kFp32: wanted = {DType::kTf32, DType::kBf16, DType::kFp16}; break;
    case DType::kTf32: wanted = {DType::kBf16, DType::kFp16}; break;
    case DType::kBf16:
    case DType::kFp16:
      if (target.layout != Layout::kTT) wanted = {DType::kFp8};
      break;
    case DType::kFp8: break;
  }
  std::vector<DType> out;
  for (DType d : wanted)
    if (compute_capability >= min_compute_capability(d)) out.push_back(d);
  return out;
}

bool precision_is_cause(DType dtype) { return input_bytes(dtype) == 4; }

bool paired_role(Role role) { return role != Role::kLaunchFloor && role != Role::kCopy && role != Role::kCast; }

bool left_out_of_pairing(const ExplainPoint& target, const ExplainPoint& p) {
  return target.paired && p.role != Role::kTarget && paired_role(p.role) && !p.paired && p.time_us.has_value();
}

std::string_view role_name(Role role) {
  switch (role) {
    case Role::kTarget: return "target";
    case Role::kNeighbour: return "neighbour";
    case Role::kFixedKernel: return "fixed kernel";
    case Role::kAligned16: return "aligned 16 B";
    case Role::kAligned32: return "aligned 32 B";
    case Role::kCopy: return "copy";
    case Role::kAlternative: return "alternative";
    case Role::kNeighbourAlternative: return "neighbour alternative";
    case Role::kLaunchFloor: return "launch floor";
    case Role::kPrecision: return "precision";
    case Role::kCast: return "cast";
  }
  return "";
}

std::string_view effect_name(EffectKind kind) {
  switch (kind) {
    case EffectKind::kLayout: return "layout";
    case EffectKind::kAlignment16: return "16-byte alignment";
    case EffectKind::kSector32: return "32-byte sectors";
    case EffectKind::kSizeAlignment: return "unaligned sizes";
    case EffectKind::kHeuristicRegret: return "heuristic regret";
    case EffectKind::kWaveQuantization: return "wave quantization";
    case EffectKind::kTileQuantization: return "tile quantization";
    case EffectKind::kKernelChoice: return "kernel choice";
    case EffectKind::kPrecision: return "precision";
    case EffectKind::kUnexplained: return "unexplained";
  }
  return "";
}

std::string_view bound_name(Bound bound) {
  switch (bound) {
    case Bound::kCompute: return "compute";
    case Bound::kMemory: return "memory";
    case Bound::kLaunch: return "launch";
    case Bound::kUnknown: return "unknown";
  }
  return "";
}

Explanation explain(const std::vector<ExplainPoint>& points) {
  if (points.empty()) return {};
  const ExplainPoint& t = points.front();
  if (!timed(t) || !t.tflops()) return explain_prediction(points);
  if (std::any_of(points.begin() + 1, points.end(), [&](const ExplainPoint& p) { return left_out_of_pairing(t, p); })) {
    std::vector<ExplainPoint> compared = points;  // the same indices, those left out without a time
    for (ExplainPoint& p : compared)
      if (left_out_of_pairing(t, p)) p.time_us.reset();
    return explain(compared);
  }
  Explanation e;
  Verdict& v = e.verdict;
  v.threshold = verdict_threshold(points);
  classify_bound(points, v);
  fill_reference(points, e.reference);
  const size_t state = same_work_effects(points, e);
  compare(points, compared_neighbour(points), state, e);
  precision_effect(points, e);
  drop_small_effects(t, e);
  std::stable_sort(e.effects.begin(), e.effects.end(),
                   [](const Effect& a, const Effect& b) { return a.cost_us > b.cost_us; });
  double explained = 0;
  for (const Effect& x : e.effects) explained += x.cost_us;
  v.unexplained_us = std::max(0.0, v.gap_us - explained);
  if (v.unexplained_us >= *t.time_us * kMinEffectShare && v.kind == VerdictKind::kSlower)
    e.effects.push_back({EffectKind::kUnexplained, v.unexplained_us, true, {}, false});
  if (v.bound == Bound::kLaunch || v.bound == Bound::kMemory) {
    v.kind = v.bound == Bound::kLaunch ? VerdictKind::kLaunchBound : VerdictKind::kMemoryBound;
    if (auto grow = free_growth(points)) {
      v.against = grow;
      Fix f = fix_at(t, points, FixKind::kBatchMore, *grow);
      e.fixes.push_back(f);
    }
  } else {
    size_fixes(points, e);
    // "Fast" says that nothing measured does better: with nothing else measured it says nothing.
    if (v.kind == VerdictKind::kFast && std::none_of(points.begin() + 1, points.end(), timed))
      v.kind = VerdictKind::kUnjudged;
  }
  control_fixes(points, e);
  precision_fixes(points, e);
  e.fp8 = fp8_causes(points);
  // Fastest first; a smaller size changes the model and another precision its numbers, so they come
  // after the fixes that keep both (a precision the verdict names as the cause excepted).
  const auto changes_program = [&](const Fix& f) {
    return f.kind == FixKind::kShrink || (f.kind == FixKind::kPrecision && f.point != v.against);
  };
  std::stable_sort(e.fixes.begin(), e.fixes.end(), [&](const Fix& a, const Fix& b) {
    const bool a_changes = changes_program(a), b_changes = changes_program(b);
    return a_changes != b_changes ? b_changes : a.speedup > b.speedup;
  });
  return e;
}

}  // namespace shapescope
