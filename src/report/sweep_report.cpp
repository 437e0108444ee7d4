#include "report/sweep_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "common/units.hpp"
#include "report/output.hpp"
#include "timing/stats.hpp"

namespace shapescope {

namespace {

std::string samples_text(const MeasureOptions& m) {
  const StopRule rule = m.stop_rule();
  if (rule.fixed()) return fmt::format("{} samples per point (--samples)", rule.max_samples);
  return fmt::format("{}..{} samples per point, stopping when the median's 95 % interval is within +-{}",
                     rule.min_samples, rule.max_samples, percent(rule.target, 2));
}

std::string clocks_text(const MeasureOptions& m) {
  if (m.clocks == ClockState::kBurst)
    return "burst clocks (short bursts of samples, each followed by an idle cool-down 4x as long: boost clocks; "
           "clock read on the GPU)";
  const SettleRule settle;
  return fmt::format("sustained clocks (the default: passes back to back after at least {:.0f} ms of GEMM load and "
                     "until the SM clock settles, within {:.0f} % over {:.1f} s, at most {:.0f} s; --clocks burst for "
                     "boost clocks)",
                     m.warmup_ms, settle.tolerance * 100, settle.window_s, settle.max_s);
}

// Counts of the measured points' sample counts in power-of-two bins, and of their stop reasons.
std::string samples_histogram(const std::vector<TimingStats>& timings) {
  if (timings.empty()) return "no point measured";
  constexpr std::array<int, 7> kUpper = {4, 8, 16, 32, 64, 128, 1 << 30};
  std::array<size_t, kUpper.size()> bins{};
  std::array<size_t, 4> reasons{};  // by StopReason
  std::vector<double> counts;
  for (const TimingStats& t : timings) {
    const size_t bin = size_t(std::lower_bound(kUpper.begin(), kUpper.end(), t.samples) - kUpper.begin());
    ++bins[std::min(bin, bins.size() - 1)];
    ++reasons[size_t(t.stop)];
    counts.push_back(t.samples);
  }
  std::string text = "samples per point:";
  int lower = 1;
  for (size_t b = 0; b < bins.size(); ++b) {
    if (bins[b] > 0)
      text += b + 1 < bins.size() ? fmt::format(" {}-{}: {};", lower, kUpper[b], bins[b])
                                  : fmt::format(" {}+: {};", lower, bins[b]);
    lower = kUpper[b] + 1;
  }
  const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
  return text + fmt::format(" median {}, mean {:.1f}; stopped: {} converged, {} at the cap, {} fixed", median(counts),
                            total / double(counts.size()), reasons[size_t(StopReason::kConverged)],
                            reasons[size_t(StopReason::kCap)], reasons[size_t(StopReason::kFixed)]);
}

std::string sentinel_text(const MeasureOutcome& o) {
  if (!o.sentinel || o.sentinel_checks.empty()) return "";
  size_t remeasured = 0, kept = 0;
  double largest = 0;
  for (const SentinelCheck& c : o.sentinel_checks) {
    remeasured += c.remeasured;
    kept += c.kept_drifted;
    if (c.reference_us) largest = std::max(largest, std::fabs(c.drift));
  }
  return fmt::format("; sentinel {} {}: {} checks, largest drift {}, {} chunks re-measured{}",
                     to_string(o.sentinel->backend), o.sentinel->problem.shape_string(), o.sentinel_checks.size(),
                     percent(largest, 1), remeasured, kept ? fmt::format(", {} kept drifted", kept) : "");
}

}  // namespace

std::string sweep_method_line(const MeasureOptions& m, int64_t l2_bytes, const std::string& db) {
  const std::string l2 = m.hot ? "hot L2 (no flush: a throughput-like figure)"
                               : fmt::format("cold L2 (flush {} MiB before each sample)", l2_bytes >> 20);
  return fmt::format("{}; {}; {}, shuffled passes; a sentinel shape in every chunk; store {}", l2, clocks_text(m),
                     samples_text(m), db);
}

void write_sentinel_events(std::ostream& out, const MeasureOutcome& o) {
  if (!o.sentinel) return;
  for (const SentinelCheck& c : o.sentinel_checks) {
    if (!c.remeasured && !c.kept_drifted) continue;
    out << fmt::format("sentinel: chunk {} (measurement {}) read {} {} at {} against {} ({}, limit +-{}): {}\n",
                       c.chunk + 1, c.attempt + 1, to_string(o.sentinel->backend), o.sentinel->problem.shape_string(),
                       us_or_ms(c.sentinel_us), us_or_ms(c.reference_us.value_or(0)), signed_percent(c.drift),
                       percent(c.limit, 1),
                       c.remeasured ? "measured again"
                       : c.rebased  ? "the shift held when measured again: kept, flagged drifted (D), and the "
                                      "reference moves to it"
                                    : "out of re-runs, kept and flagged drifted (D)");
  }
}

void write_sweep_summary(std::ostream& out, const MeasureOutcome& o, const SweepTimes& times, bool hot,
                         ClockState clocks) {
  size_t noisy = 0, throttled = 0, drifted = 0;
  for (const StoredPoint& p : o.points) {
    noisy += p.result.timing.noisy;
    throttled += p.result.timing.throttled;
    drifted += p.result.timing.drifted;
  }
  std::string floor, clock, samples;
  if (o.measured > 0 && !hot)
    floor = fmt::format("; GPU-time floor {:.2f} s (samples x (kernel + {:.1f} us flush)), wall/floor {:.2f}",
                        o.gpu_floor_s, o.flush_us, times.wall / o.gpu_floor_s);
  if (o.measured > 0) {
    const SettleFacts& settle = o.phases.engine.settle;
    const std::string state = settle.watched ? fmt::format("{}; {}", to_string(clocks), settle_text(settle))
                                             : std::string(to_string(clocks));
    clock = o.median_clock_mhz > 0 ? fmt::format("; median SM clock {:.0f} MHz ({})", o.median_clock_mhz, state)
                                   : fmt::format("; SM clock unknown (no NVML; {})", state);
    std::vector<double> counts;
    for (const TimingStats& t : o.timings) counts.push_back(t.samples);
    samples = fmt::format("; samples median {}, max {}", median(counts), *std::max_element(counts.begin(), counts.end()));
  }
  out << fmt::format("measured {} points, reused {}, annotated {} in {:.2f} s wall{}{}{}{}; {} noisy, {} throttled, "
                     "{} drifted\n",
                     o.measured, o.reused, o.annotated, times.wall, floor, samples, clock, sentinel_text(o), noisy,
                     throttled, drifted);
}

void write_sweep_details(std::ostream& out, const MeasureOutcome& o, const SweepTimes& times) {
  const PhaseTimes& p = o.phases;
  const EngineTimes& e = p.engine;
  out << fmt::format(
      "wall {:.2f} s: start-up {:.2f} (CUDA, store, NVML, plan), store look-up {:.2f}, allocate {:.2f}, prepare {:.2f}, "
      "verify {:.2f}, kernels read from graphs {:.2f}, CUPTI {:.2f} ({} calls), timing {:.2f} [warm-up {:.2f}, GPU busy {:.2f}, GPU idle between graphs "
      "{:.2f}, waiting on the GPU {:.2f}, graph capture {:.2f}, graph launch {:.2f}, chunk writes {:.2f}, cool-down "
      "{:.2f}; {} graphs, {} chunks, {} re-runs], read back {:.2f}, annotate "
      "and print {:.2f}\n",
      times.wall, times.startup, p.plan, p.allocate, p.prepare, p.verify, p.trace, p.trace_cupti, p.traced_by_cupti, p.timing, e.warmup, e.gpu_busy,
      e.gpu_gaps, e.wait, e.capture, e.launch, e.callbacks, e.cooldown, e.graphs, e.chunks, e.reruns, p.collect, times.after);
  out << samples_histogram(o.timings) << "\n";
  for (const SentinelCheck& c : o.sentinel_checks)
    out << fmt::format("sentinel check: chunk {} measurement {}: {} against {} ({}, limit +-{}){}\n", c.chunk + 1,
                       c.attempt + 1, us_or_ms(c.sentinel_us),
                       c.reference_us ? us_or_ms(*c.reference_us) : std::string("none (sets the reference)"),
                       c.reference_us ? signed_percent(c.drift) : std::string("-"), percent(c.limit, 1),
                       c.remeasured ? ": measured again"
                       : c.rebased  ? ": kept drifted, reference moved"
                                    : (c.kept_drifted ? ": kept drifted" : ""));
}

std::string health_warning(const DeviceContext& d, const GpuHealth& h) {
  if (h.healthy()) return "";
  std::vector<std::string> why;
  if (h.low_clock()) {
    std::string power;
    if (h.median_power_w && h.power_limit_w)
      power = fmt::format(" (power {:.0f} W of its {:.0f} W limit)", *h.median_power_w, *h.power_limit_w);
    why.push_back(fmt::format("under load its SM clock was {:.0f} MHz, {:.0f} % of its {} MHz maximum{}",
                              h.median_clock_mhz, 100.0 * h.median_clock_mhz / h.max_clock_mhz, h.max_clock_mhz, power));
  }
  if (h.shared())
    why.push_back(fmt::format("it was shared with {} other process{}", *h.other_processes,
                              *h.other_processes == 1 ? "" : "es"));
  return fmt::format("warning: GPU {} ({}): {}; {} point{} flagged throttled ({})", d.ordinal, d.gpu_uuid,
                     fmt::join(why, "; "), h.flagged, h.flagged == 1 ? "" : "s",
                     throttle_names((h.low_clock() ? throttle::kLowClock : 0) | (h.shared() ? throttle::kSharedGpu : 0)));
}

std::string shared_gpu_warning(const DeviceContext& d, std::optional<size_t> others) {
  if (!others || *others == 0) return "";
  return fmt::format("warning: GPU {} ({}) has {} other process{} on it: points measured while it does are flagged "
                     "throttled (shared_gpu)",
                     d.ordinal, d.gpu_uuid, *others, *others == 1 ? "" : "es");
}

}  // namespace shapescope
