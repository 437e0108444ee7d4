// What the figures of report/plot_*.cpp share: colours, the order of points by size, the series and
// classes a template draws, the compute peak line, the title and the x range. Internal to report/.
#pragma once
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "model/annotate.hpp"
#include "report/plot_gnuplot.hpp"
#include "views/plot_select.hpp"

namespace shapescope {

// Colours that stay apart for most readers (Tableau 10 order), then two more; grey is "other".
inline constexpr std::array<const char*, 12> kCategoryColors = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                                               "#9467bd", "#8c564b", "#e377c2", "#17becf",
                                                               "#bcbd22", "#393b79", "#ad494a", "#637939"};
inline constexpr const char* kOtherColor = "#c7c7c7";

inline double tflops_of(const Annotation& a) { return a.roofline.tflops.value_or(0); }

// The points in increasing swept size (then backend and algorithm, as selected).
std::vector<size_t> by_size(const Selection& s, const SweptAxis& axis);

// Series are the first blocks of the data file, in legend order; the template loops over them.
struct Series {
  std::vector<std::string> titles, colors;

  void add(Figure& figure, std::string title, std::string color, DataBlock block);
  void define(Figure& figure) const;
};

// Points of several classes in one block, in size order, each row ending in its class number
// (1-based): classes that share a band of TFLOP/s interleave instead of one hiding the other.
// The legend is made of keyentry lines from CLASS_TITLE[] and CLASS_COLOR[]; CLASS_RGB[] holds
// the same colours as numbers for `lc rgb variable`.
struct ClassedPoints {
  struct Row {
    std::string key;   // the class
    std::string text;  // the row without its class number
  };
  std::vector<Row> rows;

  // legend: class keys in legend order, with their titles and colours.
  void define(Figure& figure, DataBlock block, const std::vector<std::string>& legend,
              const std::vector<std::string>& titles, const std::vector<std::string>& colors);
};

// The compute peak the points ran against: the middle of their (clock-scaled) peaks.
struct PeakLine {
  double value = 0;
  std::string label;
};
PeakLine peak_line(const Selection& s);

// The figure's title: what it shows, then the selection's context.
void common_text(Figure& figure, const std::string& what, const Selection& s);
// x range of a figure over sizes: the sizes and a little room on both sides.
void size_range(Figure& figure, const Selection& s, const SweptAxis& axis);

// The point's main kernel, shortened; "(no kernel recorded)".
std::string main_kernel_name(const StoredPoint& p, const Annotation& a);

}  // namespace shapescope
