// The drawing of a `plot` figure: gnuplot in a temporary folder, the four files moved into place.
#include <fmt/format.h>

#include <filesystem>

#include "cli/plot.hpp"
#include "common/output_file.hpp"
#include "report/plot_gnuplot.hpp"

namespace shapescope {

std::string command_line(const PlotOptions& o) {
  std::string line = fmt::format("shapescope plot {}", to_string(o.kind));
  if (!o.shape.empty()) line += " " + o.shape;
  for (const std::string& db : o.dbs.empty() ? std::vector<std::string>{o.db} : o.dbs) line += " --db " + db;
  line += " --out " + o.out;
  const std::string filters = o.filter.given();
  if (filters != "no filter") line += " " + filters;
  if (!o.calibration.empty()) line += " --calibration " + o.calibration;
  if (o.tile) line += fmt::format(" --tile {}x{}", o.tile->first, o.tile->second);
  return line;
}

void render(const PlotOptions& o, const Plot& plot, const std::string& default_name, const std::string& title) {
  const PlotPaths paths = plot_paths(o.out, default_name);
  const std::string template_path =
      (std::filesystem::path(o.templates) / (plot.figure.kind + ".gp")).string();
  // None of the four files may be a file the plot reads (a store, its template), a directory or a
  // device: "plot flops --out plots/" in the source tree would write its script over the template.
  std::vector<std::string> read = {o.calibration, template_path};
  for (const std::string& db : o.dbs.empty() ? std::vector<std::string>{o.db} : o.dbs) read.push_back(db);
  for (const char* extension : {"svg", "png", "gp", "dat"})
    check_output_path(paths.file(extension), "--out", read, store_at_output(o.force));
  const std::string warnings = render_figure(plot.figure, template_path, paths, o.gnuplot, o.command_line, title);
  size_t start = 0;
  while (start < warnings.size()) {
    const size_t end = warnings.find('\n', start);
    const std::string line = warnings.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!line.empty()) fmt::print(stderr, "gnuplot: {}\n", line);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  announce(fmt::format("wrote {} {} {} {}", paths.file("svg"), paths.file("png"), paths.file("gp"), paths.file("dat")));
  for (const std::string& line : plot.summary) announce("  " + line);
}

}  // namespace shapescope
