// The text, JSON and figure of GPUs side by side (views/compare_gpus.hpp): explain with several
// --db prints one shape's row per GPU; plot compare with several --db draws a line per GPU.
#pragma once
#include <ostream>
#include <vector>

#include "report/plot_figures.hpp"
#include "views/compare_gpus.hpp"

namespace shapescope {

// A line naming the shape and where the numbers come from, then a table: GPU, store, time,
// TFLOP/s, speed against the fastest, kernel, tile, tiles, waves, SM clock, measured; then the
// stores without the shape.
void write_gpu_comparison_text(std::ostream& out, const GpuComparison& comparison);
// The same as JSON: {"shape", "gpus": [{"gpu", "store", "time_us", "tflops", "kernel", "tile", "waves",
// "sm_clock_mhz", ..., "point": {every field of the point}}], "missing": [...]}.
void write_gpu_comparison_json(std::ostream& out, const GpuComparison& comparison);

// TFLOP/s by the swept size, a line per GPU labelled with its SM clock; the summary gives each
// GPU's mean and, over the sizes every GPU has, the speed of each against the first.
Plot gpu_compare_plot(const std::vector<GpuSeries>& series, const SweptAxis& axis);

}  // namespace shapescope
