// `shapescope profile`'s arithmetic: every distinct GEMM of a workload with its measured time per call
// and per step, its share of the step's GEMM time, ranked by that time; and the step's total against
// the trace's own GEMM kernel time. Pure C++: times come in through a function, nothing is measured.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/device_context.hpp"
#include "core/backend_kind.hpp"
#include "model/pad.hpp"
#include "model/workload.hpp"

namespace shapescope {

// Which backend measures a call: a grouped call cublas_grouped (cublasGemmGroupedBatchedEx), an fp8
// GEMM cublaslt (cuBLAS has no fp8), any other GEMM `backend` (cublas or cublaslt).
BackendKind profile_backend(const Problem& problem, BackendKind backend);

struct ProfileRow {
  size_t gemm = 0;                     // index into Workload::gemms
  Problem problem;                     // what is measured: a grouped call as one problem
  BackendKind backend = BackendKind::kCublas;  // what measures it (profile_backend)
  double calls_per_step = 0;           // count / the workload's steps
  bool in_total = true;                // false: attention's QK^T and PV, which FlashAttention fuses
  std::optional<GemmTime> time;        // per call; nullopt: not measured
  std::optional<double> step_us;       // calls_per_step x median
  std::optional<double> share;         // of the measured total (rows in the total only)
  std::optional<double> trace_step_us; // the trace's kernel time of these calls, per step
};

// One row per call of the workload, in its order. Calls marked usually_fused are left out of the
// total unless `fused_in_total` (a program that runs attention as plain GEMMs).
std::vector<ProfileRow> profile_rows(const Workload& workload, BackendKind backend, bool fused_in_total);

// Fills each row's time (from `time_of`), time per step and share, and ranks them: the measured
// rows of the total by time per step (largest first), then the measured rows outside it, then the
// rows with no time, each in workload order where equal.
using RowTimeOf = std::function<std::optional<GemmTime>(const ProfileRow&)>;
void rank_rows(std::vector<ProfileRow>& rows, const RowTimeOf& time_of);

struct ProfileTotals {
  int64_t calls = 0;                   // GEMM calls per step in the total (counts / steps)
  double measured_us = 0;              // per step, over the measured rows of the total
  size_t measured_rows = 0, missing_rows = 0, outside_rows = 0;
  std::optional<double> trace_us;      // per step: the trace's GEMM kernel time of the rows of the total
  // Like with like: the rows of the total that have both a measurement and a trace time.
  size_t compared_rows = 0;
  double compared_measured_us = 0, compared_trace_us = 0;
  std::optional<double> ratio;         // compared measured / compared trace
  int64_t unmapped_ops = 0;            // ops the source could not map (all steps of a trace)
  std::optional<double> unmapped_trace_us;  // their kernels' time, per step
  // A trace's every GPU kernel per step, and the part of it that is no GEMM op's (attention,
  // normalization, elementwise, copies): outside every total.
  std::optional<double> all_kernels_us, other_kernels_us;
};
ProfileTotals profile_totals(const Workload& workload, const std::vector<ProfileRow>& rows);

// The clock a trace's GEMMs ran at, read from their own times: a compute-bound GEMM's time scales with
// the inverse of the SM clock, so its trace time against a measurement of the same GEMM at a known
// clock gives the clock it ran at in the step (measured clock x measured time / trace time).
struct ClockEvidence {
  double trace_us = 0;      // per call, in the trace
  double measured_us = 0;   // per call, measured here
  double measured_mhz = 0;  // the SM clock of that measurement
};
struct ClockInference {
  double mhz = 0;           // the median of the GEMMs' clocks, weighted by their trace time
  double low_mhz = 0, high_mhz = 0;  // the middle half of that weight (its quartiles)
  size_t gemms = 0;         // GEMMs it rests on
};
// nullopt without evidence (no compute-bound GEMM with a trace time and a measured clock).
std::optional<ClockInference> infer_clock(const std::vector<ClockEvidence>& evidence);
// Only GEMMs that take at least this long per call say much about the clock (launch and fill costs
// dominate shorter ones, and do not scale with it).
constexpr double kClockEvidenceFromUs = 20;

// A trace's GEMMs that ran at this share of the boost clock or more ran at the boost clock.
constexpr double kBoostShare = 0.97;
// A step whose NVML samples read at least this share of the power limit (median) was held down by
// power. Below it a low clock in its few samples is no power limit: the H200's small steps read
// 1665-1875 MHz at 154-191 W of 700 W, and replayed read 1.03-1.12x their traces.
constexpr double kPowerHeldShare = 0.5;

// Whether a trace's step is replayed, so that its GEMMs run at the clock the step settles at, or the
// GEMMs measured one by one at burst clocks stand for it, and why. The step ran below the boost clock
// where the NVML samples recorded with the trace say so (below kBoostShare of the GPU's maximum SM
// clock as recorded, else of `burst_mhz`) while it drew kPowerHeldShare of its recorded power limit or
// more, even where its GEMMs' own times read near boost (a step at its power limit speeds the rest of
// itself up when a change removes work: only a replay has that); otherwise the GEMMs' times decide.
struct StepClockCall {
  bool replay = true;
  bool ran_at_boost = false;  // not replayed: the trace's compute-bound GEMMs ran at the boost clock
  std::string why;            // "the step recorded at 1710 MHz and 667 W (NVML, medians; ...), below the boost ..."
};
StepClockCall step_clock_call(const std::optional<ClockInference>& by_gemms, std::optional<double> burst_mhz,
                              const std::optional<RecordedClocks>& recorded, bool replay_always);

// Whether a profile's times come from the GPU its trace was recorded on: the same name, and the same
// SM count where both are known. kUnknown: the source names no GPU (a GEMM list, a config).
enum class GpuMatch { kUnknown, kSame, kOther };
GpuMatch trace_gpu_match(const Workload& workload, const DeviceContext& measured_on);
std::string_view gpu_match_name(GpuMatch match);  // "unknown", "same", "other"

}  // namespace shapescope
