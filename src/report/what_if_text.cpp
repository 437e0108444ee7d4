#include "report/what_if_text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "common/units.hpp"
#include "report/explain_report.hpp"
#include "report/profile_predicted_text.hpp"

namespace shapescope {
namespace {

// What a term a change adds is, in words.
std::string added_text(const StepTerm& t) {
  switch (t.backend) {
    case BackendKind::kCopy: return "a copy into aligned rows";
    case BackendKind::kCast: return t.problem.shape_string();  // "cast A 4096x4096": the problem says it
    default: return fmt::format("{} {}", to_string(t.backend), t.problem.shape_string());
  }
}

std::vector<std::vector<std::string>> table_of(const ProfileResult& r, const std::vector<WhatIf>& list, double step_us) {
  const std::string saving = r.predicted ? "saving/step, predicted" : "saving/step [95 %]";
  std::vector<std::vector<std::string>> rows = {{"#", "kind", "calls/step", "now", "after", saving, "change"}};
  for (const WhatIf& x : list)
    rows.push_back({std::to_string(x.number), std::string(what_if_name(x.kind)), fixed(x.calls_per_step, 0),
                    us_or_ms(x.now_us), us_or_ms(x.after_us), what_if_saving(x, step_us), what_if_change(r, x)});
  return rows;
}

std::string run_text(const ProfileResult& r) {
  if (!r.candidates_run) return "every candidate against the step in one paired run";
  const PairedStepsRun& run = *r.candidates_run;
  return fmt::format("every candidate against the step in one paired run: {} calls in {} passes, {:.1f} s, SM clock "
                     "{:.0f} MHz ({:.0f}-{:.0f})",
                     run.calls, run.passes, run.seconds, run.clock_median_mhz, run.clock_low_mhz, run.clock_high_mhz);
}

}  // namespace

std::string what_if_change(const ProfileResult& r, const WhatIf& w) {
  const ProfileEntry& e = r.entries[w.entry];
  const std::string gemm = fmt::format("{} {}", e.row.problem.shape_string(), to_string(e.row.problem.layout));
  const WhatIfCandidate& c = r.candidates[w.candidate];
  const std::string outside = c.predicted_outside ? " (predicted outside the measured range: extrapolated)" : "";
  if (!c.change.empty()) return fmt::format("{}: {}{}", gemm, c.change, outside);
  if (!w.fix) return fmt::format("{}: run its {} groups as a loop of GEMMs", gemm, e.row.problem.groups.size());
  std::string text = fmt::format("{}: {}", gemm, explain_fix_text(*e.explanation, *w.fix));
  std::vector<std::string> added;
  for (size_t i = 1; i < c.per_call.size(); ++i) added.push_back(added_text(c.per_call[i]) + " per call");
  for (const StepTerm& t : c.per_step) {
    const std::string weights = fixed(t.count, t.count == std::round(t.count) ? 0 : 1);
    added.push_back(added_text(t) + (t.count == 1 ? std::string(" per step")
                                                  : fmt::format(" per step for each of {} weights", weights)));
  }
  if (!added.empty()) text += fmt::format(" (priced with {})", fmt::join(added, ", "));
  return text + outside;
}

std::string what_if_saving(const WhatIf& w, double step_us) {
  std::string text = fmt::format("{} ({})", us_or_ms(w.saving_us), percent(w.saving_us / step_us, 1));
  if (w.paired()) text += fmt::format(" [{}..{}]", us_or_ms(*w.saving_low_us), us_or_ms(*w.saving_high_us));
  if (w.predicted) text += fmt::format(", error {}", percent(w.error, 1));
  return text;
}

std::string changed_step_line(const ProfileResult& r, const ChangedStep& s) {
  if (s.predicted && s.before_us && s.after_us)
    return fmt::format("{} at once ({} change{}), predicted: the step's GEMM time {} -> {} ({}), the model's sum of "
                       "the changed GEMMs (it prices no interaction between them: the clock, the L2)",
                       s.name, s.candidates.size(), s.candidates.size() == 1 ? "" : "s", us_or_ms(*s.before_us),
                       us_or_ms(*s.after_us), signed_percent(*s.after_us / *s.before_us - 1));
  std::string how = s.replayed ? "replayed against the step in the same passes, at the step's clock"
                               : "its GEMMs paired against the step's";
  if (!s.ratio || !s.before_us || !s.after_us)
    return fmt::format("{}: not measured as a step ({})", s.name, s.why_not.empty() ? "no ratio" : s.why_not);
  const std::string note =
      s.unlisted.empty() ? ""
                         : fmt::format("; not in this run's lists (a saving within the least effect, or not measured): "
                                       "what-if {}",
                                       fmt::join(s.unlisted, ", "));
  // What it saves (or costs) per step, with the ratio's interval on the step's time: what a user checks
  // a re-recorded step against. A --what-if step replayed until its saving is known within +-5 % says
  // where the time limit came first.
  const double before = *s.before_us, low = before * (s.ratio->low - 1), high = before * (s.ratio->high - 1);
  const bool saves = s.ratio->median <= 1, an_interval = interval_level(*s.ratio) > 0;
  std::string move = fmt::format("{} {} per step", saves ? "saves" : "costs",
                                 us_or_ms(saves ? before - *s.after_us : *s.after_us - before));
  if (an_interval)
    move += saves ? fmt::format(" [{} to {}]", us_or_ms(-high), us_or_ms(-low))
                  : fmt::format(" [{} to {}]", us_or_ms(low), us_or_ms(high));
  const std::string interval =
      an_interval ? fmt::format("{}: {:.3f}..{:.3f}, ", percent(interval_level(*s.ratio), 0), s.ratio->low, s.ratio->high)
                  : std::string("no interval, ");
  const std::string unknown =
      s.named && s.replayed && !move_known(*s.ratio)
          ? fmt::format("; --what-if-seconds ended the passes before it was known within +-{:g} %", kMoveTarget * 100)
          : "";
  return fmt::format("{} at once ({} change{}), measured as a step ({}): the step's GEMM time {} -> {} ({}), "
                     "x{:.3f} [{}{} pair{}]: {}{}{}",
                     s.name, s.candidates.size(), s.candidates.size() == 1 ? "" : "s", how, us_or_ms(before),
                     us_or_ms(*s.after_us), signed_percent(*s.after_us / before - 1), s.ratio->median, interval,
                     s.ratio->pairs, s.ratio->pairs == 1 ? "" : "s", move, unknown, note);
}

WhatIfListText same_dtype_text(const ProfileResult& r, const WhatIfs& w) {
  WhatIfListText t;
  if (w.same_dtype.ranked.empty()) return t;
  t.heading = r.predicted
                  ? "what would make this step faster, each GEMM in its own dtype, predicted (padding, size, layout; "
                    "the saving per step = calls per step x (the GEMM's predicted time - the changed GEMM's), counted "
                    "where it is more than 2 % of the GEMM and more than the larger of the two predictions' median "
                    "held-out error, in brackets):"
                  : "what would make this step faster, each GEMM in its own dtype (padding, size, layout, algorithm, "
                    "grouping; the saving per step = the step's GEMM time x (1 - the changed step's paired ratio) [95 "
                    "% interval], what a change adds included):";
  t.table = table_of(r, w.same_dtype.ranked, w.step_us);
  if (w.same_dtype.all) t.all = changed_step_line(r, r.changed_steps[*w.same_dtype.all]);
  return t;
}

WhatIfListText precision_text(const ProfileResult& r, const WhatIfs& w) {
  WhatIfListText t;
  if (w.precision.ranked.empty()) return t;
  t.heading = r.predicted ? "what would make it faster in another precision, predicted (its numerical error not "
                            "measured; the saving as above):"
                          : "what would make it faster in another precision (each at the numerical error explain "
                            "measured for it; the saving as above):";
  t.table = table_of(r, w.precision.ranked, w.step_us);
  if (w.precision.all) t.all = changed_step_line(r, r.changed_steps[*w.precision.all]);
  return t;
}

std::string no_what_if_text(const ProfileResult& r) {
  return r.predicted ? "no change the model prices saves more than 2 % of the GEMM it changes and more than the "
                       "predictions' error (explain's predicted size fixes, 16-byte rows, the dtypes it has a class "
                       "for)"
                     : "no change measured here saves more than 2 % of the GEMM it changes (explain's fixes, paired "
                       "against the step)";
}

std::vector<std::string> what_if_lines(const ProfileResult& r, const WhatIfs& w) {
  std::vector<std::string> lines;
  if (r.predicted) {
    if (!r.candidates.empty())
      lines.push_back("what-ifs: each changed GEMM predicted by the same model; nothing paired or replayed");
    for (const std::string& line : not_predicted_lines(r)) lines.push_back(line);
    return lines;
  }
  if (!r.candidates.empty()) lines.push_back("what-ifs: " + run_text(r));
  for (const ChangedStep& s : r.changed_steps)
    if (s.name != kEverySameDtypeChange && s.name != kEveryPrecisionChange) lines.push_back(changed_step_line(r, s));
  size_t unmeasured = 0;
  std::string why;
  for (const WhatIfCandidate& c : r.candidates)
    if (!c.ratio && c.kind != WhatIfKind::kGrouping) {
      ++unmeasured;
      if (why.empty()) why = c.why_not;
    }
  if (unmeasured > 0) lines.push_back(fmt::format("{} candidate change{} not measured ({})", unmeasured,
                                                  unmeasured == 1 ? "" : "s", why.empty() ? "no ratio" : why));
  if (w.not_paired > 0) lines.push_back(fmt::format("{} what-if{} not paired (grouping: the two ways measured one by one)",
                                                    w.not_paired, w.not_paired == 1 ? "" : "s"));
  return lines;
}

}  // namespace shapescope
