// A workload: the GEMM calls of one step of a real program, as shapescope problems with a count.
// Three sources fill one (model/trace_import.hpp: a PyTorch profiler trace; model/gemm_list.hpp: a
// CSV or JSON list; model/config_workload.hpp: a Hugging Face config.json), and `profile` / `pad`
// read it. Pure C++: it measures nothing.
//
// Identical calls are merged: same problems (shape, layout, leading dimensions, offsets, dtype), same
// grouping and same fused-attention mark; their counts add, their trace kernel times add, and their
// origins are joined ("aten::addmm+aten::mm").
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/problem.hpp"
#include "model/explain.hpp"
#include "model/pad.hpp"
#include "model/step_timeline.hpp"

namespace shapescope {

struct WorkloadGemm {
  // One problem: an ordinary (or strided batched) GEMM. Several: one grouped call (MoE experts:
  // cublasGemmGroupedBatchedEx, torch._grouped_mm), one problem per group, in group order.
  std::vector<Problem> problems;
  int64_t count = 1;          // calls per step
  std::string origin;         // what issued it: "aten::mm", "q_proj fwd", a list row's name
  // The trace's own GPU time of these calls: the summed durations of the kernels they launched
  // (all `count` calls together); nullopt where the source has no times.
  std::optional<double> kernel_us;
  int64_t kernels = 0;        // kernels those calls launched (a split-K GEMM may launch two)
  // The distinct names of those kernels, in order of first launch: which algorithm the library
  // chose on the machine that recorded the trace (model/kernel_name.hpp reads tiles from them).
  std::vector<std::string> kernel_names;
  // Attention's QK^T and PV: real programs run them inside one fused FlashAttention kernel, so
  // they are listed for what they would cost as GEMMs, not as GEMMs the step runs.
  bool usually_fused = false;
  // A grouped call whose per-group M the source does not record (torch._grouped_mm's offsets are
  // not in a trace): the rows are spread evenly over the groups.
  bool group_rows_estimated = false;

  bool grouped() const { return problems.size() > 1; }
  // FLOPs of one call: the sum over its problems.
  double flops() const;
  // "1024x768x3072 nt" or "grouped 8 x 512..520x14336x4096 nt"
  std::string shape_text() const;
};

// An op that looks like a GEMM but could not be mapped onto problems, and why.
struct UnmappedOp {
  std::string op;         // "aten::mm"
  std::string reason;     // "input type 'double' is not a dtype shapescope runs"
  int64_t count = 1;      // occurrences with this op and reason
  std::optional<double> kernel_us;  // their kernels' time, where the trace links any
};

// The clock and power a recorded step ran at: NVML's samples that the recording kept beside the trace
// (the trace's "shapescopeClocks", docs/method.md), summarized by model/trace_clocks.hpp. The
// figures are over the busy samples: those taken while a kernel of the trace had run within the
// sampling period before them (all samples where none overlaps the trace's kernels, with a note).
struct RecordedClocks {
  std::string device;          // the GPU sampled, as NVML names it; "" when not recorded
  std::string uuid;            // NVML's "GPU-..."; "" when not recorded
  double interval_ms = 0;      // the period the recording asked for; 0 when not recorded
  int64_t samples = 0;         // well-formed samples
  int64_t busy_samples = 0;    // of them, those the figures below are over
  double sm_clock_median_mhz = 0, sm_clock_low_mhz = 0, sm_clock_high_mhz = 0;  // median, least, most
  std::optional<double> power_median_w, power_max_w;  // nullopt when no sample has a power
  std::optional<double> max_sm_clock_mhz;             // the GPU's maximum SM clock, as recorded
  std::optional<double> power_limit_w;                // its enforced power limit, as recorded
};

// The fp8 casts a trace's step ran (model/trace_casts.hpp): the GPU kernels that quantized the operands
// of its fp8 GEMMs (amax, scale, cast), found by a range the program put around them or by their names;
// the trace's every step together (divide by Workload::steps).
enum class CastsFoundBy { kNone, kRange, kKernelNames };
// The range scripts/fp8_linear.py records around each operand's quantization; profile --cast-range
// names another.
constexpr const char* kDefaultCastRange = "shapescope_fp8_cast";
std::string_view to_string(CastsFoundBy by);  // "none", "range", "kernel names"
struct TraceCasts {
  std::string range;                 // the range searched for ("shapescope_fp8_cast", --cast-range)
  CastsFoundBy found_by = CastsFoundBy::kNone;
  int64_t ranges = 0;                // occurrences of the range (on the CPU's threads)
  int64_t kernels = 0;               // the cast kernels
  double kernel_us = 0;              // their summed durations
  std::vector<std::string> kernel_names;  // kKernelNames: the cited kernels matched, distinct, in trace order
};

struct Workload {
  std::string source;     // "--trace 'step.json'", as the caller names it
  std::string device;     // the GPU the trace was recorded on ("NVIDIA H100 80GB HBM3"); "" when unknown
  int device_sms = 0;     // its SM count as the trace records it; 0 when unknown
  // The time of every GPU kernel the source holds (a trace: GEMMs or not, all steps); nullopt when it
  // has none. What is not a GEMM's stays outside every total.
  std::optional<double> all_kernels_us;
  std::vector<WorkloadGemm> gemms;        // in order of first appearance
  std::vector<UnmappedOp> unmapped;       // in order of first appearance
  std::vector<std::string> notes;         // what the source could not say ("no Input Strides: ...")
  // The clock the step ran at, where the recording sampled it (a trace with "shapescopeClocks").
  std::optional<RecordedClocks> recorded_clocks;
  // Steps the source holds: a trace recorded over several profiler steps (ProfilerStep#N) counts
  // the calls of all of them; divide by this for one step's.
  int64_t steps = 1;
  // A trace's kernels in time order as GEMM calls, other kernels and idle gaps (model/step_timeline.hpp):
  // what a replay of the step runs. nullopt for the other sources, and once calls are changed or merged.
  std::optional<StepTimeline> timeline;
  // A trace's fp8 casts, as searched for (found or not); nullopt for the other sources.
  std::optional<TraceCasts> casts;

  // Adds a call, merging it into an identical one (counts, times and kernels add; origins join), found
  // through a hash of its problems: a list of 200,000 calls is added in linear time. Returns its
  // index in `gemms`.
  size_t add(WorkloadGemm gemm);
  // Counts one more unmapped op with this name and reason.
  void add_unmapped(const std::string& op, const std::string& reason, std::optional<double> kernel_us);

  int64_t calls() const;           // sum of counts
  double flops() const;            // sum of count x flops
  // Sum of the kernel times of the mapped GEMMs; nullopt when none is known.
  std::optional<double> kernel_us() const;
  int64_t unmapped_count() const;  // sum of the unmapped counts

  // add()'s index: the calls of `gemms` by the hash of their problems. It covers the first
  // `indexed_calls` calls and is rebuilt when `gemms` was changed other than by add() (cleared).
  std::unordered_multimap<size_t, size_t> call_index;
  size_t indexed_calls = 0;
};

// A size that appears in a workload's GEMMs: what `pad` can change when no config names the
// dimension (a trace or a GEMM list). 50257 in GPT-2's trace is the N of the LM head's forward,
// the M of its weight gradient and the K of its input gradient: padding it changes all three.
struct DimensionUse {
  size_t gemm = 0;     // index into Workload::gemms
  size_t problem = 0;  // index into that call's problems
  Dim dim = Dim::kM;   // kM, kN or kK
};
struct DimensionKnob {
  int64_t value = 0;
  std::vector<DimensionUse> uses;  // in workload order
  int64_t calls = 0;               // calls per step of the GEMMs it appears in
  double flops = 0;                // FLOPs per step of those GEMMs
  size_t probe = 0;                // the use whose call has the most FLOPs per step: the one to measure
};
// Every distinct M, N and K value of the workload's problems (batch excluded), largest FLOPs first.
// Calls marked usually_fused are left out: they are not GEMMs the step runs.
std::vector<DimensionKnob> dimension_knobs(const Workload& workload);
// The knob as a pad choice (Choice::kSize, named by its value, probed by its largest call), so that
// pad_candidates() proposes its sizes: the multiples of 8..256 above it and, once the probe is
// measured, the size that fills its last wave.
ChoiceInfo knob_choice(const Workload& workload, const DimensionKnob& knob);
// The workload with every M, N and K equal to `from` set to `to`. Leading dimensions that were
// packed stay packed (so they follow the new size); one that is now shorter than its row becomes
// packed; the others (slices of wider tensors) are kept. Calls that become identical merge.
Workload with_dimension(const Workload& workload, int64_t from, int64_t to);
// One call changed so (its trace times and kernels dropped: they were another shape's).
WorkloadGemm with_dimension(WorkloadGemm call, int64_t from, int64_t to);
// The calls the knob's size appears in, each once, in workload order (indices into gemms).
std::vector<size_t> knob_calls(const DimensionKnob& knob);

// FLOPs per step of the calls a step runs as GEMMs (usually_fused ones left out), over the steps.
double step_flops(const Workload& workload);
// GEMM time of one step: the sum over those calls of count / steps x the median of the call (a
// grouped call timed as one problem, grouped_problem()); nullopt when one has no time.
std::optional<StepTime> workload_step_time(const Workload& workload, const GemmTimeOf& time_of);

// A size's candidates are priced from the calls the size appears in alone: the step's time and FLOPs
// are sums over its calls, and merging identical calls changes no sum. So `pad` of a list of 4,000
// distinct sizes costs the sizes' uses, not a copy of the workload per candidate.
struct StepTimeTerms {
  std::vector<std::optional<GemmTime>> of_call;  // per call of the workload (nullopt: no time, or usually fused)
  double us = 0, noise_us = 0;                   // sums over the timed calls of count / steps x median (x noise)
  size_t missing = 0;                            // calls the step runs that have no time
};
StepTimeTerms step_time_terms(const Workload& workload, const GemmTimeOf& time_of);
std::optional<StepTime> step_time(const StepTimeTerms& terms);  // workload_step_time()'s answer
// workload_step_time(with_dimension(workload, knob.value, to), time_of), from the knob's calls alone.
std::optional<StepTime> step_time_with_dimension(const Workload& workload, const StepTimeTerms& terms,
                                                 const DimensionKnob& knob, int64_t to, const GemmTimeOf& time_of);
// step_flops(with_dimension(workload, knob.value, to)) - step_flops(workload), from the knob's calls alone.
double extra_step_flops(const Workload& workload, const DimensionKnob& knob, int64_t to);
// A size's candidate against the workload as it is: the GEMM uses it changes (touched), the extra
// FLOPs per step, and the saving from the step times before and after (add_saving). No parameters:
// nothing says which sizes are weights.
Evaluation evaluate_size(const Workload& workload, const DimensionKnob& knob, PadCandidate candidate,
                         const std::optional<StepTime>& before, const std::optional<StepTime>& after);

// Whether two calls are the same call (what add() merges).
bool same_call(const WorkloadGemm& a, const WorkloadGemm& b);

// Joins `name` to a "+"-separated list of names ("q_proj" + "k_proj" -> "q_proj+k_proj") unless
// it is empty or already one of them. Past kMaxOriginChars the list ends in "+..." and takes no more
// (a list whose 200,000 rows each name their own layer is still read in linear time).
constexpr size_t kMaxOriginChars = 200;
void join_name(std::string& into, const std::string& name);

// A problem with packed leading dimensions (lda = a_cols, ldb = b_cols, ldc = n), as `sweep` plans
// one without --ld-pad.
Problem packed_problem(int64_t m, int64_t n, int64_t k, Layout layout, DType dtype, int64_t batch = 1);

}  // namespace shapescope
