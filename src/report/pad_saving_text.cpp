#include "report/pad_saving_text.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/units.hpp"
#include "report/output.hpp"

namespace shapescope {

bool any_paired(const std::vector<std::vector<Evaluation>>& evaluations) {
  for (const auto& list : evaluations)
    for (const Evaluation& e : list)
      if (e.paired) return true;
  return false;
}

// The measured columns' headers: a paired table gives each saving's interval where the noise was.
std::vector<std::string> saving_headers(bool paired, bool predicted) {
  return {"before [us]", "after [us]", "saving [us]", "saving [%]",
          paired ? "95 % interval [%] (pairs)" : predicted ? "error [%]" : "noise [%]"};
}

// "+2.81..+3.40 (24)": a paired saving's 95 % interval, in % of the step's GEMM time, and its pairs.
std::string interval_text(const Evaluation& e) {
  return fmt::format("{:+.2f}..{:+.2f} ({})", e.saving_low_us / e.before_us * 100, e.saving_high_us / e.before_us * 100,
                     e.paired->pairs);
}

// A candidate's measured columns: before, after, saving (us and %), noise or, paired, the interval.
void add_saving_cells(std::vector<std::string>& row, const std::optional<StepTime>& before, const Evaluation& e,
                      bool paired_table) {
  const std::optional<double> before_us = e.paired ? std::optional<double>(e.before_us)
                                                   : before ? std::optional<double>(before->us) : std::nullopt;
  row.push_back(before_us ? fmt::format("{:.1f}", *before_us) : "-");
  row.push_back(e.after ? fmt::format("{:.1f}", e.after->us) : "-");
  row.push_back(e.saving_us ? fmt::format("{:+.1f}", *e.saving_us) : "-");
  row.push_back(e.saving_us ? fmt::format("{:+.2f}", *e.saving_us / e.before_us * 100) : "-");
  if (paired_table) row.push_back(e.paired ? interval_text(e) : "not paired");
  else row.push_back(e.after ? fmt::format("{:.1f}", e.after->noise * 100) : "-");
}

std::string saving_words(const Evaluation& e) {
  const double pct = *e.saving_us / e.before_us;
  return pct >= 0 ? "saves " + signed_percent(pct).substr(1) : "costs " + signed_percent(-pct).substr(1);
}

// "3.1 % (95 % interval 2.8-3.4 %, 24 pairs)": a paired saving in % of the step's GEMM time.
std::string paired_saving_text(const Evaluation& e) {
  return fmt::format("{} (95 % interval {:+.2f} to {:+.2f} %, {} pairs)", saving_words(e),
                     e.saving_low_us / e.before_us * 100, e.saving_high_us / e.before_us * 100, e.paired->pairs);
}

// Paired, not padding: cannot tell (an interval straddles kMinGain), or leave it.
std::string paired_leave_text(const std::string& head, const std::vector<Evaluation>& ev, const Evaluation& most) {
  for (const Evaluation& e : ev)
    if (e.cannot_tell)
      return fmt::format("{}: cannot tell: {} ({}) {}, an interval that straddles {:.0f} %; more pairs "
                         "(--pair-seconds) or --clocks burst would tell",
                         head, e.candidate.value, e.candidate.why, paired_saving_text(e), kMinGain * 100);
  return fmt::format("{}: leave it: no candidate's 95 % interval saves more than {:.0f} % of the step's GEMM time; the "
                     "most, {} ({}), {}",
                     head, kMinGain * 100, most.candidate.value, most.candidate.why, paired_saving_text(most));
}

// "pad", "leave", or (paired) "cannot tell".
std::string action_of(const std::vector<Evaluation>& ev, const std::optional<size_t>& best) {
  if (best) return "pad";
  return std::any_of(ev.begin(), ev.end(), [](const Evaluation& e) { return e.cannot_tell; }) ? "cannot tell" : "leave";
}

// One line per paired run, and the candidates left unpaired; nothing when not paired.
void print_paired(std::ostream& out, const PadMeasurement& m) {
  for (const PairedStepsRun& r : m.paired)
    out << fmt::format("paired: the step and {} candidates measured again together ({} {} GEMMs, {} passes, {:.1f} s): "
                       "SM clock {:.0f}-{:.0f} MHz (median {:.0f}){}; both sides of every saving ran in the same passes{}\n",
                       r.comparisons, r.calls, to_string(r.dtype), r.passes, r.seconds, r.clock_low_mhz,
                       r.clock_high_mhz, r.clock_median_mhz,
                       r.power_w ? fmt::format(", board power {:.0f} W", *r.power_w) : std::string(),
                       r.settle.watched ? "; " + settle_text(r.settle) : "");
  for (const std::string& why : m.not_paired) out << "not paired: " << why << "\n";
}

std::string recommendation_head(bool paired, bool predicted) {
  return paired ? fmt::format("a saving counts when its whole 95 % interval is above {:.0f} % of the step's GEMM time",
                              kMinGain * 100)
                : fmt::format("a saving counts above {:.0f} % of the step's GEMM time and above the {}", kMinGain * 100,
                              predicted ? "model's held-out error (predicted: nothing measured)" : "measured noise");
}

// "measured on NVIDIA H200 (GPU-...), driver ..., cuBLAS ...: 27 GEMMs measured now, ...".
std::string clock_summary(const PadMeasurement& m) {
  const std::string clock =
      m.median_clock_mhz ? fmt::format("SM clock {:.0f} MHz (median)", *m.median_clock_mhz) : "SM clock unknown";
  return fmt::format("{}, {} of {} GEMMs throttled (a slowdown reason, a burst at the power cap, or a clock dip)", clock, m.throttled,
                     m.gemms);
}

double copy_gbs(const PadMeasurement& m) { return m.bandwidth.measured ? m.bandwidth.value : 0; }

std::string source_text(const PadRequest& o, const PadMeasurement& m) {
  const DeviceContext& d = m.device;
  const double gbs = copy_gbs(m);
  return fmt::format(
      "measured on {} ({}), driver {}, cuBLAS {}: {} GEMMs measured now, {} from the store '{}'; {} samples, cold L2, "
      "{} clocks; {}; copy bandwidth {}",
      d.gpu_name, d.gpu_uuid, d.driver, d.cublas, m.measured, m.reused, o.db, o.samples, to_string(o.clocks),
      clock_summary(m),
      gbs > 0 ? fmt::format("{:.0f} GB/s ({})", gbs, m.bandwidth.source) : std::string("not calibrated"));
}

}  // namespace shapescope
