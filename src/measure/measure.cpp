#include "measure/measure.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>

#include "backends/backend.hpp"
#include "backends/cuda_types.hpp"
#include "common/check.hpp"
#include "common/clock.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "core/backend_kind.hpp"
#include "device/device.hpp"
#include "device/nvml.hpp"
#include "measure/verify.hpp"
#include "timing/engine.hpp"
#include "timing/device_kernels.hpp"
#include "timing/stats.hpp"
#include "trace/kernel_trace.hpp"

namespace shapescope {
namespace {

constexpr size_t kAnnotateBatch = 256;           // points per CUPTI flush

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

namespace {

struct DeviceMemory {
  void* ptr = nullptr;
  explicit DeviceMemory(int64_t bytes) {
    if (bytes > 0) CHECK_CUDA(cudaMalloc(&ptr, size_t(bytes)));
  }
  ~DeviceMemory() {
    if (ptr) cudaFree(ptr);
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
};

// Median time of one L2 flush, so that the GPU-time floor of a sweep can be stated.
double measure_flush_us(void* buffer, int64_t bytes) {
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  std::vector<double> us;
  for (int i = 0; i < 21; ++i) {
    CHECK_CUDA(cudaEventRecord(start, stream));
    CHECK_CUDA(cudaMemsetAsync(buffer, i, size_t(bytes), stream));
    CHECK_CUDA(cudaEventRecord(stop, stream));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    if (i > 0) us.push_back(double(ms) * 1000.0);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(stream);
  return middle_value(us);
}

}  // namespace

namespace {

// One (problem, backend, algo) of the request: found in the store, or to be measured.
struct Entry {
  PointKey key;
  size_t problem = 0;
  size_t backend = 0;
  std::optional<int64_t> id;
  bool measure = false, annotate = false;
  GemmCall* call = nullptr;
};

// The GPU memory of one measure() call: operands at their largest, the L2 flush, the workspace.
struct Buffers {
  explicit Buffers(const MemoryPlan& plan)
      : a(plan.a), b(plan.b), c(plan.c), flush(plan.flush), workspace(plan.workspace) {}
  DeviceMemory a, b, c, flush, workspace;
};

// What the steps share: the backends (they read `buffers` once it is allocated), the entries,
// and the prepared calls the entries point into.
struct Session {
  const MeasureRequest& request;
  const DeviceContext& device;
  Store& store;
  const ProgressCallback& progress;
  const std::atomic<bool>* interrupted;
  DeviceBuffers buffers;
  std::vector<std::unique_ptr<Backend>> backends;
  std::vector<Entry> entries;
  std::vector<Problem> gpu_problems;  // what needs the GPU (measure or annotate)
  std::map<std::pair<size_t, size_t>, std::vector<PreparedCall>> prepared;  // by (problem, backend)
  MeasureOutcome outcome;
};

void report(const Session& s, MeasureProgress p) {
  if (s.progress) s.progress(p);
}

std::string skip_line(const std::string& backend, const std::string& algo, const Problem& p, const std::string& why) {
  return fmt::format("{} {}{}{} {}: {}", backend, algo, algo.empty() ? "" : " ", p.shape_string(), to_string(p.dtype),
                     why);
}

// Check: which backend can run each dtype on this GPU is known before anything is allocated.
void check(const Session& s) {
  for (const auto& p : s.request.problems)
    if (auto why = dtype_unsupported(p.dtype, s.device)) throw Error(ExitCode::kNoGpu, *why);
}

// Plan against the store: one entry per (problem, backend, algo); what the store has (and has
// annotated) needs no GPU unless --force.
void plan_against_store(Session& s) {
  for (const auto& name : s.request.backends) s.backends.push_back(make_backend(name, s.buffers, s.request.lt_algos));
  std::vector<std::pair<size_t, size_t>> pairs = s.request.pairs;
  if (pairs.empty())
    for (size_t pi = 0; pi < s.request.problems.size(); ++pi)
      for (size_t bi = 0; bi < s.backends.size(); ++bi) pairs.emplace_back(pi, bi);
  for (const auto& [pi, bi] : pairs) {
    const Problem& p = s.request.problems[pi];
    {
      if (auto why = s.backends[bi]->unsupported(p, s.device)) {
        s.outcome.skipped.push_back(skip_line(s.backends[bi]->name(), "", p, *why));
        continue;
      }
      for (const auto& algo : s.backends[bi]->algo_keys()) {
        Entry e;
        e.key = PointKey{s.backends[bi]->name(), algo, p, s.request.measure.hot};
        e.problem = pi;
        e.backend = bi;
        e.id = s.store.find(s.device, e.key);
        e.measure = !e.id || s.request.force;
        e.annotate = e.measure || !s.store.is_annotated(*e.id);
        if (e.measure || e.annotate) s.gpu_problems.push_back(p);
        s.entries.push_back(std::move(e));
      }
    }
  }
}

// Prepare, part one: allocate (after checking that it fits) and fill the operands with random
// normal values, never zeros. One dtype per buffer at a time: a sweep has one dtype.
std::unique_ptr<Buffers> allocate(Session& s, MemoryPlan& plan) {
  plan = memory_plan(s.gpu_problems, s.device, s.request.measure.hot);
  int64_t free_bytes = 0, total_bytes = 0;
  memory_info(free_bytes, total_bytes);
  check_fits(plan, free_bytes, total_bytes);
  auto memory = std::make_unique<Buffers>(plan);
  s.buffers.a = memory->a.ptr;
  s.buffers.b = memory->b.ptr;
  s.buffers.c = memory->c.ptr;
  s.buffers.workspace = memory->workspace.ptr;
  s.buffers.workspace_bytes = plan.workspace;
  const DType dtype = s.gpu_problems.front().dtype;
  fill_normal(memory->a.ptr, plan.a / input_bytes(dtype), dtype, false, 1, nullptr);
  fill_normal(memory->b.ptr, plan.b / input_bytes(dtype), dtype, false, 2, nullptr);
  fill_normal(memory->c.ptr, plan.c / output_bytes(dtype), dtype, true, 3, nullptr);
  CHECK_CUDA(cudaDeviceSynchronize());
  return memory;
}

// Prepare, part two: the calls, one prepare() per (problem, backend) for all its wanted algos
// (cuBLASLt's heuristic is queried here, never inside a capture); an algo the library did not
// provide is listed as skipped.
void prepare_calls(Session& s) {
  for (auto& e : s.entries) {
    if (!e.measure && !e.annotate) continue;
    const auto slot = std::make_pair(e.problem, e.backend);
    const Problem& p = s.request.problems[e.problem];
    if (!s.prepared.count(slot)) {
      std::vector<std::string> wanted;
      for (const auto& other : s.entries)
        if (other.problem == e.problem && other.backend == e.backend && (other.measure || other.annotate))
          wanted.push_back(other.key.algo);
      std::string why;
      s.prepared[slot] = s.backends[e.backend]->prepare(p, wanted, why);
      const auto& got = s.prepared[slot];
      for (const auto& w : wanted)
        if (std::none_of(got.begin(), got.end(), [&](const PreparedCall& pc) { return pc.algo == w; }))
          s.outcome.skipped.push_back(skip_line(s.backends[e.backend]->name(), w, p, why));
    }
    for (auto& pc : s.prepared[slot])
      if (pc.algo == e.key.algo) e.call = pc.call.get();
  }
}

// Verify: our kernels against cuBLAS, on these operands, before any timing; a kernel that fails is
// reported and neither timed nor stored.
void verify(Session& s) {
  std::unique_ptr<Backend> reference;
  for (auto& e : s.entries) {
    if (!e.call || !s.backends[e.backend]->needs_verification()) continue;
    const Problem& p = s.request.problems[e.problem];
    if (!reference) reference = make_backend(std::string(to_string(BackendKind::kCublas)), s.buffers, 1);
    std::string why;
    std::vector<PreparedCall> ref = reference->prepare(p, {std::string(default_algo(BackendKind::kCublas))}, why);
    std::optional<std::string> failed =
        ref.empty() ? std::optional<std::string>("cannot verify: cuBLAS cannot run it (" + why + ")")
                    : verify_against(*e.call, *ref.front().call, p, s.buffers);
    if (failed) {
      s.outcome.skipped.push_back(skip_line(e.key.backend, e.key.algo, p, *failed));
      e.call = nullptr;
    }
  }
}

// Time: every entry to measure, through the engine; each point is saved as soon as it is final.
void time_calls(Session& s, const Buffers& memory, const MemoryPlan& plan) {
  MeasureOptions options = s.request.measure;
  options.flush_buffer = memory.flush.ptr;
  options.flush_bytes = plan.flush;
  if (!options.hot) s.outcome.flush_us = measure_flush_us(memory.flush.ptr, plan.flush);
  std::vector<size_t> timed;  // entry index per job
  std::vector<TimedJob> jobs;
  for (size_t i = 0; i < s.entries.size(); ++i)
    if (s.entries[i].measure && s.entries[i].call) {
      timed.push_back(i);
      jobs.push_back({s.entries[i].call, estimate_us(s.entries[i].key.problem)});
    }
  std::unique_ptr<NvmlDevice> nvml = NvmlDevice::open(s.device.pci_bus_id);
  double floor_us = 0;
  MeasureProgress progress;
  {
    ClockSampler clocks(nvml.get(), std::chrono::milliseconds(20));
    Engine engine(options, &clocks, s.interrupted);
    const bool finished = engine.run(
        jobs,
        [&](size_t job, const TimingStats& timing) {
          Entry& e = s.entries[timed[job]];
          PointResult result;
          result.timing = timing;
          result.lt = e.call->lt_config();
          result.measured_at = now_utc();
          result.command = rerun_command(e.key, s.request.lt_algos);
          e.id = s.store.save_point(s.device, e.key, result);
          progress.measured = ++s.outcome.measured;
          floor_us += timing.samples * (timing.median_us + s.outcome.flush_us);
          progress.last_tflops = e.key.problem.flops() / timing.median_us / 1e6;
          report(s, progress);
        },
        [&](double f) {
          progress.fraction = f;
          report(s, progress);
        });
    s.outcome.median_clock_mhz = engine.median_clock_mhz();
    if (!finished) s.outcome.interrupted = true;
  }
  s.outcome.gpu_floor_s = floor_us / 1e6;
}

// Trace: a separate, untimed pass under CUPTI records the kernels of every stored point that lacks
// them, in batches of kAnnotateBatch launches per flush.
void trace_kernels(Session& s) {
  std::vector<size_t> todo;
  for (size_t i = 0; i < s.entries.size(); ++i)
    if (s.entries[i].annotate && s.entries[i].call && s.entries[i].id) todo.push_back(i);
  if (todo.empty()) return;
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  KernelTrace trace;
  for (size_t begin = 0; begin < todo.size() && !s.outcome.interrupted; begin += kAnnotateBatch) {
    const size_t end = std::min(todo.size(), begin + kAnnotateBatch);
    for (size_t t = begin; t < end; ++t) {
      trace.push(uint64_t(todo[t]));
      s.entries[todo[t]].call->enqueue(stream);
      trace.pop();
    }
    CHECK_CUDA(cudaStreamSynchronize(stream));
    auto kernels = trace.collect();
    for (size_t t = begin; t < end; ++t) {
      s.store.save_kernels(*s.entries[todo[t]].id, kernels[uint64_t(todo[t])]);
      ++s.outcome.annotated;
    }
    if (s.interrupted && s.interrupted->load()) s.outcome.interrupted = true;
  }
  cudaStreamDestroy(stream);
}

// Save, the end: every point of the request that the store now holds, as stored, in plan order.
void collect_points(Session& s) {
  for (const auto& e : s.entries) {
    if (e.id) s.outcome.point_ids.push_back(*e.id);
    if (e.id && !e.measure) ++s.outcome.reused;
  }
  for (int64_t id : s.outcome.point_ids)
    if (auto point = s.store.load(id)) s.outcome.points.push_back(std::move(*point));
}

}  // namespace

MeasureOutcome measure(const MeasureRequest& request, const DeviceContext& device, Store& store,
                       const ProgressCallback& progress, const std::atomic<bool>* interrupted) {
  const auto started = std::chrono::steady_clock::now();
  Session s{request, device, store, progress, interrupted, {}, {}, {}, {}, {}, {}};
  check(s);
  plan_against_store(s);
  if (!s.gpu_problems.empty()) {
    MemoryPlan plan;
    const std::unique_ptr<Buffers> memory = allocate(s, plan);
    prepare_calls(s);
    verify(s);
    time_calls(s, *memory, plan);
    if (!s.outcome.interrupted) trace_kernels(s);
    s.prepared.clear();  // the calls go before the memory they read
  }
  collect_points(s);
  s.outcome.wall_s = seconds_since(started);
  MeasureProgress done;
  done.finished = true;
  report(s, done);
  return std::move(s.outcome);
}

}  // namespace shapescope
