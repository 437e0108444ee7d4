#include "report/profile_html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "common/units.hpp"
#include "report/explain_report.hpp"
#include "report/html_report.hpp"
#include "report/prediction_text.hpp"
#include "report/profile_predicted_text.hpp"
#include "report/profile_report.hpp"
#include "report/what_if_text.hpp"
#include "views/what_ifs.hpp"

namespace shapescope {
namespace {

std::string esc(const std::string& text) { return html_escape(text); }

std::string card(const std::string& key, const std::string& value, const std::string& detail = "") {
  return fmt::format("<div class=\"card\"><div class=\"k\">{}</div><div class=\"v\">{}</div>{}</div>\n", esc(key),
                     esc(value), detail.empty() ? "" : "<div class=\"d\">" + esc(detail) + "</div>");
}

std::string cell(const std::optional<double>& v, int decimals) { return v ? fixed(*v, decimals) : "-"; }

// The findings first: another GPU, the step's GEMM time against the trace's, the largest GEMM, and
// what no total holds.
std::string glance(const ProfileResult& r, const ProfileText& text) {
  std::vector<std::string> items;
  if (text.other_gpu) items.push_back("<span class=\"bad\">" + esc(*text.other_gpu) + "</span>");
  items.push_back(esc(text.total));
  const auto top = std::find_if(r.entries.begin(), r.entries.end(),
                                [](const ProfileEntry& e) { return e.row.share.has_value(); });
  if (top != r.entries.end()) {
    std::string line = fmt::format("The largest: <b>{}</b> ({}), {} of the step's GEMM time",
                                   esc(profile_gemm_cell(r, *top)), esc(r.workload.gemms[top->row.gemm].origin),
                                   percent(*top->row.share, 1));
    if (top->explanation) line += ": " + esc(explain_verdict_line(*top->explanation));
    items.push_back(line + ".");
  }
  if (text.outside) items.push_back(esc(*text.outside));
  std::string s = "<div class=\"glance\"><ul>\n";
  for (const std::string& item : items) s += "<li>" + item + "</li>\n";
  return s + "</ul></div>\n";
}

// Predicted: the model, its file, what it was fitted on and the clock the times are at.
std::string model_cards(const ProfileResult& r) {
  const GpuPerfModel& g = *r.predicted->model;
  const PerfModel& m = g.model;
  std::string s = "<h3>Where the times come from</h3>\n<div class=\"cards\">\n";
  s += card("predicted for", m.gpu, m.scaled ? "scaled: " + m.scaled->terms() : "");
  s += card("performance model", std::filesystem::path(g.file).filename().string(), g.file);
  s += card("fitted on", fmt::format("{} points", m.points), m.source);
  s += card("cuBLAS", m.cublas, "its own choice of kernel, predicted");
  s += card("SM clock", fmt::format("{:.0f} MHz", m.clock_mhz), "the times are at the model's clock");
  s += card("expected error of the total", fmt::format("{} median", percent(r.predicted->error_median, 1)),
            fmt::format("{} p95", percent(r.predicted->error_p95, 1)));
  if (!r.workload.device.empty())
    s += card("the trace was recorded on", r.workload.device,
              r.workload.device_sms > 0 ? fmt::format("{} SMs", r.workload.device_sms) : "");
  return s + "</div>\n";
}

std::string source_cards(const ProfileResult& r) {
  if (r.predicted) return model_cards(r);
  const DeviceContext& d = r.measured ? r.measured->device : r.stored->device;
  std::string s = "<h3>Where the times come from</h3>\n<div class=\"cards\">\n";
  s += card(r.measured ? "measured now on" : "read from the store, measured on", d.gpu_name, d.gpu_uuid);
  s += card("SMs", d.sm_count > 0 ? std::to_string(d.sm_count) : "unknown",
            fmt::format("compute capability {}.{}", d.cc_major, d.cc_minor));
  s += card("driver", d.driver);
  s += card("cuBLAS", d.cublas, "cuBLASLt " + d.cublaslt);
  s += card("store", std::filesystem::path(r.request.db).filename().string(), r.request.db);
  if (r.measured) {
    const MeasurementSummary& m = *r.measured;
    s += card("GEMMs measured now", std::to_string(m.measured), fmt::format("{} from the store", m.reused));
    s += card("samples per GEMM", std::to_string(r.request.samples), "cold L2, medians reported");
    if (m.median_clock_mhz) s += card("SM clock (median)", fmt::format("{:.0f} MHz", *m.median_clock_mhz));
  } else {
    const StoredSource& st = *r.stored;
    s += card("GEMMs stored", fmt::format("{} of {}", st.points, r.entries.size()),
              st.first == st.last ? st.first : st.first + " .. " + st.last);
  }
  if (!r.workload.device.empty())
    s += card("the trace was recorded on", r.workload.device,
              r.workload.device_sms > 0 ? fmt::format("{} SMs", r.workload.device_sms) : "");
  return s + "</div>\n";
}

std::string gemm_row(const ProfileResult& r, size_t rank, const ProfileEntry& e, bool traced) {
  const ProfileRow& row = e.row;
  std::string answer;
  if (e.explanation) {
    answer = "<div class=\"verdict\">" + esc(explain_verdict_line(*e.explanation)) + "</div><div class=\"fix\">fix: " +
             esc(explain_fix_line(*e.explanation)) + "</div>";
  } else if (!e.no_verdict.empty()) {
    answer = "<div class=\"why\">no verdict: " + esc(e.no_verdict) + "</div>";
  } else {
    answer = row.time ? "-" : r.predicted ? "<div class=\"why\">not predicted: " + esc(e.not_predicted) + "</div>"
                                          : "<div class=\"why\">not measured</div>";
  }
  if (!e.verdict_shape.empty()) answer = "<div class=\"why\">largest group " + esc(e.verdict_shape) + "</div>" + answer;
  const std::string share =
      row.share ? fmt::format("{}<div class=\"bar\"><span style=\"width:{:.1f}%\"></span></div>", percent(*row.share, 1),
                              *row.share * 100)
                : "-";
  return fmt::format("<tr><td class=\"num\">{}</td><td><code class=\"shape\">{}</code><div class=\"why\">{}</div></td>"
                     "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                     "<td class=\"num\">{}</td>{}<td><code>{}</code></td><td>{}</td></tr>\n",
                     rank, esc(profile_gemm_cell(r, e)), esc(r.workload.gemms[row.gemm].origin),
                     fixed(row.calls_per_step, row.calls_per_step == double(int64_t(row.calls_per_step)) ? 0 : 2),
                     row.time ? fixed(row.time->median_us, 2) : "-",
                     r.predicted ? esc(predicted_error_cell(e)) : row.time ? percent(row.time->noise, 1) : "-",
                     cell(row.step_us, 1), share,
                     traced ? "<td class=\"num\">" + cell(row.trace_step_us, 1) + "</td>" : "",
                     esc(r.predicted ? predicted_kernel_cell(e) : e.kernel.empty() ? "-" : e.kernel), answer);
}

std::string gemm_table(const ProfileResult& r) {
  const bool traced = r.totals.trace_us.has_value();
  std::string s = "<h2 id=\"gemms\">GEMMs by time per step</h2>\n";
  s += fmt::format("<p>Every distinct GEMM of the step, its time per call (cold L2) times its calls per step, ranked; "
                   "the share is of the step's {} GEMM time. The verdict and fix are <code>shapescope explain</code>'s."
                   "{}</p>\n",
                   r.predicted ? "predicted" : "measured",
                   r.predicted ? " Every time is predicted; its error is its class's held-out error, median (p95) in %."
                               : "");
  s += fmt::format("<table><thead><tr><th class=\"num\">#</th><th>GEMM</th><th class=\"num\">calls/step</th>"
                   "<th class=\"num\">{}</th><th class=\"num\">{}</th><th class=\"num\">per step [us]</th>"
                   "<th class=\"num\">share</th>",
                   r.predicted ? "predicted [us]" : "per call [us]", r.predicted ? "error" : "noise");
  if (traced) s += "<th class=\"num\">trace [us]</th>";
  s += "<th>kernel</th><th>explain's verdict and fix</th></tr></thead><tbody>\n";
  for (size_t i = 0; i < r.entries.size(); ++i) s += gemm_row(r, i + 1, r.entries[i], traced);
  return s + "</tbody></table>\n";
}

// Measured what-ifs first (with a GPU): the two lists, each change with its saving per step and its
// interval, and each list's changes at once measured as a step.
std::string what_ifs_section(const ProfileResult& r) {
  if (!r.measured && !r.predicted) return "";
  const WhatIfs w = what_ifs(r);
  std::string s = "<h2 id=\"what-ifs\">What would make this step faster</h2>\n";
  if ((w.same_dtype.ranked.empty() && w.precision.ranked.empty()) || w.step_us <= 0) {
    s += "<p class=\"note\">" + esc(no_what_if_text(r)) + ".</p>\n";
    // What the model could not price, said even where nothing it priced saves enough.
    if (r.predicted)
      for (const std::string& line : what_if_lines(r, w)) s += "<p class=\"note\">" + esc(line) + "</p>\n";
    return s;
  }
  for (const WhatIfListText& list : {same_dtype_text(r, w), precision_text(r, w)}) {
    if (list.heading.empty()) continue;
    s += "<p>" + esc(list.heading) + "</p>\n<table><thead><tr>";
    for (const std::string& h : list.table.front()) s += "<th>" + esc(h) + "</th>";
    s += "</tr></thead><tbody>\n";
    for (size_t i = 1; i < list.table.size(); ++i) {
      s += "<tr>";
      for (const std::string& cell : list.table[i]) s += "<td>" + esc(cell) + "</td>";
      s += "</tr>\n";
    }
    s += "</tbody></table>\n";
    if (list.all) s += "<p class=\"note\">" + esc(*list.all) + "</p>\n";
  }
  for (const std::string& line : what_if_lines(r, w)) s += "<p class=\"note\">" + esc(line) + "</p>\n";
  return s;
}

std::string lists_section(const ProfileText& text) {
  std::string s = "<h2 id=\"left-out\">Not in the table's totals</h2>\n";
  if (text.lists.empty()) return s + "<p class=\"note\">Nothing: every GEMM was measured and is in the total.</p>\n";
  s += "<ul>\n";
  for (const std::string& line : text.lists) s += "<li class=\"note\">" + esc(line) + "</li>\n";
  return s + "</ul>\n";
}

}  // namespace

void write_profile_html(std::ostream& out, const ProfileResult& r, const ProfileHtmlOptions& o) {
  const ProfileText text = profile_text(r);
  out << html_page_start("shapescope profile: " + r.workload.source);
  out << "<header><h1>GEMMs of " << esc(r.workload.source) << "</h1>\n<p class=\"sub\">" << esc(text.source)
      << "</p>\n<p class=\"sub\">" << esc(text.numbers) << "</p>\n"
      << "<nav>" << (r.measured || r.predicted ? "<a href=\"#what-ifs\">what-ifs</a>" : "")
      << "<a href=\"#gemms\">GEMMs</a><a href=\"#left-out\">left out</a></nav></header>\n";
  out << glance(r, text) << what_ifs_section(r) << source_cards(r) << gemm_table(r) << lists_section(text);
  out << "<footer>Made by " << esc(o.version) << " with <code>" << esc(o.command_line)
      << "</code>. "
      << (r.predicted ? "Times are a performance model's predictions of one call with a cold L2, nothing measured."
                      : "Times are medians of the samples, one call with a cold L2.")
      << "</footer>\n"
      << html_page_end();
}

}  // namespace shapescope
