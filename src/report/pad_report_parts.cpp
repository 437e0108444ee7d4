#include "report/pad_report_parts.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "common/units.hpp"
#include "report/output.hpp"
#include "report/pad_saving_text.hpp"
#include "report/prediction_text.hpp"

namespace shapescope::pad_text {

Times times_of(const PadResult& r) { return {r.measured || r.predicted, r.predicted.has_value()}; }
Times times_of(const SizePadResult& r) { return {r.measured || r.predicted, r.predicted.has_value()}; }
const char* mode_name(Times t) { return !t ? "dry-run" : t.predicted ? "predicted" : "measured"; }
const char* time_header(Times t) { return t.predicted ? "predicted [us]" : "median [us]"; }
const char* noise_header(Times t) { return t.predicted ? "error [%]" : "noise [%]"; }

std::string no_candidate_note(const ChoiceInfo& c, const std::optional<Annotation>& probe, Times times) {
  if (c.gemm_size() % 256 != 0) return "no larger size the model allows";
  std::string why;
  if (!probe && times.predicted) {
    why = fmt::format("the {} of {} that fills its last wave is unknown: the model predicts no kernel for it",
                      dim_name(c.probe_dim), c.probe_name);
  } else if (!probe) {
    why = fmt::format("the {} of {} that fills its last wave is looked for after measuring it", dim_name(c.probe_dim),
                      c.probe_name);
  } else if (probe->grid.tiles <= 0 || probe->waves.slots <= 0) {
    why = fmt::format("the tile or the slots of {}'s kernel are unknown, so no size that fills its last wave is known",
                      c.probe_name);
  } else if (probe->waves.efficiency >= kFilledWave) {
    why = fmt::format("{}'s last wave is already {:.0f} % full", c.probe_name, probe->waves.efficiency * 100);
  } else {
    why = fmt::format("no {} of {} within +25 % that keeps its alignment fills its last wave", dim_name(c.probe_dim),
                      c.probe_name);
  }
  return fmt::format("{} is a multiple of 256, so no multiple above is proposed; {}", c.gemm_size(), why);
}

std::optional<std::string> not_padded_text(const std::string& head, const std::vector<Evaluation>& ev,
                                           const std::optional<size_t>& best, const std::string& note, Times times) {
  if (ev.empty()) return fmt::format("{}: leave it ({})", head, note);
  const Evaluation* most = nullptr;  // the largest saving, significant or not
  for (const Evaluation& e : ev)
    if (e.saving_us && (!most || *e.saving_us > *most->saving_us)) most = &e;
  if (!most)
    return times.predicted ? fmt::format("{}: unknown: a GEMM of the step or of its candidates has no predicted time "
                                         "(the model lacks its class: see the lines above)", head)
                           : fmt::format("{}: unknown: its candidates' GEMMs have no time (not in the store read, or "
                                         "skipped when measuring, each with its reason on stderr)", head);
  if (best) return std::nullopt;
  if (most->paired) return paired_leave_text(head, ev, *most);
  double floor = kMinGain;
  for (const Evaluation& e : ev) floor = std::max(floor, e.threshold);
  return fmt::format("{}: leave it: no candidate saves more than {:.1f} % of the step's GEMM time ({}, at least "
                     "{:.0f} %); the most, {} ({}), {}",
                     head, floor * 100, times.predicted ? "the model's held-out error" : "the measured noise",
                     kMinGain * 100, most->candidate.value, most->candidate.why,
                     *most->saving_us >= 0 ? "saves " + signed_percent(*most->saving_us / most->before_us).substr(1)
                                           : "costs " + signed_percent(-*most->saving_us / most->before_us).substr(1));
}

Json optional_number(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

void add_saving_json(Json& x, const std::optional<StepTime>& before, const Evaluation& e) {
  x["before_us"] = before ? Json(before->us) : Json(nullptr);
  x["after_us"] = e.after ? Json(e.after->us) : Json(nullptr);
  x["saving_us"] = optional_number(e.saving_us);
  x["saving_pct"] = e.saving_us ? Json(*e.saving_us / e.before_us * 100) : Json(nullptr);
  x["threshold_pct"] = e.threshold * 100;
  x["significant"] = e.significant;
  if (!e.paired) return;
  x["before_us"] = e.before_us;  // the step in the paired passes
  x["saving_low_pct"] = e.saving_low_us / e.before_us * 100;
  x["saving_high_pct"] = e.saving_high_us / e.before_us * 100;
  x["pairs"] = e.paired->pairs;
  x["cannot_tell"] = e.cannot_tell;
}

Json source_json(const PadRequest& o, const PadMeasurement& m) {
  const double gbs = copy_gbs(m);
  Json s;
  s["gpu"] = m.device.gpu_name;
  s["gpu_uuid"] = m.device.gpu_uuid;
  s["driver"] = m.device.driver;
  s["cublas"] = m.device.cublas;
  s["measured"] = m.measured;
  s["reused"] = m.reused;
  s["db"] = o.db;
  s["samples"] = o.samples;
  s["clock_state"] = to_string(o.clocks);
  s["clocks"] = clock_summary(m);
  s["copy_bandwidth_gbs"] = gbs > 0 ? Json(gbs) : Json(nullptr);
  Json runs = Json::array();
  for (const PairedStepsRun& r : m.paired)
    runs.push_back({{"dtype", to_string(r.dtype)}, {"calls", r.calls}, {"comparisons", r.comparisons},
                    {"passes", r.passes}, {"seconds", r.seconds}, {"clock_low_mhz", r.clock_low_mhz},
                    {"clock_median_mhz", r.clock_median_mhz}, {"clock_high_mhz", r.clock_high_mhz},
                    {"power_w", optional_number(r.power_w)}, {"settled", r.settle.settled},
                    {"warmup_s", r.settle.seconds}});
  s["paired"] = std::move(runs);
  s["not_paired"] = m.not_paired;
  return s;
}

void print_prediction(std::ostream& out, const PadPrediction& p, const std::vector<Problem>& gemms) {
  out << "predicted by " << perf_model_text(*p.model)
      << ": nothing measured; each GEMM's time is its class's prediction, its error (the class's median on shapes the "
         "fit did not see) counted as a measured GEMM's noise\n";
  // One line per reason, naming the first few GEMMs: a step and its candidates repeat the same ones.
  std::vector<std::pair<std::string, std::vector<std::string>>> lines;
  const auto add = [&](const std::string& head, const std::string& gemm) {
    auto it = std::find_if(lines.begin(), lines.end(), [&](const auto& l) { return l.first == head; });
    if (it == lines.end()) it = lines.insert(lines.end(), {head, {}});
    it->second.push_back(gemm);
  };
  for (const Problem& g : gemms) {
    const std::string name = fmt::format("{} {}", g.shape_string(), to_string(g.layout));
    std::string why;
    if (!predict(p.model->model, g, why)) add("not predicted (" + why + ")", name);
    else if (const PerfPrediction* got = p.of(g); got && !got->outside.empty())
      add("outside the measured range (extrapolated: the held-out error does not cover it)",
          fmt::format("{} ({})", name, fmt::join(got->outside, ", ")));
  }
  constexpr size_t kNamed = 3;
  for (const auto& [head, names] : lines) {
    const std::vector<std::string> first(names.begin(), names.begin() + long(std::min(kNamed, names.size())));
    out << fmt::format("{}: {}{}\n", head, fmt::join(first, "; "),
                       names.size() > kNamed ? fmt::format("; and {} more GEMMs", names.size() - kNamed) : "");
  }
}

Json gemm_prediction_json(const PadPrediction& p, const Problem& problem) {
  const PerfPrediction* got = p.of(problem);
  return got ? predicted_time_json(problem, *got) : Json(nullptr);
}

}  // namespace shapescope::pad_text
