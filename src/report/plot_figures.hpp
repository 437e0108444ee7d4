// The figures of `shapescope plot`, one function per kind: from selected, annotated points to the
// variables and data blocks that the kind's template (plots/<kind>.gp) draws. Every plotted point
// carries hover text with its annotations. Pure C++: no gnuplot here.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/annotate.hpp"
#include "report/plot_gnuplot.hpp"
#include "views/plot_select.hpp"

namespace shapescope {

// A figure and a few lines about it for stdout (the numbers a reader looks for first).
struct Plot {
  Figure figure;
  std::vector<std::string> summary;
};

// Hover text of one measured point: shape, time and TFLOP/s, kernel, tile and tile grid, waves,
// alignment.
std::vector<std::string> point_tooltip(const StoredPoint& point, const Annotation& annotation);

// TFLOP/s against the swept size, coloured by the largest power of two dividing it.
Plot flops_plot(const Selection& selection, const SweptAxis& axis);
// Time against size; "bigger and faster" points (some smaller size takes longer) marked.
Plot runtime_plot(const Selection& selection, const SweptAxis& axis);
// TFLOP/s coloured by wave efficiency, and below it waves and wave efficiency, with the sizes
// where a kernel's tile grid starts a new wave.
Plot waves_plot(const Selection& selection, const SweptAxis& axis);
// TFLOP/s coloured by the kernel (or, with many, by kernel family and tile) that ran.
Plot kernels_plot(const Selection& selection, const SweptAxis& axis);
// Several backends or algorithms on one axis: each backend's default choice, and the fastest of
// the algorithms timed per shape. each_algo: one series per selected algorithm instead.
Plot compare_plot(const Selection& selection, const SweptAxis& axis, bool each_algo);
// TFLOP/s over a grid of two sizes.
Plot heatmap_plot(const Selection& selection, const GridAxes& axes);
// Points against the compute and bandwidth roofs.
Plot roofline_plot(const Selection& selection);

// One shape's output cut into tiles, coloured by the wave that computes them (tile i in
// rasterization order goes to wave i / slots), partial tiles and the last wave's slots drawn.
// title: the lines under the first (the GPU and library, or the model). Throws Error(kUsage) when
// the annotation lacks the tile or slots.
Plot tilegrid_plot(const Problem& problem, const Annotation& annotation, const std::string& title);

// Pieces with rules worth testing on their own.

// For sizes in increasing order with their times: the slowest smaller size when it took more than
// (1 + margin) times as long, else -1.
std::vector<int> slower_smaller_size(const std::vector<double>& times, double margin);
// Indices (into points in increasing size) where a new wave starts: the wave count (rounds) rose
// over the previous size that ran the same tile with the same slots.
std::vector<size_t> new_wave_starts(const std::vector<Annotation>& annotations);
// The legend group of each point's kernel: its short name when there are few, else its family and
// tile ("nvjet 256x128", "cutlass_75 128x128 align1"), the rarest folded into "other".
std::vector<std::string> kernel_groups(const std::vector<StoredPoint>& points,
                                       const std::vector<Annotation>& annotations, size_t max_groups);

// tilegrid from stored points of one shape: the newest measurement, with its kernel and slots.
Plot measured_tilegrid_plot(const Selection& s, const std::string& title);

}  // namespace shapescope
