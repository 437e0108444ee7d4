#include "model/explain.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace shapescope {

namespace {

constexpr int64_t kMultiples[] = {8, 16, 32, 64, 128, 256};
// Below this relative difference two times are the same (the p95 of repeated sweeps is ~2-5 %).
constexpr double kSameTime = 0.05;
// An effect smaller than this share of the target's time is not worth a line.
constexpr double kMinEffectShare = 0.02;
constexpr double kFullWave = 0.95;

int64_t dim_value(const Problem& p, Dim dim) {
  switch (dim) {
    case Dim::kM: return p.m;
    case Dim::kN: return p.n;
    case Dim::kK: return p.k;
    case Dim::kAll: return p.n;
  }
  return p.n;
}

void set_dim(Problem& p, Dim dim, int64_t value) {
  if (dim == Dim::kAll || dim == Dim::kM) p.m = value;
  if (dim == Dim::kAll || dim == Dim::kN) p.n = value;
  if (dim == Dim::kAll || dim == Dim::kK) p.k = value;
}

// Rounds and efficiency of the target's tile and slots at another size (K does not move tiles).
std::optional<Waves> waves_at(const Problem& p, Dim dim, int64_t value, const Annotation& target) {
  if (target.grid.tiles <= 0 || target.waves.slots <= 0 || dim == Dim::kK) return std::nullopt;
  Problem q = p;
  set_dim(q, dim, value);
  const TileGrid g = tile_grid(q.m, q.n, q.batch, target.grid.tile_m, target.grid.tile_n, target.grid.splits);
  return waves_of(g.tiles, target.waves.slots);
}

std::string us(double value) {
  if (value >= 1000) return fmt::format("{:.0f} us", value);
  if (value >= 10) return fmt::format("{:.1f} us", value);
  return fmt::format("{:.2f} us", value);
}

std::string percent(double fraction) { return fmt::format("{:.0f} %", fraction * 100); }

std::string times(double ratio) { return ratio >= 10 ? fmt::format("{:.0f}x", ratio) : fmt::format("{:.1f}x", ratio); }

bool same_kernel(const ExplainPoint& a, const ExplainPoint& b) {
  return !a.kernel.empty() && a.kernel == b.kernel;
}

std::string kernel_phrase(const ExplainPoint& p) {
  if (p.kernel.empty()) return "an unrecorded kernel";
  const std::string says = describe(p.annotation.parsed);
  return says == "unknown" ? p.kernel : fmt::format("{} ({})", p.kernel, says);
}

std::string waves_phrase(const Annotation& a) {
  if (a.waves.slots <= 0 || a.waves.work <= 0) return "waves unknown";
  return fmt::format("{} {} on {} {}slots = {:.2f} waves ({} round{}, last-wave efficiency {})", a.waves.work,
                     a.waves_over, a.waves.slots, a.persistent ? "persistent " : "", a.waves.waves,
                     a.waves.rounds, a.waves.rounds == 1 ? "" : "s", percent(a.waves.efficiency));
}

std::string tiles_phrase(const Annotation& a) {
  if (a.grid.tiles <= 0) return "tile unknown";
  return fmt::format("tile {}x{} ({}): {}x{} tiles{}{}, {} of the tiles' area is useful", a.grid.tile_m,
                     a.grid.tile_n, a.tile_source, a.grid.tiles_m, a.grid.tiles_n,
                     a.grid.batch > 1 ? fmt::format(" x {} batch", a.grid.batch) : "",
                     a.grid.splits > 1 ? fmt::format(" x {} split-K", a.grid.splits) : "",
                     percent(a.grid.efficiency));
}

// The neighbour the verdict compares with: the nearest size (in the dimension that moves) that runs
// clearly faster per FLOP; among equally near ones, the fastest.
std::optional<size_t> compared_neighbour(const std::vector<ExplainPoint>& points) {
  const ExplainPoint& t = points.front();
  std::optional<size_t> best;
  auto distance = [&](const ExplainPoint& p) {
    return std::llabs(p.candidate.value - dim_value(t.candidate.problem, p.candidate.dim));
  };
  for (size_t i = 1; i < points.size(); ++i) {
    const ExplainPoint& p = points[i];
    if (!p.tflops() || *p.tflops() <= *t.tflops() * (1 + kSameTime)) continue;
    if (!best || distance(p) < distance(points[*best]) ||
        (distance(p) == distance(points[*best]) && *p.tflops() > *points[*best].tflops()))
      best = i;
  }
  return best;
}

// Effects that make the target slower than the neighbour B, each with the time it costs the target:
// the wave and tile shares come from the model (they cost time in proportion to the work they
// waste); the rest of the gap belongs to the kernel the library picked.
std::vector<Effect> compare_effects(const ExplainPoint& t, const ExplainPoint& b) {
  std::vector<Effect> effects;
  const Annotation& ta = t.annotation;
  const Annotation& ba = b.annotation;
  const double time = *t.time_us;
  // What the target would take at B's throughput.
  const double gap = time - time * (*t.tflops() / *b.tflops());

  double explained = 0;
  const bool waves_known = ta.waves.slots > 0 && ba.waves.slots > 0 && ta.waves.work > 0 && ba.waves.work > 0;
  if (waves_known && ta.waves.efficiency < ba.waves.efficiency) {
    const double cost = std::min(gap, time * (1 - ta.waves.efficiency / ba.waves.efficiency));
    if (cost > 0) {
      effects.push_back({"wave quantization", cost,
                         fmt::format("{}: {}; {}: {}", t.label, waves_phrase(ta), b.label, waves_phrase(ba))});
      explained += cost;
    }
  }
  if (ta.grid.tiles > 0 && ba.grid.tiles > 0 && ta.grid.efficiency < ba.grid.efficiency) {
    const double cost = std::min(gap - explained, time * (1 - ta.grid.efficiency / ba.grid.efficiency));
    if (cost > 0) {
      effects.push_back({"tile quantization", cost,
                         fmt::format("{}: {}; {}: {}", t.label, tiles_phrase(ta), b.label, tiles_phrase(ba))});
      explained += cost;
    }
  }
  const double rest = gap - explained;
  if (rest > 0) {
    if (!same_kernel(t, b) && !ta.alignment.ok() && ba.alignment.ok()) {
      effects.push_back(
          {"alignment", rest,
           fmt::format("{} breaks the 16-byte rule ({}), so the library cannot use the kernel {} runs, "
                       "{}; it runs {} instead",
                       t.label, ta.alignment.violations(), b.label, kernel_phrase(b), kernel_phrase(t))});
    } else if (!same_kernel(t, b)) {
      effects.push_back({"kernel switch", rest,
                         fmt::format("the library picks {} for {} but {} for {}", kernel_phrase(t), t.label,
                                     kernel_phrase(b), b.label)});
    } else {
      effects.push_back({"unexplained", rest,
                         fmt::format("same kernel, same {}: the model does not account for this part of the gap",
                                     waves_known ? "wave count" : "launch")});
    }
  }
  return effects;
}

Fix make_fix(const ExplainPoint& target, const ExplainPoint& p) {
  Fix fix;
  fix.point = p;
  fix.speedup = *target.time_us / *p.time_us;
  fix.extra_flops = p.candidate.problem.flops() / target.candidate.problem.flops() - 1;
  fix.extra_bytes = double(p.candidate.problem.bytes()) / double(target.candidate.problem.bytes()) - 1;
  return fix;
}

Explanation explain_prediction(const std::vector<ExplainPoint>& points) {
  Explanation e;
  const ExplainPoint& t = points.front();
  const Annotation& a = t.annotation;
  std::vector<std::string> notes;
  if (!a.alignment.ok()) notes.push_back("it breaks the 16-byte rule (" + a.alignment.violations() + ")");
  if (a.waves.slots > 0 && a.waves.efficiency < kFullWave)
    notes.push_back(fmt::format("its last wave is {} full", percent(a.waves.efficiency)));
  if (a.grid.tiles > 0 && a.grid.efficiency < kFullWave)
    notes.push_back(fmt::format("only {} of its tiles' area is useful", percent(a.grid.efficiency)));
  if (a.roofline.bound == "memory") notes.push_back("it is memory-bound");
  e.verdict = fmt::format("model prediction (nothing measured): {} {}", t.label,
                          notes.empty() ? std::string("has no quantization or alignment loss with this tile")
                                        : fmt::format("loses time: {}", fmt::join(notes, "; ")));
  if (a.waves.slots > 0 && a.waves.efficiency < 1)
    e.effects.push_back({"wave quantization", 0, waves_phrase(a)});
  if (a.grid.tiles > 0 && a.grid.efficiency < 1) e.effects.push_back({"tile quantization", 0, tiles_phrase(a)});
  if (!a.alignment.ok())
    e.effects.push_back({"alignment", 0,
                         "the library cannot use its kernels that load 16 bytes at a time (TMA/WGMMA on Hopper) and "
                         "falls back to align1/align2 kernels (4-5x slower on an H200, measured); the model cannot "
                         "predict by how much on this GPU"});
  // The candidate with the best predicted efficiency (waves x tiles), among those that keep the rule.
  const ExplainPoint* best = nullptr;
  auto score = [](const Annotation& x) { return x.waves.efficiency * x.grid.efficiency * (x.alignment.ok() ? 1 : 0.25); };
  for (size_t i = 1; i < points.size(); ++i) {
    if (points[i].annotation.grid.tiles <= 0) continue;
    if (!best || score(points[i].annotation) > score(best->annotation)) best = &points[i];
  }
  if (best && score(best->annotation) > score(a) * (1 + kSameTime)) {
    e.fix_text = fmt::format(
        "the model prefers {} ({}): last wave {} full, tiles {} useful{} — measure it on the GPU before relying on it",
        best->label, best->candidate.why, percent(best->annotation.waves.efficiency),
        percent(best->annotation.grid.efficiency), best->annotation.alignment.ok() ? ", 16-byte aligned" : "");
  } else {
    e.fix_text = "the model sees no better neighbour";
  }
  return e;
}

}  // namespace

std::string_view dim_name(Dim dim) {
  switch (dim) {
    case Dim::kAll: return "n";
    case Dim::kM: return "M";
    case Dim::kN: return "N";
    case Dim::kK: return "K";
  }
  return "n";
}

std::vector<Candidate> neighbours(const Problem& problem, bool square, const Annotation& target) {
  std::vector<Dim> dims;
  if (square) {
    dims = {Dim::kAll};
  } else {
    for (Dim d : {Dim::kM, Dim::kN, Dim::kK})
      if (dim_value(problem, d) % 256 != 0) dims.push_back(d);
    if (dims.empty()) dims = {Dim::kM, Dim::kN, Dim::kK};
  }
  std::vector<Candidate> out;
  for (Dim dim : dims) {
    std::vector<Candidate> along = neighbours_along(problem, dim, target, Side::kBoth);
    out.insert(out.end(), std::make_move_iterator(along.begin()), std::make_move_iterator(along.end()));
  }
  return out;
}

std::vector<Candidate> neighbours_along(const Problem& problem, Dim dim, const Annotation& target, Side side) {
  const bool below = side == Side::kBoth;
  const int64_t v = dim_value(problem, dim);
  std::map<int64_t, std::vector<std::string>> sizes;  // sorted, each reason kept
  auto add = [&](int64_t value, std::string why) {
    if (value >= 1 && value != v) sizes[value].push_back(std::move(why));
  };
  if (below) {
    add(v - 1, fmt::format("{}-1", dim_name(dim)));
    add(v + 1, fmt::format("{}+1", dim_name(dim)));
  }
  for (int64_t multiple : kMultiples) {
    if (below) add((v - 1) / multiple * multiple, fmt::format("multiple of {} below", multiple));
    add((v / multiple + 1) * multiple, fmt::format("multiple of {} above", multiple));
  }
  if (auto w = waves_at(problem, dim, v, target)) {
    // One wave less: the largest smaller size that needs fewer rounds (within half the size).
    for (int64_t x = v - 1; below && x >= std::max<int64_t>(1, v / 2); --x) {
      auto wx = waves_at(problem, dim, x, target);
      if (wx->rounds < w->rounds) {
        add(x, "one wave less");
        break;
      }
    }
    // Fills its last wave: the smallest larger size (within +25 %) whose last wave is >= 95 %
    // full, when the target's is not.
    if (w->efficiency < kFullWave) {
      for (int64_t x = v + 1; x <= v + v / 4; ++x) {
        auto wx = waves_at(problem, dim, x, target);
        if (wx->efficiency >= kFullWave) {
          add(x, "fills its last wave");
          break;
        }
      }
    }
  }
  std::vector<Candidate> out;
  for (auto& [value, reasons] : sizes) {
    Candidate c;
    c.dim = dim;
    c.value = value;
    // A multiple of 256 is a multiple of 8..128 too: only the largest multiple is worth saying.
    std::string why, multiple;
    for (const std::string& r : reasons) {
      if (r.rfind("multiple of ", 0) == 0) {
        multiple = r;
        continue;
      }
      why += (why.empty() ? "" : ", ") + r;
    }
    if (!multiple.empty()) why = why.empty() ? multiple : multiple + ", " + why;
    c.why = why;
    c.problem = problem;
    set_dim(c.problem, dim, value);
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

// Memory-bound shapes are explained by bytes, not by tiles: say how close to the bandwidth they run,
// and how much larger the free dimension can grow at no cost in time.
Explanation explain_memory_bound(const std::vector<ExplainPoint>& points) {
  const ExplainPoint& t = points.front();
  const Annotation& ta = t.annotation;
  const double time = *t.time_us;
  Explanation e;
  const double gbs = ta.roofline.min_bytes / time / 1e3;
  const Peak& bw = ta.roofline.bandwidth_gbs;
  e.verdict = fmt::format(
      "{} is memory-bound: {:.1f} FLOP/byte is below the ridge of {:.0f}; it moves {:.1f} MiB in {} = {:.0f} GB/s, "
      "{} of the {} bandwidth",
      t.label, ta.roofline.intensity, ta.roofline.ridge, ta.roofline.min_bytes / (1 << 20), us(time), gbs,
      percent(gbs / bw.value), bw.measured ? "measured" : "vendor");
  e.effects.push_back({"memory bound", 0,
                       fmt::format("at {} FLOP/byte the roof allows {:.1f} TFLOP/s; it reaches {:.1f} ({} of the roof)",
                                   fmt::format("{:.1f}", ta.roofline.intensity), ta.roofline.attainable_tflops,
                                   *t.tflops(), percent(ta.roofline.pct_roof.value_or(0)))});
  // The largest neighbour that costs no more time: more work for free.
  const ExplainPoint* free_growth = nullptr;
  for (size_t i = 1; i < points.size(); ++i) {
    const ExplainPoint& p = points[i];
    if (!p.time_us || p.candidate.problem.flops() <= t.candidate.problem.flops()) continue;
    if (*p.time_us <= time * (1 + kSameTime) &&
        (!free_growth || p.candidate.problem.flops() > free_growth->candidate.problem.flops()))
      free_growth = &p;
  }
  if (free_growth) {
    e.compared_with = *free_growth;
    const double more = free_growth->candidate.problem.flops() / t.candidate.problem.flops();
    e.fix_text = fmt::format(
        "{} does {} the work in {} (vs {}): the weights are read once either way, so batch up to {} {} per "
        "GEMM",
        free_growth->label, times(more), us(*free_growth->time_us), us(time), free_growth->candidate.value,
        free_growth->candidate.dim == Dim::kAll ? "per side" : std::string(dim_name(free_growth->candidate.dim)));
  } else {
    e.fix_text = "no neighbour does more work in the same time; padding will not help a memory-bound GEMM";
  }
  return e;
}

// The verdict against the neighbour that runs best per FLOP, and the effects that explain the gap,
// largest first (heuristic regret included).
void add_verdict_and_effects(Explanation& e, const std::vector<ExplainPoint>& points, std::optional<size_t> best) {
  const ExplainPoint& t = points.front();
  const Annotation& ta = t.annotation;
  const double time = *t.time_us;
  if (!best) {
    e.verdict = fmt::format("{} is fast: {:.1f} TFLOP/s{}, and no neighbour runs more than {} faster per FLOP",
                            t.label, *t.tflops(),
                            ta.roofline.pct_peak ? fmt::format(" ({} of peak)", percent(*ta.roofline.pct_peak)) : "",
                            percent(kSameTime));
  } else {
    const ExplainPoint& b = points[*best];
    e.compared_with = b;
    e.effects = compare_effects(t, b);
    std::sort(e.effects.begin(), e.effects.end(),
              [](const Effect& x, const Effect& y) { return x.cost_us > y.cost_us; });
    e.effects.erase(std::remove_if(e.effects.begin(), e.effects.end(),
                                   [&](const Effect& x) { return x.cost_us < time * kMinEffectShare; }),
                    e.effects.end());
    const double ratio = time / *b.time_us;
    const std::string lead = e.effects.empty() ? std::string("the model finds no cause") : e.effects.front().name;
    if (ratio > 1 + kSameTime) {
      e.verdict = fmt::format("{} is {} slower than {}: {}", t.label, times(ratio), b.label, lead);
    } else {
      e.verdict = fmt::format("{} runs at {:.1f} TFLOP/s, {} below {} ({:.1f} TFLOP/s): {}", t.label, *t.tflops(),
                              times(*b.tflops() / *t.tflops()), b.label, *b.tflops(), lead);
    }
    if (!e.effects.empty() && e.effects.front().name == "alignment")
      e.verdict += fmt::format(" ({} runs {}, {} runs {})", t.label, t.kernel.empty() ? "?" : t.kernel, b.label,
                               b.kernel.empty() ? "?" : b.kernel);
  }
  if (ta.regret && *ta.regret > kSameTime) {
    e.effects.push_back({"heuristic regret", time * *ta.regret / (1 + *ta.regret),
                         fmt::format("cuBLASLt's first choice is {} slower than its {} for this shape",
                                     percent(*ta.regret), ta.best_algo)});
    std::stable_sort(e.effects.begin(), e.effects.end(),
                     [](const Effect& x, const Effect& y) { return x.cost_us > y.cost_us; });
  }

}

// The fix: the fastest size at or above the target (padding keeps the computation); else the
// fastest below (a model author can choose a smaller dimension).
// Padding up keeps the computation, so time decides: of the sizes within kSameTime of the fastest,
// the one that adds least. A smaller size changes the model, so throughput decides: the best
// TFLOP/s among those clearly above the target's.
void add_fix(Explanation& e, const std::vector<ExplainPoint>& points) {
  const ExplainPoint& t = points.front();
  const double time = *t.time_us;
  const int64_t own = dim_value(t.candidate.problem, Dim::kAll);
  auto larger = [&](const ExplainPoint& p) { return p.candidate.value > (p.candidate.dim == Dim::kAll ? own : dim_value(t.candidate.problem, p.candidate.dim)); };
  std::optional<double> fastest;
  for (size_t i = 1; i < points.size(); ++i) {
    const ExplainPoint& p = points[i];
    if (p.time_us && larger(p) && *p.time_us < time * (1 - kSameTime) && (!fastest || *p.time_us < *fastest))
      fastest = *p.time_us;
  }
  const ExplainPoint* up = nullptr;
  const ExplainPoint* down = nullptr;
  for (size_t i = 1; i < points.size(); ++i) {
    const ExplainPoint& p = points[i];
    if (!p.time_us) continue;
    if (larger(p)) {
      if (fastest && *p.time_us <= *fastest * (1 + kSameTime) &&
          (!up || p.candidate.problem.flops() < up->candidate.problem.flops()))
        up = &p;
    } else if (p.tflops() && *p.tflops() > *t.tflops() * (1 + kSameTime) && (!down || *p.tflops() > *down->tflops())) {
      down = &p;
    }
  }
  if (up) {
    const Fix f = make_fix(t, *up);
    e.fix = f;
    e.fix_text = fmt::format("pad to {} ({}): {} -> {}, {} faster, for {:+.1f} % FLOPs and {:+.1f} % operand memory",
                             up->label, up->candidate.why, us(time), us(*up->time_us), times(f.speedup),
                             f.extra_flops * 100, f.extra_bytes * 100);
  }
  if (down && (!up || *down->tflops() > *up->tflops() * (1 + kSameTime))) {
    const Fix f = make_fix(t, *down);
    if (!e.fix) e.fix = f;
    e.fix_text += fmt::format("{}{} {} ({}) if the model allows it: {:.1f} TFLOP/s against {:.1f}, {:.1f} % fewer FLOPs",
                              e.fix_text.empty() ? "" : "; or ", e.fix_text.empty() ? "choose" : "choose",
                              down->label, down->candidate.why, *down->tflops(), *t.tflops(), -f.extra_flops * 100);
  }
  if (e.fix_text.empty()) e.fix_text = fmt::format("leave it: no neighbour is more than {} faster", percent(kSameTime));
}

}  // namespace

Explanation explain(const std::vector<ExplainPoint>& points) {
  if (points.empty()) return {};
  const ExplainPoint& t = points.front();
  if (!t.time_us) return explain_prediction(points);
  if (t.annotation.roofline.bound == "memory" && t.tflops()) return explain_memory_bound(points);
  Explanation e;
  add_verdict_and_effects(e, points, compared_neighbour(points));
  add_fix(e, points);
  return e;
}

std::optional<ShapeArg> parse_shape(std::string_view text) {
  std::vector<int64_t> values;
  int64_t current = -1;
  for (char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (current < 0) current = 0;
      current = current * 10 + (c - '0');
      if (current > (int64_t(1) << 40)) return std::nullopt;
    } else if (c == 'x' || c == 'X') {
      if (current < 0) return std::nullopt;
      values.push_back(current);
      current = -1;
    } else {
      return std::nullopt;
    }
  }
  if (current < 0) return std::nullopt;
  values.push_back(current);
  for (int64_t v : values)
    if (v < 1) return std::nullopt;
  if (values.size() == 1) return ShapeArg{values[0], values[0], values[0], true};
  if (values.size() == 3) return ShapeArg{values[0], values[1], values[2], false};
  return std::nullopt;
}

std::optional<std::pair<int, int>> parse_tile(std::string_view text) {
  const size_t x = text.find_first_of("xX");
  if (x == std::string_view::npos) return std::nullopt;
  // Two positive sizes: parse "BMxBNx1" as a shape so that both parts get the same checks.
  const auto shape = parse_shape(fmt::format("{}x1", text));
  constexpr int64_t kMaxTile = 1024;
  if (!shape || shape->m > kMaxTile || shape->n > kMaxTile) return std::nullopt;
  return std::make_pair(int(shape->m), int(shape->n));
}

}  // namespace shapescope
