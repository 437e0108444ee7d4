// profile's measured what-ifs (views/what_ifs.hpp says what they are): every candidate in one paired
// run against the step, then the changed steps, and for a trace the step replayed at its own clock
// (views/step_replay.hpp) with the changed steps in the same passes.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "views/profile.hpp"

namespace shapescope {
namespace {

constexpr const char* kInterrupted = "profile: interrupted (measured points are saved)";

PairedRule what_if_rule(double seconds) {
  PairedRule rule;
  rule.max_seconds = seconds;
  return rule;
}

// Every candidate that runs something (all but grouping, whose two ways were measured already) as a
// changed step against the step, in one paired run.
void pair_candidates(ProfileResult& result, const DeviceContext& device, Store& store,
                     const std::atomic<bool>* interrupted) {
  result.candidates = what_if_candidates(result);
  std::vector<size_t> paired;
  std::vector<StepCalls> after;
  for (size_t c = 0; c < result.candidates.size(); ++c) {
    if (result.candidates[c].per_call.empty()) continue;
    paired.push_back(c);
    after.push_back(changed_terms_of(result, {c}));
  }
  if (after.empty()) return;
  if (result.request.pair_seconds <= 0) {
    for (size_t c : paired) result.candidates[c].why_not = "not measured (--pair-seconds 0)";
    return;
  }
  const PairedSteps got = pair_steps(step_terms(result), after, device, store, what_if_rule(result.request.pair_seconds),
                                     result.request.clocks, {}, interrupted, true);
  if (got.interrupted) throw Error(ExitCode::kInterrupted, kInterrupted);
  if (!got.runs.empty()) result.candidates_run = got.runs.front();
  for (size_t i = 0; i < paired.size(); ++i) {
    WhatIfCandidate& c = result.candidates[paired[i]];
    if (got.steps[i]) c.ratio = got.steps[i]->ratio;
    else c.why_not = got.why_not[i];
  }
}

// A candidate's calls as the replay runs them.
std::vector<ReplayCall> replay_calls(const StepCalls& terms) {
  std::vector<ReplayCall> out;
  for (const StepTerm& t : terms) out.push_back({t.problem, t.spec(), t.lt_rank});
  return out;
}

// Without a timeline: the changed steps' GEMMs paired against the step's (back to back, at the
// request's clock state).
void pair_changed_steps(ProfileResult& result, const DeviceContext& device, Store& store,
                        const std::atomic<bool>* interrupted) {
  std::vector<size_t> measured;
  std::vector<StepCalls> after;
  for (size_t s = 0; s < result.changed_steps.size(); ++s)
    if (!result.changed_steps[s].candidates.empty()) {
      measured.push_back(s);
      after.push_back(changed_terms_of(result, result.changed_steps[s].candidates));
    }
  if (after.empty()) return;
  if (result.request.pair_seconds <= 0) {
    for (size_t s : measured) result.changed_steps[s].why_not = "not measured (--pair-seconds 0)";
    return;
  }
  const PairedSteps got = pair_steps(step_terms(result), after, device, store, what_if_rule(result.request.pair_seconds),
                                     result.request.clocks, {}, interrupted, true);
  if (got.interrupted) throw Error(ExitCode::kInterrupted, kInterrupted);
  for (size_t i = 0; i < measured.size(); ++i) {
    ChangedStep& s = result.changed_steps[measured[i]];
    if (!got.steps[i]) {
      s.why_not = got.why_not[i];
      continue;
    }
    s.ratio = got.steps[i]->ratio;
    s.before_us = got.steps[i]->before_us;
    s.after_us = got.steps[i]->before_us * got.steps[i]->ratio.median;
  }
}

// The clock the trace's compute-bound GEMMs ran at: their trace times against their points'.
std::optional<ClockInference> trace_clock(const ProfileResult& result) {
  std::vector<ClockEvidence> evidence;
  for (const ProfileEntry& e : result.entries) {
    const ProfileRow& r = e.row;
    if (!e.annotation || e.annotation->roofline.bound != RoofBound::kCompute || !r.trace_step_us || r.calls_per_step <= 0 ||
        !r.time || !e.point_clock_mhz)
      continue;
    evidence.push_back({*r.trace_step_us / r.calls_per_step, r.time->median_us, *e.point_clock_mhz});
  }
  return infer_clock(evidence);
}

// The entries with the replay's times (per call, by GEMM index), ranked again; the candidates follow
// their entries.
void retime_entries(ProfileResult& result, const StepReplay& replay) {
  std::vector<ProfileRow> rows;
  for (const ProfileEntry& e : result.entries) rows.push_back(e.row);
  rank_rows(rows, [&](const ProfileRow& r) -> std::optional<GemmTime> {
    if (r.gemm < replay.per_call_us.size() && replay.per_call_us[r.gemm])
      return GemmTime{*replay.per_call_us[r.gemm], replay.per_call_noise[r.gemm]};
    return r.time;
  });
  result.totals = profile_totals(result.workload, rows);
  std::map<size_t, size_t> old_of_gemm;
  for (size_t i = 0; i < result.entries.size(); ++i) old_of_gemm[result.entries[i].row.gemm] = i;
  std::vector<ProfileEntry> entries;
  std::vector<size_t> new_index(result.entries.size());
  for (ProfileRow& r : rows) {
    const size_t old = old_of_gemm.at(r.gemm);
    new_index[old] = entries.size();
    entries.push_back(std::move(result.entries[old]));
    entries.back().row = std::move(r);
  }
  result.entries = std::move(entries);
  for (WhatIfCandidate& c : result.candidates) c.entry = new_index[c.entry];
}

// The trace's step replayed with the changed steps in the same passes: the GEMMs' times at the step's
// clock, and each changed step's ratio. False when it cannot be replayed (result.not_replayed says why).
bool replay_with_changes(ProfileResult& result, const DeviceContext& device, Store& store,
                         const std::atomic<bool>* interrupted) {
  std::map<size_t, ReplayCall> call_of;
  for (const ProfileEntry& e : result.entries) {
    if (!e.row.time) {
      result.not_replayed = fmt::format("{} {} has no time here", e.row.problem.shape_string(),
                                        to_string(e.row.problem.dtype));
      return false;
    }
    call_of[e.row.gemm] = ReplayCall{e.row.problem, e.way, 0};
  }
  std::vector<size_t> measured;
  std::vector<StepChange> changes;
  for (size_t s = 0; s < result.changed_steps.size(); ++s) {
    if (result.changed_steps[s].candidates.empty()) continue;
    StepChange change;
    change.micro_batches = result.request.micro_batches;
    change.precise = result.changed_steps[s].named;
    for (size_t c : result.changed_steps[s].candidates) {
      const WhatIfCandidate& x = result.candidates[c];
      const size_t gemm = result.entries[x.entry].row.gemm;
      change.per_call[gemm] = replay_calls(x.per_call);
      if (!x.per_step.empty()) change.per_step[gemm] = replay_calls(x.per_step);
    }
    measured.push_back(s);
    changes.push_back(std::move(change));
  }
  StepReplay replay;
  try {
    replay = replay_step(*result.workload.timeline, call_of, changes, result.workload.gemms.size(), device, store,
                         result.request.what_if_seconds, interrupted);
  } catch (const Error& e) {
    if (e.code() != ExitCode::kNoGpu) throw;
    result.not_replayed = e.what();
    return false;
  }
  if (replay.interrupted) throw Error(ExitCode::kInterrupted, kInterrupted);
  result.replay = replay.facts;
  const double steps = double(std::max<int64_t>(result.workload.steps, 1));
  for (size_t i = 0; i < measured.size(); ++i) {
    ChangedStep& s = result.changed_steps[measured[i]];
    s.replayed = true;
    if (!replay.change_ratio[i]) {
      s.why_not = replay.why_not[i];
      continue;
    }
    // As the paired changed steps': the step's time x the paired ratio (the changed step's own median
    // is a second, unpaired estimate, which the clock's drift between passes moves).
    s.ratio = replay.change_ratio[i];
    s.before_us = replay.step_us / steps;
    s.after_us = *s.before_us * s.ratio->median;
  }
  retime_entries(result, replay);
  return true;
}

}  // namespace

void measure_what_ifs(ProfileResult& result, const DeviceContext& device, Store& store,
                      const std::atomic<bool>* interrupted) {
  auto since = std::chrono::steady_clock::now();
  pair_candidates(result, device, store, interrupted);
  result.note_phase("what-ifs paired", seconds_since(since));
  since = std::chrono::steady_clock::now();
  result.changed_steps = plan_changed_steps(result);
  // A trace's step: the clock it ran at decides (model/profile.hpp: step_clock_call). At the boost clock
  // the GEMMs measured one by one (burst) already are the step's; below it the step is replayed, so that
  // the GPU draws the step's power and settles where the step runs.
  bool replay = result.workload.timeline && !result.request.clocks_given;
  if (replay) {
    result.trace_clock = trace_clock(result);
    const StepClockCall call =
        step_clock_call(result.trace_clock, result.measured ? result.measured->median_clock_mhz : std::nullopt,
                        result.workload.recorded_clocks, result.request.replay_always);
    result.ran_at_boost = call.ran_at_boost;
    result.replay_why = call.why;
    replay = call.replay;
  }
  const bool replayed = replay && replay_with_changes(result, device, store, interrupted);
  if (!replayed) pair_changed_steps(result, device, store, interrupted);
  result.note_phase(replayed ? "the step replayed" : "changed steps paired", seconds_since(since));
}

}  // namespace shapescope
