// Measuring a list of problems end to end, in named steps (measure.cpp): check, plan against the
// store, prepare, verify, time, trace, save. What the store already has is reused, the rest is timed
// by the engine, every point's launched kernels are recorded in a separate CUPTI pass, and each
// point is written to the store in its own transaction as soon as it is final. It returns facts;
// the caller decides what to derive (annotations) and show. `sweep`, `explain` and `pad` call it.
#pragma once
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/device_context.hpp"
#include "core/problem.hpp"
#include "device/nvml.hpp"
#include "measure/progress.hpp"
#include "store/store.hpp"
#include "timing/engine_facts.hpp"
#include "timing/measure_options.hpp"
#include "timing/paired.hpp"
#include "timing/replay_plan.hpp"

namespace shapescope {

struct MeasureRequest {
  std::vector<Problem> problems;
  std::vector<BackendSpec> backends = {BackendSpec(BackendKind::kCublas)};
  int lt_algos = 1;            // cuBLASLt heuristic choices timed per problem
  MeasureOptions measure;      // flush buffer and size are filled in here
  bool force = false;          // re-measure points the store already has
  // Empty: every problem with every backend. Else only these (problem index, backend index) pairs
  // (explain measures its controls, each with its own backend, in one request).
  std::vector<std::pair<size_t, size_t>> pairs;
  // Parallel to `pairs`, where given: the algos each pair runs (an empty list: every one its backend
  // has for the problem, as without it). explain's paired passes run only the cuBLASLt algorithms
  // they compare, not the top lt_algos of each problem.
  std::vector<std::vector<std::string>> pair_algos;
  // Set: a paired comparison instead of a measurement (timing/paired.hpp). Every (problem, backend,
  // algo) of the request is run in the same passes against the first one; nothing is timed one by
  // one and nothing is written to the store (the points the store holds are returned as they are).
  // The rule's sums name calls by their (problem, backend) pair's position: in `pairs`, or, when
  // `pairs` is empty, problem index x backends + backend index (a pair with several algos: its
  // first). A sum naming a pair that cannot run here gives no ratio (pairs 0).
  std::optional<PairedRule> paired;
  // Set: a replayed step instead of a measurement (timing/replay_plan.hpp): the rule's steps, their
  // calls named by (problem, backend) position as the sums above, replayed in paired passes; nothing
  // is timed one by one and nothing is written to the store.
  std::optional<ReplayRule> replay;
};

// Where one measure() call's wall time went, step by step (seconds).
struct PhaseTimes {
  double plan = 0;      // the store looked up for every point
  double allocate = 0;  // operands, flush buffer, workspace; random fill
  double prepare = 0;   // cuBLAS handles, cuBLASLt heuristics, our kernels' set-up
  double verify = 0;    // our kernels against cuBLAS, on the GPU
  double trace = 0;     // the kernels of the points to measure, read from their captured graphs
  double trace_cupti = 0;      // CUPTI: stored points lacking kernels (before the timed passes, so
                               // their GEMMs also warm the GPU up) and calls of several kernels (after)
  size_t traced_by_cupti = 0;  // the calls CUPTI traced
  double timing = 0;    // the engine: warm-up, timed passes, sentinel re-runs, chunk writes
  double collect = 0;   // the stored points read back
  EngineTimes engine;   // inside `timing`
};

// How the GPU ran while the points were timed (NVML): a GPU under load below 70 % of its maximum
// SM clock, or shared with another process, has its points flagged (throttle::kLowClock,
// throttle::kSharedGpu) and is named on stderr.
struct GpuHealth {
  double median_clock_mhz = 0;  // under load, while the engine ran (0: unknown)
  int max_clock_mhz = 0;
  std::optional<double> median_power_w, power_limit_w;
  std::optional<size_t> other_processes;  // the most seen at once; nullopt: NVML cannot list them
  size_t flagged = 0;                     // points flagged for either reason
  bool low_clock() const {
    return median_clock_mhz > 0 && max_clock_mhz > 0 && median_clock_mhz < throttle::kLowClockShare * max_clock_mhz;
  }
  bool shared() const { return other_processes && *other_processes > 0; }
  bool healthy() const { return !low_clock() && !shared(); }
};

// A paired comparison's result: the keys in the order of the calls (keys[0] is the reference) and
// what the passes gave.
struct PairedComparison {
  std::vector<PointKey> keys;
  PairedOutcome outcome;
};

// A replayed step's result: the keys in the order of the calls, and what the replays gave.
struct ReplayComparison {
  std::vector<PointKey> keys;
  ReplayOutcome outcome;
  std::vector<size_t> not_replayed;  // changed steps naming a call that cannot run here
};

struct MeasureOutcome {
  std::vector<int64_t> point_ids;  // every point of the request the store now holds, in plan order
  std::vector<StoredPoint> points;      // those points as stored (same order)
  size_t measured = 0, reused = 0, annotated = 0;
  std::vector<std::string> skipped;  // "cublas 4096x4096x4096 fp8: why", one per skipped point
  // skipped[i] in parts: its problem (one of the request's), what was not measured ("cublas
  // 4096x4096x4096 fp8") and why, so that no caller parses the line back.
  struct Skip {
    Problem problem;
    std::string what, why;
  };
  std::vector<Skip> skips;
  bool interrupted = false;
  double wall_s = 0;          // from the first allocation to the last write
  double gpu_floor_s = 0;     // sum over measured points of samples x (median + flush)
  double flush_us = 0;        // measured time of one L2 flush
  double median_clock_mhz = 0;
  std::vector<TimingStats> timings;  // of the points measured now, in the order they were saved
  PhaseTimes phases;
  std::optional<PointKey> sentinel;         // the fixed shape re-measured in every chunk
  std::vector<SentinelCheck> sentinel_checks;  // every check, in the order they happened
  // The UUID of the GPU that held the operands (cudaPointerGetAttributes; checked to be the device
  // asked for); empty when nothing was allocated (everything reused).
  std::string allocated_on;
  GpuHealth health;
  std::optional<PairedComparison> paired;  // request.paired: the comparison
  std::optional<ReplayComparison> replay;  // request.replay: the replayed steps
};

// Bytes of GPU memory the request needs: operands at their largest, the flush buffer, the workspace.
struct MemoryPlan {
  int64_t a = 0, b = 0, c = 0, flush = 0, workspace = 0;
  int64_t reference = 0;  // cuBLAS's C, kept aside while one of our kernels is verified
  int64_t total() const { return a + b + c + flush + workspace + reference; }
};
MemoryPlan memory_plan(const std::vector<Problem>& problems, const DeviceContext& device, bool hot);
// Throws Error(kOutOfMemory), showing the bytes needed and free, when the plan does not fit.
void check_fits(const MemoryPlan& plan, int64_t free_bytes, int64_t total_bytes);

// What a plan will cost: GPU memory, points, and a rough GPU time (estimate_us, never reported as
// a measurement).
struct PlanCost {
  MemoryPlan memory;
  size_t points = 0;
  double seconds = 0;
};
// `samples`: the samples per point assumed (the fixed count, or the stopping rule's minimum).
PlanCost plan_cost(const std::vector<Problem>& problems, const std::vector<BackendSpec>& backends, int lt_algos,
                   int samples, bool hot, const DeviceContext& device);
// Points a sweep stores: one per problem for cuBLAS, one per timed heuristic choice for cuBLASLt,
// one per selected variant of our kernels.
size_t count_points(size_t problems, const std::vector<BackendSpec>& backends, int lt_algos);

// A rough time for one call (FLOPs at a discounted peak, plus bytes at a discounted bandwidth),
// used to size chunks, for the ETA and for --dry-run; never reported as a measurement.
double estimate_us(const Problem& problem);

// `sweep --casts`: every fp8 GEMM of the request measured with its two casts too (backend cast, its
// operands cast as its nt form reads them, core/fp8.hpp's cast_problem), each distinct cast once.
void add_fp8_casts(MeasureRequest& request);

// The command line that measures exactly this point again.
std::string rerun_command(const PointKey& key, int lt_algos);

// The sentinel of a sweep of these problems: 2048^3 (1024^3 for fp32, whose GEMMs are 10x slower)
// in the first problem's dtype and layout, packed, run by cuBLAS (cuBLASLt for fp8): tens of
// microseconds, steady, and cheap to measure in every pass of every chunk.
PointKey sentinel_key(const std::vector<Problem>& problems, bool hot, ClockState clocks);

// Throws Error(kOutOfMemory) before allocating when the request does not fit in free memory,
// Error(kNoGpu) when the GPU cannot run a dtype; kInternal for CUDA/cuBLAS/CUPTI failures.
// `progress` (may be empty) hears of every timed point and, last, of the end.
MeasureOutcome measure(const MeasureRequest& request, const DeviceContext& device, Store& store,
                       const ProgressCallback& progress, const std::atomic<bool>* interrupted);

}  // namespace shapescope
