// `profile`'s view: every distinct GEMM of a workload (a trace, a GEMM list or a model's step), timed
// on this GPU (measure(), the store reused) or read from the store when there is no GPU here, ranked
// by its time per step, each with explain's one-line verdict; and the step's total against the
// trace's own GEMM kernel time. Returns the content; report/profile_report.hpp writes it.
#pragma once
#include <optional>

#include "views/explain.hpp"
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/device_context.hpp"
#include "measure/progress.hpp"
#include "model/perf_predict.hpp"
#include "model/profile.hpp"
#include "store/store.hpp"
#include "views/measured_set.hpp"
#include "timing/replay_plan.hpp"
#include "views/step_replay.hpp"
#include "views/what_ifs.hpp"

namespace shapescope {

// The what-ifs' paired run: the step's GEMMs and every candidate's, in the same passes.
constexpr double kProfilePairSeconds = 3;
// A --what-if step's move, replayed: its passes' time limit (s) by default (--what-if-seconds), and
// the least a user may give: the limit it replaces is the step's own (a shorter one would time the
// step itself, and every GEMM's time read from the replay, on fewer replays).
constexpr double kWhatIfSeconds = 30, kWhatIfMinSeconds = kStepReplaySeconds;

struct ProfileRequest {
  BackendKind backend = BackendKind::kCublas;  // for ordinary GEMMs (profile_backend picks the others')
  int samples = 10;
  // The state the GEMMs are measured in, and only points of it compared. Not given (clocks_given
  // false) and the workload a trace with its timeline: the step is replayed (views/step_replay.hpp)
  // and its GEMMs' times are the replay's, at the clock the step runs at; the GEMMs measured one by
  // one (their kernels, the verdicts, the clock inference) are then measured at burst clocks.
  ClockState clocks = ClockState::kSustained;
  bool clocks_given = false;
  // --clocks replay: a trace's step replayed even where its compute-bound GEMMs ran at the boost clock
  // (by default those are measured at burst clocks and the changed steps paired, not replayed).
  bool replay_always = false;
  double burst_idle = MeasureOptions{}.burst_idle;  // at burst clocks (the verdicts' state): --burst-idle
  std::string db = kDefaultStore;
  bool fused_in_total = false;     // count attention's GEMMs in the total (no FlashAttention)
  bool verdicts = true;            // explain each GEMM (measures its neighbours with a GPU)
  // The what-ifs' one paired run (every candidate against the step, views/what_ifs.hpp) lasts at most
  // about this long (0: none measured). Explain's verdicts are not paired one by one.
  double pair_seconds = kProfilePairSeconds;
  std::vector<size_t> what_ifs;    // --what-if N[,M...]: those what-ifs at once, measured as a step too
  // --what-if-seconds: a replayed step's passes go on for up to this long (counted replays) until the
  // --what-if step's move is known within +-5 % (timing/replay_plan.hpp: ReplayRule::precise).
  double what_if_seconds = kWhatIfSeconds;
  PhaseDone phase_done;            // told each phase's wall time as it ends (progress on stderr)
  std::optional<double> max_error;  // --max-error: precision what-ifs within this error only
  // --micro-batches: the micro-batches (gradient accumulation) of one step. A weight's fp8 cast is paid
  // once per step, and a GEMM row's calls per step are its weights times the micro-batches: its weight
  // casts per step are its calls over this.
  int micro_batches = 1;
};

struct ProfileEntry {
  ProfileRow row;
  std::string kernel;            // short name of the main kernel of the measured call; "" unknown
  std::optional<Annotation> annotation;
  std::optional<ExplainReport> explanation;  // explain's, worded by report/; nullopt when there is none
  std::string verdict_shape;     // the GEMM explained, when not the row's own (a grouped call's largest group)
  std::string no_verdict;        // why there is none (explain's own message), "" otherwise
  // A grouped call, measured up to three ways: one cublasGemmGroupedBatchedEx call, its groups as a
  // loop of ordinary GEMMs (the sum of their medians), and (on compute capability 9.0, where it runs
  // the call) our grouped kernel, 05_wgmma_tma's grouped schedule: one persistent launch over every
  // group's tiles, the class of PyTorch's _grouped_mm. The row's time is the fastest.
  std::optional<double> grouped_us, loop_us, custom_us;
  // The way the row's time was measured (the library, or our grouped kernel where it was faster):
  // what runs its calls in the step's paired runs and replays.
  BackendSpec way{BackendKind::kCublas};
  std::optional<double> point_clock_mhz;  // the SM clock its point was measured at (NVML)
  // profile --predict: the performance model's prediction of the row's time (row.time is it, with the
  // class's median held-out error as its noise), or why there is none. A grouped call has none; its
  // groups as a loop of GEMMs are predicted into loop_us where the model predicts every group.
  std::optional<PerfPrediction> predicted;
  std::string not_predicted;
};

// The stored measurements a profile without a GPU reads: one GPU's (the one with the most of them).
struct StoredSource {
  DeviceContext device;
  std::string first, last;       // measured_at of the oldest and newest point used
  size_t points = 0;
};

// A step's fp8 casts measured (ProfileResult::fp8_casts). At namespace scope, not nested: clang
// cannot default-construct a nested struct with member initializers through std::optional::emplace.
struct ProfileFp8Casts {
  double us_per_step = 0;
  size_t casts = 0, measured = 0;
};

// A kind of what-if the performance model cannot price, and why: for the GEMMs it would change (profile
// entries), or for every GEMM (`entries` empty).
struct ProfileNotPredicted {
  WhatIfKind kind = WhatIfKind::kAlgorithm;
  std::string what;             // "fp8", "cuBLASLt's other algorithms and our fixed kernel"
  std::string why;
  std::vector<size_t> entries;  // into ProfileResult::entries, in rank order
};

// profile --predict: the model every time came from, and what its errors mean for the step's total.
// The total's error is its GEMMs' held-out errors weighted by their predicted time per step: errors of
// one model may share their sign (a class predicted slow is slow on every GEMM of it), so they are
// added as if they did, never as independent errors that would shrink in the sum.
struct ProfilePrediction {
  std::shared_ptr<const GpuPerfModel> model;
  double error_median = 0, error_p95 = 0;  // of the total (rows of the total with a prediction)
  size_t outside_rows = 0;                 // of those, predicted outside their class's measured range
  double outside_us = 0;                   // their time per step (the errors above do not cover it)
  std::vector<ProfileNotPredicted> not_predicted;  // what-ifs the model cannot price
};

struct ProfileResult {
  Workload workload;
  ProfileRequest request;
  std::vector<ProfileEntry> entries;  // ranked (rank_rows)
  ProfileTotals totals;
  std::optional<MeasurementSummary> measured;  // measured now, on a GPU here
  std::optional<StoredSource> stored;          // read from the store (no GPU here)
  std::optional<ProfilePrediction> predicted;  // predicted by a performance model (--predict)
  std::vector<std::string> skipped;            // measure()'s skip lines
  // The step replayed (its GEMMs' times are the replay's): how the replay ran, the clock included;
  // and the clock the trace's own compute-bound GEMMs ran at (model/profile.hpp: infer_clock).
  std::optional<StepReplayFacts> replay;
  std::optional<ClockInference> trace_clock;
  // Not replayed, as the trace ran at the boost clock (model/profile.hpp: step_clock_call): the GEMMs'
  // burst times are the step's.
  bool ran_at_boost = false;
  std::string replay_why;                      // why the step was replayed (model/profile.hpp: step_clock_call)
  std::string not_replayed;                    // why a trace's step was not replayed ("" otherwise)
  // The what-ifs: every candidate change with its measurement (views/what_ifs.hpp ranks them), the
  // paired run they were measured in, and the changed steps (a list's changes at once, --what-if N).
  std::vector<WhatIfCandidate> candidates;
  std::optional<PairedStepsRun> candidates_run;
  std::vector<ChangedStep> changed_steps;
  // Where the wall time went: (phase, seconds) in order ("GEMMs measured", "verdicts: targets", ...);
  // note_phase() adds one and tells the request's phase_done.
  std::vector<std::pair<std::string, double>> phases;
  void note_phase(const std::string& name, double seconds) {
    phases.emplace_back(name, seconds);
    if (request.phase_done) request.phase_done(name, seconds);
  }
  // The fp8 GEMMs' casts (model/fp8_steps.hpp's step_fp8_casts), measured on backend cast (or read from
  // the store): their time per step beside the GEMM time, which does not include it; nullopt when the
  // step has no fp8 GEMM. A trace's own casts are the workload's (Workload::casts).
  using Fp8Casts = ProfileFp8Casts;
  std::optional<Fp8Casts> fp8_casts;
};

// The what-ifs of a measured profile (views/profile_what_ifs.cpp): every candidate in one paired run
// against the step, then the changed steps: in `replay` (the trace's step replayed with them, which
// also times the step's own GEMMs) or, without a timeline, in a paired run of their GEMMs.
void measure_what_ifs(ProfileResult& result, const DeviceContext& device, Store& store,
                      const std::atomic<bool>* interrupted);

// With a GPU: every GEMM measured (what the store has is reused) on one progress line, asked of
// `progress_for` once with the number of points to measure; the annotations saved; then each GEMM
// explained (its neighbours measured the same way, silently).
ProfileResult profile_measure(const Workload& workload, const ProfileRequest& request, const DeviceContext& device,
                              Store& store, const ProgressFor& progress_for, const std::atomic<bool>* interrupted);
// No GPU here: the store read only; the GEMMs it lacks are listed (rows without a time). Throws
// Error(kNoGpu) in one line when there is no store or it holds none of the GEMMs.
ProfileResult profile_from_store(const Workload& workload, const ProfileRequest& request);
// --predict (views/profile_predicted.cpp): nothing measured or read; every GEMM's time the model's
// prediction (a GEMM it cannot predict listed without one, with why), each verdict explain's predicted
// one, and the what-ifs the model can price (size, padding, layout and precision to a dtype it has a
// class for) predicted, each saving counted above the model's error; the others listed as not
// predicted, with why. The step is not replayed: the times are at the clock the model was fitted at.
// `interrupted` (^C) ends it with Error(kInterrupted).
ProfileResult profile_predict(const Workload& workload, const ProfileRequest& request,
                              const std::shared_ptr<const GpuPerfModel>& model,
                              const std::atomic<bool>* interrupted = nullptr);

// A grouped call's groups run as a loop of ordinary GEMMs: the sum of each group's time (`group_us`),
// nullopt where a group has none.
std::optional<double> groups_loop_us(const Problem& call,
                                     const std::function<std::optional<double>(const Problem&)>& group_us);

// A GEMM's verdict as an explain request (views/profile.cpp), or why it has none.
std::variant<ExplainJob, std::string> profile_verdict_job(const Problem& p, BackendKind backend,
                                                          const ProfileRequest& r);

}  // namespace shapescope
