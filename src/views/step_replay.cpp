#include "views/step_replay.hpp"

#include <algorithm>
#include <limits>

#include "common/error.hpp"
#include "measure/measure.hpp"

namespace shapescope {
namespace {

// The replay request under construction: each distinct call once, as a (problem, backend) position
// and the cuBLASLt rank it runs.
struct ReplayRequest {
  MeasureRequest request;

  // The item that runs `call`, its time counted to `term`.
  ReplayItem item(const ReplayCall& call, size_t term) {
    auto b = std::find(request.backends.begin(), request.backends.end(), call.spec);
    if (b == request.backends.end()) b = request.backends.insert(request.backends.end(), call.spec);
    const size_t backend = size_t(b - request.backends.begin());
    request.lt_algos = std::max(request.lt_algos, call.lt_rank + 1);
    size_t position = request.pairs.size();
    for (size_t i = 0; i < request.pairs.size(); ++i)
      if (request.pairs[i].second == backend && request.problems[request.pairs[i].first] == call.problem) position = i;
    if (position == request.pairs.size()) {
      request.problems.push_back(call.problem);
      request.pairs.emplace_back(request.problems.size() - 1, backend);
    }
    ReplayItem it;
    it.kind = ReplayItem::Kind::kCall;
    it.call = position;
    it.algo = size_t(call.spec.kind == BackendKind::kCublasLt ? call.lt_rank : 0);
    it.term = term;
    return it;
  }
};

void add_standins(const TimelineSegment& s, std::vector<ReplayItem>& items) {
  using Kind = ReplayItem::Kind;
  if (s.kind == TimelineSegment::Kind::kIdle) {
    items.push_back({Kind::kIdle, 0, 0, s.us, 0});
    return;
  }
  if (s.attention_us > 0) items.push_back({Kind::kComputeWork, 0, 0, s.attention_us, 0});
  if (s.us - s.attention_us > 0) items.push_back({Kind::kMemoryWork, 0, 0, s.us - s.attention_us, 0});
}

// One replay's items: the timeline with each GEMM call run as `call_of` says, or as `change` replaces it.
std::vector<ReplayItem> sequence(const StepTimeline& timeline, const std::map<size_t, ReplayCall>& call_of,
                                 const StepChange* change, ReplayRequest& r) {
  std::vector<ReplayItem> items;
  std::vector<size_t> calls;  // per GEMM, its calls so far
  for (const TimelineSegment& s : timeline.segments) {
    if (s.kind != TimelineSegment::Kind::kGemm) {
      add_standins(s, items);
      continue;
    }
    const size_t g = s.gemm;
    if (calls.size() <= g) calls.resize(g + 1, 0);
    if (change && calls[g] % size_t(std::max(1, change->micro_batches)) == 0) {
      const auto once = change->per_step.find(g);
      if (once != change->per_step.end())
        for (const ReplayCall& c : once->second) items.push_back(r.item(c, g));
    }
    ++calls[g];
    if (change && change->per_call.count(g)) {
      for (const ReplayCall& c : change->per_call.at(g)) items.push_back(r.item(c, g));
      continue;
    }
    const auto it = call_of.find(g);
    if (it == call_of.end()) throw Error(ExitCode::kInternal, "replay: a GEMM call of the step has no way to run");
    items.push_back(r.item(it->second, g));
  }
  return compact_replay(items);
}

StepReplayFacts facts_of(const ReplayOutcome& o, const std::vector<ReplayItem>& step) {
  StepReplayFacts f;
  f.replays = o.replays;
  f.warmup_replays = o.warmup_replays;
  f.seconds = o.seconds;
  f.clock_low_mhz = o.clock_low_mhz;
  f.clock_median_mhz = o.clock_median_mhz;
  f.clock_high_mhz = o.clock_high_mhz;
  f.power_w = o.power_w;
  f.power_max_w = o.power_max_w;
  f.settle = o.settle;
  for (const ReplayItem& item : step) {
    switch (item.kind) {
      case ReplayItem::Kind::kCall: ++f.calls; break;
      case ReplayItem::Kind::kMemoryWork: f.memory_us += item.us; break;
      case ReplayItem::Kind::kComputeWork: f.compute_us += item.us; break;
      case ReplayItem::Kind::kIdle: f.idle_us += item.us; break;
    }
  }
  return f;
}

}  // namespace

std::vector<Problem> replay_problems(const StepTimeline& timeline, const std::map<size_t, ReplayCall>& call_of,
                                     const StepChange* change) {
  ReplayRequest r;
  std::vector<Problem> out;
  for (const ReplayItem& it : sequence(timeline, call_of, change, r))
    if (it.kind == ReplayItem::Kind::kCall) out.push_back(r.request.problems[r.request.pairs[it.call].first]);
  return out;
}

StepReplay replay_step(const StepTimeline& timeline, const std::map<size_t, ReplayCall>& call_of,
                       const std::vector<StepChange>& changes, size_t gemms, const DeviceContext& device, Store& store,
                       double precise_seconds, const std::atomic<bool>* interrupted) {
  ReplayRequest r;
  r.request.backends.clear();
  r.request.measure.clocks = ClockState::kSustained;  // the replay settles at the step's own clock
  r.request.measure.hot = false;                      // the memory stand-in streams the flush buffer
  ReplayRule rule;
  rule.terms = gemms;
  rule.steps.push_back(sequence(timeline, call_of, nullptr, r));
  for (const StepChange& c : changes) {
    rule.steps.push_back(sequence(timeline, call_of, &c, r));
    if (c.precise) rule.precise.push_back(rule.steps.size() - 1);
  }
  if (!rule.precise.empty()) {  // the time limit is the user's: not the count of a short step's replays
    rule.max_seconds = precise_seconds;
    rule.max_replays = std::numeric_limits<int>::max();
  }
  r.request.replay = rule;
  const MeasureOutcome got = measure(r.request, device, store, ProgressCallback(), interrupted);
  StepReplay out;
  out.interrupted = got.interrupted;
  out.change_ratio.assign(changes.size(), std::nullopt);
  out.why_not.assign(changes.size(), "");
  out.per_call_us.assign(gemms, std::nullopt);
  if (!got.replay) {
    for (std::string& w : out.why_not) w = got.interrupted ? "interrupted" : "nothing could run";
    return out;
  }
  const ReplayOutcome& o = got.replay->outcome;
  out.facts = facts_of(o, rule.steps.front());
  out.step_us = o.step_us.front();
  std::vector<size_t> calls(gemms, 0);
  for (const TimelineSegment& s : timeline.segments)
    if (s.kind == TimelineSegment::Kind::kGemm && s.gemm < gemms) ++calls[s.gemm];
  out.per_call_noise.assign(gemms, 0.0);
  for (size_t g = 0; g < gemms; ++g) {
    if (calls[g] > 0 && o.term_us.front()[g] > 0) out.per_call_us[g] = o.term_us.front()[g] / double(calls[g]);
    if (g < o.term_half_width.size()) out.per_call_noise[g] = o.term_half_width[g];
  }
  for (size_t c = 0; c < changes.size(); ++c) {
    const bool skipped = std::find(got.replay->not_replayed.begin(), got.replay->not_replayed.end(), c + 1) !=
                         got.replay->not_replayed.end();
    const PairedRatio& ratio = o.ratios[c + 1];
    if (skipped || ratio.pairs == 0) {
      out.why_not[c] = skipped ? "a call it needs cannot run here" : "no replay of it could be compared";
      continue;
    }
    out.change_ratio[c] = ratio;
  }
  return out;
}

}  // namespace shapescope
