#include "views/what_ifs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "backends/variants.hpp"
#include "core/paired_ratio.hpp"
#include "views/profile.hpp"

namespace shapescope {
namespace {

std::optional<WhatIfKind> kind_of(FixKind kind) {
  switch (kind) {
    case FixKind::kPadUp:
    case FixKind::kPadAtRunTime: return WhatIfKind::kPadding;
    case FixKind::kShrink: return WhatIfKind::kSize;
    case FixKind::kAlignLayout:
    case FixKind::kAlignSector: return WhatIfKind::kLayout;
    case FixKind::kAlgorithm: return WhatIfKind::kAlgorithm;
    case FixKind::kBatchMore: return WhatIfKind::kBatching;
    case FixKind::kPrecision: return WhatIfKind::kPrecision;
    case FixKind::kLeave: return std::nullopt;
  }
  return std::nullopt;
}

// The call a stored point of an explanation runs: its problem on its backend, with our kernel's
// variant or cuBLASLt's choice (h0, h1, ...); nullopt for a choice that is not a call (a control).
std::optional<StepTerm> term_of(const StoredPoint& p, double count) {
  StepTerm t;
  t.problem = p.key.problem;
  t.backend = p.key.backend;
  t.count = count;
  if (p.key.backend == BackendKind::kCustom) {
    // The store's algo of our kernel is its variant's key; a variant this build lacks cannot run.
    const std::optional<BackendSpec> ours = stored_variant_spec(p.key.algo);
    if (!ours) return std::nullopt;
    t.variants = ours->variants;
  }
  if (p.key.backend == BackendKind::kCublasLt) {
    if (p.key.algo.size() < 2 || p.key.algo[0] != 'h') return std::nullopt;
    try {
      t.lt_rank = std::stoi(p.key.algo.substr(1));
    } catch (...) {
      return std::nullopt;
    }
  }
  return t;
}

// One fix of one entry as a candidate: the fix's point in place of each call, and the copy it adds
// where the change needs one at run time. `weights`: the distinct weights among the entry's calls per
// step, each cast once per step.
std::optional<WhatIfCandidate> fix_candidate(const ProfileEntry& e, size_t entry, size_t f, double weights) {
  const ExplainReport& r = *e.explanation;
  const Fix& fix = r.explanation.fixes[f];
  const std::optional<WhatIfKind> kind = kind_of(fix.kind);
  // A grouped call's explanation is of one group: its fixes change that GEMM, not the call.
  if (!kind || !fix.point || !e.row.time || !r.stored[*fix.point] || e.row.problem.grouped()) return std::nullopt;
  const ExplainPoint& target = r.points.front();
  if (!target.time_us || *target.time_us <= 0 || !fix.time_us || *fix.time_us <= 0 || *fix.time_us >= *target.time_us)
    return std::nullopt;
  std::optional<StepTerm> changed = term_of(*r.stored[*fix.point], e.row.calls_per_step);
  if (!changed) return std::nullopt;
  // Batching: the same work in fewer, larger calls.
  if (fix.kind == FixKind::kBatchMore && changed->problem.flops() > 0)
    changed->count = e.row.calls_per_step * e.row.problem.flops() / changed->problem.flops();
  WhatIfCandidate c;
  c.kind = *kind;
  c.entry = entry;
  c.fix = f;
  c.per_call.push_back(*changed);
  if (fix.copy && r.stored[*fix.copy])
    if (const std::optional<StepTerm> copy = term_of(*r.stored[*fix.copy], e.row.calls_per_step))
      c.per_call.push_back(*copy);
  // fp8 adds its casts (backend cast): an activation's or a gradient's at every call, each weight's once
  // per step.
  for (size_t i = 0; i < r.points.size(); ++i) {
    const ExplainPoint& cast = r.points[i];
    if (cast.role != Role::kCast || cast.of != fix.point || !r.stored[i]) continue;
    if (const std::optional<StepTerm> t = term_of(*r.stored[i], cast.per_call ? e.row.calls_per_step : weights))
      (cast.per_call ? c.per_call : c.per_step).push_back(*t);
  }
  c.unpaired_share = *fix.time_us / *target.time_us;
  return c;
}

// A grouped call (the program's: one grouped call) measured both ways: the loop of its groups, where
// it is faster than the grouped call at its fastest (cuBLAS's, or our grouped kernel where it ran).
std::optional<WhatIfCandidate> grouping_candidate(const ProfileEntry& e, size_t entry) {
  if (!e.grouped_us || !e.loop_us || !e.row.time) return std::nullopt;
  const double grouped = e.custom_us ? std::min(*e.grouped_us, *e.custom_us) : *e.grouped_us;
  if (*e.loop_us > grouped * (1 - kMinPairedEffect)) return std::nullopt;
  WhatIfCandidate c;
  c.kind = WhatIfKind::kGrouping;
  c.entry = entry;
  c.unpaired_share = *e.loop_us / grouped;
  c.why_not = "the loop of its groups and the grouped call measured one by one (not paired)";
  return c;
}

StepTerm entry_term(const ProfileEntry& e) {
  StepTerm t;
  t.problem = e.row.problem;
  t.backend = e.way.kind;
  t.variants = e.way.variants;
  t.count = e.row.calls_per_step;
  return t;
}

}  // namespace

PairedRatio gemm_ratio(const PairedRatio& step, double share) {
  PairedRatio r = step;
  const auto of = [&](double x) { return share > 0 ? 1 - (1 - x) / share : x; };
  r.median = of(step.median);
  r.low = of(step.low);
  r.high = of(step.high);
  return r;
}

std::string_view what_if_name(WhatIfKind kind) {
  switch (kind) {
    case WhatIfKind::kPrecision: return "precision";
    case WhatIfKind::kPadding: return "padding";
    case WhatIfKind::kSize: return "size";
    case WhatIfKind::kLayout: return "layout";
    case WhatIfKind::kAlgorithm: return "algorithm";
    case WhatIfKind::kGrouping: return "grouping";
    case WhatIfKind::kBatching: return "batching";
  }
  return "";
}

std::vector<WhatIfCandidate> what_if_candidates(const ProfileResult& result) {
  std::vector<WhatIfCandidate> out;
  for (size_t i = 0; i < result.entries.size(); ++i) {
    const ProfileEntry& e = result.entries[i];
    if (!e.row.in_total) continue;
    std::map<WhatIfKind, WhatIfCandidate> per_kind;  // the fastest fix of each kind, by explain's times
    if (e.explanation)
      for (size_t f = 0; f < e.explanation->explanation.fixes.size(); ++f) {
        const std::optional<WhatIfCandidate> c =
            fix_candidate(e, i, f, e.row.calls_per_step / std::max(1, result.request.micro_batches));
        if (c && (!per_kind.count(c->kind) || c->unpaired_share < per_kind[c->kind].unpaired_share))
          per_kind[c->kind] = *c;
      }
    for (auto& [kind, c] : per_kind) out.push_back(std::move(c));
    if (std::optional<WhatIfCandidate> g = grouping_candidate(e, i)) out.push_back(std::move(*g));
  }
  return out;
}

StepCalls step_terms(const ProfileResult& result) {
  StepCalls out;
  for (const ProfileEntry& e : result.entries)
    if (e.row.in_total && e.row.time) out.push_back(entry_term(e));
  return out;
}

StepCalls changed_terms_of(const ProfileResult& result, const std::vector<size_t>& candidates) {
  StepCalls out;
  std::map<size_t, const WhatIfCandidate*> of_entry;
  for (size_t c : candidates) of_entry[result.candidates[c].entry] = &result.candidates[c];
  for (size_t i = 0; i < result.entries.size(); ++i) {
    const ProfileEntry& e = result.entries[i];
    if (!e.row.in_total || !e.row.time) continue;
    const auto it = of_entry.find(i);
    if (it == of_entry.end()) {
      out.push_back(entry_term(e));
      continue;
    }
    out.insert(out.end(), it->second->per_call.begin(), it->second->per_call.end());
    out.insert(out.end(), it->second->per_step.begin(), it->second->per_step.end());
  }
  return out;
}

WhatIfs what_ifs(const ProfileResult& result) {
  WhatIfs out;
  out.step_us = result.totals.measured_us;
  for (size_t c = 0; c < result.candidates.size(); ++c) {
    const WhatIfCandidate& x = result.candidates[c];
    const ProfileEntry& e = result.entries[x.entry];
    if (!e.row.time) continue;
    WhatIf w;
    w.candidate = c;
    w.kind = x.kind;
    w.entry = x.entry;
    w.fix = x.fix;
    w.calls_per_step = e.row.calls_per_step;
    w.now_us = e.row.time->median_us;
    if (x.ratio) {
      // The ratio is of the whole step's GEMM time: its saving is that share of the step. Whether it
      // saves anything is judged on the GEMM it changes (2 % of a GEMM that is 1 % of the step is
      // 0.02 % of the step, which the step's ratio resolves: the unchanged calls are the same samples
      // on both sides of each pass).
      if (!e.row.step_us || *e.row.step_us <= 0 || judge(gemm_ratio(*x.ratio, *e.row.step_us / out.step_us)) !=
                                                        PairedVerdict::kFaster)
        continue;
      w.saving_us = out.step_us * (1 - x.ratio->median);
      w.saving_low_us = out.step_us * (1 - x.ratio->high);
      w.saving_high_us = out.step_us * (1 - x.ratio->low);
    } else if (x.predicted_us) {
      // Both times are the model's: the change counts where it saves more of its GEMM than the least
      // effect and the larger of the two predictions' errors.
      if (w.now_us <= 0 || 1 - *x.predicted_us / w.now_us <= std::max(kMinPairedEffect, x.predicted_error)) continue;
      w.saving_us = w.calls_per_step * (w.now_us - *x.predicted_us);
      w.predicted = true;
      w.error = x.predicted_error;
    } else if (x.kind == WhatIfKind::kGrouping) {
      w.saving_us = w.calls_per_step * w.now_us * (1 - x.unpaired_share);
      ++out.not_paired;
    } else {
      continue;  // not measured: no claim
    }
    if (w.saving_us <= 0 || w.calls_per_step <= 0) continue;
    w.after_us = std::max(0.0, w.now_us - w.saving_us / w.calls_per_step);
    (changes_dtype(w.kind) ? out.precision : out.same_dtype).ranked.push_back(w);
  }
  // A what-if's number is its candidate's, not its rank: the candidates come from the trace and the
  // store's verdicts, the ranks from a paired run, and `profile --what-if N` run again pairs anew (a
  // what-if near the least effect comes and goes, and every number after it moved with it).
  for (WhatIfList* list : {&out.same_dtype, &out.precision}) {
    std::stable_sort(list->ranked.begin(), list->ranked.end(),
                     [](const WhatIf& a, const WhatIf& b) { return a.saving_us > b.saving_us; });
    for (WhatIf& w : list->ranked) w.number = w.candidate + 1;
  }
  for (size_t s = 0; s < result.changed_steps.size(); ++s) {
    const std::string& name = result.changed_steps[s].name;
    if (name == kEverySameDtypeChange) out.same_dtype.all = s;
    if (name == kEveryPrecisionChange) out.precision.all = s;
  }
  return out;
}

std::vector<ChangedStep> plan_changed_steps(const ProfileResult& result) {
  const WhatIfs w = what_ifs(result);
  std::vector<ChangedStep> out;
  const auto add = [&](std::string name, const std::vector<WhatIf>& list, bool one_per_entry) {
    ChangedStep s;
    s.name = std::move(name);
    std::map<size_t, bool> taken;  // entries already changed (ranked: the largest saving comes first)
    for (const WhatIf& x : list) {
      if (result.candidates[x.candidate].per_call.empty() || (one_per_entry && taken[x.entry])) continue;
      taken[x.entry] = true;
      s.candidates.push_back(x.candidate);
    }
    if (!s.candidates.empty()) out.push_back(std::move(s));
  };
  add(kEverySameDtypeChange, w.same_dtype.ranked, true);
  add(kEveryPrecisionChange, w.precision.ranked, true);
  if (!result.request.what_ifs.empty()) {
    ChangedStep s;
    std::vector<std::string> numbers;
    for (size_t n : result.request.what_ifs) numbers.push_back(std::to_string(n));
    s.name = fmt::format("what-if{} {}", numbers.size() > 1 ? "s" : "", fmt::join(numbers, ","));
    s.named = true;
    std::map<size_t, bool> entries;  // one change per GEMM
    for (size_t n : result.request.what_ifs) {
      // A number is a candidate's (WhatIf::number): one this run's pairing left out of the lists (its
      // saving within the least effect) is still the change it named.
      const WhatIfCandidate* chosen = n >= 1 && n <= result.candidates.size() ? &result.candidates[n - 1] : nullptr;
      if (!chosen && result.candidates.empty())
        s.why_not = fmt::format("--what-if: there is no what-if {} (this profile has none)", n);
      else if (!chosen)
        s.why_not = fmt::format("--what-if: there is no what-if {} (this profile's are numbered 1 to {})", n,
                                result.candidates.size());
      else if (chosen->per_call.empty())
        s.why_not = fmt::format("what-if {} is a grouping: its two ways were measured one by one", n);
      else if (entries[chosen->entry])
        s.why_not = fmt::format("what-if {} changes a GEMM another of them changes", n);
      if (!s.why_not.empty()) break;
      entries[chosen->entry] = true;
      s.candidates.push_back(n - 1);
      const auto listed = [&](const WhatIfList& l) {
        return std::any_of(l.ranked.begin(), l.ranked.end(), [&](const WhatIf& x) { return x.number == n; });
      };
      if (!listed(w.same_dtype) && !listed(w.precision)) s.unlisted.push_back(n);
    }
    if (!s.why_not.empty()) s.candidates.clear();
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace shapescope
