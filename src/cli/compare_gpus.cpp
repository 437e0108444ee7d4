// GPUs side by side from several stores (no GPU needed): `explain SHAPE --db a.db --db b.db` prints
// the shape's row per GPU, `plot compare --db a.db --db b.db` draws a line per GPU.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "cli/plot.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "report/compare_gpus_report.hpp"
#include "views/compare_gpus.hpp"
#include "views/explain.hpp"

namespace shapescope {

void explain_across_stores(const ExplainRequest& request, const std::vector<std::string>& dbs, const Problem& target,
                           const GpuProfile* gpu, bool json) {
  if (gpu)
    throw usage_error(fmt::format("--gpu: '{}' with several --db: the stores name their GPUs (one --db to predict for "
                                  "a GPU profile)", gpu->key));
  if (request.lt_algos > 1)
    throw usage_error(fmt::format("--lt-algos: {} with several --db: the stores are compared at cuBLASLt's first "
                                  "choice (h0)", request.lt_algos));
  const GpuComparison comparison = compare_gpus(dbs, target, request.backend);
  if (json) {
    write_gpu_comparison_json(std::cout, comparison);
  } else {
    write_gpu_comparison_text(std::cout, comparison);
  }
}

void plot_gpus(const PlotOptions& o) {
  if (o.kind != PlotKind::kCompare)
    throw usage_error(fmt::format("--db: several stores are for plot compare (their GPUs side by side); plot {} "
                                  "takes one (merge them first with shapescope merge, then choose one with --gpu)",
                                  to_string(o.kind)));
  if (!o.calibration.empty())
    throw usage_error(fmt::format("--calibration: '{}' with several --db: each store's own calibration is used",
                                  o.calibration));
  const std::vector<GpuSeries> series = gpu_series(o.dbs, o.filter, "plot compare");
  std::vector<StoredPoint> all;
  for (const GpuSeries& s : series) all.insert(all.end(), s.selection.points.begin(), s.selection.points.end());
  const Plot plot = gpu_compare_plot(series, swept_axis(all, "plot compare"));
  render(o, plot, "compare-gpus", "");
  for (const GpuSeries& s : series)
    if (!s.selection.note.empty()) fmt::print(stderr, "plot: {}: {}\n", s.gpu, s.selection.note);
}

}  // namespace shapescope
