#include "sweep/measure.hpp"

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
#include "core/backend_kind.hpp"
#include "device/device.hpp"
#include "device/nvml.hpp"
#include "views/annotated.hpp"
#include "sweep/verify.hpp"
#include "timing/device_kernels.hpp"
#include "trace/kernel_trace.hpp"

namespace shapescope {
namespace {

constexpr int64_t kWorkspaceBytes = 32ll << 20;  // cuBLASLt's recommendation for Hopper
constexpr size_t kAnnotateBatch = 256;           // points per CUPTI flush

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

double estimate_us(const Problem& p) {
  double rate = 400e12;  // bf16/fp16 tensor cores, discounted for unaligned shapes
  if (p.dtype == DType::kFp8) rate = 800e12;
  if (p.dtype == DType::kTf32) rate = 200e12;
  if (p.dtype == DType::kFp32) rate = 40e12;
  const double bytes = double(p.bytes());
  return 5.0 + p.flops() / rate * 1e6 + bytes / 2.0e12 * 1e6;
}

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

std::string gib(int64_t bytes) { return fmt::format("{:.2f} GiB", double(bytes) / (1ll << 30)); }

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
  std::nth_element(us.begin(), us.begin() + long(us.size() / 2), us.end());
  return us[us.size() / 2];
}

}  // namespace

void check_fits(const MemoryPlan& mem, int64_t free_bytes, int64_t total_bytes) {
  // Leave a margin for cuBLAS's own allocations and the CUDA graphs.
  const int64_t margin = 256ll << 20;
  if (mem.total() + margin > free_bytes)
    throw Error(ExitCode::kOutOfMemory,
                fmt::format("the sweep's largest point needs {} of GPU memory (A {}, B {}, C {}, "
                            "flush {}, workspace {}) plus a {} margin; {} of {} is free",
                            gib(mem.total()), gib(mem.a), gib(mem.b), gib(mem.c), gib(mem.flush),
                            gib(mem.workspace), gib(margin), gib(free_bytes), gib(total_bytes)));
}

MemoryPlan memory_plan(const std::vector<Problem>& problems, const DeviceContext& device, bool hot) {
  MemoryPlan plan;
  for (const auto& p : problems) {
    plan.a = std::max(plan.a, p.a_span() * input_bytes(p.dtype));
    plan.b = std::max(plan.b, p.b_span() * input_bytes(p.dtype));
    plan.c = std::max(plan.c, p.c_span() * output_bytes(p.dtype));
  }
  // A memset as large as L2 evicts the operands of the previous call (MEASURE.md: ~19 us for 50 MB).
  plan.flush = hot ? 0 : std::max<int64_t>(device.l2_bytes, 1 << 20);
  plan.workspace = kWorkspaceBytes;
  return plan;
}

std::string rerun_command(const PointKey& key, int lt_algos) {
  const Problem& p = key.problem;
  // Our kernels: the variant's key is its own selection, "custom:<kernel>:<BMxBN>:<schedule>".
  const std::string backend = key.backend == "custom" ? "custom:" + key.algo : key.backend;
  std::string cmd = fmt::format("shapescope sweep --m {} --n {} --k {} --dtype {} --layout {} --backend {}",
                                p.m, p.n, p.k, to_string(p.dtype), to_string(p.layout), backend);
  if (key.backend == to_string(BackendKind::kCublasLt) && key.algo != default_algo(key.backend))
    cmd += fmt::format(" --lt-algos {}", std::max(lt_algos, std::stoi(key.algo.substr(1)) + 1));
  if (p.batch > 1) cmd += fmt::format(" --batch {}", p.batch);
  Problem natural = p;
  natural.lda = p.a_cols();
  natural.ldb = p.b_cols();
  natural.ldc = p.n;
  if (p.lda != natural.lda || p.ldb != natural.ldb || p.ldc != natural.ldc)
    cmd += fmt::format(" --lda {} --ldb {} --ldc {}", p.lda, p.ldb, p.ldc);
  if (p.off_a) cmd += fmt::format(" --offset {}", p.off_a);
  if (key.hot) cmd += " --hot";
  return cmd;
}

MeasureOutcome measure(const MeasureRequest& request, const DeviceContext& device, Store& store,
                       Progress& progress, const std::atomic<bool>* interrupted) {
  MeasureOutcome outcome;
  const auto started = std::chrono::steady_clock::now();
  const bool hot = request.measure.hot;

  // Which backend can run each dtype on this GPU is known before anything is allocated.
  for (const auto& p : request.problems)
    if (auto why = dtype_unsupported(p.dtype, device)) throw Error(ExitCode::kNoGpu, *why);

  // One entry per (problem, backend, algo) of the plan: found in the store, or to be measured.
  struct Entry {
    PointKey key;
    size_t problem = 0;
    size_t backend = 0;
    std::optional<int64_t> id;
    bool measure = false, annotate = false;
    GemmCall* call = nullptr;
  };
  DeviceBuffers buffers;  // filled in once allocated; backends read it then
  std::vector<std::unique_ptr<Backend>> backends;
  for (const auto& name : request.backends) backends.push_back(make_backend(name, buffers, request.lt_algos));

  std::vector<Entry> entries;
  std::vector<Problem> gpu_problems;  // what needs the GPU (measure or annotate)
  for (size_t pi = 0; pi < request.problems.size(); ++pi) {
    const Problem& p = request.problems[pi];
    for (size_t bi = 0; bi < backends.size(); ++bi) {
      if (auto why = backends[bi]->unsupported(p, device)) {
        outcome.skipped.push_back(fmt::format("{} {} {}: {}", backends[bi]->name(), p.shape_string(),
                                              to_string(p.dtype), *why));
        continue;
      }
      for (const auto& algo : backends[bi]->algo_keys()) {
        Entry e;
        e.key = PointKey{backends[bi]->name(), algo, p, hot};
        e.problem = pi;
        e.backend = bi;
        e.id = store.find(device, e.key);
        e.measure = !e.id || request.force;
        e.annotate = e.measure || !store.is_annotated(*e.id);
        if (e.measure || e.annotate) gpu_problems.push_back(p);
        entries.push_back(std::move(e));
      }
    }
  }

  if (!gpu_problems.empty()) {
    const MemoryPlan mem = memory_plan(gpu_problems, device, hot);
    int64_t free_bytes = 0, total_bytes = 0;
    memory_info(free_bytes, total_bytes);
    check_fits(mem, free_bytes, total_bytes);

    DeviceMemory a(mem.a), b(mem.b), c(mem.c), flush(mem.flush), workspace(mem.workspace);
    buffers.a = a.ptr;
    buffers.b = b.ptr;
    buffers.c = c.ptr;
    buffers.workspace = workspace.ptr;
    buffers.workspace_bytes = mem.workspace;

    // Random normal operands, never zeros. One dtype per buffer at a time: a sweep has one dtype.
    const DType dtype = gpu_problems.front().dtype;
    fill_normal(a.ptr, mem.a / input_bytes(dtype), dtype, false, 1, nullptr);
    fill_normal(b.ptr, mem.b / input_bytes(dtype), dtype, false, 2, nullptr);
    fill_normal(c.ptr, mem.c / output_bytes(dtype), dtype, true, 3, nullptr);
    CHECK_CUDA(cudaDeviceSynchronize());

    // Prepare the calls (cuBLASLt's heuristic is queried here, never inside a capture).
    std::map<std::pair<size_t, size_t>, std::vector<PreparedCall>> prepared;
    std::vector<std::unique_ptr<GemmCall>> calls;
    for (auto& e : entries) {
      if (!e.measure && !e.annotate) continue;
      auto slot = std::make_pair(e.problem, e.backend);
      if (!prepared.count(slot)) {
        std::vector<std::string> wanted;
        for (const auto& other : entries)
          if (other.problem == e.problem && other.backend == e.backend && (other.measure || other.annotate))
            wanted.push_back(other.key.algo);
        std::string why;
        prepared[slot] = backends[e.backend]->prepare(request.problems[e.problem], wanted, why);
        for (const auto& w : wanted) {
          const auto& got = prepared[slot];
          if (std::none_of(got.begin(), got.end(), [&](const PreparedCall& pc) { return pc.algo == w; }))
            outcome.skipped.push_back(fmt::format("{} {} {} {}: {}", backends[e.backend]->name(), w,
                                                  request.problems[e.problem].shape_string(),
                                                  to_string(request.problems[e.problem].dtype), why));
        }
      }
      for (auto& pc : prepared[slot])
        if (pc.algo == e.key.algo) e.call = pc.call.get();
    }

    // Our kernels against cuBLAS, on these operands, before any timing: a kernel that fails is
    // reported and neither timed nor stored.
    std::unique_ptr<Backend> reference;
    for (auto& e : entries) {
      if (!e.call || !backends[e.backend]->needs_verification()) continue;
      const Problem& p = request.problems[e.problem];
      if (!reference) reference = make_backend("cublas", buffers, 1);
      std::string why;
      std::vector<PreparedCall> ref = reference->prepare(p, {default_algo("cublas")}, why);
      std::optional<std::string> failed =
          ref.empty() ? std::optional<std::string>("cannot verify: cuBLAS cannot run it (" + why + ")")
                      : verify_against(*e.call, *ref.front().call, p, buffers);
      if (failed) {
        outcome.skipped.push_back(fmt::format("{} {} {} {}: {}", e.key.backend, e.key.algo, p.shape_string(),
                                              to_string(p.dtype), *failed));
        e.call = nullptr;
      }
    }

    MeasureRequest local = request;
    local.measure.flush_buffer = flush.ptr;
    local.measure.flush_bytes = mem.flush;
    if (!hot) outcome.flush_us = measure_flush_us(flush.ptr, mem.flush);

    // Timing.
    std::vector<size_t> timed;  // entry index per job
    std::vector<TimedJob> jobs;
    for (size_t i = 0; i < entries.size(); ++i)
      if (entries[i].measure && entries[i].call) {
        timed.push_back(i);
        jobs.push_back({entries[i].call, estimate_us(entries[i].key.problem)});
      }
    std::unique_ptr<NvmlDevice> nvml = NvmlDevice::open(device.pci_bus_id);
    double floor_us = 0;
    double fraction = 0, last_tflops = 0;
    {
      ClockSampler clocks(nvml.get(), std::chrono::milliseconds(20));
      Engine engine(local.measure, &clocks, interrupted);
      const bool finished = engine.run(
          jobs,
          [&](size_t job, const TimingStats& timing) {
            Entry& e = entries[timed[job]];
            PointResult result;
            result.timing = timing;
            result.lt = e.call->lt_config();
            result.measured_at = now_utc();
            result.command = rerun_command(e.key, request.lt_algos);
            e.id = store.save_point(device, e.key, result);
            ++outcome.measured;
            floor_us += timing.samples * (timing.median_us + outcome.flush_us);
            last_tflops = e.key.problem.flops() / timing.median_us / 1e6;
            progress.update(fraction, outcome.measured, last_tflops);
          },
          [&](double f) {
            fraction = f;
            progress.update(fraction, outcome.measured, last_tflops);
          });
      outcome.median_clock_mhz = engine.median_clock_mhz();
      if (!finished) outcome.interrupted = true;
    }
    outcome.gpu_floor_s = floor_us / 1e6;

    // Annotation: a separate, untimed pass under CUPTI, for every stored point that lacks it.
    if (!outcome.interrupted) {
      std::vector<size_t> todo;
      for (size_t i = 0; i < entries.size(); ++i)
        if (entries[i].annotate && entries[i].call && entries[i].id) todo.push_back(i);
      if (!todo.empty()) {
        cudaStream_t stream;
        CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        KernelTrace trace;
        for (size_t begin = 0; begin < todo.size() && !outcome.interrupted; begin += kAnnotateBatch) {
          const size_t end = std::min(todo.size(), begin + kAnnotateBatch);
          for (size_t t = begin; t < end; ++t) {
            trace.push(uint64_t(todo[t]));
            entries[todo[t]].call->enqueue(stream);
            trace.pop();
          }
          CHECK_CUDA(cudaStreamSynchronize(stream));
          auto kernels = trace.collect();
          for (size_t t = begin; t < end; ++t) {
            store.save_kernels(*entries[todo[t]].id, kernels[uint64_t(todo[t])]);
            ++outcome.annotated;
          }
          if (interrupted && interrupted->load()) outcome.interrupted = true;
        }
        cudaStreamDestroy(stream);
      }
    }
  }

  for (const auto& e : entries) {
    if (e.id) outcome.point_ids.push_back(*e.id);
    if (e.id && !e.measure) ++outcome.reused;
  }
  // The model's annotations go into the store too, for SQL users (views recompute them).
  for (int64_t id : outcome.point_ids) {
    if (auto point = store.load(id)) outcome.points.push_back(std::move(*point));
  }
  outcome.annotations = annotate_points(store, outcome.points);
  std::vector<std::pair<int64_t, std::vector<NamedValue>>> rows;
  for (size_t i = 0; i < outcome.points.size(); ++i)
    rows.emplace_back(outcome.points[i].id, annotation_fields(outcome.annotations[i]));
  store.save_annotations(annotation_table(), rows);
  outcome.wall_s = seconds_since(started);
  progress.finish();
  return outcome;
}

}  // namespace shapescope
