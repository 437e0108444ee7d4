// The figures' shared pieces (report/plot_common.hpp).
#include "report/plot_common.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "report/output.hpp"
#include "timing/stats.hpp"

namespace shapescope {

std::vector<size_t> by_size(const Selection& s, const SweptAxis& axis) {
  std::vector<size_t> order(s.points.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return axis.of(s.points[a].key.problem) < axis.of(s.points[b].key.problem);
  });
  return order;
}

void Series::add(Figure& figure, std::string title, std::string color, DataBlock block) {
  if (block.rows.empty()) return;
  figure.tooltips += block.rows.size();
  figure.add_block(std::move(block));
  titles.push_back(std::move(title));
  colors.push_back(std::move(color));
}

void Series::define(Figure& figure) const {
  figure.set_texts("SERIES_TITLE", titles);
  figure.set_texts("SERIES_COLOR", colors);
}

void ClassedPoints::define(Figure& figure, DataBlock block, const std::vector<std::string>& legend,
                           const std::vector<std::string>& titles, const std::vector<std::string>& colors) {
  std::map<std::string, size_t> number;
  for (size_t i = 0; i < legend.size(); ++i) number[legend[i]] = i + 1;
  std::vector<std::string> described;
  for (size_t i = 0; i < legend.size(); ++i) described.push_back(fmt::format("{} = {}", i + 1, titles[i]));
  block.title += fmt::format("; class {}", fmt::join(described, ", "));
  for (const Row& r : rows) block.rows.push_back(fmt::format("{} {}", r.text, number.at(r.key)));
  figure.tooltips += block.rows.size();
  figure.add_block(std::move(block));
  std::vector<double> rgb;
  for (const std::string& c : colors) rgb.push_back(double(std::stol(c.substr(1), nullptr, 16)));
  figure.set_texts("CLASS_TITLE", titles);
  figure.set_texts("CLASS_COLOR", colors);
  figure.set_numbers("CLASS_RGB", rgb);
}

PeakLine peak_line(const Selection& s) {
  std::vector<double> values;
  const Peak* any = nullptr;
  for (const Annotation& a : s.annotations) {
    if (a.roofline.peak_tflops.value <= 0) continue;
    values.push_back(a.roofline.peak_tflops.value);
    any = &a.roofline.peak_tflops;
  }
  PeakLine line;
  if (values.empty()) return line;
  line.value = middle_value(values);
  const std::string dtype(to_string(s.context.dtype));
  if (any->measured) {
    const bool scaled = any->source.find("scaled") != std::string::npos;
    line.label = fmt::format("measured {} peak {:.0f} TFLOP/s (info --calibrate{})", dtype, line.value,
                             scaled ? ", scaled to the points' SM clock" : "");
  } else {
    line.label = fmt::format("vendor {} peak {:.0f} TFLOP/s (datasheet; not calibrated)", dtype, line.value);
  }
  return line;
}

void common_text(Figure& figure, const std::string& what, const Selection& s) {
  figure.set_text("TITLE", what + "\n" + s.context.title());
}

void size_range(Figure& figure, const Selection& s, const SweptAxis& axis) {
  int64_t lo = 0, hi = 0;
  for (size_t i = 0; i < s.points.size(); ++i) {
    const int64_t x = axis.of(s.points[i].key.problem);
    lo = i == 0 ? x : std::min(lo, x);
    hi = i == 0 ? x : std::max(hi, x);
  }
  const double pad = hi > lo ? double(hi - lo) * 0.02 : 1.0;
  figure.set_number("XMIN", std::max(0.0, double(lo) - pad));
  figure.set_number("XMAX", double(hi) + pad);
}

std::string main_kernel_name(const StoredPoint& p, const Annotation& a) {
  if (a.main_kernel < 0) return "(no kernel recorded)";
  return short_kernel_name(p.kernels[size_t(a.main_kernel)].name);
}

}  // namespace shapescope
