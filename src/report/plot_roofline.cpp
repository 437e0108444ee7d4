// plot roofline: the points against the compute and bandwidth roofs.
#include "report/plot_figures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/error.hpp"
#include "common/units.hpp"
#include "model/alignment.hpp"
#include "timing/stats.hpp"
#include "report/annotation_text.hpp"
#include "report/output.hpp"
#include "report/plot_common.hpp"

namespace shapescope {

Plot roofline_plot(const Selection& s) {
  Plot plot;
  Figure& f = plot.figure;
  f.kind = "roofline";
  common_text(f, fmt::format("roofline: {}", series_name(s.points.front().key)), s);
  const PeakLine peak = peak_line(s);
  std::vector<double> bandwidths;
  const Peak* bw = nullptr;
  for (const Annotation& a : s.annotations) {
    if (a.roofline.bandwidth_gbs.value <= 0) continue;
    bandwidths.push_back(a.roofline.bandwidth_gbs.value);
    bw = &a.roofline.bandwidth_gbs;
  }
  if (peak.value <= 0 || !bw) {
    throw usage_error(fmt::format("--calibration: no compute or bandwidth peak for {} ({} {}); run shapescope info "
                                  "--calibrate on it, or name a store that holds its calibration",
                                  s.context.gpu_name, to_string(s.context.dtype), "peak"));
  }
  const double bandwidth = middle_value(bandwidths);
  const std::string bw_label =
      bw->measured ? fmt::format("measured bandwidth {:.0f} GB/s (info --calibrate: device copy)", bandwidth)
                   : fmt::format("vendor bandwidth {:.0f} GB/s (datasheet; not calibrated)", bandwidth);

  DataBlock aligned, broken;
  aligned.title = "rows of A, B and C 16-byte aligned";
  broken.title = "a row not 16-byte aligned";
  aligned.columns = broken.columns = "intensity [FLOP/byte]  TFLOP/s  tooltip";
  double xmin = 0, xmax = 0, ymin = 0;
  size_t near_roof = 0;
  for (size_t i = 0; i < s.points.size(); ++i) {
    const Annotation& a = s.annotations[i];
    const Roofline& r = a.roofline;
    if (!r.tflops || *r.tflops <= 0 || r.intensity <= 0) continue;
    std::vector<std::string> tip = point_tooltip(s.points[i], a);
    const double roof = std::min(peak.value, r.intensity * bandwidth / 1e3);
    tip.insert(tip.begin() + 2,
               fmt::format("intensity {:.1f} FLOP/byte ({} bytes at least); roof {:.0f} TFLOP/s ({} bound): {} of it",
                           r.intensity, r.min_bytes, roof, r.intensity * bandwidth / 1e3 < peak.value ? "memory" : "compute",
                           percent_tight(*r.tflops / roof, 0)));
    if (*r.tflops >= 0.5 * roof) ++near_roof;
    (a.alignment.ok() ? aligned : broken)
        .rows.push_back(fmt::format("{:.6g} {:.6g} {}", r.intensity, *r.tflops, tooltip_field(tip)));
    xmin = xmin == 0 ? r.intensity : std::min(xmin, r.intensity);
    xmax = std::max(xmax, r.intensity);
    ymin = ymin == 0 ? *r.tflops : std::min(ymin, *r.tflops);
  }
  const size_t plotted = aligned.rows.size() + broken.rows.size();
  Series series;
  series.add(f, "rows of A, B, C 16-byte aligned", "#1f77b4", std::move(aligned));
  series.add(f, "a row not 16-byte aligned", "#d62728", std::move(broken));
  series.define(f);
  const double ridge = peak.value * 1e3 / bandwidth;
  f.set_number("PEAK", peak.value);
  f.set_number("BANDWIDTH", bandwidth);
  f.set_number("RIDGE", ridge);
  f.set_text("PEAK_LABEL", peak.label);
  f.set_text("BANDWIDTH_LABEL", bw_label);
  // Decades around the points and the ridge, so both roofs show.
  f.set_number("XMIN", std::pow(10, std::floor(std::log10(std::min(xmin, ridge)))));
  f.set_number("XMAX", std::max(xmax, ridge) * 3);
  f.set_number("YMIN", std::pow(10, std::floor(std::log10(ymin))));
  f.set_number("YMAX", peak.value * 3);
  plot.summary.push_back(fmt::format("{} points; roofs {:.0f} TFLOP/s and {:.0f} GB/s meet at {:.0f} FLOP/byte; {} "
                                     "points reach half their roof or more",
                                     plotted, peak.value, bandwidth, ridge, near_roof));
  return plot;
}

}  // namespace shapescope
