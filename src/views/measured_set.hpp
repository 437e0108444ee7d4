// Measure-or-reuse for the views that time a list of GEMMs (pad, profile): each problem on its
// backend with the library's own choice (cuBLAS "default", cuBLASLt "h0", cublas_grouped "default"),
// cold L2. measure() runs once per backend and dtype (it fills its buffers with one dtype), reusing
// the store, and the annotations are saved after each run; the points are kept by problem and backend.
#pragma once
#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/backend_kind.hpp"
#include "core/device_context.hpp"
#include "measure/progress.hpp"
#include "model/annotate.hpp"
#include "model/pad.hpp"
#include "store/store.hpp"

namespace shapescope {

// Where a view's times come from: the GPU, what was measured now or reused, the clocks seen.
struct MeasurementSummary {
  DeviceContext device;
  size_t measured = 0, reused = 0;
  std::optional<double> median_clock_mhz;  // over the GEMMs, where NVML saw a clock
  size_t throttled = 0, gemms = 0;
};

// A problem and the backend that measures it (its own choice of algorithm); or a spec, which for our
// kernels names the variant (profile times a grouped call with our grouped kernel too).
using BackendProblem = std::pair<Problem, BackendKind>;
using SpecProblem = std::pair<Problem, BackendSpec>;

class MeasuredSet {
 public:
  // `clocks`: the state every GEMM is measured in; only points of it are compared (a burst time beside
  // a sustained one would make a padding look better or worse than it is).
  MeasuredSet(const DeviceContext& device, Store& store, int samples, ClockState clocks,
              const std::atomic<bool>* interrupted, std::string command);
  // No GPU: measure_all() takes the points from `pool` (a store read earlier: its points of `device_`
  // in the clock state, cold) instead of measuring; what the pool lacks stays unknown.
  void read_only_from(std::vector<StoredPoint> pool);
  // Measures what is not known yet: one measure() per backend and dtype, each given progress_for(its
  // points). Returns measure()'s skip lines. Throws Error(kInterrupted), naming `command`, when
  // interrupted (what was measured is saved).
  std::vector<std::string> measure_all(const std::vector<BackendProblem>& wanted, const ProgressFor& progress_for);
  std::vector<std::string> measure_all(const std::vector<SpecProblem>& wanted, const ProgressFor& progress_for);
  // The number of points measure_all(wanted) would ask measure() for (the ones not known yet).
  size_t unknown(const std::vector<BackendProblem>& wanted) const;
  size_t unknown(const std::vector<SpecProblem>& wanted) const;

  const StoredPoint* find(const Problem& problem, BackendKind backend) const;
  const StoredPoint* find(const Problem& problem, const BackendSpec& backend) const;
  std::optional<GemmTime> time_of(const Problem& problem, BackendKind backend) const;
  std::optional<Annotation> annotation_of(const Problem& problem, BackendKind backend) const;
  // Big GEMMs timed back to back run into the power cap: the reader must know the clock.
  MeasurementSummary summary() const;

 private:
  const DeviceContext& device_;
  Store& store_;
  int samples_;
  ClockState clocks_;
  const std::atomic<bool>* interrupted_;
  std::string command_;
  // A call: its problem on its backend (for our kernels, the variant).
  struct Call {
    Problem problem;
    BackendSpec backend;
    bool operator==(const Call& o) const { return problem == o.problem && backend == o.backend; }
  };
  struct CallHash {
    size_t operator()(const Call& c) const;
  };
  std::unordered_map<Call, StoredPoint, CallHash> points_;
  std::optional<std::vector<StoredPoint>> pool_;  // read_only_from()
  std::unordered_multimap<Problem, size_t, ProblemHash> pool_index_;  // pool_'s points by problem
  size_t measured_ = 0, reused_ = 0;
};

// Several measure() calls of `total` points drawn as one progress line.
ProgressFor single_progress_line(const ProgressCallback& line, size_t total);

}  // namespace shapescope
