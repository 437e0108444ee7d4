// `pad`'s view: a model's GEMMs per step, the padded sizes proposed for each dimension, and (unless
// a dry run) every GEMM each candidate touches measured, reusing the store, with the step time
// before and after. Returns the analysis; report/pad_report.hpp writes it.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/device_context.hpp"
#include "measure/progress.hpp"
#include "model/pad.hpp"
#include "model/perf_predict.hpp"
#include "store/store.hpp"
#include "views/measured_set.hpp"
#include "views/paired_steps.hpp"

namespace shapescope {

struct PadRequest {
  std::vector<int64_t> tokens;  // one analysis per count
  bool train = false;
  int64_t tp = 1;
  DType dtype = DType::kBf16;
  Fp8Scaling fp8 = Fp8Scaling::kTensor;  // fp8's training recipe (--recipe)
  std::string dtype_name = "bf16";  // as the user gave it (shown), with an fp8 recipe: "fp8 block"
  BackendKind backend = BackendKind::kCublas;
  int samples = 10;
  ClockState clocks = ClockState::kSustained;  // measured in, and only points of it compared
  std::string db = kDefaultStore;
  // With a GPU: the step and every candidate measured again together, in paired passes of at most
  // this many seconds per run (views/paired_steps.hpp); 0: the savings come from the points as
  // measured one by one.
  double pair_seconds = kPadPairSeconds;
  static constexpr double kPadPairSeconds = 5;
};

// Pad's paired rule: each candidate's step ratio to +-0.5 % (a saving to +-0.5 percentage points).
PairedRule pad_paired_rule(double pair_seconds);

// One token count: the step's GEMMs, the choices, their candidates and, once measured, the times.
struct PadAnalysis {
  StepOptions step;
  std::vector<StepGemm> gemms;
  std::vector<ChoiceInfo> choices;
  std::vector<std::vector<PadCandidate>> candidates;  // per choice
  std::vector<std::optional<Annotation>> probes;      // per choice: its probe GEMM's, once measured
  std::optional<StepTime> before;
  std::vector<std::vector<Evaluation>> evaluations;   // per choice
  std::vector<std::optional<size_t>> best;             // per choice
};

// Where the times come from (the GPU, what was measured now or reused, the clocks seen) and the
// copy bandwidth (for the tokens' run-time copy), measured or not.
struct PadMeasurement : MeasurementSummary {
  Peak bandwidth;
  std::vector<PairedStepsRun> paired;  // the paired runs (none: not paired)
  std::vector<std::string> not_paired;  // "vocab_size 50264: why", candidates left unpaired
};

// pad --predict: the times are a GPU's performance model's, each problem's prediction (nullptr where
// the model has none: a class it lacks, a grouped call) with its class's held-out error.
struct PadPrediction {
  std::shared_ptr<const GpuPerfModel> model;
  std::function<const PerfPrediction*(const Problem&)> of;
};

struct PadResult {
  std::vector<PadAnalysis> analyses;
  GemmTimeOf time_of;                      // nullopt for every problem in a dry run
  std::optional<PadMeasurement> measured;  // nullopt in a dry run
  std::optional<PadPrediction> predicted;  // pad --predict (then measured is nullopt)
};

// The GEMMs and the candidates that need no measurement (a dry run).
PadResult pad_plan(const ModelConfig& config, const PadRequest& request);
// Nothing measured: the candidates from each probe's `annotation_of`, each evaluated with `time_of`
// (a performance model's: views/pad_predicted.hpp).
using AnnotationOf = std::function<std::optional<Annotation>(const Problem&)>;
PadResult pad_from_times(const ModelConfig& config, const PadRequest& request, const AnnotationOf& annotation_of,
                         const GemmTimeOf& time_of);
// The step measured first (its kernels' tiles and slots say which sizes fill a last wave), then
// every candidate's GEMMs; then each candidate evaluated.
PadResult pad_measure(const ModelConfig& config, const PadRequest& request, const DeviceContext& device, Store& store,
                      const ProgressFor& progress_for, const std::atomic<bool>* interrupted);

// No GPU: the same analysis from the store's points (request.db, read-only) of the GPU that holds most
// of the step's GEMMs; candidates whose GEMMs it lacks stay unmeasured. Error(kNoGpu) naming what to
// do when the store is missing or holds none of the step's GEMMs.
PadResult pad_from_store(const ModelConfig& config, const PadRequest& request);

// No GPU: the store (request.db, read-only), its points and the setup (GPU, driver, libraries) that
// holds most of `step` (each problem on its backend, the library's own choice, cold). Error(kNoGpu)
// naming what to do when the store is missing or holds none of `what` ("the step's 12 GEMMs").
struct StoredSetup {
  std::unique_ptr<Store> store;
  std::vector<StoredPoint> pool;
  DeviceContext device;
};
StoredSetup stored_setup(const PadRequest& request, const std::vector<BackendProblem>& step, const std::string& what);
// Each problem on `backend`.
std::vector<BackendProblem> with_backend(const std::vector<Problem>& problems, BackendKind backend);

// Every problem of these analyses (the step's, and with `candidates` each candidate's), once each.
std::vector<Problem> distinct_problems(const std::vector<PadAnalysis>& analyses, bool candidates);

}  // namespace shapescope
