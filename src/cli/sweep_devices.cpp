// `sweep --devices all|0,2,...`: the parent of one worker process per GPU (measure/workers.hpp).
// Each worker is this binary again, taking chunks of the plan from the parent's one queue, writing
// the one store as a single sweep does (WAL, one transaction per point); the parent draws one
// progress line summing them, forwards ^C, and prints the points, a line per GPU and the summary as
// a single sweep prints them. The worker's side (run_queue_worker) is here too.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <iostream>
#include <map>
#include <numeric>

#include "cli/commands.hpp"
#include "cli/sweep.hpp"
#include "common/error.hpp"
#include "device/device.hpp"
#include "device/nvml.hpp"
#include "measure/measure.hpp"
#include "report/output.hpp"
#include "report/scale_report.hpp"
#include "report/sweep_report.hpp"
#include "store/store.hpp"
#include "views/annotated.hpp"

namespace shapescope {
namespace {

// The running binary, for the workers (they must be the same build as the parent).
std::string own_binary() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) throw Error(ExitCode::kInternal, "sweep --devices: cannot find this program (/proc/self/exe)");
  return std::string(path, size_t(n));
}

std::string problem_key(const Problem& p) {
  return fmt::format("{} {} {} {} {} {} {} {} {} {} {} {}", p.m, p.n, p.k, p.batch, to_string(p.dtype),
                     to_string(p.layout), p.lda, p.ldb, p.ldc, p.off_a, p.off_b, p.off_c);
}

// The stored points in plan order (as a single sweep lists them), each problem's points in the
// order its worker measured them.
std::vector<StoredPoint> in_plan_order(const Store& store, const std::vector<Problem>& problems,
                                       const std::vector<int64_t>& ids) {
  std::map<std::string, size_t> position;
  for (size_t i = 0; i < problems.size(); ++i) position.emplace(problem_key(problems[i]), i);
  std::vector<StoredPoint> points;
  for (int64_t id : ids)
    if (auto point = store.load(id)) points.push_back(std::move(*point));
  std::stable_sort(points.begin(), points.end(), [&](const StoredPoint& a, const StoredPoint& b) {
    return position[problem_key(a.key.problem)] < position[problem_key(b.key.problem)];
  });
  return points;
}

// One worker per GPU; the queue hands them the plan's positions.
std::vector<Worker> plan_workers(const std::vector<int>& ordinals) {
  const std::string binary = own_binary();
  std::vector<Worker> workers;
  for (int ordinal : ordinals) {
    Worker w;
    w.ordinal = ordinal;
    w.argv = {binary};
    for (std::string& a : worker_arguments(g_arguments, ordinal)) w.argv.push_back(std::move(a));
    workers.push_back(std::move(w));
  }
  return workers;
}

// A worker failed: it exited with an error, a signal ended it (not the user's ^C), or it ended with a
// chunk in flight.
bool failed(const Worker& w) {
  if (g_interrupted.load()) return w.failed();
  return w.failed() || w.signal != 0 || !w.in_flight.empty();
}

}  // namespace

void write_points_out(const SweepOptions& o, const std::vector<StoredPoint>& points,
                      const std::vector<Annotation>& annotations, bool interrupted, std::optional<OutputFile>& out_file) {
  const Format format = o.format;
  const KernelNames names = o.wide ? KernelNames::kWhole : KernelNames::kShort;
  if (out_file && !interrupted) {
    write_points(out_file->stream(), format, points, annotations, names);
    out_file->commit();
  } else if (!out_file) {
    write_points(std::cout, format, points, annotations, names);
  }
}

void finish_sweep(const SweepOptions& o, const std::vector<StoredPoint>& points,
                  const std::vector<Annotation>& annotations, const SweepTotals& totals,
                  std::optional<OutputFile>& out_file, size_t gpus) {
  write_points_out(o, points, annotations, totals.interrupted, out_file);
  fmt::print(stderr, "{}\n", sweep_summary(totals, process_seconds(), o.hot, gpus));
  if (totals.interrupted) {
    fmt::print(stderr, "{}\n", interrupted_line(totals.measured, o.db, out_file ? o.out : ""));
    throw Error(ExitCode::kInterrupted, "interrupted");
  }
}

void run_sweep_on_devices(const SweepOptions& o, const std::vector<Problem>& problems) {
  // The checks of a single sweep, before anything starts: --out, the store, the GPUs.
  if (!o.out.empty()) check_output_path(o.out, "--out", {o.db, o.db + "-wal", o.db + "-shm"});
  const Store store(o.db);
  const int count = device_count();
  if (count == 0) query_device(0);  // throws the one-line no-GPU message a single sweep gives
  std::vector<Worker> workers = plan_workers(parse_devices(o.devices, count));
  std::optional<OutputFile> out_file;
  if (!o.out.empty()) out_file.emplace(o.out, "--out");

  ChunkQueue queue(problems.size());
  Progress progress(count_points(problems.size(), o.backends, o.lt_algos), isatty(STDERR_FILENO) == 1);
  run_workers(workers, queue, [&] {
    const MeasureProgress p = summed_progress(workers, problems.size());
    progress.update(p.fraction, p.measured, p.last_tflops);
  }, &g_interrupted);
  progress.finish();

  std::vector<SweepTotals> parts;
  std::vector<const Worker*> broken;
  for (const Worker& w : workers) {
    if (w.totals) parts.push_back(*w.totals);
    if (failed(w)) broken.push_back(&w);
  }
  SweepTotals totals = combined(parts);
  totals.interrupted = totals.interrupted || g_interrupted.load();
  if (workers.size() == 1) totals.clock_mhz = workers.front().median_clock_mhz();  // one GPU, one clock
  const auto per_gpu = [&] {
    for (const Worker& w : workers) fmt::print(stderr, "{}\n", worker_summary(w));
  };
  if (!broken.empty()) {
    per_gpu();
    fmt::print(stderr, "{}\n", sweep_summary(totals, process_seconds(), o.hot, workers.size()));
    std::vector<std::string> why;
    for (const Worker* w : broken) why.push_back(worker_failure(*w));
    const ExitCode code = broken.front()->exit_code > 0 ? ExitCode(broken.front()->exit_code) : ExitCode::kInternal;
    throw Error(code, fmt::format("sweep --devices: {}; what the workers measured is saved in {}: run the same command "
                                  "to measure the rest",
                                  fmt::join(why, "; "), o.db));
  }
  const std::vector<StoredPoint> points = in_plan_order(store, problems, totals.point_ids);
  per_gpu();
  finish_sweep(o, points, annotate_points(store, points), totals, out_file, workers.size());
}

void run_queue_worker(const SweepOptions& o, const MeasureRequest& request, Store& store, const DeviceContext& device) {
  if (o.report_fd < 0) throw usage_error("--queue-fd: a --devices worker needs --report-fd too");
  WorkerReporter reporter(o.report_fd);
  reporter.device(device.gpu_uuid, device.gpu_name);
  MeasureRequest chunk = request;
  std::optional<std::pair<bool, bool>> warned;  // (low clock, shared): said once, again when they change
  // Chunks come one after another: the GPU is warm from the first one's warm-up on.
  chunk.measure.warm_since = 0;
  while (const auto positions = next_chunk(o.queue_fd, request.problems.size(), &g_interrupted)) {
    chunk.problems.clear();
    for (size_t p : *positions) chunk.problems.push_back(request.problems[p]);
    const double started = ClockSampler::now();
    const MeasureOutcome outcome = measure(chunk, device, store, reporter.progress(), &g_interrupted);
    if (outcome.measured > 0 && chunk.measure.warm_since == 0) chunk.measure.warm_since = started;
    annotate_and_save(store, outcome.points);
    for (const auto& why : outcome.skipped) fmt::print(stderr, "skipped: {}\n", why);
    if (!outcome.health.healthy()) {
      const std::pair<bool, bool> reasons = {outcome.health.low_clock(), outcome.health.shared()};
      if (reasons != warned) fmt::print(stderr, "{}\n", health_warning(device, outcome.health));
      warned = reasons;
    }
    reporter.done(totals_of(outcome));  // interrupted: g_interrupted makes the exit code 130
    if (outcome.interrupted) return;
  }
}

}  // namespace shapescope
