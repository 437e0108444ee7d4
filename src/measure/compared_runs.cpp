#include "measure/compared_runs.hpp"

#include <chrono>
#include <memory>

#include "common/error.hpp"
#include "device/nvml.hpp"
#include "timing/paired_run.hpp"
#include "timing/replay.hpp"

namespace shapescope {
namespace {

// The index of the call of a request position's `algo`-th algorithm; nullopt when it has none.
std::optional<size_t> call_of(const ComparedCalls& c, size_t position, size_t algo) {
  const auto it = c.calls_at.find(position);
  if (it == c.calls_at.end() || algo >= it->second.size()) return std::nullopt;
  return it->second[algo];
}

}  // namespace

PairedComparison compare_paired(const ComparedCalls& c, PairedRule rule, const MeasureOptions& options,
                                const DeviceContext& device, const std::atomic<bool>* interrupted) {
  for (SumRatio& sum : rule.sums) {
    bool complete = true;
    const auto rename = [&](std::vector<std::pair<size_t, double>>& side, const std::vector<size_t>& algos) {
      for (size_t i = 0; i < side.size(); ++i) {
        const std::optional<size_t> call = call_of(c, side[i].first, i < algos.size() ? algos[i] : 0);
        if (!call) complete = false;
        else side[i].first = *call;
      }
    };
    rename(sum.numerator, sum.numerator_algo);
    rename(sum.denominator, sum.denominator_algo);
    if (!complete) sum = SumRatio{};
  }
  PairedComparison comparison;
  comparison.keys = c.keys;
  std::unique_ptr<NvmlDevice> nvml = NvmlDevice::open(device.pci_bus_id);
  ClockSampler clocks(nvml.get(), std::chrono::milliseconds(20));
  comparison.outcome = run_paired(c.calls, options, rule, &clocks, interrupted);
  return comparison;
}

ReplayComparison compare_replayed(const ComparedCalls& c, const ReplayRule& rule, const MeasureOptions& options,
                                  const DeviceContext& device, const std::atomic<bool>* interrupted) {
  ReplayComparison comparison;
  comparison.keys = c.keys;
  ReplayRule runnable = rule;
  runnable.steps.clear();
  std::vector<size_t> original;  // the rule's index of each runnable step
  for (size_t s = 0; s < rule.steps.size(); ++s) {
    std::vector<ReplayItem> items = rule.steps[s];
    bool complete = true;
    for (ReplayItem& item : items) {
      if (item.kind != ReplayItem::Kind::kCall) continue;
      const std::optional<size_t> call = call_of(c, item.call, item.algo);
      if (!call) complete = false;
      else item.call = *call;
    }
    if (!complete && s == 0)
      throw Error(ExitCode::kNoGpu, "replay: a GEMM of the step cannot run here, so the step cannot be replayed");
    if (!complete) {
      comparison.not_replayed.push_back(s);
      continue;
    }
    runnable.steps.push_back(std::move(items));
    original.push_back(s);
  }
  keep_precise(runnable, rule, original);
  ReplayResources resources;
  resources.buffer = options.flush_buffer;
  resources.buffer_bytes = options.flush_bytes;
  resources.sms = device.sm_count;
  resources.seed = options.seed;
  std::unique_ptr<NvmlDevice> nvml = NvmlDevice::open(device.pci_bus_id);
  ClockSampler clocks(nvml.get(), std::chrono::milliseconds(20));
  const ReplayOutcome got = run_replay(c.calls, runnable, resources, &clocks, interrupted);
  // Back to the rule's numbering: a step not replayed keeps empty times and no ratio.
  comparison.outcome = got;
  comparison.outcome.term_us.assign(rule.steps.size(), std::vector<double>(rule.terms, 0.0));
  comparison.outcome.step_us.assign(rule.steps.size(), 0.0);
  comparison.outcome.term_half_width = got.term_half_width;
  comparison.outcome.ratios.assign(rule.steps.size(), PairedRatio{});
  for (size_t i = 0; i < original.size(); ++i) {
    comparison.outcome.term_us[original[i]] = got.term_us[i];
    comparison.outcome.step_us[original[i]] = got.step_us[i];
    comparison.outcome.ratios[original[i]] = got.ratios[i];
  }
  return comparison;
}

}  // namespace shapescope
