#include "views/what_ifs.hpp"

#include <algorithm>
#include <map>

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

// One fix of one GEMM as a what-if: the fix's time over the target's (explain's own scale, the copy
// included), applied to the row's time; the interval scales with the fix point's paired ratio.
std::optional<WhatIf> fix_what_if(const ProfileEntry& e, size_t entry, size_t f) {
  const ExplainReport& r = *e.explanation;
  const Fix& fix = r.explanation.fixes[f];
  const std::optional<WhatIfKind> kind = kind_of(fix.kind);
  const ExplainPoint& t = r.points.front();
  if (!kind || !fix.point || !t.time_us || *t.time_us <= 0 || !fix.time_us || *fix.time_us <= 0 || !e.row.time) return std::nullopt;
  WhatIf w;
  w.kind = *kind;
  w.entry = entry;
  w.fix = f;
  w.calls_per_step = e.row.calls_per_step;
  w.now_us = e.row.time->median_us;
  const double share = *fix.time_us / *t.time_us;
  w.after_us = w.now_us * share;
  w.saving_us = w.calls_per_step * (w.now_us - w.after_us);
  const std::optional<PairedRatio>& p = r.points[*fix.point].paired;
  if (p && p->pairs > 0 && p->median > 0) {
    if (judge(*p) != PairedVerdict::kFaster) return std::nullopt;
    w.saving_low_us = w.calls_per_step * w.now_us * (1 - share * p->high / p->median);
    w.saving_high_us = w.calls_per_step * w.now_us * (1 - share * p->low / p->median);
  } else if (share > 1 - kMinPairedEffect) {
    return std::nullopt;
  }
  return w;
}

// A grouped call (the program's: one grouped call) measured both ways: the loop of its groups as the
// change, where it is faster. The row's time already is the faster of the two, so the step's total
// holds this saving already (with_all leaves it out).
std::optional<WhatIf> grouping_what_if(const ProfileEntry& e, size_t entry) {
  if (!e.grouped_us || !e.loop_us || !e.row.time) return std::nullopt;
  // The program's one grouped call at its fastest: cuBLAS's, or our grouped kernel where it ran.
  const double grouped = e.custom_us ? std::min(*e.grouped_us, *e.custom_us) : *e.grouped_us;
  if (*e.loop_us > grouped * (1 - kMinPairedEffect)) return std::nullopt;
  WhatIf w;
  w.kind = WhatIfKind::kGrouping;
  w.entry = entry;
  w.calls_per_step = e.row.calls_per_step;
  w.now_us = grouped;
  w.after_us = *e.loop_us;
  w.saving_us = w.calls_per_step * (w.now_us - w.after_us);
  return w;
}

}  // namespace

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

WhatIfs what_ifs(const ProfileResult& result) {
  WhatIfs out;
  out.step_us = result.totals.measured_us;
  std::map<size_t, double> best;  // per entry: its largest saving per step
  for (size_t i = 0; i < result.entries.size(); ++i) {
    const ProfileEntry& e = result.entries[i];
    std::vector<std::optional<WhatIf>> found = {grouping_what_if(e, i)};
    if (e.explanation)
      for (size_t f = 0; f < e.explanation->explanation.fixes.size(); ++f) found.push_back(fix_what_if(e, i, f));
    // One change of each kind per GEMM: the one that saves most (explain's other fixes of that kind are
    // the same change done worse).
    std::map<WhatIfKind, WhatIf> per_kind;
    for (const auto& w : found)
      if (w && w->saving_us > 0 && (!per_kind.count(w->kind) || w->saving_us > per_kind[w->kind].saving_us))
        per_kind[w->kind] = *w;
    for (const auto& [kind, w] : per_kind) {
      out.ranked.push_back(w);
      out.not_paired += !w.paired();
      if (kind != WhatIfKind::kGrouping) best[i] = std::max(best[i], w.saving_us);
    }
  }
  std::stable_sort(out.ranked.begin(), out.ranked.end(),
                   [](const WhatIf& a, const WhatIf& b) { return a.saving_us > b.saving_us; });
  out.with_all_us = out.step_us;
  for (const auto& [entry, saving] : best)
    if (result.entries[entry].row.in_total) out.with_all_us -= saving;
  return out;
}

}  // namespace shapescope
