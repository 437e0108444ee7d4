// Fuzz target: the views and writers of stored points (report, plot, export): a random store of a
// sweep (squares or one swept dimension, with gaps, several algorithms, our kernels, stray points),
// selected with random filters, gathered by report_view (slow shapes with explain's answers, regret,
// our kernels' shares) and written as the HTML page (the figures left out: gnuplot is a program of
// its own), as the figures' data and scripts, and as export's CSV, JSON and table. Refusals: an
// empty or mixed selection, a bad filter (exit 2).
#include <fmt/format.h>

#include "fuzz_views.hpp"
#include "report/html_report.hpp"
#include "report/output.hpp"
#include "report/plot_figures.hpp"
#include "report/plot_gnuplot.hpp"
#include "views/plot_select.hpp"
#include "views/report.hpp"

namespace {

using namespace shapescope;

// A sweep's problems: one dimension (or all three: squares) over a range with a step, the others fixed.
std::vector<Problem> swept(FuzzedDataProvider& in, const ShapeOptions& options, PlotFilter& filter) {
  ShapeOptions s = options;
  const int64_t first = fuzz::size(in, 8192);
  const int64_t step = in.ConsumeIntegralInRange<int64_t>(1, 512);
  const int64_t last = first + step * in.ConsumeIntegralInRange<int64_t>(0, 40);
  const std::string range = fmt::format("{}..{}:{}", first, last, step);
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: s.n = range; break;  // squares
    case 1: s.m = range, s.n = s.k = std::to_string(fuzz::size(in, 8192)); break;
    case 2: s.n = range, s.m = s.k = std::to_string(fuzz::size(in, 8192)); break;
    default: s.k = range, s.m = s.n = std::to_string(fuzz::size(in, 8192)); break;
  }
  if (in.ConsumeBool()) {
    // As the CLI reads them: a range given, "" not given.
    const auto sizes = [](const std::string& text, const char* option) {
      return text.empty() ? SizeFilter{} : size_filter(text, option);
    };
    filter.m = sizes(s.m, "--m"), filter.n = sizes(s.n, "--n"), filter.k = sizes(s.k, "--k");
  }
  std::vector<Problem> problems = plan_problems(s);
  // Gaps: a sweep cut short, or points deleted.
  problems.erase(std::remove_if(problems.begin(), problems.end(), [&](const Problem&) { return fuzz::rarely(in, 6); }),
                 problems.end());
  return problems;
}

void write_figure(const Plot& plot) {
  const PlotPaths paths{"/nonexistent", plot.figure.kind};
  script_text(plot.figure, "set terminal svg\nplot 'DATA'\n", paths, "shapescope plot fuzz");
  data_text(plot.figure, "fuzz");
}

void views_of(FuzzedDataProvider& in, fuzz::TemporaryStore& store) {
  const ShapeOptions options = fuzz::shape_options(in);
  ReportRequest request;
  std::vector<Problem> problems = swept(in, options, request.filter);
  if (problems.empty()) problems.push_back(fuzz::problem(in, options, 8192));
  store.fill(in, options, problems, 48);
  request.db = store.path();
  // The sweep's own options select its points again (a filter's batch, padding and offset are the
  // sweep's, as the CLI takes them).
  request.filter.batch = size_filter(options.batch, "--batch");
  request.filter.ld_pad = options.ld_pad;
  request.filter.offset = options.offset;
  if (fuzz::rarely(in, 4)) request.filter.backends = comma_list_option(fuzz::pick(in, {"cublas", "cublaslt", "custom", "cublas,cublaslt"}), "--backend");
  if (fuzz::rarely(in, 6)) request.filter.gpu = find_profile(fuzz::pick(in, {"h100", "h200", "a100"}));
  if (fuzz::rarely(in, 6)) request.filter.gpu_name = fuzz::pick(in, {"h100", "H200", "nothing"});
  if (fuzz::rarely(in, 6)) request.filter.clocks = ClockState::kBurst;
  request.filter.hot = fuzz::rarely(in, 10);
  request.slowest = in.ConsumeIntegralInRange<size_t>(1, 100);
  switch (in.ConsumeIntegralInRange<int>(0, 2)) {
    case 0: {
      ReportView view = report_view(request);
      const std::optional<SweptAxis> axis = view.axis;
      view.axis.reset();  // no figures: no gnuplot
      view.axis_note = "fuzz";
      std::ostringstream page;
      write_html_report(page, view, HtmlReportOptions{});
      if (axis) {
        write_figure(flops_plot(view.main, *axis));
        write_figure(waves_plot(view.main, *axis));  // last: refused when no point's tile and slots are known
      }
      break;
    }
    case 1: {
      const Store s(request.db, Store::Access::kReadOnly);
      const Selection sel = select_points(s.load_all(), request.db, request.filter, Algos::kAll, "export", s, Mixes::kKeep);
      for (Format f : {Format::kCsv, Format::kJson, Format::kTable}) {
        std::ostringstream out;
        write_points(out, f, sel.points, sel.annotations, in.ConsumeBool() ? KernelNames::kWhole : KernelNames::kShort);
      }
      break;
    }
    default: {
      const Store s(request.db, Store::Access::kReadOnly);
      const Selection sel = select_points(s.load_all(), request.db, request.filter, Algos::kOne, "plot", s);
      const SweptAxis axis = swept_axis(sel.points, "plot");
      write_figure(flops_plot(sel, axis));
      write_figure(runtime_plot(sel, axis));
      write_figure(kernels_plot(sel, axis));
      write_figure(roofline_plot(sel));
      write_figure(waves_plot(sel, axis));  // last: refused when no point's tile and slots are known
      break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  fuzz::TemporaryStore store;
  return fuzz::answer_or_refuse([&] { views_of(in, store); }, {ExitCode::kUsage});
}
