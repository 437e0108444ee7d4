#include "report/explain_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "common/units.hpp"
#include "report/explain_fp8.hpp"
#include "report/explain_terms.hpp"
#include "report/output.hpp"
#include "report/prediction_text.hpp"
#include "report/table.hpp"

namespace shapescope {

namespace {

std::string percent(double fraction) { return shapescope::percent(fraction, 1); }

// A performance model's time, where nothing was measured, is marked as such.
std::string time_cell(const ExplainPoint& p) {
  if (!p.time_us && p.predicted_us) return fmt::format("{:.2f} pred.", *p.predicted_us);
  return p.time_us ? fmt::format("{:.2f}", *p.time_us) : "-";
}

std::string alignment_line(const Annotation& a) {
  std::string line = fmt::format("M/N/K divisible by {}/{}/{}; rows of A/B/C {}/{}/{}-byte aligned", a.alignment.m,
                                 a.alignment.n, a.alignment.k, a.alignment.a.ld_bytes, a.alignment.b.ld_bytes,
                                 a.alignment.c.ld_bytes);
  const std::string bad = a.alignment.violations();
  return line + (bad.empty() ? "; meets the 16-byte rule" : "; breaks the 16-byte rule: " + bad);
}

std::string slots_line(const Annotation& a) {
  if (a.waves.slots <= 0) return "unknown (no launch record)";
  std::string how = a.persistent
                        ? fmt::format("persistent grid of {} CTAs", a.launched_ctas)
                        : a.occupancy.limiter == "assumed"
                              ? fmt::format("{} CTA{}/SM assumed", a.occupancy.ctas_per_sm,
                                            a.occupancy.ctas_per_sm == 1 ? "" : "s")
                              : fmt::format("{} CTA{}/SM, limited by {}", a.occupancy.ctas_per_sm,
                                            a.occupancy.ctas_per_sm == 1 ? "" : "s", a.occupancy.limiter);
  if (a.cluster_size > 1) how += fmt::format(", clusters of {}", a.cluster_size);
  return fmt::format("{} {} on {} slots ({}) = {:.2f} waves: {} round{}, last wave {} full", a.waves.work,
                     a.waves_over, a.waves.slots, how, a.waves.waves, a.waves.rounds, a.waves.rounds == 1 ? "" : "s",
                     percent(a.waves.efficiency));
}

std::string roofline_line(const Annotation& a) {
  const Roofline& r = a.roofline;
  std::string line = fmt::format("{:.1f} GFLOP, {:.1f} MiB minimum traffic, {:.1f} FLOP/byte", r.flops / 1e9,
                                 r.min_bytes / (1 << 20), r.intensity);
  if (r.bound != RoofBound::kUnknown)
    line += fmt::format(": {}-bound (ridge {:.0f} FLOP/byte)", to_string(r.bound), r.ridge);
  return line;
}

std::string peak_phrase(const Annotation& a) {
  const Roofline& r = a.roofline;
  if (!r.pct_peak) return "";
  return fmt::format(", {} of peak ({:.1f} TFLOP/s, {})", percent(*r.pct_peak), r.peak_tflops.value,
                     r.peak_tflops.source);
}

using explain_text::tiles_cell;
// The table's waves cell plus the last wave's efficiency: "3.88p (97 %)".
std::string waves_eff_cell(const Annotation& a) {
  if (a.waves.slots <= 0 || a.waves.work <= 0) return "-";
  return fmt::format("{} ({:.0f} %)", waves_cell(a), a.waves.efficiency * 100);
}

// Left-aligned columns, two spaces apart, no trailing blanks, fitted to the terminal: `fit` by the
// header's names; with none, a last column of sentences wraps (report/table.hpp).
void write_columns(std::ostream& out, const std::vector<std::vector<std::string>>& rows, const std::string& indent,
                   const std::vector<std::pair<std::string, ColumnFit>>& fit = {}) {
  write_table(out, rows, {}, indent, fit.empty() ? std::vector<ColumnFit>() : fit_by_name(rows.front(), fit));
}

// A kernel name is shortened first; then the columns least needed to read the verdict go.
constexpr size_t kKernelAtLeast = 24;

}  // namespace

namespace {

// The target's evidence, one row per fact: time, kernel, alignment, tile grid, launch, split-K,
// waves, roofline, regret.
std::vector<std::vector<std::string>> evidence_rows(const ExplainReport& report) {
  const ExplainPoint& t = report.points.front();
  const Annotation& a = t.annotation;
  std::vector<std::vector<std::string>> evidence;
  if (t.time_us) {
    evidence.push_back({"time", fmt::format("{:.2f} us (noise {:.1f} %), {:.1f} TFLOP/s{}", *t.time_us, t.noise * 100,
                                            t.tflops().value_or(0), peak_phrase(a))});
  }
  if (!t.kernel.empty()) {
    // The name spells the tile in the kernel's own frame (a library kernel's is column-major: its M is
    // the user's N); where the tile grid line (the user's frame) reads it the other way round, this
    // line says which frame it is in.
    const KernelTile& named = a.parsed;
    const bool transposed = named.known && a.grid.tiles > 0 && named.tile_m != named.tile_n &&
                            named.tile_m == a.grid.tile_n && named.tile_n == a.grid.tile_m;
    std::string text = describe(named);
    const std::string tile = fmt::format("tile {}x{}", named.tile_m, named.tile_n);
    if (transposed && text.rfind(tile, 0) == 0)
      text.insert(tile.size(), fmt::format(" as named, in the kernel's own frame ({}x{} along M x N)", a.grid.tile_m,
                                           a.grid.tile_n));
    evidence.push_back({"kernel", fmt::format("{}: {}", t.kernel, text)});
  } else if (report.prediction) {
    evidence.push_back({"predicted", predicted_evidence(report)});
  } else if (report.mode != "model") {
    evidence.push_back({"kernel", "not recorded"});
  }
  evidence.push_back({"alignment", alignment_line(a)});
  if (a.grid.tiles > 0) {
    evidence.push_back(
        {"tile grid", fmt::format("tile {}x{} along M x N (from {}){}: {}x{}{}{} = {} tiles, {} of their area useful",
                                  a.grid.tile_m, a.grid.tile_n,
                                  a.tile_source.rfind("--", 0) == 0 ? a.tile_source : "the " + a.tile_source,
                                  report.mode == "model" ? "" : " in the user's row-major frame", a.grid.tiles_m,
                                  a.grid.tiles_n, a.grid.batch > 1 ? fmt::format("x{} batch", a.grid.batch) : "",
                                  a.grid.splits > 1 ? fmt::format("x{} split-K", a.grid.splits) : "", a.grid.tiles,
                                  percent(a.grid.efficiency))});
  } else {
    evidence.push_back({"tile grid", "unknown: the kernel's name does not say its tile"});
  }
  if (a.launched_ctas > 0) {
    std::string note;
    if (a.grid.tiles > 0 && a.persistent) {
      note = fmt::format(" (persistent: each CTA loops over ~{:.1f} tiles)", double(a.grid.tiles) / a.launched_ctas);
    } else if (a.grid.tiles > 0 && a.launched_ctas == a.grid.tiles) {
      note = " (= the model's tile count)";
    } else if (a.grid.tiles > 0 && a.launched_ctas > a.grid.tiles) {
      note = fmt::format(" (the {} tiles, padded by the kernel's rasterization; the extra CTAs have no tile)",
                         a.grid.tiles);
    }
    evidence.push_back({"launch", fmt::format("{} CTAs{}", a.launched_ctas, note)});
  }
  if (!a.split_source.empty()) {
    evidence.push_back({"split-K", a.splits > 1 ? fmt::format("{} slices ({})", a.splits, a.split_source)
                                                : a.split_source});
  }
  evidence.push_back({"waves", slots_line(a)});
  evidence.push_back({"roofline", roofline_line(a)});
  if (a.regret) {
    evidence.push_back({"regret", fmt::format("{} vs cuBLASLt's best timed choice ({})", percent(*a.regret),
                                              a.best_algo)});
  }
  return evidence;
}

}  // namespace

namespace {

using Json = nlohmann::ordered_json;

using explain_text::at;
using explain_text::share;
using explain_text::times;
using explain_text::us;

// "1.27x faster, 95 % interval 1.25-1.29x, 24 pairs": a paired point's time against the target's
// (below six pairs the interval's own coverage: 75 % for three; below three, none).
std::string paired_phrase(const PairedRatio& q) {
  const double s = q.speedup();
  if (interval_level(q) <= 0)
    return fmt::format("{:.3g}x {}, {} pair{}, no interval", s >= 1 ? s : 1 / s, s >= 1 ? "faster" : "slower", q.pairs,
                       q.pairs == 1 ? "" : "s");
  const std::string level = shapescope::percent(interval_level(q), 0);
  return fmt::format("{:.3g}x {}, {} interval {:.3g}-{:.3g}x, {} pairs", s >= 1 ? s : 1 / s, s >= 1 ? "faster" : "slower", level,
                     s >= 1 ? q.speedup_low() : 1 / q.speedup_high(), s >= 1 ? q.speedup_high() : 1 / q.speedup_low(),
                     q.pairs);
}

// A table cell: the point's time over the target's in the paired run, with its interval; a point the
// passes left out says so, with its survey's noise.
std::string paired_cell(const ExplainReport& r, const ExplainPoint& p) {
  if (left_out_of_pairing(r.points.front(), p)) return fmt::format("survey, noise {:.1f} %", p.noise * 100);
  if (!p.paired || p.role == Role::kTarget) return p.paired ? "1 (reference)" : "-";
  return fmt::format("{:.3f} ({:.3f}-{:.3f})", p.paired->median, p.paired->low, p.paired->high);
}

// The point's time against the target's, where the explanation compares them: a point left out of
// the paired passes has a time of another moment.
bool comparable(const ExplainReport& r, const ExplainPoint& p) { return !left_out_of_pairing(r.points.front(), p); }

using explain_text::paired_line;
using explain_text::survey_only;

bool any_paired(const ExplainReport& r) {
  return std::any_of(r.points.begin(), r.points.end(), [](const ExplainPoint& p) { return p.paired.has_value(); });
}

// What a point is, in a few words: "1792", "lda 1800 ... (16-byte rows)", "cuBLASLt h3".
std::string point_name(const ExplainPoint& p) {
  switch (p.role) {
    case Role::kAligned16: return "the same GEMM with 16-byte rows (" + p.label + ")";
    case Role::kAligned32: return "the same GEMM with 32-byte rows (" + p.label + ")";
    case Role::kAlternative: return "cuBLASLt's " + p.label;
    case Role::kFixedKernel: return "our fixed kernel at " + p.label;
    case Role::kPrecision: return "the same GEMM in " + p.label;
    default: return p.label;
  }
}

std::string time_of(const ExplainPoint& p) {
  return p.time_us ? fmt::format("{} ({})", us(*p.time_us), p.kernel.empty() ? "kernel not recorded" : p.kernel) : "-";
}

std::string dtype_of(const ExplainPoint& p) { return std::string(to_string(p.candidate.problem.dtype)); }

// ", relative error 4.1e-3": a precision's measured error against fp64; what is known where it was not.
std::string error_phrase(const ExplainPoint& p) {
  if (!p.error) return ", its error not measured (no GPU here)";
  std::string phrase = ", relative error " + scientific(p.error->relative);
  if (p.error->non_finite > 0) phrase += fmt::format(" ({} elements overflowed)", p.error->non_finite);
  return phrase;
}

// Where the error was measured, when not at the target's own problem.
std::string error_problem_note(const ExplainReport& r, const NumericalError& e) {
  const Problem& t = r.points.front().candidate.problem;
  if (e.problem.m == t.m && e.problem.n == t.n && e.problem.batch == t.batch) return "";
  return fmt::format(" (measured at {}: the same K, fewer rows and columns to fit in memory)", e.problem.shape_string());
}

// The first line: the answer, within 100 columns.
std::string verdict_line(const ExplainReport& r) {
  const Explanation& e = r.explanation;
  const Verdict& v = e.verdict;
  const ExplainPoint& t = r.points.front();
  const Annotation& a = t.annotation;
  std::string lead;
  if (!e.effects.empty() && v.gap_us > 0) {
    const Effect* top = &e.effects.front();
    for (const Effect& x : e.effects)
      if (x.cost_us > top->cost_us) top = &x;
    lead = fmt::format(": {} ({} of the gap)", effect_name(top->kind), share(top->cost_us, v.gap_us));
  }
  switch (v.kind) {
    case VerdictKind::kPrediction:
      if (r.prediction) return predicted_verdict_line(r);
      return fmt::format("model prediction for {} (nothing measured){}", t.label,
                         e.effects.empty() ? ": no quantization or alignment loss with this tile" : "");
    case VerdictKind::kLaunchBound:
      return fmt::format("{} is launch-bound: {}, {} an empty kernel; its work needs {}", t.label, us(*t.time_us),
                         v.floor ? times(*t.time_us / *at(r, *v.floor).time_us) : std::string("near"), us(v.roof_us));
    case VerdictKind::kMemoryBound:
      return fmt::format("{} is memory-bound: {:.1f} FLOP/byte, {:.0f} GB/s ({} of the {} bandwidth)", t.label,
                         a.roofline.intensity, a.roofline.min_bytes / *t.time_us / 1e3,
                         shapescope::percent(a.roofline.min_bytes / *t.time_us / 1e3 / a.roofline.bandwidth_gbs.value, 0),
                         a.roofline.bandwidth_gbs.measured ? "measured" : "vendor");
    case VerdictKind::kFast: {
      std::string versus;
      if (e.reference.best_aligned && *e.reference.best_aligned != 0)
        versus = fmt::format(", {} of {}'s", share(*t.tflops(), *at(r, *e.reference.best_aligned).tflops()),
                             at(r, *e.reference.best_aligned).label);
      return fmt::format("{} is fast: {:.1f} TFLOP/s{}{}; nothing {} gains more than {}{}", t.label, *t.tflops(),
                         versus, a.roofline.pct_peak ? fmt::format(", {} of peak", share(*a.roofline.pct_peak, 1)) : "",
                         survey_only(r) ? "paired" : "measured", shapescope::percent(v.threshold, t.paired ? 1 : 0),
                         !t.paired ? std::string()
                                   : survey_only(r) ? fmt::format(" (paired 95 % intervals; {} surveyed point{} not paired)",
                                                                  survey_only(r), survey_only(r) == 1 ? "" : "s")
                                                    : std::string(" (paired 95 % intervals)"));
    }
    case VerdictKind::kUnjudged:
      return fmt::format("{} cannot be judged: {:.1f} TFLOP/s{}, but none of its neighbours or same-work controls "
                         "is measured to compare with; measure them (explain {} on a GPU, or sweep the sizes below)",
                         t.label, *t.tflops(),
                         a.roofline.pct_peak ? fmt::format(", {} of peak", share(*a.roofline.pct_peak, 1)) : "",
                         t.label);
    case VerdictKind::kSlower: break;
  }
  const ExplainPoint& p = at(r, *v.against);
  if (p.paired) lead += "; " + paired_phrase(*p.paired);
  if (p.role == Role::kPrecision)
    return fmt::format("{} runs in {}: the same GEMM in {} takes {:.2g}x the time{}{}", t.label, dtype_of(t), p.label,
                       1 / v.time_ratio, error_phrase(p), lead);
  if (p.role != Role::kNeighbour)
    return fmt::format("{} is {} slower than the same work as {}{}", t.label, times(v.time_ratio),
                       p.role == Role::kAlternative ? "cuBLASLt's " + p.label
                                                    : p.role == Role::kAligned16 ? "16-byte rows" : "32-byte rows",
                       lead);
  if (v.work_ratio >= 0.99 && v.time_ratio > 1)
    return fmt::format("{} does {} {} work in {} less time than {}{}", p.label,
                       shapescope::percent(std::abs(v.work_ratio - 1), 1), v.work_ratio >= 1 ? "more" : "less",
                       times(v.time_ratio), t.label, lead);
  return fmt::format("{} is {} slower per FLOP than {} ({:.0f} vs {:.0f} TFLOP/s){}", t.label, times(v.throughput_ratio),
                     p.label, *t.tflops(), *p.tflops(), lead);
}

std::string kernel_of(const ExplainPoint& p) { return p.kernel.empty() ? "?" : p.kernel; }

// One sentence per effect, naming the measurement behind it: only the points its evidence holds.
std::string effect_detail(const ExplainReport& r, const Effect& x) {
  const Evidence& ev = x.evidence;
  const ExplainPoint& t = r.points.front();
  const ExplainPoint& s = at(r, ev.state);
  const ExplainPoint* n = ev.against ? &at(r, *ev.against) : nullptr;
  switch (x.kind) {
    case EffectKind::kLayout:
    case EffectKind::kAlignment16:
    case EffectKind::kSector32:
    case EffectKind::kHeuristicRegret:
      if (!t.time_us)
        return fmt::format("the model: {} breaks the 16-byte rule ({}){}", t.label, t.annotation.alignment.violations(),
                           n ? "; " + n->label + " meets it" : "");
      if (!x.measured || !n)
        return fmt::format("computed: {} breaks the 16-byte rule ({}); no control measured it", t.label,
                           t.annotation.alignment.violations());
      return fmt::format("{} runs the same work in {}, against {} for {}", point_name(*n), time_of(*n), time_of(s),
                         point_name(s));
    case EffectKind::kWaveQuantization:
    case EffectKind::kTileQuantization: return explain_text::quantization_detail(r, x);
    case EffectKind::kSizeAlignment: {
      std::string line = fmt::format("a row length of {} is not a multiple of 16 bytes: the library runs {} there", s.label,
                                     kernel_of(s));
      if (n) line += fmt::format(" and {} at {}", kernel_of(*n), n->label);
      for (size_t k : ev.also) line += fmt::format("; with {} still {}", point_name(at(r, k)), time_of(at(r, k)));
      if (ev.fixed_state) line += fmt::format("; our fixed kernel runs the same work in {}", us(*at(r, *ev.fixed_state).time_us));
      return line;
    }
    case EffectKind::kKernelChoice:
      return fmt::format("the library runs {} at {}{}{}", kernel_of(s), s.label,
                         n ? fmt::format(" and {} at {}", kernel_of(*n), n->label) : std::string(),
                         ev.fixed() ? "; our fixed kernel does not lose this part" : "");
    case EffectKind::kPrecision: {
      if (!n) return fmt::format("{} runs in {}", t.label, dtype_of(t));
      std::string line = fmt::format("in {} the same GEMM runs in {}, against {} in {}", n->label, time_of(*n),
                                     time_of(t), dtype_of(t));
      if (n->error) {
        const NumericalError& e = *n->error;
        line += fmt::format("; its output is off an fp64 reference of the same inputs by {} (relative), at most {} "
                            "(|C| up to {:.3g}){}",
                            scientific(e.relative), scientific(e.max_abs), e.reference_max, error_problem_note(r, e));
        if (t.error) line += fmt::format(", where {}'s own is {}", dtype_of(t), scientific(t.error->relative));
      }
      return line;
    }
    case EffectKind::kUnexplained:
      if (x.in_fixed_kernel)
        return "our fixed kernel loses this too, so it is the shape's, but neither waves nor tiles account for it";
      return n ? "the same kernel runs both; no control accounts for this part"
               : "no control or model term accounts for this part of the gap";
  }
  return "";
}

std::string fix_line(const ExplainReport& r, const Fix& f) {
  if (!f.time_us) return explain_text::predicted_fix_line(r, f);
  const ExplainPoint& t = r.points.front();
  const ExplainPoint& p = at(r, *f.point);
  const double time_us = *f.time_us;
  switch (f.kind) {
    case FixKind::kPadUp:
      if (!t.time_us)
        return fmt::format("pad to {} ({}): {:.2f}x the predicted tile and wave efficiency, for {:+.1f} % FLOPs", p.label,
                           p.candidate.why, f.speedup,
                           100 * (p.candidate.problem.flops() / t.candidate.problem.flops() - 1));
      return fmt::format("pad to {} ({}): {} -> {}, {} faster, for {:+.1f} % FLOPs and {:+.1f} % operand memory", p.label,
                         p.candidate.why, us(*t.time_us), us(time_us), times(f.speedup), f.extra_flops * 100,
                         f.extra_bytes * 100);
    case FixKind::kShrink:
      // A prediction has no TFLOP/s: its fix says how much better the model finds the tiles and waves.
      if (!p.tflops() || !t.tflops())
        return fmt::format("choose {} ({}) if the model allows it: {:.2f}x the predicted tile and wave efficiency, "
                           "{:.1f} % fewer FLOPs",
                           p.label, p.candidate.why, f.speedup,
                           100 * (1 - p.candidate.problem.flops() / t.candidate.problem.flops()));
      return fmt::format("choose {} ({}) if the model allows it: {:.1f} TFLOP/s against {:.1f}, {:.1f} % fewer FLOPs",
                         p.label, p.candidate.why, *p.tflops(), *t.tflops(), -f.extra_flops * 100);
    case FixKind::kAlignLayout: {
      std::string line = fmt::format("give the operands contiguous 16-byte rows ({}): {} -> {}", p.label,
                                     us(*t.time_us), us(time_us));
      if (f.copy)
        line += fmt::format("; padding at run time (copy {} + GEMM) = {}, {} faster", us(*at(r, *f.copy).time_us),
                            us(*at(r, *f.copy).time_us + time_us),
                            times(*t.time_us / (*at(r, *f.copy).time_us + time_us)));
      return line;
    }
    case FixKind::kPadAtRunTime:
      return fmt::format("pad at run time (copy into zero-padded {} buffers, {}, + the {} GEMM, {}): {} -> {}, {} faster",
                         p.label, us(*at(r, *f.copy).time_us), p.label, us(*p.time_us), us(*t.time_us), us(time_us),
                         times(f.speedup));
    case FixKind::kAlignSector:
      return fmt::format("round the rows to 32 bytes ({}): {} -> {}", p.label, us(*t.time_us), us(time_us));
    case FixKind::kAlgorithm:
      return fmt::format("use cuBLASLt's algorithm {} ({}): {} -> {}", p.label, p.kernel, us(*t.time_us), us(time_us));
    case FixKind::kPrecision: return explain_precision_fix_text(r, f);
    case FixKind::kBatchMore:
      return fmt::format("batch more work per call: {} does {} the work in {} (vs {})", p.label,
                         times(p.candidate.problem.flops() / t.candidate.problem.flops()), us(time_us), us(*t.time_us));
    case FixKind::kLeave: break;
  }
  return "leave it";
}

std::vector<std::vector<std::string>> effect_rows(const ExplainReport& r) {
  const Explanation& e = r.explanation;
  const ExplainPoint& t = r.points.front();
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < e.effects.size(); ++i) {
    const Effect& x = e.effects[i];
    const std::string cost = x.cost_us > 0 && t.time_us
                                 ? fmt::format("{} ({} of the gap)", us(x.cost_us), share(x.cost_us, e.verdict.gap_us))
                                 : "-";
    rows.push_back({fmt::format("{}.", i + 1), std::string(effect_name(x.kind)), cost,
                    x.measured ? "measured" : "computed", effect_detail(r, x)});
  }
  return rows;
}

// Every point that is not a size neighbour: the controls, with their time against the target's.
std::vector<std::vector<std::string>> control_rows(const ExplainReport& r) {
  const ExplainPoint& t = r.points.front();
  const bool paired = any_paired(r);
  std::vector<std::vector<std::string>> rows = {{"control", "of", "time [us]", "TFLOP/s", "vs target", "kernel"}};
  if (paired) rows.front().insert(rows.front().end() - 1, "time / target (95 %)");
  for (const ExplainPoint& p : r.points) {
    if (p.role == Role::kTarget || p.role == Role::kNeighbour || p.role == Role::kFixedKernel ||
        p.role == Role::kPrecision || p.role == Role::kCast)
      continue;
    const bool gemm = p.role != Role::kCopy && p.role != Role::kLaunchFloor;
    rows.push_back({std::string(role_name(p.role)), p.label, time_cell(p),
                    gemm && p.tflops() ? fmt::format("{:.1f}", *p.tflops()) : "-",
                    p.time_us && t.time_us && comparable(r, p) ? fmt::format("{:.2f}x", *t.time_us / *p.time_us) : "-",
                    p.kernel.empty() ? "-" : p.kernel});
    if (paired) rows.back().insert(rows.back().end() - 1, paired_cell(r, p));
  }
  return rows;
}

bool has_precision(const ExplainReport& r) {
  return std::any_of(r.points.begin(), r.points.end(), [](const ExplainPoint& p) { return p.role == Role::kPrecision; });
}

// Whether our fixed kernel was measured at any point (its column and its name in the heading).
bool has_fixed_kernel(const ExplainReport& r) {
  return std::any_of(r.points.begin(), r.points.end(), [](const ExplainPoint& p) { return p.role == Role::kFixedKernel; });
}

// The fixed kernel's time at a library point, or "-"; the survey's where the paired passes left it out.
std::string fixed_cell(const ExplainReport& r, size_t library) {
  for (const ExplainPoint& p : r.points)
    if (p.role == Role::kFixedKernel && p.of == library && p.time_us)
      return fmt::format("{:.2f}{}", *p.time_us, comparable(r, p) ? "" : " (survey)");
  return "-";
}

// The points not measured, one line per reason (a layout our fixed kernel does not run skips every
// one of its points for the same reason): the reasons in the order they first come, each with its
// points.
std::vector<std::pair<std::string, std::string>> not_measured_by_reason(const ExplainReport& r) {
  std::vector<std::pair<std::string, std::vector<std::string>>> by_reason;
  for (const NotMeasured& m : r.missing) {
    auto at = std::find_if(by_reason.begin(), by_reason.end(), [&](const auto& l) { return l.first == m.why; });
    if (at == by_reason.end()) at = by_reason.insert(by_reason.end(), {m.why, {}});
    at->second.push_back(m.what);
  }
  // A reason that holds many problems (a kernel that cannot run the layout: every neighbour) names
  // the first two and the last.
  std::vector<std::pair<std::string, std::string>> lines;
  for (const auto& [why, what] : by_reason)
    lines.emplace_back(why, what.size() > 3 ? fmt::format("{} problems: {}, {}, ..., {}", what.size(), what[0],
                                                          what[1], what.back())
                                            : fmt::format("{}", fmt::join(what, ", ")));
  return lines;
}

std::vector<std::vector<std::string>> neighbour_rows(const ExplainReport& r) {
  const ExplainPoint& t = r.points.front();
  const bool fixed = has_fixed_kernel(r);
  const bool paired = any_paired(r);
  std::vector<std::vector<std::string>> rows = {{"size", "why", "time [us]", "TFLOP/s", "per FLOP", "16B", "tile",
                                                 "tiles", "waves (eff)", fixed ? "fixed [us]" : "", "kernel"}};
  if (paired) rows.front().insert(rows.front().begin() + 5, "time / target (95 %)");
  for (size_t i = 0; i < r.points.size(); ++i) {
    const ExplainPoint& p = r.points[i];
    if (p.role != Role::kTarget && p.role != Role::kNeighbour) continue;
    std::string versus = "-";
    const std::optional<double> rate = measured_or_predicted_tflops(p), target_rate = measured_or_predicted_tflops(t);
    if (rate && target_rate && comparable(r, p)) versus = fmt::format("{:.2f}x", *rate / *target_rate);
    rows.push_back({p.label, p.candidate.why.empty() ? "target" : p.candidate.why, time_cell(p),
                    rate ? fmt::format("{:.1f}", *rate) : "-", versus,
                    p.annotation.alignment.ok() ? "ok" : "no", tile_cell(p.annotation), tiles_cell(p.annotation),
                    waves_eff_cell(p.annotation), fixed ? fixed_cell(r, i) : "", p.kernel.empty() ? "-" : p.kernel});
    if (paired) rows.back().insert(rows.back().begin() + 5, paired_cell(r, p));
  }
  return rows;
}

// The points whose median gains over the target but whose interval cannot tell it from the minimum
// effect: what would tell.
std::vector<std::string> cannot_tell_lines(const ExplainReport& r) {
  std::vector<std::string> lines;
  for (const ExplainPoint& p : r.points) {
    if (!p.paired || p.role == Role::kTarget || p.role == Role::kLaunchFloor || p.role == Role::kCopy) continue;
    if (judge(*p.paired) != PairedVerdict::kCannotTell || p.paired->median >= 1) continue;
    lines.push_back(fmt::format("cannot tell: {} ({}) takes {} less time at the median, 95 % interval {:.1f}..{:.1f} %, "
                                "{} pairs, against the {} minimum effect: more pairs (--pair-seconds) or --clocks burst "
                                "would tell",
                                p.label, role_name(p.role), shapescope::percent(1 - p.paired->median, 1),
                                100 * (1 - p.paired->high), 100 * (1 - p.paired->low), p.paired->pairs,
                                shapescope::percent(kMinPairedEffect, 0)));
  }
  return lines;
}

}  // namespace

std::string explain_verdict_line(const ExplainReport& report) { return verdict_line(report); }
std::string explain_effect_detail(const ExplainReport& report, const Effect& effect) { return effect_detail(report, effect); }
std::string explain_paired_line(const ExplainReport& report) { return paired_line(report); }

std::string explain_fix_text(const ExplainReport& report, size_t fix) {
  return fix_line(report, report.explanation.fixes.at(fix));
}

std::string explain_fix_line(const ExplainReport& report) {
  const Explanation& e = report.explanation;
  if (e.fixes.empty())
    return e.verdict.kind == VerdictKind::kUnjudged ? std::string("none known until a neighbour is measured")
                                                    : std::string("leave it");
  return fix_line(report, e.fixes.front());
}

void write_explain_text(std::ostream& out, const ExplainReport& report) {
  const Explanation& e = report.explanation;
  const ExplainPoint& t = report.points.front();
  out << verdict_line(report) << "\n" << report.source << "\n";
  if (report.paired) out << paired_line(report) << "\n";
  out << "\n";
  out << "evidence for " << t.label << "\n";
  write_columns(out, evidence_rows(report), "  ");
  if (!e.effects.empty()) {
    out << "\n"
        << (t.time_us ? fmt::format("effects, adding up to the gap of {} ({} of the target's time)", us(e.verdict.gap_us),
                                    share(e.verdict.gap_us, *t.time_us))
                      : std::string("effects (model)"))
        << "\n";
    // No header: the sentence wraps (down to 30 characters), and "measured" goes before that.
    write_table(out, effect_rows(report), {}, "  ", {{}, {}, {}, {1}, {0, 0, 30}});
  }
  if (e.reference.regret)
    out << fmt::format("\nheuristic regret: cuBLASLt's first choice takes {} longer than its best, {}\n",
                       shapescope::percent(*e.reference.regret, 1), at(report, *e.reference.best_alternative).label);
  const auto controls = control_rows(report);
  if (controls.size() > 1) {
    out << "\ncontrols (the same GEMM with one thing changed)\n";
    write_columns(out, controls, "  ", {{"kernel", {0, kKernelAtLeast}}, {"TFLOP/s", {1}}, {"time / target (95 %)", {2}}});
  }
  for (const std::string& line : explain_fp8_lines(report)) out << line << "\n";
  if (has_precision(report)) {
    out << "\nprecision (the same GEMM in another dtype, fp8 per recipe with its casts: an activation's or a gradient's "
           "every call, a weight's once per step; error: its output against an fp64 reference of the same random inputs, and of "
           "the same with outlier channels)\n";
    write_columns(out, explain_precision_rows(report), "  ");
  }
  const bool fixed = has_fixed_kernel(report);
  out << "\nneighbours" << (fixed ? " (fixed: our " + report.fixed_kernel + ")" : "") << "\n";
  write_columns(out, neighbour_rows(report), "  ",
                {{"kernel", {0, kKernelAtLeast}}, {"tiles", {1}}, {"per FLOP", {2}}, {"TFLOP/s", {3}},
                 {"time / target (95 %)", {4}}, {"tile", {5}}, {"16B", {6}}});
  // Under the table and as wide as it may be: a list of controls' labels ("cast B (fp8 row, per step,
  // transposed)") wraps, each line under the first.
  std::vector<std::vector<std::string>> missing;
  for (const auto& [why, what] : not_measured_by_reason(report)) missing.push_back({"not measured (" + why + "): " + what});
  write_table(out, missing, {false}, "  ", {{0, 0, 40}});
  for (const std::string& line : cannot_tell_lines(report)) out << line << "\n";
  out << "\nfix: " << explain_fix_line(report) << "\n";
  for (size_t i = 1; i < e.fixes.size(); ++i) out << "or:  " << fix_line(report, e.fixes[i]) << "\n";
  if (report.wall_s > 0) out << fmt::format("explained in {:.2f} s\n", report.wall_s);
}

}  // namespace shapescope
