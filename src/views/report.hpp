// `report`'s view: everything one page shows about a selection of stored points, gathered into a
// plain struct from the store alone (no GPU): the device and libraries, how the points were
// measured, the series the figures draw, the shapes that are slow against their size-neighbours
// (with explain's verdict and fix), the cuBLASLt heuristic's regret and our kernels against cuBLAS.
// report/html_report.hpp writes it.
#pragma once
#include <optional>

#include "views/explain.hpp"
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/records.hpp"
#include "model/annotate.hpp"
#include "store/store.hpp"
#include "views/plot_select.hpp"

namespace shapescope {

struct ReportRequest {
  std::string db = kDefaultStore;
  PlotFilter filter;
  size_t slowest = 12;       // rows of the slow-shapes table
};

// How the selected points were measured.
struct MeasuredHow {
  size_t points = 0;
  bool hot = false;                      // all hot (--hot) or all cold: a selection never mixes them
  int samples_min = 0, samples_max = 0;  // samples per point
  double samples_median = 0;
  std::optional<double> clock_min, clock_median, clock_max;  // SM clock [MHz] seen per point
  size_t with_clock = 0;                 // points that recorded a clock
  size_t throttled = 0, noisy = 0;
  double noise_median = 0, noise_p95 = 0;  // relative IQR
  std::string first, last;               // measured_at, ISO 8601 UTC
  struct Backend {
    BackendKind kind = BackendKind::kCublas;
    size_t algos = 0, points = 0;        // algorithms (or our kernel variants) and their points
  };
  std::vector<Backend> backends;
  std::vector<Calibration> calibrations; // `info --calibrate` peaks of the GPU in the store
};

// A shape that takes longer than a size at least as large close to it in the store: its time
// against the fastest such neighbour's, and explain's one-line answer for it.
struct SlowShape {
  size_t index = 0;          // into ReportView::main
  size_t neighbour = 0;      // into ReportView::main: the faster, at least as large size
  double speedup = 1;        // this point's time / the neighbour's
  size_t same_kernel = 0;    // slow shapes (speedup >= the threshold) that ran the same main kernel
  std::optional<ExplainReport> explanation;  // explain's, from the store; nullopt with explain_error set
  std::string explain_error;
};

// A problem with several cuBLASLt algorithms timed: the heuristic's first choice (h0) against the
// fastest of them.
struct RegretRow {
  size_t h0 = 0, best = 0;   // into ReportView::lt_points
  double regret = 0;         // h0's time / the best's - 1
};

// One of our kernel variants over the problems where cuBLAS's default was timed too.
struct OursRow {
  std::string variant;       // the custom point's algo: "04_mma_pipelined:128x128:dp"
  size_t shapes = 0;
  double median_share = 0;   // median over those problems of cuBLAS's time / ours
  double best_share = 0, worst_share = 0;
  Problem best_problem, worst_problem;
  Problem largest_problem;   // the problem with the most FLOPs, and the share there
  double largest_share = 0;
};

struct ReportView {
  std::string db;
  std::string filters;       // the selection as given ("no filter", "--n 1..4096")
  DeviceContext device;      // of the newest selected point
  PlotContext context;
  MeasuredHow how;
  // The series the figures and the slow shapes are about: cuBLAS's default where it was timed,
  // else cuBLASLt's first choice, else the backend and algorithm with the most points.
  Selection main;
  std::optional<SweptAxis> axis;  // none when more than one size varies (no figures, no neighbours)
  std::string axis_note;     // why there is no axis
  size_t slow_count = 0;     // points of main that are slow (speedup >= kSlowSpeedup)
  std::vector<SlowShape> slowest;
  Selection lt_points;       // the cuBLASLt points of problems with two or more algorithms timed
  std::vector<RegretRow> regret;   // by regret, largest first
  std::vector<OursRow> ours;       // by median share, best first
};

// A neighbour is one of the next kNeighbourSteps sizes above in the store's order (the same sizes
// when fewer follow); a shape is slow when such a neighbour, with at least as many FLOPs, takes
// 1/kSlowSpeedup of its time or less.
inline constexpr size_t kNeighbourSteps = 8;
inline constexpr double kSlowSpeedup = 1.2;

// The view: opens the store read-only. Throws Error(kUsage) naming the option for a bad filter or an
// empty or mixed selection (as plot does), Error(kStore) for an unusable store.
ReportView report_view(const ReportRequest& request);

// Pieces with rules worth testing on their own.

// For points of one series sorted by `axis`: each slow point with its fastest larger neighbour,
// at most `per_kernel` per main kernel, the largest speed-ups first, `count` at most. Sets
// same_kernel; leaves verdict and fix empty. slow_count: all slow points.
std::vector<SlowShape> slow_shapes(const Selection& series, const SweptAxis& axis, size_t count,
                                   size_t per_kernel, size_t& slow_count);
// Problems with two or more cuBLASLt algorithms timed (from a selection of every algorithm).
Selection lt_selection(const Selection& all);
std::vector<RegretRow> regret_rows(const Selection& lt);
std::vector<OursRow> ours_rows(const Selection& all);

}  // namespace shapescope
