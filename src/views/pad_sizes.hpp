// `pad --trace` / `pad --gemms`: where no config names the dimensions, the sizes of the workload's
// GEMMs are the knobs (model/workload.hpp's dimension_knobs: 50257 in GPT-2's trace is the N of the LM
// head's forward, the M of its weight gradient and the K of its input gradient). Each size gets
// pad's candidates, every GEMM of the workload with the size changed is measured (reusing the
// store), and the step's GEMM time before and after says which to take. Report: report/pad_report.hpp.
#pragma once
#include <atomic>
#include <optional>
#include <vector>

#include "model/workload.hpp"
#include "views/pad.hpp"

namespace shapescope {

struct SizePadResult {
  Workload workload;
  std::vector<DimensionKnob> knobs;                   // by FLOPs of the GEMMs they appear in
  std::vector<ChoiceInfo> choices;                    // per knob (Choice::kSize)
  std::vector<std::vector<PadCandidate>> candidates;  // per knob
  std::vector<std::optional<Annotation>> probes;      // per knob: its probe GEMM's, once measured
  std::optional<StepTime> before;
  std::vector<std::vector<Evaluation>> evaluations;   // per knob
  std::vector<std::optional<size_t>> best;            // per knob
  GemmTimeOf time_of;                                 // nullopt for every problem in a dry run
  std::optional<PadMeasurement> measured;             // nullopt in a dry run
  std::optional<PadPrediction> predicted;             // pad --predict (then measured is nullopt)
};

// The sizes and the candidates that need no measurement (a dry run).
SizePadResult pad_sizes_plan(const Workload& workload, const PadRequest& request);
// Nothing measured: the candidates from each probe's `annotation_of`, each evaluated with `time_of`.
SizePadResult pad_sizes_from_times(const Workload& workload, const AnnotationOf& annotation_of, const GemmTimeOf& time_of);
// The workload measured first (its kernels' tiles and slots say which sizes fill a last wave), then
// every candidate's GEMMs; then each candidate evaluated.
SizePadResult pad_sizes_measure(const Workload& workload, const PadRequest& request, const DeviceContext& device,
                                Store& store, const ProgressFor& progress_for, const std::atomic<bool>* interrupted);

// No GPU: the same from the store's points (request.db, read-only) of the GPU that holds most of the
// workload's GEMMs; candidates whose GEMMs it lacks stay unmeasured. Error(kNoGpu) naming what to do
// when the store is missing or holds none of them.
SizePadResult pad_sizes_from_store(const Workload& workload, const PadRequest& request);

// Every call of the workload, and with `candidates` of each candidate's workload, as measured:
// (problem, backend), each once.
std::vector<BackendProblem> size_pad_problems(const SizePadResult& result, BackendKind backend, bool candidates);

}  // namespace shapescope
