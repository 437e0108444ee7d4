#include "report/html_report.hpp"

#include "report/explain_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "common/output_file.hpp"
#include "common/units.hpp"
#include "core/backend_kind.hpp"
#include "report/annotation_text.hpp"
#include "report/plot_figures.hpp"
#include "report/plot_gnuplot.hpp"

namespace shapescope {

namespace {

// The page's look: one column, system fonts (nothing to fetch), tables that wrap long kernel names.
constexpr const char* kStyle = R"css(
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--panel:#f6f8fa;--accent:#0969da;--bad:#cf222e;--good:#1a7f37}
*{box-sizing:border-box}
body{margin:0;background:#fff;color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif}
main{max-width:1200px;margin:0 auto;padding:28px 32px 56px}
h1{font-size:27px;line-height:1.25;margin:0 0 6px}
h2{font-size:20px;margin:40px 0 10px;padding-bottom:6px;border-bottom:1px solid var(--line)}
h3{font-size:13px;margin:18px 0 6px;color:var(--muted);text-transform:uppercase;letter-spacing:.05em}
p{margin:6px 0 10px;max-width:78em}
.sub{color:var(--muted);margin:0}
nav{margin:14px 0 0;font-size:14px}
nav a{color:var(--accent);text-decoration:none;margin-right:18px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(175px,1fr));gap:10px;margin:6px 0 4px}
.card{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:8px 12px}
.card .k{font-size:12px;color:var(--muted)}
.card .v{font-size:16px;font-weight:600;overflow-wrap:anywhere}
.card .d{font-size:12px;color:var(--muted);overflow-wrap:anywhere}
.glance{background:#f0f7ff;border:1px solid #b6d7ff;border-radius:8px;padding:10px 18px;margin:18px 0 0}
.glance ul{margin:4px 0;padding-left:20px}
.glance li{margin:3px 0}
figure{margin:10px 0 4px;border:1px solid var(--line);border-radius:8px;padding:6px;background:#fff}
svg.figure-svg{display:block;width:100%;height:auto}
svg.figure-svg > rect:first-of-type{stroke:none}
svg.figure-svg g.tip:hover use{color:#000}
figcaption{color:var(--muted);font-size:13px;padding:4px 6px 0}
table{border-collapse:collapse;width:100%;font-size:13.5px;margin:8px 0}
th,td{border-bottom:1px solid var(--line);padding:6px 8px;text-align:left;vertical-align:top}
th{background:var(--panel);font-weight:600;font-size:12.5px}
td.num,th.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
.bar{background:var(--panel);border:1px solid var(--line);height:7px;border-radius:3px;margin-top:3px;min-width:60px}
.bar span{display:block;height:100%;background:var(--accent);border-radius:3px}
code.shape{white-space:nowrap}
tbody tr:hover{background:#fafbfc}
code{font:12.5px/1.4 ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;overflow-wrap:anywhere}
.verdict{font-weight:600}
.fix{color:var(--good);margin-top:3px}
.why{color:var(--muted)}
.bad{color:var(--bad);font-weight:600}
.note{color:var(--muted);font-size:14px}
footer{margin-top:44px;padding-top:10px;border-top:1px solid var(--line);color:var(--muted);font-size:13px}
)css";

// No script, style, font or image may come from anywhere: the browser refuses them and says so.
constexpr const char* kPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

std::string esc(const std::string& text) { return html_escape(text); }

std::string code(const std::string& text) { return "<code>" + esc(text) + "</code>"; }

std::string card(const std::string& key, const std::string& value, const std::string& detail = "") {
  return fmt::format("<div class=\"card\"><div class=\"k\">{}</div><div class=\"v\">{}</div>{}</div>\n", esc(key),
                     esc(value), detail.empty() ? "" : "<div class=\"d\">" + esc(detail) + "</div>");
}

std::string day(const std::string& iso) { return iso.substr(0, 10); }

std::string shape_label(const ReportView& v, const Problem& p) {
  return v.axis && v.axis->dim == SweptAxis::Dim::kSquare ? std::to_string(p.n) : p.shape_string();
}

std::string kernel_of(const StoredPoint& p, const Annotation& a) {
  return a.main_kernel >= 0 ? short_kernel_name(p.kernels[size_t(a.main_kernel)].name) : "unknown";
}

double tflops_at(const Annotation& a) { return a.roofline.tflops.value_or(0); }

std::string device_cards(const ReportView& v) {
  const DeviceContext& d = v.device;
  std::string s = "<h3>Device and libraries</h3>\n<div class=\"cards\">\n";
  s += card("GPU", d.gpu_name, d.gpu_uuid);
  s += card("SMs", std::to_string(d.sm_count), fmt::format("compute capability {}.{}", d.cc_major, d.cc_minor));
  // The store keeps what identifies a measurement; sizes and clocks only where a sweep recorded them.
  if (d.memory_bytes > 0) s += card("memory", gib(double(d.memory_bytes), 1), fmt::format("L2 {}", mib(double(d.l2_bytes), 0)));
  if (d.max_sm_clock_mhz > 0) s += card("max SM clock", fmt::format("{} MHz", d.max_sm_clock_mhz));
  s += card("driver", v.context.driver);
  s += card("CUDA runtime", v.context.cuda_runtime);
  s += card("cuBLAS", d.cublas, "cuBLASLt " + d.cublaslt);
  const bool one_day = day(v.how.first) == day(v.how.last);
  s += card("measured", one_day ? day(v.how.first) : day(v.how.first) + " .. " + day(v.how.last),
            fmt::format("{} .. {} (UTC)", v.how.first.substr(one_day ? 11 : 0), v.how.last.substr(one_day ? 11 : 0)));
  return s + "</div>\n";
}

std::string clock_text(const MeasuredHow& h) {
  if (!h.clock_median) return "not recorded";
  return fmt::format("{:.0f} MHz", *h.clock_median);
}

std::string method_cards(const ReportView& v) {
  const MeasuredHow& h = v.how;
  std::string s = "<h3>How it was measured</h3>\n<div class=\"cards\">\n";
  std::vector<std::string> backends;
  for (const MeasuredHow::Backend& b : h.backends)
    backends.push_back(b.algos == 1 ? fmt::format("{}: {}", to_string(b.kind), b.points)
                                    : fmt::format("{}: {} ({} {})", to_string(b.kind), b.points, b.algos,
                                                  b.kind == BackendKind::kCustom ? "variants" : "algorithms"));
  s += card("points", std::to_string(h.points), fmt::format("{}", fmt::join(backends, ", ")));
  s += card("L2 before each sample", h.hot ? "hot (not flushed)" : "cold (flushed)",
            h.hot ? "throughput of a call in a loop" : "the latency of one call, as in a model's step");
  s += card("samples per point", h.samples_min == h.samples_max ? std::to_string(h.samples_min)
                                                               : fmt::format("{}..{}", h.samples_min, h.samples_max),
            fmt::format("median {:.0f}; medians reported", h.samples_median));
  s += card("SM clock seen (median)", clock_text(h),
            !h.clock_min                  ? "no NVML clock readings"
            : *h.clock_min == *h.clock_max ? fmt::format("the same at all {} points", h.with_clock)
                                           : fmt::format("{:.0f}..{:.0f} MHz over {} points", *h.clock_min, *h.clock_max,
                                                         h.with_clock));
  s += card("noise (relative IQR)", percent(h.noise_median, 1) + " median",
            fmt::format("95th percentile {}", percent(h.noise_p95, 1)));
  s += card("throttled", std::to_string(h.throttled), "a sample below 90 % of the run's clock, or a power/thermal reason");
  s += card("noisy", std::to_string(h.noisy), "noise above --max-noise after the re-measurements");
  for (const Calibration& c : h.calibrations) {
    // Measured at one SM clock; each point's % of peak is of this peak scaled to the point's clock.
    if (c.what.rfind("tflops:", 0) == 0 && c.what.substr(7) == to_string(v.context.dtype)) {
      const std::optional<double> mhz = calibration_clock(c);
      s += card("peak " + c.what.substr(7) + " (info --calibrate)",
                tflops_text(c.value, 1) + (mhz ? fmt::format(" at {:.0f} MHz", *mhz) : ""),
                c.detail + (mhz ? "; a point's % of peak is of this peak scaled to the point's own SM clock" : ""));
    }
    if (c.what == "bandwidth") s += card("bandwidth (info --calibrate)", fmt::format("{:.0f} GB/s", c.value), c.detail);
  }
  return s + "</div>\n";
}

// The findings a reader wants first, one line each.
std::string glance(const ReportView& v) {
  std::vector<std::string> items;
  const auto best = std::max_element(v.main.annotations.begin(), v.main.annotations.end(),
                                     [](const Annotation& a, const Annotation& b) { return tflops_at(a) < tflops_at(b); });
  if (best != v.main.annotations.end()) {
    const StoredPoint& p = v.main.points[size_t(best - v.main.annotations.begin())];
    std::string line = fmt::format("Fastest point ({}): <b>{}</b> at {}", esc(series_name(p.key)), tflops_text(tflops_at(*best), 1),
                                   esc(shape_label(v, p.key.problem)));
    // The peak it is measured against, at the clock it is scaled to (the card gives the calibration's).
    if (best->roofline.pct_peak) {
      const Peak& peak = best->roofline.peak_tflops;
      line += fmt::format(" ({} of the peak, {}{})", percent(*best->roofline.pct_peak, 1), tflops_text(peak.value, 1),
                          peak.clock_mhz ? fmt::format(" at {:.0f} MHz", *peak.clock_mhz) : "");
    }
    items.push_back(line + ".");
  }
  if (v.axis && !v.main.points.empty()) {
    std::string line = fmt::format("<b>{} of {}</b> shapes take {:.1f}x the time of a size at least as large up to {} "
                                   "steps above them, or more.",
                                   v.slow_count, v.main.points.size(), kSlowSpeedup, kNeighbourSteps);
    if (!v.slowest.empty()) {
      const SlowShape& w = v.slowest.front();
      line += fmt::format(" The worst: {} takes <span class=\"bad\">{:.1f}x</span> the time of {}.",
                          esc(shape_label(v, v.main.points[w.index].key.problem)), w.speedup,
                          esc(shape_label(v, v.main.points[w.neighbour].key.problem)));
    }
    items.push_back(line);
  }
  if (!v.regret.empty()) {
    const RegretRow& r = v.regret.front();
    items.push_back(fmt::format("cuBLASLt's first choice over the fastest of its algorithms: up to {} (at {}), over {} "
                                "shapes with several algorithms timed.",
                                percent(r.regret, 1), esc(v.lt_points.points[r.h0].key.problem.shape_string()),
                                v.regret.size()));
  }
  if (!v.ours.empty()) {
    const OursRow& o = v.ours.front();
    items.push_back(fmt::format("Our best kernel, {}, runs at {} of cuBLAS's speed (median over {} shapes).",
                                code(o.variant), percent(o.median_share, 1), o.shapes));
  }
  std::string s = "<div class=\"glance\"><ul>\n";
  for (const std::string& item : items) s += "<li>" + item + "</li>\n";
  return s + "</ul></div>\n";
}

// A figure drawn by gnuplot in a scratch folder, its SVG read back and made fit for the page.
std::string figure_svg(const Plot& plot, const std::string& prefix, const HtmlReportOptions& o) {
  OutputFolder scratch(o.scratch_dir.empty() ? "." : o.scratch_dir, "--out");
  const CommitNow scratch_files;  // the figure's files are read back here, then go with the folder
  const PlotPaths paths{scratch.path(), plot.figure.kind};
  const std::string template_path = (std::filesystem::path(o.templates) / (plot.figure.kind + ".gp")).string();
  render_figure(plot.figure, template_path, paths, o.gnuplot, o.command_line, plot.figure.kind);
  std::ifstream in(paths.file("svg"), std::ios::binary);
  std::stringstream svg;
  svg << in.rdbuf();
  return inline_svg(svg.str(), prefix);
}

std::string figures(const ReportView& v, const HtmlReportOptions& o) {
  if (!v.axis)
    return "<h2 id=\"flops\">Figures</h2>\n<p class=\"note\">No figures, which need one swept size: " + esc(v.axis_note) +
           "</p>\n";
  std::string s = "<h2 id=\"flops\">TFLOP/s by size</h2>\n";
  s += "<p>Every point of " + esc(series_name(v.main.points.front().key)) +
       ", coloured by the largest power of two dividing the size: the levels are the alignment rules. "
       "Hover a point for its time, kernel, tile grid, waves and alignment.</p>\n";
  s += "<figure>" + figure_svg(flops_plot(v.main, *v.axis), "flops-", o) + "</figure>\n";
  s += "<h2 id=\"waves\">Waves</h2>\n";
  try {
    const Plot waves = waves_plot(v.main, *v.axis);
    s += "<p>The same points coloured by how full the GPU's last wave of tiles is; below, the waves (tiles over the "
         "CTAs the GPU holds at once). Dotted lines: sizes where a kernel's tile grid needs one more wave.</p>\n";
    s += "<figure>" + figure_svg(waves, "waves-", o) + "</figure>\n";
  } catch (const Error& e) {
    if (e.code() != ExitCode::kUsage) throw;
    s += "<p class=\"note\">No waves figure: " + esc(e.what()) + "</p>\n";
  }
  return s;
}

std::string slow_row(const ReportView& v, size_t rank, const SlowShape& w) {
  const StoredPoint& p = v.main.points[w.index];
  const StoredPoint& q = v.main.points[w.neighbour];
  const Annotation& a = v.main.annotations[w.index];
  std::string answer = fmt::format("<div class=\"why\">runs {} (as do {} slow shapes)</div>", code(kernel_of(p, a)),
                                   w.same_kernel);
  if (w.explanation) {
    answer += "<div class=\"verdict\">" + esc(explain_verdict_line(*w.explanation)) + "</div>";
    answer += "<div class=\"fix\">" + esc(explain_fix_line(*w.explanation)) + "</div>";
  } else {
    answer += "<div class=\"why\">explain had no answer: " + esc(w.explain_error) + "</div>";
  }
  return fmt::format(
      "<tr><td class=\"num\">{}</td><td class=\"num\"><b>{}</b></td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
      "<td class=\"num\">{} in {}</td><td class=\"num bad\">{:.2f}x</td><td>{}</td></tr>\n",
      rank, esc(shape_label(v, p.key.problem)), us_or_ms(p.result.timing.median_us), fixed(tflops_at(a), 1),
      esc(shape_label(v, q.key.problem)), us_or_ms(q.result.timing.median_us), w.speedup, answer);
}

std::string slow_section(const ReportView& v) {
  std::string s = "<h2 id=\"slow\">Slowest shapes against their neighbours</h2>\n";
  if (!v.axis) return s + "<p class=\"note\">Not computed: " + esc(v.axis_note) + "</p>\n";
  s += fmt::format("<p>A shape is slow when a size at least as large, up to {} steps above it in this store, takes "
                   "1/{:.1f} of its time or less. {} of {} shapes are; below, the worst of each kernel that ran them, "
                   "with <code>shapescope explain</code>'s verdict and fix (from the store, no GPU).</p>\n",
                   kNeighbourSteps, kSlowSpeedup, v.slow_count, v.main.points.size());
  if (v.slowest.empty()) return s + "<p class=\"note\">None: every shape is as fast as its larger neighbours.</p>\n";
  s += "<table><thead><tr><th class=\"num\">#</th><th class=\"num\">shape</th><th class=\"num\">time</th>"
       "<th class=\"num\">TFLOP/s</th><th class=\"num\">faster size</th><th class=\"num\">speed-up</th>"
       "<th>kernel; explain's verdict and fix</th></tr></thead><tbody>\n";
  for (size_t i = 0; i < v.slowest.size(); ++i) s += slow_row(v, i + 1, v.slowest[i]);
  return s + "</tbody></table>\n";
}

std::string regret_section(const ReportView& v) {
  std::string s = "<h2 id=\"regret\">Heuristic regret (cuBLASLt)</h2>\n";
  if (v.regret.empty())
    return s + "<p class=\"note\">No shape in this selection has several cuBLASLt algorithms timed; "
               "<code>shapescope sweep --backend cublaslt --lt-algos 8</code> times the heuristic's first eight.</p>\n";
  const size_t first_best = size_t(std::count_if(v.regret.begin(), v.regret.end(), [](const RegretRow& r) { return r.regret <= 0; }));
  s += fmt::format("<p>The heuristic's first choice (h0) against the fastest algorithm it offered, each timed, over {} "
                   "shapes: h0 was the fastest for {}. The {} largest regrets:</p>\n",
                   v.regret.size(), first_best, std::min<size_t>(v.regret.size(), 15));
  s += "<table><thead><tr><th class=\"num\">shape</th><th class=\"num\">h0</th><th>h0's kernel</th>"
       "<th class=\"num\">fastest</th><th>its kernel</th><th class=\"num\">regret</th></tr></thead><tbody>\n";
  for (size_t i = 0; i < v.regret.size() && i < 15; ++i) {
    const RegretRow& r = v.regret[i];
    const StoredPoint& h0 = v.lt_points.points[r.h0];
    const StoredPoint& best = v.lt_points.points[r.best];
    s += fmt::format("<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{} {}</td>"
                     "<td>{}</td><td class=\"num{}\">{}</td></tr>\n",
                     esc(h0.key.problem.shape_string()), us_or_ms(h0.result.timing.median_us),
                     code(kernel_of(h0, v.lt_points.annotations[r.h0])), esc(best.key.algo),
                     us_or_ms(best.result.timing.median_us), code(kernel_of(best, v.lt_points.annotations[r.best])),
                     r.regret >= 0.05 ? " bad" : "", percent(r.regret, 1));
  }
  return s + "</tbody></table>\n";
}

std::string ours_section(const ReportView& v) {
  std::string s = "<h2 id=\"ours\">Our kernels against cuBLAS</h2>\n";
  if (v.ours.empty())
    return s + "<p class=\"note\">No shape in this selection has both our kernels and cuBLAS timed; "
               "<code>shapescope sweep --backend cublas,custom</code> times them side by side.</p>\n";
  s += "<p>Each of our kernel variants (<code>--backend custom</code>, verified against cuBLAS before it was timed) over "
       "the shapes where cuBLAS's default was timed too: cuBLAS's time over ours (100 % = as fast as cuBLAS).</p>\n";
  s += "<table><thead><tr><th>variant</th><th class=\"num\">shapes</th><th class=\"num\">median</th>"
       "<th class=\"num\">best</th><th class=\"num\">worst</th><th class=\"num\">at the largest shape</th></tr></thead><tbody>\n";
  for (const OursRow& o : v.ours) {
    s += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\"><b>{}</b></td><td class=\"num\">{} at {}</td>"
                     "<td class=\"num\">{} at {}</td><td class=\"num\">{} at {}</td></tr>\n",
                     code(o.variant), o.shapes, percent(o.median_share, 1), percent(o.best_share, 1),
                     esc(o.best_problem.shape_string()), percent(o.worst_share, 1), esc(o.worst_problem.shape_string()),
                     percent(o.largest_share, 1), esc(o.largest_problem.shape_string()));
  }
  return s + "</tbody></table>\n";
}

}  // namespace

std::string html_page_start(const std::string& title) {
  return std::string("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n") +
         "<meta http-equiv=\"Content-Security-Policy\" content=\"" + kPolicy + "\">\n" +
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n" + "<title>" + esc(title) +
         "</title>\n<style>" + kStyle + "</style>\n</head>\n<body><main>\n";
}

std::string html_page_end() { return "</main></body>\n</html>\n"; }

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

void write_html_report(std::ostream& out, const ReportView& v, const HtmlReportOptions& o) {
  // The figures first: gnuplot missing or failing ends the command before a byte of the page.
  const std::string figure_html = figures(v, o);
  const std::string what = fmt::format("{}, {} {}, cuBLAS {}", v.context.gpu_name, to_string(v.context.dtype),
                                       to_string(v.context.layout), v.context.cublas);
  out << html_page_start("shapescope report: " + what);
  out << "<header><h1>Matrix multiplications on " << esc(v.context.gpu_name) << "</h1>\n<p class=\"sub\">"
      << esc(fmt::format("{} {}, {} L2, from {} ({}), {} points", to_string(v.context.dtype), to_string(v.context.layout),
                         v.context.hot ? "hot" : "cold", std::filesystem::path(v.db).filename().string(), v.filters,
                         v.how.points))
      << "</p>\n<nav><a href=\"#flops\">TFLOP/s</a><a href=\"#waves\">waves</a><a href=\"#slow\">slow shapes</a>"
      << "<a href=\"#regret\">heuristic regret</a><a href=\"#ours\">our kernels</a></nav></header>\n";
  out << glance(v) << device_cards(v) << method_cards(v);
  out << figure_html << slow_section(v) << regret_section(v) << ours_section(v);
  out << "<footer>Made by " << esc(o.version) << " with <code>" << esc(o.command_line)
      << "</code>, from the store alone (no GPU). Times are medians of the samples; TFLOP/s = 2MNK / time."
      << "</footer>\n" << html_page_end();
}

}  // namespace shapescope
