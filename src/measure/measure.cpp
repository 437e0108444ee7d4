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
#include "measure/compared_runs.hpp"
#include "timing/device_kernels.hpp"
#include "timing/stats.hpp"
#include "trace/graph_kernels.hpp"
#include "trace/kernel_trace.hpp"

namespace shapescope {
namespace {

constexpr size_t kAnnotateBatch = 256;  // points per CUPTI flush

// Runs one step and adds its wall time to `into`.
template <typename Step>
auto timed(double& into, Step&& step) {
  const auto started = std::chrono::steady_clock::now();
  struct Add {
    double& into;
    std::chrono::steady_clock::time_point started;
    ~Add() { into += seconds_since(started); }
  } add{into, started};
  return step();
}

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

// One (problem, backend, algo) of the request: found in the store, or to be measured.
struct Entry {
  PointKey key;
  size_t problem = 0;
  size_t backend = 0;
  std::optional<int64_t> id;
  bool measure = false, annotate = false;
  GemmCall* call = nullptr;
  std::optional<std::vector<KernelRecord>> kernels;  // from its captured graph, or CUPTI
  bool graph_read = false;      // `kernels` read from the call's captured graph
  bool several_kernels = false;  // ... and there were several: CUPTI gives their durations
};

// The GPU memory of one measure() call: operands at their largest, the L2 flush, the workspace,
// the verification's reference copy.
struct Buffers {
  explicit Buffers(const MemoryPlan& plan)
      : a(plan.a), b(plan.b), c(plan.c), flush(plan.flush), workspace(plan.workspace), reference(plan.reference) {}
  DeviceMemory a, b, c, flush, workspace, reference;
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
  std::vector<Problem> gpu_problems;  // what needs the GPU (measure or annotate), the sentinel's too
  std::map<std::pair<size_t, size_t>, std::vector<PreparedCall>> prepared;  // by (problem, backend)
  std::unique_ptr<Backend> sentinel_backend;
  std::unique_ptr<GraphKernels> graphs;  // reads the kernels of the calls measured (at their save)
  std::vector<PreparedCall> sentinel_call;
  double warm_since = 0;  // when the first GEMMs ran (verification, annotation): the warm-up's start
  MeasureOutcome outcome;
};

void report(const Session& s, MeasureProgress p) {
  if (s.progress) s.progress(p);
}

bool stop_requested(const Session& s) { return s.interrupted && s.interrupted->load(); }

// Paired passes or a replayed step: the request's calls run together, nothing timed one by one or stored.
bool compared(const Session& s) { return s.request.paired || s.request.replay; }

// The GPU load before the first timed sample starts with the first GEMM that runs (verification,
// the CUPTI pass): the engine's warm-up makes up the rest.
void mark_warm(Session& s) {
  if (s.warm_since == 0) s.warm_since = ClockSampler::now();
}

// A point not measured: its line ("cublas 4096x4096x4096 fp8: why") and its problem.
void skip(MeasureOutcome& out, BackendKind backend, const std::string& algo, const Problem& p, const std::string& why) {
  const std::string what = fmt::format("{} {}{}{} {}", to_string(backend), algo, algo.empty() ? "" : " ",
                                       p.shape_string(), to_string(p.dtype));
  out.skipped.push_back(what + ": " + why);
  out.skips.push_back({p, what, why});
}

// Check: which backend can run each dtype on this GPU is known before anything is allocated.
void check(const Session& s) {
  for (const auto& p : s.request.problems)
    if (auto why = dtype_unsupported(p.dtype, s.device)) throw Error(ExitCode::kNoGpu, *why);
}

// Plan against the store: one entry per (problem, backend, algo); what the store has (and has
// annotated) needs no GPU unless --force. One prepared query looks every key up.
void plan_against_store(Session& s) {
  for (const BackendSpec& spec : s.request.backends) s.backends.push_back(make_backend(spec, s.buffers, s.request.lt_algos));
  std::vector<std::pair<size_t, size_t>> pairs = s.request.pairs;
  if (pairs.empty())
    for (size_t pi = 0; pi < s.request.problems.size(); ++pi)
      for (size_t bi = 0; bi < s.backends.size(); ++bi) pairs.emplace_back(pi, bi);
  if (!s.request.pair_algos.empty() && s.request.pair_algos.size() != s.request.pairs.size())
    throw Error(ExitCode::kInternal, fmt::format("measure: {} lists of algos for {} pairs", s.request.pair_algos.size(),
                                                 s.request.pairs.size()));
  for (size_t at = 0; at < pairs.size(); ++at) {
    const auto [pi, bi] = pairs[at];
    if (pi >= s.request.problems.size() || bi >= s.backends.size())
      throw Error(ExitCode::kInternal, fmt::format("measure: the pair (problem {}, backend {}) names none of the request's "
                                                   "{} problems and {} backends",
                                                   pi, bi, s.request.problems.size(), s.backends.size()));
    const Problem& p = s.request.problems[pi];
    {
      if (auto why = s.backends[bi]->unsupported(p, s.device)) {
        skip(s.outcome, s.backends[bi]->kind(), "", p, *why);
        continue;
      }
      const std::vector<std::string> only = s.request.pair_algos.empty() ? std::vector<std::string>() : s.request.pair_algos[at];
      for (const auto& algo : s.backends[bi]->algo_keys_for(p)) {
        if (!only.empty() && std::find(only.begin(), only.end(), algo) == only.end()) continue;
        Entry e;
        e.key = PointKey{s.backends[bi]->kind(), algo, p, s.request.measure.hot, s.request.measure.clocks};
        e.problem = pi;
        e.backend = bi;
        s.entries.push_back(std::move(e));
      }
    }
  }
  std::vector<PointKey> keys;
  for (const Entry& e : s.entries) keys.push_back(e.key);
  const std::vector<std::optional<StoredRef>> found = s.store.find(s.device, keys);
  bool any_measured = false;
  for (size_t i = 0; i < s.entries.size(); ++i) {
    Entry& e = s.entries[i];
    if (found[i]) e.id = found[i]->id;
    e.measure = !e.id || s.request.force;
    e.annotate = e.measure || !found[i]->annotated;
    if (compared(s)) e.measure = e.annotate = false;  // compared, not stored
    if (e.measure || e.annotate || compared(s)) s.gpu_problems.push_back(e.key.problem);
    any_measured = any_measured || e.measure;
  }
  if (any_measured) {
    s.outcome.sentinel = sentinel_key(s.request.problems, s.request.measure.hot, s.request.measure.clocks);
    s.gpu_problems.push_back(s.outcome.sentinel->problem);
  }
}

// Prepare, part one: allocate (after checking that it fits) and fill the operands with random
// normal values, never zeros: in the request's dtype (a sweep has one), or, where the request mixes
// input types, bytes that each of them reads as finite numbers.
std::unique_ptr<Buffers> allocate(Session& s, MemoryPlan& plan) {
  plan = memory_plan(s.gpu_problems, s.device, s.request.measure.hot);
  for (const Entry& e : s.entries)
    if ((e.measure || compared(s)) && s.backends[e.backend]->needs_verification())
      plan.reference = std::max(plan.reference, reference_bytes(e.key.problem));
  int64_t free_bytes = 0, total_bytes = 0;
  memory_info(free_bytes, total_bytes);
  check_fits(plan, free_bytes, total_bytes);
  auto memory = std::make_unique<Buffers>(plan);
  s.outcome.allocated_on = check_allocation(memory->a.ptr ? memory->a.ptr : memory->flush.ptr, s.device);
  s.buffers.a = memory->a.ptr;
  s.buffers.b = memory->b.ptr;
  s.buffers.c = memory->c.ptr;
  s.buffers.workspace = memory->workspace.ptr;
  s.buffers.workspace_bytes = plan.workspace;
  const DType dtype = s.gpu_problems.front().dtype;
  // Several input types in one request (explain's precision controls, paired against the target;
  // an fp8 GEMM with its casts, which read bf16): bytes that each of them reads as finite numbers
  // (timing/device_kernels.hpp).
  const bool mixed = std::any_of(s.gpu_problems.begin(), s.gpu_problems.end(), [&](const Problem& p) {
    return input_bytes(p.dtype) != input_bytes(dtype) || (p.dtype == DType::kFp16) != (dtype == DType::kFp16) ||
           p.cast != CastOperand::kNone;
  });
  if (mixed) {
    fill_for_every_dtype(memory->a.ptr, plan.a, 1, nullptr);
    fill_for_every_dtype(memory->b.ptr, plan.b, 2, nullptr);
    fill_for_every_dtype(memory->c.ptr, plan.c, 3, nullptr);
  } else {
    fill_normal(memory->a.ptr, plan.a / input_bytes(dtype), dtype, false, 1, nullptr);
    fill_normal(memory->b.ptr, plan.b / input_bytes(dtype), dtype, false, 2, nullptr);
    fill_normal(memory->c.ptr, plan.c / output_bytes(dtype), dtype, true, 3, nullptr);
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  return memory;
}

// Prepare, part two: the calls, one prepare() per (problem, backend) for all its wanted algos
// (cuBLASLt's heuristic is queried here, never inside a capture); an algo the library did not
// provide is listed as skipped. The sentinel's call too.
void prepare_calls(Session& s) {
  const bool paired = compared(s);
  for (auto& e : s.entries) {
    if (!e.measure && !e.annotate && !paired) continue;
    const auto slot = std::make_pair(e.problem, e.backend);
    const Problem& p = s.request.problems[e.problem];
    if (!s.prepared.count(slot)) {
      std::vector<std::string> wanted;
      for (const auto& other : s.entries)
        if (other.problem == e.problem && other.backend == e.backend && (other.measure || other.annotate || paired))
          wanted.push_back(other.key.algo);
      std::string why;
      s.prepared[slot] = s.backends[e.backend]->prepare(p, wanted, why);
      const auto& got = s.prepared[slot];
      for (const auto& w : wanted)
        if (std::none_of(got.begin(), got.end(), [&](const PreparedCall& pc) { return pc.algo == w; }))
          skip(s.outcome, s.backends[e.backend]->kind(), w, p, why);
    }
    for (auto& pc : s.prepared[slot])
      if (pc.algo == e.key.algo) e.call = pc.call.get();
  }
  if (!s.outcome.sentinel) return;
  const PointKey& key = *s.outcome.sentinel;
  s.sentinel_backend = make_backend(BackendSpec(key.backend), s.buffers, 1);
  std::string why;
  s.sentinel_call = s.sentinel_backend->prepare(key.problem, {key.algo}, why);
  if (s.sentinel_call.empty()) s.outcome.sentinel.reset();  // measured without one, as before
}

// Verify: our kernels against cuBLAS, on these operands, before any timing: every check queued on
// one stream and compared on the GPU, one synchronization for all; a kernel that fails is reported
// and neither timed nor stored. A grouped call's reference is cuBLAS's grouped call of it.
void verify(Session& s, const Buffers& memory, const MemoryPlan& plan) {
  std::map<BackendKind, std::unique_ptr<Backend>> reference;  // cublas, cublas_grouped
  std::map<size_t, std::vector<PreparedCall>> references;  // cuBLAS's call, by problem
  std::unique_ptr<Verifier> verifier;
  std::vector<size_t> checked;  // entry per queued check
  for (size_t i = 0; i < s.entries.size(); ++i) {
    Entry& e = s.entries[i];
    if (!e.call || !(e.measure || compared(s))) continue;
    // An fp8 GEMM's scales are laid out by us: checked against the product of its dequantized operands.
    if (const std::optional<Fp8Operands> fp8 = e.call->fp8_operands()) {
      if (!verifier) verifier = std::make_unique<Verifier>(s.buffers, memory.reference.ptr, plan.reference);
      mark_warm(s);
      verifier->queue_fp8(*e.call, *fp8);
      checked.push_back(i);
      continue;
    }
    if (!s.backends[e.backend]->needs_verification()) continue;
    const Problem& p = s.request.problems[e.problem];
    if (!verifier) verifier = std::make_unique<Verifier>(s.buffers, memory.reference.ptr, plan.reference);
    const BackendKind kind = p.grouped() ? BackendKind::kCublasGrouped : BackendKind::kCublas;
    if (!reference[kind]) reference[kind] = make_backend(BackendSpec(kind), s.buffers, 1);
    std::string why;
    if (!references.count(e.problem))
      references[e.problem] = reference[kind]->prepare(p, {std::string(default_algo(kind))}, why);
    if (references[e.problem].empty()) {
      skip(s.outcome, e.key.backend, e.key.algo, p, "cannot verify: cuBLAS cannot run it (" + why + ")");
      e.call = nullptr;
      continue;
    }
    mark_warm(s);
    verifier->queue(*e.call, *references[e.problem].front().call, p);
    checked.push_back(i);
  }
  if (!verifier) return;
  const std::vector<std::optional<std::string>> verdicts = verifier->results();
  for (size_t c = 0; c < checked.size(); ++c) {
    if (!verdicts[c]) continue;
    Entry& e = s.entries[checked[c]];
    skip(s.outcome, e.key.backend, e.key.algo, s.request.problems[e.problem], *verdicts[c]);
    e.call = nullptr;
  }
}

// CUPTI's records (with each kernel's duration) for the entries `todo`: one untimed launch each,
// kAnnotateBatch launches per flush. Every entry here is stored: its kernels are saved now, one
// transaction per batch. Never while the engine times: CUPTI's records perturb timings.
void trace_with_cupti(Session& s, const std::vector<size_t>& todo) {
  if (todo.empty()) return;
  s.outcome.phases.traced_by_cupti += todo.size();
  mark_warm(s);
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  KernelTrace trace;
  for (size_t begin = 0; begin < todo.size() && !stop_requested(s); begin += kAnnotateBatch) {
    const size_t end = std::min(todo.size(), begin + kAnnotateBatch);
    for (size_t t = begin; t < end; ++t) {
      trace.push(uint64_t(todo[t]));
      s.entries[todo[t]].call->enqueue(stream);
      trace.pop();
    }
    CHECK_CUDA(cudaStreamSynchronize(stream));
    auto kernels = trace.collect();
    std::vector<std::pair<int64_t, std::vector<KernelRecord>>> stored;
    for (size_t t = begin; t < end; ++t) {
      Entry& e = s.entries[todo[t]];
      e.kernels = kernels[uint64_t(todo[t])];
      stored.emplace_back(*e.id, *e.kernels);
    }
    s.store.save_kernels(stored);
    s.outcome.annotated += stored.size();
  }
  cudaStreamDestroy(stream);
}

// Annotation, before the timed passes: the stored points that lack their kernels (no new timing
// to go with them) get CUPTI's records.
void trace_stored(Session& s) {
  std::vector<size_t> todo;
  for (size_t i = 0; i < s.entries.size(); ++i)
    if (s.entries[i].annotate && !s.entries[i].measure && s.entries[i].call && s.entries[i].id) todo.push_back(i);
  trace_with_cupti(s, todo);
}

// Annotation of the points to measure, before the timed passes: each call is stream-captured and
// its graph's kernel nodes read back (no GPU work; the engine times such a graph). This is where
// cuBLAS picks and lazily loads each kernel, which waits for any GPU work queued, so it runs while
// the GPU is idle, before the warm-up (it also spares the engine's captures those costs). A call
// of one kernel is then done: that kernel's duration is the point's timed median (the event pair
// held it alone), filled in at its save. A call of several kernels (split-K and its reduction) is
// saved without them and goes through CUPTI after the timed passes, for each kernel's own duration.
void read_graph_kernels(Session& s, Entry& e) {
  if (!s.graphs) s.graphs = std::make_unique<GraphKernels>();
  e.kernels = s.graphs->of(*e.call);
  e.graph_read = true;
  e.several_kernels = e.kernels->size() > 1;
}

void read_graphs(Session& s) {
  for (Entry& e : s.entries) {
    if (stop_requested(s)) return;
    if (e.measure && e.annotate && e.call) read_graph_kernels(s, e);
  }
}

std::optional<std::vector<KernelRecord>> kernels_at_save(Session& s, Entry& e, const TimingStats& timing) {
  if (!e.annotate) return std::nullopt;
  if (!e.graph_read) read_graph_kernels(s, e);
  if (e.several_kernels) return std::nullopt;
  if (e.kernels->size() == 1) e.kernels->front().duration_us = timing.median_us;
  return e.kernels;
}

// After the timed passes: CUPTI for the measured points whose calls launch several kernels.
void trace_several(Session& s) {
  std::vector<size_t> todo;
  for (size_t i = 0; i < s.entries.size(); ++i)
    if (s.entries[i].measure && s.entries[i].id && s.entries[i].call && s.entries[i].several_kernels) todo.push_back(i);
  trace_with_cupti(s, todo);
}

// A job's cost for sizing chunks: CUPTI's durations (hot L2, one run) where a stored point's kernels
// were traced before timing; else the model's estimate (kernels read from graphs have no duration
// until the point is timed).
double job_estimate_us(const Entry& e) {
  double traced = 0;
  if (e.kernels)
    for (const KernelRecord& k : *e.kernels) traced += k.duration_us;
  return traced > 0 ? traced + 2.0 : estimate_us(e.key.problem);
}

// A point measured on a GPU that was shared with another process, or ran under load below 70 % of
// its maximum clock, is flagged (kept, marked throttled with shapescope's reason bits).
void flag_health(TimingStats& t, const ClockSampler& clocks, GpuHealth& health) {
  const uint64_t before = t.throttle_reasons;
  if (const auto others = clocks.other_processes(); others && *others > 0) t.throttle_reasons |= throttle::kSharedGpu;
  if (t.sm_clock_mhz && health.max_clock_mhz > 0 && *t.sm_clock_mhz < throttle::kLowClockShare * health.max_clock_mhz)
    t.throttle_reasons |= throttle::kLowClock;
  if (t.throttle_reasons == before) return;
  t.throttled = true;
  ++health.flagged;
}

// The points of one finished chunk, saved in one transaction with their kernels.
void save_chunk(Session& s, const std::vector<size_t>& timed, const std::vector<JobResult>& chunk,
                const ClockSampler& clocks, double& floor_us, MeasureProgress& progress) {
  std::vector<PointToSave> batch;
  for (const JobResult& r : chunk) {
    Entry& e = s.entries[timed[r.job]];
    PointResult result;
    result.timing = r.timing;
    flag_health(result.timing, clocks, s.outcome.health);
    result.lt = e.call->lt_config();
    result.measured_at = now_utc();
    result.command = rerun_command(e.key, s.request.lt_algos);
    batch.push_back({e.key, result, kernels_at_save(s, e, r.timing)});
    s.outcome.timings.push_back(result.timing);
    floor_us += r.timing.samples * (r.timing.median_us + s.outcome.flush_us);
  }
  const std::vector<int64_t> ids = s.store.save_points(s.device, batch);
  for (size_t i = 0; i < chunk.size(); ++i) {
    Entry& e = s.entries[timed[chunk[i].job]];
    e.id = ids[i];
    if (e.kernels && !e.several_kernels) ++s.outcome.annotated;
  }
  s.outcome.measured += chunk.size();
  progress.measured = s.outcome.measured;
  const JobResult& last = chunk.back();
  progress.last_tflops = s.entries[timed[last.job]].key.problem.flops() / last.timing.median_us / 1e6;
  report(s, progress);
}

// The request's timing options with this call's flush buffer, and the warm-up counted from the
// earlier of the caller's start (a worker's earlier chunks kept the GPU busy) and this call's first GEMMs.
MeasureOptions timing_options(const Session& s, const Buffers& memory, const MemoryPlan& plan) {
  MeasureOptions options = s.request.measure;
  options.flush_buffer = memory.flush.ptr;
  options.flush_bytes = plan.flush;
  if (s.warm_since > 0 && (options.warm_since == 0 || s.warm_since < options.warm_since)) options.warm_since = s.warm_since;
  return options;
}

// Time: every entry to measure, through the engine, with the sentinel; each chunk is saved as soon
// as it is final, while the engine's next graphs run.
void time_calls(Session& s, const Buffers& memory, const MemoryPlan& plan) {
  const MeasureOptions options = timing_options(s, memory, plan);
  if (!options.hot) s.outcome.flush_us = measure_flush_us(memory.flush.ptr, plan.flush);
  std::vector<size_t> timed;  // entry index per job
  std::vector<TimedJob> jobs;
  for (size_t i = 0; i < s.entries.size(); ++i)
    if (s.entries[i].measure && s.entries[i].call) {
      timed.push_back(i);
      jobs.push_back({s.entries[i].call, job_estimate_us(s.entries[i])});
    }
  if (jobs.empty()) return;
  std::optional<TimedJob> sentinel;
  if (s.outcome.sentinel)
    sentinel = TimedJob{s.sentinel_call.front().call.get(), estimate_us(s.outcome.sentinel->problem)};
  std::unique_ptr<NvmlDevice> nvml = NvmlDevice::open(s.device.pci_bus_id);
  GpuHealth& health = s.outcome.health;
  health.max_clock_mhz = s.device.max_sm_clock_mhz;
  if (nvml) health.power_limit_w = nvml->read().power_limit_w;
  double floor_us = 0;
  MeasureProgress progress;
  {
    ClockSampler clocks(nvml.get(), std::chrono::milliseconds(20));
    const double engine_started = ClockSampler::now();
    Engine engine(options, &clocks, s.interrupted);
    const bool finished = engine.run(
        jobs, sentinel ? &*sentinel : nullptr,
        [&](const std::vector<JobResult>& chunk) { save_chunk(s, timed, chunk, clocks, floor_us, progress); },
        [&](double f) {
          progress.fraction = f;
          report(s, progress);
        },
        [&](const SentinelCheck& check) { s.outcome.sentinel_checks.push_back(check); });
    s.outcome.median_clock_mhz = engine.median_clock_mhz();
    health.median_clock_mhz = s.outcome.median_clock_mhz;
    health.other_processes = clocks.other_processes();
    std::vector<double> power;
    for (const ClockSample& c : clocks.between(engine_started, ClockSampler::now()))
      if (c.power_w > 0) power.push_back(c.power_w);
    if (!power.empty()) health.median_power_w = median(power);
    s.outcome.phases.engine = engine.times();
    if (!finished) s.outcome.interrupted = true;
  }
  s.outcome.gpu_floor_s = floor_us / 1e6;
}

// The entries with a call, in order, for a compared run; each one's request position (problem x
// backends + backend, or its index in `pairs`) -> its call index.
ComparedCalls compared_calls(const Session& s) {
  ComparedCalls c;
  const size_t backends = s.request.backends.size();
  for (const Entry& e : s.entries) {
    if (!e.call) continue;
    size_t position = e.problem * backends + e.backend;
    if (!s.request.pairs.empty()) {
      const auto it = std::find(s.request.pairs.begin(), s.request.pairs.end(), std::make_pair(e.problem, e.backend));
      position = size_t(it - s.request.pairs.begin());
    }
    c.calls_at[position].push_back(c.calls.size());
    c.calls.push_back(e.call);
    c.keys.push_back(e.key);
  }
  return c;
}

// A paired comparison (every entry with a call, in the same passes, against the first entry) or a
// replayed step.
void time_compared(Session& s, const Buffers& memory, const MemoryPlan& plan) {
  if (s.entries.empty()) return;
  if (s.request.paired && !s.entries.front().call)
    throw Error(ExitCode::kNoGpu, "paired comparison: the reference " + s.entries.front().key.problem.shape_string() +
                                      " cannot run here");
  const MeasureOptions options = timing_options(s, memory, plan);
  const ComparedCalls calls = compared_calls(s);
  mark_warm(s);
  if (s.request.paired) {
    s.outcome.paired = compare_paired(calls, *s.request.paired, options, s.device, s.interrupted);
    s.outcome.interrupted = s.outcome.paired->outcome.interrupted;
    s.outcome.median_clock_mhz = s.outcome.paired->outcome.clock_median_mhz;
    return;
  }
  s.outcome.replay = compare_replayed(calls, *s.request.replay, options, s.device, s.interrupted);
  s.outcome.interrupted = s.outcome.replay->outcome.interrupted;
  s.outcome.median_clock_mhz = s.outcome.replay->outcome.clock_median_mhz;
}

// Save, the end: every point of the request that the store now holds, as stored, in plan order.
void collect_points(Session& s) {
  for (const auto& e : s.entries) {
    if (e.id) s.outcome.point_ids.push_back(*e.id);
    if (e.id && !e.measure) ++s.outcome.reused;
  }
  s.outcome.points = s.store.load(s.outcome.point_ids);
}

}  // namespace

MeasureOutcome measure(const MeasureRequest& request, const DeviceContext& device, Store& store,
                       const ProgressCallback& progress, const std::atomic<bool>* interrupted) {
  const auto started = std::chrono::steady_clock::now();
  Session s{request, device, store, progress, interrupted, {}, {}, {}, {}, {}, {}, {}, {}, 0, {}};
  PhaseTimes& phases = s.outcome.phases;
  use_device(device);  // this thread's CUDA work goes to the GPU described, whatever ran before
  check(s);
  timed(phases.plan, [&] { plan_against_store(s); });
  if (!s.gpu_problems.empty()) {
    MemoryPlan plan;
    const std::unique_ptr<Buffers> memory = timed(phases.allocate, [&] { return allocate(s, plan); });
    timed(phases.prepare, [&] { prepare_calls(s); });
    timed(phases.verify, [&] { verify(s, *memory, plan); });
    if (compared(s)) {
      if (stop_requested(s)) s.outcome.interrupted = true;
      else timed(phases.timing, [&] { time_compared(s, *memory, plan); });
    } else {
      timed(phases.trace_cupti, [&] { trace_stored(s); });
      timed(phases.trace, [&] { read_graphs(s); });
      if (!stop_requested(s)) {
        timed(phases.timing, [&] { time_calls(s, *memory, plan); });
        timed(phases.trace_cupti, [&] { trace_several(s); });
      } else {
        s.outcome.interrupted = true;
      }
    }
    s.prepared.clear();  // the calls go before the memory they read
    s.sentinel_call.clear();
  }
  timed(phases.collect, [&] { collect_points(s); });
  s.outcome.wall_s = seconds_since(started);
  MeasureProgress done;
  done.finished = true;
  report(s, done);
  return std::move(s.outcome);
}

}  // namespace shapescope
