#include "report/profile_report.hpp"

#include "report/explain_report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/units.hpp"
#include "report/annotation_text.hpp"
#include "report/table.hpp"

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
  return e.row.time ? "-" : "not measured";
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

std::string total_line(const ProfileResult& r) {
  const ProfileTotals& t = r.totals;
  std::string line = fmt::format("GEMM time per step: {} measured ({} of {} GEMMs)", us_or_ms(t.measured_us),
                                 t.measured_rows, t.measured_rows + t.missing_rows);
  if (!t.trace_us) return line + "; the source has no kernel times to compare with";
  line += fmt::format("; the trace's GEMM kernels {}", us_or_ms(*t.trace_us));
  if (t.ratio)
    line += fmt::format(": measured / trace = {:.3f} over the {} GEMMs both have ({} against {})", *t.ratio, t.compared_rows,
                        us_or_ms(t.compared_measured_us), us_or_ms(t.compared_trace_us));
  return line;
}

void print_table(std::ostream& out, const ProfileResult& r) {
  // The trace's own times, where the source has any (a GEMM list or a config has none).
  const bool traced = r.totals.trace_us.has_value();
  std::vector<std::string> header = {"#", "GEMM", "origin", "calls/step", "per call [us]", "noise [%]",
                                     "per step [us]", "share [%]"};
  if (traced) header.push_back("trace [us]");
  header.insert(header.end(), {"kernel", "verdict"});
  std::vector<std::vector<std::string>> rows = {header};
  for (size_t i = 0; i < r.entries.size(); ++i) {
    const ProfileEntry& e = r.entries[i];
    const ProfileRow& row = e.row;
    std::vector<std::string> cells = {std::to_string(i + 1), gemm_cell(r, e), call_of(r, e).origin,
                                      calls_text(row.calls_per_step), row.time ? fixed(row.time->median_us, 2) : "-",
                                      row.time ? fixed(row.time->noise * 100, 1) : "-", number(row.step_us, 1),
                                      row.share ? fixed(*row.share * 100, 1) : "-"};
    if (traced) cells.push_back(number(row.trace_step_us, 1));
    cells.insert(cells.end(), {e.kernel.empty() ? "-" : e.kernel, verdict_cell(e)});
    rows.push_back(std::move(cells));
  }
  std::vector<bool> right(header.size(), true);
  right[1] = right[2] = right[header.size() - 2] = right[header.size() - 1] = false;
  write_table(out, rows, right);
}

void print_lists(std::ostream& out, const ProfileResult& r) {
  for (const ProfileEntry& e : r.entries) {
    if (e.grouped_us && e.loop_us)
      out << fmt::format("grouped {}: one cublasGemmGroupedBatchedEx call {} us, its groups as a loop of GEMMs {} us; "
                         "the table takes the faster\n",
                         gemm_cell(r, e), fixed(*e.grouped_us, 1), fixed(*e.loop_us, 1));
    if (!e.row.time) out << fmt::format("not measured: {} ({})\n", gemm_cell(r, e), to_string(e.row.backend));
    else if (!e.no_verdict.empty()) out << fmt::format("no verdict for {}: {}\n", gemm_cell(r, e), e.no_verdict);
  }
  if (r.totals.outside_rows > 0) out << "outside the total: " << kFusedNote << "\n";
  for (const UnmappedOp& u : r.workload.unmapped)
    out << fmt::format("not mapped: {} x {}: {}{}\n", u.count, u.op, u.reason,
                       u.kernel_us ? fmt::format(" ({} of kernels)", us_or_ms(*u.kernel_us)) : "");
  if (r.totals.unmapped_trace_us)
    out << fmt::format("the unmapped ops' kernels take {} per step, not in the totals above\n",
                       us_or_ms(*r.totals.unmapped_trace_us));
  for (const std::string& n : r.workload.notes) out << "note: " << n << "\n";
  for (const std::string& s : r.skipped) out << "skipped: " << s << "\n";
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
  j["step_us"] = optional_json(row.step_us);
  j["share"] = optional_json(row.share);
  j["trace_kernels"] = g.kernels;
  j["trace_kernel_us"] = optional_json(g.kernel_us);
  j["trace_step_us"] = optional_json(row.trace_step_us);
  j["trace_kernel_names"] = g.kernel_names;
  j["kernel"] = e.kernel;
  j["grouped_call_us"] = optional_json(e.grouped_us);
  j["per_group_loop_us"] = optional_json(e.loop_us);
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
  j["measured_us"] = t.measured_us;
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
  return j;
}

}  // namespace

void write_profile_text(std::ostream& out, const ProfileResult& r) {
  out << source_line(r) << "\n" << numbers_line(r) << "\n\n";
  print_table(out, r);
  out << "\n" << total_line(r) << "\n";
  print_lists(out, r);
}

void write_profile_json(std::ostream& out, const ProfileResult& r) {
  Json j;
  j["source"] = r.workload.source;
  j["recorded_on"] = r.workload.device;
  j["steps"] = r.workload.steps;
  j["mode"] = r.measured ? "measured" : "store";
  j["numbers"] = numbers_line(r);
  j["backend"] = to_string(r.request.backend);
  j["samples"] = r.request.samples;
  j["db"] = r.request.db;
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
  out << j.dump(2) << "\n";
}

}  // namespace shapescope
