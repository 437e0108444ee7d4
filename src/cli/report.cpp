// `shapescope report`: one self-contained HTML page of a sweep, from the store alone (no GPU needed).
// The store is only read; --out is replaced only when the page is complete.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "report/html_report.hpp"
#include "views/report.hpp"

namespace shapescope {
namespace {

struct ReportOptions {
  ReportRequest request;
  std::string out = "report.html";
  std::string gnuplot = "gnuplot";
  std::string templates = data_dir("plots");
  int slowest = int(ReportRequest{}.slowest);  // signed, so that "-1" is named as given
  bool force = false;
};

// The command as the page's footer shows it.
std::string command_line(const ReportOptions& o) {
  std::string line = fmt::format("shapescope report --db {} --out {}", o.request.db, o.out);
  const std::string filters = o.request.filter.given();
  if (filters != "no filter") line += " " + filters;
  if (size_t(o.slowest) != ReportRequest{}.slowest) line += fmt::format(" --slowest {}", o.slowest);
  return line;
}

void run_report(ReportOptions o) {
  const std::string db = o.request.db;
  const std::filesystem::path templates(o.templates);
  if (o.out != "-")
    check_output_path(o.out, "--out", {db, (templates / "flops.gp").string(), (templates / "waves.gp").string()},
                      store_at_output(o.force));
  o.request.slowest = size_t(o.slowest);
  check_templates(o.templates, {"flops", "waves"});
  const ReportView view = report_view(o.request);
  HtmlReportOptions html;
  html.templates = o.templates;
  html.gnuplot = o.gnuplot;
  const std::filesystem::path out_path(o.out);
  html.scratch_dir = out_path.has_parent_path() ? out_path.parent_path().string() : ".";
  html.command_line = command_line(o);
  html.version = version_line();
  write_whole_output(o.out, "--out", [&](std::ostream& out) { write_html_report(out, view, html); });
  if (o.out == "-") return;
  // What was written goes to stdout, as plot and merge say it (with --out - the page is stdout).
  announce(fmt::format("report: {} points of {} from '{}' to '{}'", view.how.points, view.context.gpu_name, db, o.out));
}

}  // namespace

void register_report(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  auto* cmd = app.add_subcommand("report", "One self-contained HTML page of stored points: figures, slow shapes, regret (no GPU needed)");
  cmd->footer(
      "The page holds the GPU and libraries, how the points were measured (samples, cold/hot L2, clocks,\n"
      "throttled and noisy counts), the flops and waves figures (hover a point), the shapes that are slow\n"
      "against a larger size near them with explain's verdict and fix, cuBLASLt's heuristic regret and our\n"
      "kernels against cuBLAS where the store has them. It fetches nothing: open it anywhere, or mail it.\n"
      "The selection options are plot's; one GPU, cuBLAS version, dtype and layout per page.\n"
      "Examples:\n"
      "  shapescope report --db h200.db --out report.html\n"
      "  shapescope report --db h200.db --n 1..4096 --out squares.html\n"
      "  shapescope report --db sweeps.db --m 4096 --k 4096 --n 1..8192:8 --gpu h100 --out h100.html\n"
      "Exit codes: 0 ok, 1 gnuplot failed, 2 bad option or an empty or mixed selection, 5 result store\n"
      "unusable, 6 --out could not be written, 7 gnuplot not installed (apt-get install gnuplot-nox).");
  add_db_option(cmd, o->request.db, "result store (SQLite file), opened read-only");
  add_out_option(cmd, o->out, "an HTML file, e.g. report.html, or - for standard output",
                 "the HTML file to write (replaced only when the page is complete); - for standard output");
  add_selection_options(cmd, o->request.filter);
  add_int_option(cmd, "--slowest", o->slowest, 1, 100, "rows of the slow-shapes table");
  cmd->add_flag("--force", o->force, kForceHelp);
  add_gnuplot_options(cmd, o->gnuplot, o->templates,
                      "directory of the flops.gp and waves.gp templates (default: shapescope's plots/)");
  cmd->callback([o] { run_report(*o); });
}

}  // namespace shapescope
