// `sweep --devices all|0,2,...`: the parent of one worker process per GPU (measure/workers.hpp).
// Each worker is this binary again, on an interleaved part of the plan, writing the one store as a
// single sweep does (WAL, one transaction per point); the parent draws one progress line summing
// them, forwards ^C, and prints the points and the summary as a single sweep prints them.
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
#include "measure/measure.hpp"
#include "report/output.hpp"
#include "report/scale_report.hpp"
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

// One worker per GPU with a non-empty part of the plan.
std::vector<Worker> plan_workers(const SweepOptions& o, const std::vector<int>& ordinals, size_t problems,
                                 const std::vector<std::string>& backends) {
  const Shard outer = o.shard.empty() ? Shard{} : parse_shard(o.shard);
  const std::string binary = own_binary();
  const int64_t parts = int64_t(ordinals.size());
  std::vector<Worker> workers;
  for (int64_t k = 1; k <= parts; ++k) {
    const size_t share = shard_positions(problems, Shard{k, parts}).size();
    if (share == 0) continue;
    Worker w;
    w.ordinal = ordinals[size_t(k - 1)];
    w.shard = sub_shard(outer, k, parts);
    w.argv = {binary};
    for (std::string& a : worker_arguments(g_arguments, w.ordinal, w.shard, 3)) w.argv.push_back(std::move(a));
    w.points = count_points(share, backends, o.lt_algos);
    workers.push_back(std::move(w));
  }
  return workers;
}

}  // namespace

void write_points_out(const SweepOptions& o, const std::vector<StoredPoint>& points,
                      const std::vector<Annotation>& annotations, bool interrupted, std::optional<OutputFile>& out_file) {
  const Format format = *parse_format(o.format);
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

void run_sweep_on_devices(const SweepOptions& o, const std::vector<Problem>& problems,
                          const std::vector<std::string>& backends) {
  // The checks of a single sweep, before anything starts: --out, the store, the GPUs.
  if (!o.out.empty()) check_output_path(o.out, "--out", {o.db, o.db + "-wal", o.db + "-shm"});
  const Store store(o.db);
  const int count = device_count();
  if (count == 0) query_device(0);  // throws the one-line no-GPU message a single sweep gives
  std::vector<Worker> workers = plan_workers(o, parse_devices(o.devices, count), problems.size(), backends);
  std::optional<OutputFile> out_file;
  if (!o.out.empty()) out_file.emplace(o.out, "--out");

  const size_t total = std::accumulate(workers.begin(), workers.end(), size_t(0),
                                       [](size_t sum, const Worker& w) { return sum + w.points; });
  Progress progress(total, isatty(STDERR_FILENO) == 1);
  run_workers(workers, [&] {
    const MeasureProgress p = summed_progress(workers);
    progress.update(p.fraction, p.measured, p.last_tflops);
  }, &g_interrupted);
  progress.finish();

  std::vector<SweepTotals> parts;
  std::vector<const Worker*> failed;
  for (const Worker& w : workers) {
    if (w.totals) parts.push_back(*w.totals);
    if (w.failed() || (w.signal != 0 && !g_interrupted.load()) || (w.exit_code == 0 && !w.totals)) failed.push_back(&w);
  }
  SweepTotals totals = combined(parts);
  totals.interrupted = totals.interrupted || g_interrupted.load();
  if (!failed.empty()) {
    fmt::print(stderr, "{}\n", sweep_summary(totals, process_seconds(), o.hot, workers.size()));
    std::vector<std::string> why;
    for (const Worker* w : failed) why.push_back(worker_failure(*w));
    const ExitCode code = failed.front()->exit_code > 0 ? ExitCode(failed.front()->exit_code) : ExitCode::kInternal;
    throw Error(code, fmt::format("sweep --devices: {}; what the workers measured is saved in {}: run the same command "
                                  "to measure the rest",
                                  fmt::join(why, "; "), o.db));
  }
  const std::vector<StoredPoint> points = in_plan_order(store, problems, totals.point_ids);
  finish_sweep(o, points, annotate_points(store, points), totals, out_file, workers.size());
}

}  // namespace shapescope
