// The same shapes on several GPUs, side by side: the stores given (`--db a.db --db b.db`), each
// GPU's points apart by its identity (UUID and software stack, as the store keys them), labelled
// by the GPU's name and the SM clock it ran at. Stores only read; no GPU needed.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/records.hpp"
#include "model/annotate.hpp"
#include "views/plot_select.hpp"

namespace shapescope {

// One GPU's measurement of the shape.
struct GpuRow {
  std::string gpu;     // "NVIDIA H200" (with the UUID's start when two GPUs of a name are shown)
  std::string store;   // the --db it came from
  StoredPoint point;
  Annotation annotation;
};

struct GpuComparison {
  Problem target;
  BackendKind backend = BackendKind::kCublas;
  std::string algo;
  std::vector<GpuRow> rows;          // in the order of the stores, fastest first within one
  std::vector<std::string> missing;  // stores without the shape: their path
};

// The newest point of `target` (cold; the backend as explain's --backend names it: cublas,
// cublaslt (its h0), custom:<variant>) on every GPU of every store. Error(kNoGpu) naming the stores
// when none holds the shape (explain's "nothing stored").
GpuComparison compare_gpus(const std::vector<std::string>& stores, const Problem& target, const BackendSpec& backend);

// One GPU's selection for a figure: plot's filters applied to its points of one store.
struct GpuSeries {
  std::string gpu;                   // label: name, and the UUID's start when names repeat
  std::string store;
  std::optional<double> clock_mhz;   // the median SM clock of its points
  Selection selection;
};

// Every GPU of every store that has points matching `filter` (each GPU's points selected as plot
// selects them: one dtype, layout, cuBLAS version and algorithm, newest of a key). A GPU without
// matching points is left out; Error(kUsage) as select_points gives it when no GPU has any, or
// fewer than two GPUs remain.
std::vector<GpuSeries> gpu_series(const std::vector<std::string>& stores, const PlotFilter& filter,
                                  const std::string& command);

}  // namespace shapescope
