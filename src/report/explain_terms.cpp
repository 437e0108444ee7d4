#include "report/explain_terms.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <vector>

#include "common/units.hpp"
#include "report/annotation_text.hpp"
#include "report/output.hpp"

namespace shapescope::explain_text {

std::string share(double part, double whole) { return whole > 0 ? shapescope::percent(part / whole, 0) : "-"; }
std::string times(double ratio) { return ratio >= 10 ? fmt::format("{:.0f}x", ratio) : fmt::format("{:.1f}x", ratio); }
std::string us(double value) { return fmt::format(value >= 100 ? "{:.1f} us" : "{:.2f} us", value); }

size_t survey_only(const ExplainReport& r) { return r.pairing ? r.pairing->survey_only : 0; }

// The paired run: which points, how long, at which clock and power; the same clock on both sides by
// construction; the points its budget left with their survey times, and what would pair them.
std::string paired_line(const ExplainReport& r) {
  const PairedOutcome& o = *r.paired;
  std::string clock = o.clock_median_mhz > 0 ? fmt::format(", SM clock {:.0f}-{:.0f} MHz (median {:.0f})", o.clock_low_mhz,
                                                           o.clock_high_mhz, o.clock_median_mhz)
                                             : ", SM clock unknown";
  const size_t left_out = survey_only(r);
  std::string line = fmt::format("paired: {} measured again with the target in {} passes (A B .. B A, {} more to warm "
                                 "up) in {:.2f} s{}{}; both sides of each comparison ran in the same passes{}",
                                 left_out ? fmt::format("{} point{}", r.pairing->paired, r.pairing->paired == 1 ? "" : "s")
                                          : std::string("every point"),
                                 o.passes - o.warmup_passes, o.warmup_passes, o.seconds, clock,
                                 o.power_w ? fmt::format(", {:.0f} W", *o.power_w) : "",
                                 o.settle.watched ? "; " + settle_text(o.settle) : "");
  if (left_out)
    line += fmt::format("; the verdict's points first, then the fastest per FLOP within {:.1f} s of passes: {} more "
                        "point{} keep{} {} survey time{} ('survey' in the tables), compared with nothing (--pair-seconds "
                        "{:.0f} would pair every point)",
                        r.pairing->budget_s, left_out, left_out == 1 ? "" : "s", left_out == 1 ? "s" : "",
                        left_out == 1 ? "its" : "their", left_out == 1 ? "" : "s", std::ceil(r.pairing->pair_all_s));
  return line;
}

std::string tiles_cell(const Annotation& a) {
  return a.grid.tiles > 0 ? fmt::format("{}x{}", a.grid.tiles_m, a.grid.tiles_n) : "-";
}

namespace {

// The model's figure of one term at a point: "last wave 56 % full at 1793", "98 % of the tiles' area
// useful at 1793".
std::string term_at(const ExplainPoint& p, bool wave, const Annotation& a) {
  return wave ? fmt::format("last wave {} full at {}", share(a.waves.efficiency, 1), p.label)
              : fmt::format("{} of the tiles' area useful at {}", share(a.grid.efficiency, 1), p.label);
}

// Waves or tiles: the model's figures at the state and at the point it is measured against (our fixed
// kernel's tile where it ran at both), or, with nothing to compare (a prediction), how the target's
// figure comes about.
}  // namespace

std::string quantization_detail(const ExplainReport& r, const Effect& x) {
  const Evidence& ev = x.evidence;
  const bool wave = x.kind == EffectKind::kWaveQuantization;
  const ExplainPoint& s = at(r, ev.state);
  const Annotation& sa = ev.fixed() ? at(r, *ev.fixed_state).annotation : s.annotation;
  std::string what = term_at(s, wave, sa);
  if (ev.against) {
    const ExplainPoint& n = at(r, *ev.against);
    const Annotation& na = ev.fixed() ? at(r, *ev.fixed_against).annotation : n.annotation;
    what += fmt::format(" against {} at {}", share(wave ? na.waves.efficiency : na.grid.efficiency, 1), n.label);
  } else if (wave) {
    what += fmt::format(" ({} {} on {} slots: {:.2f} waves)", sa.waves.work, sa.waves_over, sa.waves.slots, sa.waves.waves);
  } else {
    what += fmt::format(" ({} tiles of {} for {}x{})", tiles_cell(sa), tile_cell(sa), s.candidate.problem.m,
                        s.candidate.problem.n);
  }
  if (ev.fixed())
    return fmt::format("measured with our fixed kernel ({} tile): {} vs {} per FLOP; the model: {}", tile_cell(sa),
                       us(*at(r, *ev.fixed_state).time_us), us(*at(r, *ev.fixed_against).time_us), what);
  if (!s.time_us) return "the model: " + what;
  return "computed from the library's kernels (no fixed-kernel control here): " + what;
}

// A fix the model predicts (no times): the model's speedup and the terms behind it, and what it
// costs; never a time or a rate, which nothing measured.
std::string predicted_fix_line(const ExplainReport& r, const Fix& f) {
  const ExplainPoint& t = r.points.front();
  const ExplainPoint& p = at(r, *f.point);
  const Annotation& ta = t.annotation;
  const Annotation& pa = p.annotation;
  std::vector<std::string> terms;
  if (pa.waves.rounds != ta.waves.rounds) terms.push_back(fmt::format("{} -> {} rounds of tiles", ta.waves.rounds, pa.waves.rounds));
  // A term whose words do not change is left out.
  const auto change = [&](const std::string& from, const std::string& to, const char* words) {
    if (from != to) terms.push_back(fmt::format(fmt::runtime(words), from, to));
  };
  change(share(ta.waves.efficiency, 1), share(pa.waves.efficiency, 1), "last wave {} -> {} full");
  change(share(ta.grid.efficiency, 1), share(pa.grid.efficiency, 1), "{} -> {} of the tiles' area useful");
  if (p.candidate.problem.k != t.candidate.problem.k)
    terms.push_back(fmt::format("K {} -> {}", t.candidate.problem.k, p.candidate.problem.k));
  // A performance model's times say what the GEMM takes; the tile model's only relative costs.
  const bool timed = t.predicted_us && p.predicted_us;
  if (pa.alignment.ok() != ta.alignment.ok())
    terms.push_back(pa.alignment.ok() ? (timed ? "16-byte rows" : "16-byte rows (the model counts unaligned ones 4x)")
                                      : (timed ? "rows off the 16-byte rule" : "rows off the 16-byte rule (the model counts them 4x)"));
  if (timed) terms.insert(terms.begin(), fmt::format("{} -> {}", us(*t.predicted_us), us(*p.predicted_us)));
  const std::string why = fmt::format("{}", fmt::join(terms, ", "));
  if (f.kind == FixKind::kShrink)
    return fmt::format("choose {} ({}) if the model allows it: predicted {} the FLOPs per unit of time ({}); {:.1f} % "
                       "fewer FLOPs",
                       p.label, p.candidate.why, times(f.speedup), why, -f.extra_flops * 100);
  return fmt::format("pad to {} ({}): predicted {} faster ({}); {:+.1f} % FLOPs and {:+.1f} % operand memory", p.label,
                     p.candidate.why, times(f.speedup), why, f.extra_flops * 100, f.extra_bytes * 100);
}

}  // namespace shapescope::explain_text
