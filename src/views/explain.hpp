// `explain`'s view: one shape against its neighbours, from measurements made now, from the store
// (no GPU here), or from the model (a GPU profile and a tile). Returns the explanation's content;
// report/explain_report.hpp writes it.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/records.hpp"
#include "measure/progress.hpp"
#include "model/device_profile.hpp"
#include "model/explain.hpp"
#include "model/perf_predict.hpp"
#include "shape/plan.hpp"
#include "store/store.hpp"
#include "timing/measure_options.hpp"
#include "timing/paired.hpp"
#include "views/point_index.hpp"

namespace shapescope {

// Explain's default paired budget: with the warm-up and the points' own measurement, explain of a
// GEMM under 1 ms stays within 3 s. A longer GEMM pairs fewer points in it (model/explain_pairing.hpp:
// what the verdict rests on, 8 pairs of it whatever the budget, then what fits): a 7 ms GEMM's
// verdict points take ~1.3 s of passes where all ~100 points took 29 s on an H100.
constexpr double kExplainPairSeconds = 1.0;
// Points measured again later in paired passes are first measured with this many samples: enough to
// choose what to pair and to compare at a stable clock, not the interval the verdict reads.
constexpr int kSurveySamples = 3;

// What to explain, typed: the command line's text is read once, by the CLI (cli/explain.cpp), and
// profile and report make theirs from a Problem.
struct ExplainRequest {
  ShapeArg shape;           // the target's sizes; square (SHAPE was one number): its neighbours stay square
  std::string shape_text;   // SHAPE as the user gave it, for display only
  ProblemForm form;         // dtype, layout, recipe, batch, strides, offset: each candidate planned in it
  BackendSpec backend{BackendKind::kCublas};  // one backend: our kernels as one variant
  int lt_algos = 1;
  MeasureOptions measure;   // samples or the stopping rule, clock state, warm-up (as sweep's options)
  bool clocks_given = false;  // --clocks given: the store's points of that state only (else the newest's)
  std::string db = kDefaultStore;
  std::optional<std::pair<int, int>> tile;  // BM x BN for a model prediction
  // No GPU here, a GPU named and no measurement of the target: predicted by this performance model
  // (explain_predicted) instead of the tile model; none: the tile model (--tile) or a refusal.
  std::shared_ptr<const GpuPerfModel> perf_model;
  // The controls (DESIGN.md): our fixed kernel over the neighbours, the layout controls, the copy,
  // the launch floor and cuBLASLt's top `alternatives` algorithms at the target and its neighbour.
  bool controls = true;
  int alternatives = 8;
  // With the controls: the target in the other precisions precision_dtypes() names (model/explain.hpp),
  // timed like the other controls, and each one's output against an fp64 reference of the same inputs.
  bool precision = true;
  // Measuring: the points of the explanation are measured again in paired passes against the target
  // for at most this long (timing/paired.hpp), and the verdict follows the intervals; the points it
  // rests on are paired first, the others as the budget allows (model/explain_pairing.hpp); 0: compare
  // the points' own medians (the stored facts of their moments).
  double pair_seconds = kExplainPairSeconds;
  // The neighbours, the fixed kernel's points and cuBLASLt's alternatives are measured again later,
  // paired, by the caller (profile's what-ifs): each is first measured with kSurveySamples samples, as
  // explain's own pairing (pair_seconds > 0) does, unless measure.samples is given.
  bool paired_later = false;
  // --max-error: precision fixes whose relative error (the worse of Gaussian and outlier-channel
  // inputs) is above this, or not measured, are left out.
  std::optional<double> max_error;
};

// A point the explanation wanted and has no measurement of, and why.
struct NotMeasured {
  std::string what;  // "1793 (n+1)", "custom 05_wgmma_tma:128x256:dp 2047x2048x2048 bf16"
  std::string why;   // "the store has no point of it", the planner's or the measurement's reason
};

// A performance model's predictions (mode "predicted"): the model, and per point of the report its
// prediction (each point has one: a point the model cannot predict is listed as not measured).
struct ExplainPrediction {
  std::shared_ptr<const GpuPerfModel> model;  // keeps the classes the predictions point into
  std::string why;                            // why predicted: "--predict", "no GPU here and ..."
  std::vector<PerfPrediction> points;         // per report point
};

// Which points the paired passes compared with the target (model/explain_pairing.hpp), and which
// they left with their survey times.
struct PairingFacts {
  size_t paired = 0;       // points compared with the target (the target not counted)
  size_t survey_only = 0;  // points of a paired role left out: their survey times, compared with nothing
  double budget_s = 0;     // the passes' budget that chose them (--pair-seconds)
  double pair_all_s = 0;   // the --pair-seconds whose budget would pair every point (from the survey's times)
};

struct ExplainReport {
  std::string shape;                 // as the user gave it (ExplainRequest::shape_text)
  std::string mode;                  // "measured", "store", "model"
  std::string source;                // one line: where the numbers come from
  std::vector<ExplainPoint> points;  // [0] is the target
  std::vector<std::optional<StoredPoint>> stored;  // the measured point behind each (none for predictions)
  std::vector<NotMeasured> missing;  // neighbours and controls without a measurement, with why
  std::string fixed_kernel;          // the variant of the fixed-kernel control ("" when none runs here)
  double wall_s = 0;                 // measured mode: the whole explain, measurement included
  std::optional<PairedOutcome> paired;  // the paired passes the points' times and intervals come from
  std::optional<PairingFacts> pairing;  // with `paired`: which points they compared
  Explanation explanation;
  size_t over_max_error = 0;         // precision fixes left out for their error (--max-error)
  std::optional<ExplainPrediction> prediction;  // mode "predicted"
};

// No GPU here (or one named with --gpu): the store's newest measurement of the target and its
// neighbours; else, with a profile, the model's prediction; else Error(kNoGpu) saying what to do.
// `read`: the store (o.db) open and its points (load_all()) where the caller has them already: profile
// and report explain many shapes of one store, and opening and reading it once per shape made them
// quadratic.
struct StoreRead {
  const Store& store;
  const std::vector<StoredPoint>& pool;
  const PointIndex& index;  // of the pool, made once for every shape explained from it
};
ExplainReport explain_without_gpu(const ExplainRequest& o, const GpuProfile* profile, const Problem& target,
                                  const StoreRead* read = nullptr);
// The model's prediction for a GPU profile with the request's tile (Error(kUsage) without one).
ExplainReport explain_model(const ExplainRequest& o, const GpuProfile& profile, const Problem& target,
                            const std::string& why_not_store);
// Nothing measured: the target and its neighbours predicted by a GPU's performance model, their tile
// grids and waves under the kernels it assumed, and the size fixes by the predicted times. `why`: why
// predicted. Error(kNoGpu) when the model has no class for the target (no time is made up).
ExplainReport explain_predicted(const ExplainRequest& o, const std::shared_ptr<const GpuPerfModel>& model,
                                const Problem& target, const std::string& why);
struct ExplainJob {
  ExplainRequest request;
  Problem target;  // the request's shape in its form
};
struct ExplainJobResult {
  std::optional<ExplainReport> report;
  std::string why_none;
};
// `phase`, where given, is told each phase's wall time as it ends ("verdicts: targets", ...).
using PhaseDone = std::function<void(const std::string& phase, double seconds)>;
// With a GPU: the target measured, then its neighbours (the store supplies what it has); each
// phase's wall time and its measurements' cost told to `phase_done` as it ends.
ExplainReport explain_measured(const ExplainRequest& o, const Problem& target, const DeviceContext& device,
                               Store& store, const ProgressFor& progress_for, const std::atomic<bool>* interrupted,
                               const PhaseDone& phase_done = {});

// Several explanations measured together (profile's verdicts): each phase of explain_measured (the
// targets, the neighbours and controls, the other precisions, cuBLASLt's alternatives) runs as one
// measure() for every job, so that a step's GEMMs pay the set-up and warm-up of a few measurements
// rather than of four each. The jobs' measuring options are the first job's. A job that cannot be
// explained gets why, in the words explain would say it.
std::vector<ExplainJobResult> explain_many(const std::vector<ExplainJob>& jobs, const DeviceContext& device,
                                           Store& store, const std::atomic<bool>* interrupted,
                                           const PhaseDone& phase_done = {});

}  // namespace shapescope
