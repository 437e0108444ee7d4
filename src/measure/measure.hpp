// Measuring a list of problems end to end, in named steps (measure.cpp): check, plan against the
// store, prepare, verify, time, trace, save. What the store already has is reused, the rest is timed
// by the engine, every point's launched kernels are recorded in a separate CUPTI pass, and each
// point is written to the store in its own transaction as soon as it is final. It returns facts;
// the caller decides what to derive (annotations) and show. `sweep`, `explain` and `pad` call it.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/device_context.hpp"
#include "core/problem.hpp"
#include "measure/progress.hpp"
#include "store/store.hpp"
#include "timing/measure_options.hpp"

namespace shapescope {

struct MeasureRequest {
  std::vector<Problem> problems;
  std::vector<std::string> backends = {"cublas"};
  int lt_algos = 1;            // cuBLASLt heuristic choices timed per problem
  MeasureOptions measure;      // flush buffer and size are filled in here
  bool force = false;          // re-measure points the store already has
  // Empty: every problem with every backend. Else only these (problem index, backend index) pairs
  // (explain measures its controls, each with its own backend, in one request).
  std::vector<std::pair<size_t, size_t>> pairs;
};

struct MeasureOutcome {
  std::vector<int64_t> point_ids;  // every point of the request the store now holds, in plan order
  std::vector<StoredPoint> points;      // those points as stored (same order)
  size_t measured = 0, reused = 0, annotated = 0;
  std::vector<std::string> skipped;  // "cublas 4096x4096x4096 fp8: why", one per skipped point
  bool interrupted = false;
  double wall_s = 0;          // from the first allocation to the last write
  double gpu_floor_s = 0;     // sum over measured points of samples x (median + flush)
  double flush_us = 0;        // measured time of one L2 flush
  double median_clock_mhz = 0;
};

// Bytes of GPU memory the request needs: operands at their largest, the flush buffer, the workspace.
struct MemoryPlan {
  int64_t a = 0, b = 0, c = 0, flush = 0, workspace = 0;
  int64_t total() const { return a + b + c + flush + workspace; }
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
PlanCost plan_cost(const std::vector<Problem>& problems, const std::vector<std::string>& backends, int lt_algos,
                   int samples, bool hot, const DeviceContext& device);
// Points a sweep stores: one per problem for cuBLAS, one per timed heuristic choice for cuBLASLt,
// one per selected variant of our kernels.
size_t count_points(size_t problems, const std::vector<std::string>& backends, int lt_algos);

// A rough time for one call (FLOPs at a discounted peak, plus bytes at a discounted bandwidth),
// used to size chunks, for the ETA and for --dry-run; never reported as a measurement.
double estimate_us(const Problem& problem);

// The command line that measures exactly this point again.
std::string rerun_command(const PointKey& key, int lt_algos);

// Throws Error(kOutOfMemory) before allocating when the request does not fit in free memory,
// Error(kNoGpu) when the GPU cannot run a dtype; kInternal for CUDA/cuBLAS/CUPTI failures.
// `progress` (may be empty) hears of every timed point and, last, of the end.
MeasureOutcome measure(const MeasureRequest& request, const DeviceContext& device, Store& store,
                       const ProgressCallback& progress, const std::atomic<bool>* interrupted);

}  // namespace shapescope
