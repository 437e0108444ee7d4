#include "report/profile_report.hpp"

#include "report/explain_report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/units.hpp"
#include "report/annotation_text.hpp"
#include "report/json_schema.hpp"
#include "report/profile_casts.hpp"
#include "report/profile_predicted_text.hpp"
#include "report/table.hpp"
#include "report/what_if_text.hpp"
#include "views/what_ifs.hpp"

namespace shapescope {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kFusedNote =
    "attention's QK^T and PV (and their gradients) run inside one FlashAttention kernel in most programs: listed "
    "for what they would cost as GEMMs, outside the total (--attention-in-total counts them)";

const WorkloadGemm& call_of(const ProfileResult& r, const ProfileEntry& e) { return r.workload.gemms[e.row.gemm]; }

// "12288x50257x768 nt bf16", with what the source could not say.
std::string gemm_cell(const ProfileResult& r, const ProfileEntry& e) {
  const WorkloadGemm& g = call_of(r, e);
  std::string cell = fmt::format("{} {}", g.shape_text(), to_string(e.row.problem.dtype));
  if (g.group_rows_estimated) cell += " (rows per group estimated)";
  if (g.usually_fused) cell += " [fused]";
  return cell;
}

std::string number(const std::optional<double>& v, int decimals) { return v ? fixed(*v, decimals) : "-"; }

std::string calls_text(double calls) {
  return calls == double(int64_t(calls)) ? std::to_string(int64_t(calls)) : fixed(calls, 2);
}

std::string verdict_cell(const ProfileEntry& e) {
  if (e.explanation) {
    const std::string verdict = explain_verdict_line(*e.explanation);
    return e.verdict_shape.empty() ? verdict : "largest group " + e.verdict_shape + ": " + verdict;
  }
  if (e.row.time) return "-";
  return e.predicted || !e.not_predicted.empty() ? "not predicted" : "not measured";
}

std::string source_line(const ProfileResult& r) {
  const Workload& w = r.workload;
  std::string line = fmt::format("profile of {}: {} distinct GEMMs, {} calls per step", w.source, w.gemms.size(),
                                 r.totals.calls);
  if (w.steps > 1) line += fmt::format(" (the trace holds {} steps)", w.steps);
  if (!w.device.empty()) line += fmt::format("; recorded on {}", w.device);
  return line + fmt::format("; {} ops not mapped", w.unmapped_count());
}

std::string numbers_line(const ProfileResult& r) {
  if (r.predicted) return predicted_numbers_line(r);
  if (r.measured) {
    const MeasurementSummary& m = *r.measured;
    const DeviceContext& d = m.device;
    return fmt::format("measured on {} ({}), driver {}, cuBLAS {}: {} GEMMs measured now, {} from the store '{}'; {} "
                       "samples, cold L2; {}, {} of {} throttled",
                       d.gpu_name, d.gpu_uuid, d.driver, d.cublas, m.measured, m.reused, r.request.db, r.request.samples,
                       m.median_clock_mhz ? fmt::format("SM clock {:.0f} MHz (median)", *m.median_clock_mhz)
                                          : std::string("SM clock unknown"),
                       m.throttled, m.gemms);
  }
  const StoredSource& s = *r.stored;
  return fmt::format("from the store '{}' (no GPU measured now): {} ({}), driver {}, cuBLAS {}, measured {}{}; {} of {} "
                     "GEMMs stored",
                     r.request.db, s.device.gpu_name, s.device.gpu_uuid, s.device.driver, s.device.cublas, s.first,
                     s.last != s.first ? " to " + s.last : "", s.points, r.entries.size());
}

// The GPU the times come from: measured now, the store's, or the one the model predicts for.
DeviceContext measured_on(const ProfileResult& r) {
  if (r.measured) return r.measured->device;
  if (r.stored) return r.stored->device;
  DeviceContext d;
  d.gpu_name = r.predicted->model->model.gpu;
  d.sm_count = r.predicted->model->model.sm_count;
  return d;
}

// Whether the trace ran on the GPU of the times. A prediction's GPU is a product (a scaled model's is
// named as its profile names it): the trace's is the same where the profiles say they are one product.
GpuMatch gpu_match(const ProfileResult& r) {
  const GpuMatch match = trace_gpu_match(r.workload, measured_on(r));
  if (!r.predicted || match != GpuMatch::kOther) return match;
  const GpuProfile* trace = profile_for_device_name(r.workload.device);
  return trace && trace == profile_for_device_name(r.predicted->model->model.gpu) ? GpuMatch::kSame : match;
}

// "measured" or "predicted": what the times are.
const char* times_word(const ProfileResult& r) { return r.predicted ? "predicted" : "measured"; }

std::string gpu_with_sms(const std::string& name, int sms) {
  return sms > 0 ? fmt::format("{} ({} SMs)", name, sms) : name;
}

// Said first, when it is so: the trace ran on another GPU than the times shown, so its comparison
// is of two GPUs.
std::optional<std::string> other_gpu_line(const ProfileResult& r) {
  const DeviceContext d = measured_on(r);
  if (gpu_match(r) != GpuMatch::kOther) return std::nullopt;
  return fmt::format("another GPU: the trace was recorded on {}, the times here were {} {}: {} / trace below "
                     "compares the two GPUs, not the GEMMs alone",
                     gpu_with_sms(r.workload.device, r.workload.device_sms),
                     r.predicted ? "predicted for" : "measured on", gpu_with_sms(d.gpu_name, d.sm_count),
                     times_word(r));
}

// Said once: what of the trace's GPU time is no GEMM's, and so in no total.
std::optional<std::string> outside_line(const ProfileResult& r) {
  const ProfileTotals& t = r.totals;
  if (!t.other_kernels_us || !t.all_kernels_us || *t.all_kernels_us <= 0) return std::nullopt;
  if (*t.other_kernels_us <= 0)
    return std::string("outside every total: ops that are not GEMMs (this trace holds no kernel of theirs)");
  return fmt::format("outside every total: the trace's kernels of ops that are not GEMMs (attention, normalization, "
                     "elementwise, copies...), {} of its {} of GPU kernels per step ({})",
                     us_or_ms(*t.other_kernels_us), us_or_ms(*t.all_kernels_us),
                     percent(*t.other_kernels_us / *t.all_kernels_us, 0));
}

std::string total_line(const ProfileResult& r) {
  const ProfileTotals& t = r.totals;
  std::string line = r.predicted            ? predicted_total_head(r)
                     : t.measured_rows == 0 ? fmt::format("GEMM time per step: unknown (none of its {} GEMMs measured)",
                                                          t.missing_rows)
                                            : fmt::format("GEMM time per step: {} measured ({} of {} GEMMs)",
                                                          us_or_ms(t.measured_us), t.measured_rows,
                                                          t.measured_rows + t.missing_rows);
  if (!t.trace_us) return line + "; the source has no kernel times to compare with";
  line += fmt::format("; the trace's GEMM kernels {}", us_or_ms(*t.trace_us));
  const bool other_gpu = gpu_match(r) == GpuMatch::kOther;
  if (t.ratio)
    line += fmt::format(": {}{} / trace{} = {:.3f} over the {} GEMMs both have ({} against {})", times_word(r),
                        other_gpu ? (r.predicted ? " for " : " on ") + measured_on(r).gpu_name : "",
                        other_gpu ? " on " + r.workload.device : "", *t.ratio, t.compared_rows,
                        us_or_ms(t.compared_measured_us), us_or_ms(t.compared_trace_us));
  return line;
}

void print_table(std::ostream& out, const ProfileResult& r) {
  // The trace's own times, where the source has any (a GEMM list or a config has none).
  const bool traced = r.totals.trace_us.has_value();
  const bool predicted = r.predicted.has_value();
  std::vector<std::string> header = {"#", "GEMM", "origin", "calls/step",
                                     predicted ? "predicted [us]" : "per call [us]",
                                     predicted ? "error [%] (p95)" : "noise [%]", "per step [us]", "share [%]"};
  if (traced) header.push_back("trace [us]");
  header.insert(header.end(), {"kernel", "verdict"});
  std::vector<std::vector<std::string>> rows = {header};
  for (size_t i = 0; i < r.entries.size(); ++i) {
    const ProfileEntry& e = r.entries[i];
    const ProfileRow& row = e.row;
    std::vector<std::string> cells = {std::to_string(i + 1), gemm_cell(r, e), call_of(r, e).origin,
                                      calls_text(row.calls_per_step), row.time ? fixed(row.time->median_us, 2) : "-",
                                      predicted   ? predicted_error_cell(e)
                                      : row.time ? fixed(row.time->noise * 100, 1)
                                                 : "-",
                                      number(row.step_us, 1), row.share ? fixed(*row.share * 100, 1) : "-"};
    if (traced) cells.push_back(number(row.trace_step_us, 1));
    cells.insert(cells.end(),
                 {predicted ? predicted_kernel_cell(e) : e.kernel.empty() ? "-" : e.kernel, verdict_cell(e)});
    rows.push_back(std::move(cells));
  }
  std::vector<bool> right(header.size(), true);
  right[1] = right[2] = right[header.size() - 2] = right[header.size() - 1] = false;
  // The kernel name is shortened and the verdict wraps first; then the columns go, least read first.
  // Predicted, a time's error says what the time is worth: it goes last, the kernel assumed first.
  write_table(out, rows, right, "",
              predicted ? fit_by_name(header, {{"kernel", {1, 24}}, {"verdict", {0, 0, 40}}, {"origin", {4, 20}},
                                               {"error [%] (p95)", {5}}, {"predicted [us]", {6}}, {"trace [us]", {3}},
                                               {"calls/step", {2}}})
                        : fit_by_name(header, {{"kernel", {5, 24}}, {"verdict", {0, 0, 40}}, {"origin", {6, 20}},
                                               {"noise [%]", {1}}, {"per call [us]", {2}}, {"trace [us]", {3}},
                                               {"calls/step", {4}}}));
}

// The clock the step's GEMMs were measured at, said once. Replayed: how (the stand-ins, the replays)
// and at what clock and power, with the clock the trace's own compute-bound GEMMs ran at beside it.
// Measured at the power limit (--clocks sustained) and more than 5 % above the trace: a step whose
// other ops keep the GPU below its power cap runs its GEMMs at higher clocks, which the default replay
// measures.
std::optional<std::string> clocks_note(const ProfileResult& r) {
  if (r.predicted) return predicted_clocks_note(r);
  const auto inferred = [&]() -> std::string {
    if (!r.trace_clock) return "";
    const double at = r.measured && r.measured->median_clock_mhz ? *r.measured->median_clock_mhz : 0;
    return fmt::format("; the trace's compute-bound GEMMs ran at about {:.0f} MHz ({:.0f}-{:.0f}, {} GEMMs: their "
                       "times against the same GEMMs measured here{})",
                       r.trace_clock->mhz, r.trace_clock->low_mhz, r.trace_clock->high_mhz, r.trace_clock->gemms,
                       at > 0 ? fmt::format(" at {:.0f} MHz", at) : "");
  };
  const auto recorded = [&]() -> std::string {
    const std::optional<RecordedClocks>& c = r.workload.recorded_clocks;
    if (!c || c->busy_samples == 0) return "";
    return fmt::format("; recorded with the trace: {:.0f} MHz ({:.0f}-{:.0f}){}", c->sm_clock_median_mhz,
                       c->sm_clock_low_mhz, c->sm_clock_high_mhz,
                       c->power_median_w ? fmt::format(", {:.0f} W", *c->power_median_w) : "");
  };
  if (r.replay) {
    const StepReplayFacts& f = *r.replay;
    std::string power;
    if (f.power_w) power = fmt::format(", {:.0f} W", *f.power_w);
    if (f.power_max_w) power += fmt::format(" (at most {:.0f} W)", *f.power_max_w);
    const std::string why = r.replay_why.empty() ? "" : fmt::format(" ({})", r.replay_why);
    return fmt::format("clocks: the step replayed{} on this GPU in its trace's order, its other kernels stood in for ({} "
                       "of memory traffic, {} of tensor-core work for attention, {} idle per replay): {} replays after "
                       "{} to warm up, SM clock {:.0f} MHz ({:.0f}-{:.0f}){}{}{}",
                       why, us_or_ms(f.memory_us), us_or_ms(f.compute_us), us_or_ms(f.idle_us), f.replays,
                       f.warmup_replays, f.clock_median_mhz, f.clock_low_mhz, f.clock_high_mhz, power, inferred(),
                       recorded());
  }
  if (r.ran_at_boost && r.trace_clock)
    return fmt::format("clocks: the trace's compute-bound GEMMs ran at about {:.0f} MHz ({:.0f}-{:.0f}, {} GEMMs: their "
                       "times against the same GEMMs measured here at {:.0f} MHz), the boost clock: the times are the "
                       "GEMMs' at burst clocks, the step not replayed{}",
                       r.trace_clock->mhz, r.trace_clock->low_mhz, r.trace_clock->high_mhz, r.trace_clock->gemms,
                       r.measured && r.measured->median_clock_mhz ? *r.measured->median_clock_mhz : 0.0, recorded());
  if (!r.not_replayed.empty())
    return fmt::format("clocks: the step could not be replayed ({}): its GEMMs measured one by one at {} clocks{}",
                       r.not_replayed, to_string(r.request.clocks), inferred());
  if (!r.totals.ratio || *r.totals.ratio <= 1.05 || r.request.clocks != ClockState::kSustained)
    return std::nullopt;
  return fmt::format("clocks: measured at sustained clocks (held at the power limit), {:.1f} % above the trace; a "
                     "step whose other ops keep the GPU below its power cap runs its GEMMs at higher clocks: "
                     "--clocks step (the default for a trace) replays the step at its own",
                     (*r.totals.ratio - 1) * 100);
}

std::vector<std::string> list_lines(const ProfileResult& r) {
  std::vector<std::string> lines;
  for (const ProfileEntry& e : r.entries) {
    if (e.custom_us && e.grouped_us && e.loop_us)
      lines.push_back(fmt::format("{}: our grouped kernel (05, persistent over the groups) {} us, one "
                                  "cublasGemmGroupedBatchedEx call {} us, its groups as a loop of GEMMs {} us; the table "
                                  "takes the fastest",
                                  gemm_cell(r, e), fixed(*e.custom_us, 1), fixed(*e.grouped_us, 1), fixed(*e.loop_us, 1)));
    else if (e.grouped_us && e.loop_us)
      lines.push_back(fmt::format("{}: one cublasGemmGroupedBatchedEx call {} us, its groups as a loop of GEMMs "
                                  "{} us; the table takes the faster",
                                  gemm_cell(r, e), fixed(*e.grouped_us, 1), fixed(*e.loop_us, 1)));
    if (!e.row.time && r.predicted)
      lines.push_back(not_predicted_line(r, e));
    else if (!e.row.time)
      lines.push_back(fmt::format("not measured: {} ({})", gemm_cell(r, e), to_string(e.row.backend)));
    else if (!e.no_verdict.empty()) lines.push_back(fmt::format("no verdict for {}: {}", gemm_cell(r, e), e.no_verdict));
  }
  if (r.totals.outside_rows > 0) lines.push_back("outside the total: " + std::string(kFusedNote));
  for (const UnmappedOp& u : r.workload.unmapped)
    lines.push_back(fmt::format("not mapped: {} x {}: {}{}", u.count, u.op, u.reason,
                                u.kernel_us ? fmt::format(" ({} of kernels)", us_or_ms(*u.kernel_us)) : ""));
  if (r.totals.unmapped_trace_us)
    lines.push_back(fmt::format("the unmapped ops' kernels take {} per step, not in the totals above",
                                us_or_ms(*r.totals.unmapped_trace_us)));
  for (const std::string& n : r.workload.notes) lines.push_back("note: " + n);
  if (r.predicted)
    for (const std::string& line : predicted_lines(r)) lines.push_back(line);
  if (const std::optional<std::string> c = clocks_note(r)) lines.push_back(*c);
  for (const std::string& s : r.skipped) lines.push_back("skipped: " + s);
  return lines;
}

Json optional_json(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

Json entry_json(const ProfileResult& r, const ProfileEntry& e) {
  const WorkloadGemm& g = call_of(r, e);
  const ProfileRow& row = e.row;
  Json j;
  j["shape"] = g.shape_text();
  j["dtype"] = to_string(row.problem.dtype);
  j["origin"] = g.origin;
  Json problems = Json::array();
  for (const Problem& p : g.problems)
    problems.push_back({{"m", p.m}, {"n", p.n}, {"k", p.k}, {"batch", p.batch}, {"layout", to_string(p.layout)},
                        {"lda", p.lda}, {"ldb", p.ldb}, {"ldc", p.ldc}});
  j["problems"] = std::move(problems);
  j["grouped"] = g.grouped();
  j["group_rows_estimated"] = g.group_rows_estimated;
  j["usually_fused"] = g.usually_fused;
  j["in_total"] = row.in_total;
  j["backend"] = to_string(row.backend);
  j["count"] = g.count;
  j["calls_per_step"] = row.calls_per_step;
  j["median_us"] = row.time ? Json(row.time->median_us) : Json(nullptr);
  j["noise"] = row.time ? Json(row.time->noise) : Json(nullptr);
  j["predicted"] = e.predicted.has_value();
  j["error_median"] = e.predicted ? Json(e.predicted->cls->accuracy.median) : Json(nullptr);
  j["error_p95"] = e.predicted ? Json(e.predicted->cls->accuracy.p95) : Json(nullptr);
  j["prediction"] = entry_prediction_json(e);
  j["not_predicted"] = e.not_predicted;
  j["step_us"] = optional_json(row.step_us);
  j["share"] = optional_json(row.share);
  j["trace_kernels"] = g.kernels;
  j["trace_kernel_us"] = optional_json(g.kernel_us);
  j["trace_step_us"] = optional_json(row.trace_step_us);
  j["trace_kernel_names"] = g.kernel_names;
  j["kernel"] = e.kernel;
  j["grouped_call_us"] = optional_json(e.grouped_us);
  j["per_group_loop_us"] = optional_json(e.loop_us);
  j["our_grouped_kernel_us"] = optional_json(e.custom_us);
  j["tiles"] = e.annotation ? Json(describe_tile_line(*e.annotation)) : Json(nullptr);
  j["waves"] = e.annotation ? Json(describe_waves_line(*e.annotation)) : Json(nullptr);
  j["verdict"] = e.explanation ? explain_verdict_line(*e.explanation) : std::string();
  j["fix"] = e.explanation ? explain_fix_line(*e.explanation) : std::string();
  j["verdict_shape"] = e.verdict_shape;
  j["no_verdict"] = e.no_verdict;
  return j;
}

Json totals_json(const ProfileResult& r) {
  const ProfileTotals& t = r.totals;
  Json j;
  j["calls_per_step"] = t.calls;
  // Nothing measured or predicted: the step's time is unknown (null), not 0.
  j["measured_us"] = t.measured_rows > 0 ? Json(t.measured_us) : Json(nullptr);
  j["measured_gemms"] = t.measured_rows;
  j["missing_gemms"] = t.missing_rows;
  j["outside_gemms"] = t.outside_rows;
  j["trace_us"] = optional_json(t.trace_us);
  j["compared_gemms"] = t.compared_rows;
  j["compared_measured_us"] = t.compared_measured_us;
  j["compared_trace_us"] = t.compared_trace_us;
  j["ratio"] = optional_json(t.ratio);
  j["unmapped_ops"] = t.unmapped_ops;
  j["unmapped_trace_us"] = optional_json(t.unmapped_trace_us);
  j["trace_all_kernels_us"] = optional_json(t.all_kernels_us);
  j["trace_other_kernels_us"] = optional_json(t.other_kernels_us);
  // A prediction's total (measured_us above is it): its expected error, and what that error does not cover.
  const std::optional<ProfilePrediction>& p = r.predicted;
  j["predicted"] = p.has_value();
  const bool known = p && t.measured_rows > 0;
  j["error_median"] = known ? Json(p->error_median) : Json(nullptr);
  j["error_p95"] = known ? Json(p->error_p95) : Json(nullptr);
  j["outside_range_gemms"] = p ? Json(p->outside_rows) : Json(nullptr);
  j["outside_range_us"] = p ? Json(p->outside_us) : Json(nullptr);
  return j;
}

}  // namespace

namespace {

// Measured what-ifs: the two lists, each with its changes at once measured as a step; nothing when
// nothing was measured here.
void print_what_ifs(std::ostream& out, const ProfileResult& r) {
  if (!r.measured && !r.predicted) return;
  const WhatIfs w = what_ifs(r);
  if (!r.request.verdicts)
    out << "\nwhat would make this step faster: not asked (--no-verdict: the what-ifs are explain's fixes)\n";
  else if ((w.same_dtype.ranked.empty() && w.precision.ranked.empty()) || w.step_us <= 0)
    out << "\nwhat would make this step faster: " << no_what_if_text(r) << "\n";
  for (const WhatIfListText& list : {same_dtype_text(r, w), precision_text(r, w)}) {
    if (list.heading.empty()) continue;
    out << "\n" << list.heading << "\n";
    write_table(out, list.table, {true, false, true, true, true, false, false}, "",
                fit_by_name(list.table.front(), {{"change", {0, 0, 40}}, {"calls/step", {1}}, {"now", {2}}, {"after", {3}}}));
    if (list.all) out << *list.all << "\n";
  }
  for (const std::string& line : what_if_lines(r, w)) out << line << "\n";
}

Json what_if_json(const ProfileResult& r, const WhatIf& x) {
  const WhatIfCandidate& c = r.candidates[x.candidate];
  Json j = {{"number", x.number}, {"kind", std::string(what_if_name(x.kind))}, {"change", what_if_change(r, x)},
            {"calls_per_step", x.calls_per_step}, {"now_us", x.now_us}, {"after_us", x.after_us},
            {"saving_us", x.saving_us}, {"saving_low_us", optional_json(x.saving_low_us)},
            {"saving_high_us", optional_json(x.saving_high_us)}, {"paired", x.paired()},
            {"changes_dtype", changes_dtype(x.kind)}, {"predicted", x.predicted},
            {"error", x.predicted ? Json(x.error) : Json(nullptr)}};
  if (c.ratio) j["ratio"] = {{"median", c.ratio->median}, {"low", c.ratio->low}, {"high", c.ratio->high}, {"pairs", c.ratio->pairs}};
  return j;
}

Json changed_step_json(const ProfileResult& r, const ChangedStep& s) {
  Json j = {{"name", s.name}, {"what_ifs", s.candidates.size()}, {"replayed", s.replayed}, {"predicted", s.predicted},
            {"before_us", optional_json(s.before_us)}, {"after_us", optional_json(s.after_us)},
            {"text", changed_step_line(r, s)}, {"why_not", s.why_not}, {"named", s.named}};
  // Whether what it saves is known within +-5 % (core/paired_ratio.hpp: move_known); null unmeasured.
  j["saving_known"] = s.ratio && !s.predicted ? Json(move_known(*s.ratio)) : Json(nullptr);
  j["ratio"] = s.ratio ? Json{{"median", s.ratio->median}, {"low", s.ratio->low}, {"high", s.ratio->high},
                              {"pairs", s.ratio->pairs}}
                       : Json(nullptr);
  return j;
}

Json what_ifs_json(const ProfileResult& r) {
  if (!r.measured && !r.predicted) return nullptr;
  const WhatIfs w = what_ifs(r);
  const auto list_json = [&](const WhatIfList& list) {
    Json ranked = Json::array();
    for (const WhatIf& x : list.ranked) ranked.push_back(what_if_json(r, x));
    return Json{{"ranked", ranked},
                {"all", list.all ? changed_step_json(r, r.changed_steps[*list.all]) : Json(nullptr)}};
  };
  Json ranked = Json::array();  // both lists; each what-if keeps its candidate's number
  for (const WhatIfList* list : {&w.same_dtype, &w.precision})
    for (const WhatIf& x : list->ranked) ranked.push_back(what_if_json(r, x));
  Json steps = Json::array();
  for (const ChangedStep& s : r.changed_steps) steps.push_back(changed_step_json(r, s));
  return {{"ranked", ranked}, {"same_dtype", list_json(w.same_dtype)}, {"precision", list_json(w.precision)},
          {"changed_steps", steps}, {"step_us", w.step_us}, {"lines", what_if_lines(r, w)},
          {"not_predicted", not_predicted_json(r)}};
}

// The fp8 GEMMs' casts beside the GEMM time (views/profile.hpp): the step pays both.
std::optional<std::string> fp8_casts_line(const ProfileResult& r) {
  if (!r.fp8_casts) return std::nullopt;
  const ProfileResult::Fp8Casts& c = *r.fp8_casts;
  return fmt::format("fp8 casts measured with shapescope's cast kernels (amax, scale and cast of both operands of "
                     "every fp8 GEMM call): {} per step{}, "
                     "besides the GEMM time above; GEMMs and casts: {}",
                     us_or_ms(c.us_per_step),
                     c.measured < c.casts ? fmt::format(" ({} of {} casts measured)", c.measured, c.casts) : "",
                     us_or_ms(r.totals.measured_us + c.us_per_step));
}

}  // namespace

ProfileText profile_text(const ProfileResult& r) {
  return {source_line(r), numbers_line(r), other_gpu_line(r), outside_line(r), total_line(r), list_lines(r)};
}

std::string profile_gemm_cell(const ProfileResult& r, const ProfileEntry& e) { return gemm_cell(r, e); }


void write_profile_text(std::ostream& out, const ProfileResult& r) {
  const ProfileText text = profile_text(r);
  out << text.source << "\n" << text.numbers << "\n";
  for (const auto& line : {text.other_gpu, text.outside})
    if (line) out << *line << "\n";
  out << "\n";
  print_table(out, r);
  out << "\n" << text.total << "\n";
  if (const std::optional<std::string> casts = fp8_casts_line(r)) out << *casts << "\n";
  for (const std::string& line : trace_casts_lines(r)) out << line << "\n";
  print_what_ifs(out, r);
  for (const std::string& line : text.lists) out << line << "\n";
}

void write_profile_json(std::ostream& out, const ProfileResult& r) {
  Json j;
  j["source"] = r.workload.source;
  j["recorded_on"] = r.workload.device;
  j["recorded_on_sms"] = r.workload.device_sms > 0 ? Json(r.workload.device_sms) : Json(nullptr);
  j["measured_on"] = measured_on(r).gpu_name;
  j["gpu_match"] = gpu_match_name(gpu_match(r));
  j["other_gpu"] = other_gpu_line(r) ? Json(*other_gpu_line(r)) : Json(nullptr);
  j["outside"] = outside_line(r) ? Json(*outside_line(r)) : Json(nullptr);
  j["steps"] = r.workload.steps;
  j["mode"] = r.measured ? "measured" : r.predicted ? "predicted" : "store";
  j["numbers"] = numbers_line(r);
  j["backend"] = to_string(r.request.backend);
  j["samples"] = r.request.samples;
  j["db"] = r.request.db;
  j["prediction"] = profile_prediction_json(r);
  Json gemms = Json::array();
  for (const ProfileEntry& e : r.entries) gemms.push_back(entry_json(r, e));
  j["gemms"] = std::move(gemms);
  j["totals"] = totals_json(r);
  j["total_text"] = total_line(r);
  Json unmapped = Json::array();
  for (const UnmappedOp& u : r.workload.unmapped)
    unmapped.push_back({{"op", u.op}, {"reason", u.reason}, {"count", u.count}, {"kernel_us", optional_json(u.kernel_us)}});
  j["unmapped"] = std::move(unmapped);
  j["notes"] = r.workload.notes;
  j["skipped"] = r.skipped;
  j["fused_note"] = r.totals.outside_rows > 0 ? Json(kFusedNote) : Json(nullptr);
  const std::optional<std::string> clocks = clocks_note(r);
  j["clocks_note"] = clocks ? Json(*clocks) : Json(nullptr);
  if (r.measured || r.predicted) j["what_ifs"] = what_ifs_json(r);
  if (r.fp8_casts)
    j["fp8_casts"] = {{"us_per_step", r.fp8_casts->us_per_step}, {"casts", r.fp8_casts->casts},
                      {"measured", r.fp8_casts->measured}, {"text", *fp8_casts_line(r)}};
  if (r.workload.casts) j["trace_casts"] = trace_casts_json(r);
  write_json_document(out, std::move(j), "ProfileResult", [&](std::ostream& text) { write_profile_text(text, r); });
}

}  // namespace shapescope
