// shapescope sweep: time GEMMs over shape ranges into the result store, then print them.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <charconv>
#include <limits>
#include <optional>

#include "cli/commands.hpp"
#include "cli/sweep.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "device/device.hpp"
#include "device/nvml.hpp"
#include "shape/plan.hpp"
#include "shape/range.hpp"
#include "store/store.hpp"
#include "views/annotated.hpp"
#include "measure/measure.hpp"
#include "measure/workers.hpp"
#include "report/output.hpp"
#include "report/scale_report.hpp"
#include "report/sweep_report.hpp"

namespace shapescope {
namespace {


// The checks that need no plan; the timing options they make (the flush is added by measure()).
MeasureOptions validate(const SweepOptions& o) {
  MeasureOptions timing = measure_options(o.timing);
  timing.hot = o.hot;
  timing.seed = o.seed;
  check_wide(o.wide, o.format);
  if (o.dry_run && o.format_given)
    throw usage_error(fmt::format("--format: '{}' formats measured results; --dry-run prints its plan as a table",
                                  to_string(o.format)));
  if (!o.devices.empty() && o.device_given)
    throw usage_error(fmt::format("--devices: '{}' with --device {}: --devices runs one worker per GPU, --device "
                                  "measures on one; give one of them", o.devices, o.device));
  // The list's form now; whether its GPUs exist once the store and the GPU count are checked.
  if (!o.devices.empty() && o.devices != "all") parse_devices(o.devices, std::numeric_limits<int>::max());
  if (!o.devices.empty() && o.dry_run)
    throw usage_error(fmt::format("--devices: '{}' measures on several GPUs; --dry-run measures nothing (see one part "
                                  "of the plan with --shard I/N)", o.devices));
  if (o.casts && (o.shape.dtype != "fp8" || !o.devices.empty()))
    throw usage_error(o.shape.dtype != "fp8" ? fmt::format("--casts: the casts of fp8 GEMMs; --dtype is {}", o.shape.dtype)
                                             : fmt::format("--casts: measured in one process; --devices '{}' splits the plan", o.devices));
  if (o.dry_run && !o.out.empty())
    throw usage_error(fmt::format("--out: '{}' takes measured results; --dry-run prints its plan to stdout "
                                  "(redirect it to keep it)",
                                  o.out));
  return timing;
}

void print_dry_run(const std::vector<Problem>& problems, const SweepOptions& o, const StopRule& rule,
                   const GpuPerfModel* predicted) {
  // Without a GPU the L2 (flush size) is unknown: assume an H100's 50 MiB.
  DeviceContext device;
  device.l2_bytes = 50ll << 20;
  std::string where = "assuming a 50 MiB L2 (no GPU here)";
  if (device_count() > 0) {
    device = query_device(o.device);
    where = device_header(device);
  }
  write_dry_run(problems, o.backends.size(),
                plan_cost(problems, o.backends, o.lt_algos, rule.min_samples, o.hot, device), where, rule, predicted);
}

// The checks that need the backends and the plan; the shard's problems.
std::vector<Problem> checked_problems(const SweepOptions& o) {
  const auto has = [&](BackendKind kind) {
    return std::any_of(o.backends.begin(), o.backends.end(), [&](const BackendSpec& b) { return b.kind == kind; });
  };
  check_lt_algos_backend(o.lt_algos, has(BackendKind::kCublasLt));
  auto problems = take_shard(plan_problems(o.shape), o.shard);
  if (problems.empty()) throw usage_error(fmt::format("--shard: '{}' selects no points", o.shard));
  if (problems.front().dtype == DType::kFp8 && has(BackendKind::kCublas)) {
    std::vector<std::string> given;
    for (const BackendSpec& b : o.backends) given.push_back(b.text());
    throw usage_error(fmt::format("--backend: '{}' includes cublas, which has no fp8 (cublasGemmEx); "
                                  "use --backend cublaslt",
                                  fmt::join(given, ",")));
  }
  return problems;
}

MeasureRequest measure_request(const SweepOptions& o, const MeasureOptions& timing, const std::vector<Problem>& problems) {
  MeasureRequest request;
  request.problems = problems;
  request.backends = o.backends;
  request.lt_algos = o.lt_algos;
  request.force = o.force;
  request.measure = timing;
  if (o.casts) add_fp8_casts(request);
  return request;
}

void run_sweep(const SweepOptions& o) {
  const MeasureOptions timing = validate(o);
  const auto problems = checked_problems(o);
  const auto predicted = plan_prediction(o.predict, o.gpu, o.backends, problems.front().dtype, o.dry_run, o.device);
  if (o.dry_run) {
    check_store_for_dry_run(o.db);
    print_dry_run(problems, o, timing.stop_rule(), predicted.get());
    return;
  }
  if (!o.devices.empty()) {
    run_sweep_on_devices(o, problems);
    return;
  }
  // Every check that needs no measurement comes before anything is written: a bad --out, the store
  // (checked, not written: it is created or changed at the first measured point), the GPU.
  if (!o.out.empty()) check_output_path(o.out, "--out", {o.db});
  Store store(o.db);
  const DeviceContext device = query_device(o.device);
  // The results go to a temporary file beside --out, renamed over it only when the sweep succeeded.
  std::optional<OutputFile> out_file;
  if (!o.out.empty()) out_file.emplace(o.out, "--out");
  {
    // A plan whose largest point cannot fit is refused in one line, before the header (measure()
    // checks again against what it really allocates: the points the store lacks).
    int64_t free_bytes = 0, total_bytes = 0;
    memory_info(free_bytes, total_bytes);
    check_fits(memory_plan(problems, device, o.hot), free_bytes, total_bytes);
  }
  fmt::print(stderr, "{}\n", device_header(device));
  if (const auto nvml = NvmlDevice::open(device.pci_bus_id))
    if (const std::string line = shared_gpu_warning(device, nvml->other_processes()); !line.empty())
      fmt::print(stderr, "{}\n", line);
  fmt::print(stderr, "{}\n", sweep_method_line(timing, device.l2_bytes, o.db));
  const StopRule rule = timing.stop_rule();
  warn_if_absurd(plan_cost(problems, o.backends, o.lt_algos, rule.min_samples, o.hot, device), rule);

  if (o.queue_fd >= 0) return run_queue_worker(o, measure_request(o, timing, problems), store, device);
  // A worker of `--devices` reports to its parent, which draws the progress and prints the points.
  std::optional<WorkerReporter> reporter;
  std::optional<Progress> progress;
  if (o.report_fd >= 0) {
    reporter.emplace(o.report_fd);
  } else {
    progress.emplace(count_points(problems.size(), o.backends, o.lt_algos), isatty(STDERR_FILENO) == 1);
  }
  SweepTimes times;
  times.startup = process_seconds();
  const MeasureOutcome outcome = measure(measure_request(o, timing, problems), device, store,
                                         reporter ? reporter->progress() : progress->callback(), &g_interrupted);
  const double after_start = process_seconds();
  const std::vector<Annotation> annotations = annotate_and_save(store, outcome.points);
  for (const auto& why : outcome.skipped) fmt::print(stderr, "skipped: {}\n", why);
  if (reporter) {
    reporter->done(totals_of(outcome));  // interrupted: g_interrupted makes the exit code 130
    return;
  }
  write_points_out(o, outcome.points, annotations, outcome.interrupted, out_file);
  times.wall = process_seconds();
  times.after = times.wall - after_start;
  write_sentinel_events(std::cerr, outcome);
  if (const std::string line = health_warning(device, outcome.health); !line.empty()) fmt::print(stderr, "{}\n", line);
  if (o.verbose) write_sweep_details(std::cerr, outcome, times);
  write_sweep_summary(std::cerr, outcome, times, o.hot, timing.clocks);
  if (outcome.interrupted) {
    fmt::print(stderr, "interrupted: {} points are saved in {}; run the same command to resume{}\n",
               outcome.measured, o.db, out_file ? fmt::format(" ('{}' is left as it was)", o.out) : "");
    throw Error(ExitCode::kInterrupted, "interrupted");
  }
}

}  // namespace

void register_sweep(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  auto* cmd = app.add_subcommand("sweep", "Time GEMMs over shape ranges into the result store");
  cmd->footer(
      "Ranges: 4096 | 1..4096 | 1..4096:8 (step) | 64..8192*2 (geometric) | comma lists of these.\n"
      "Dimensions not given follow the first one given (square); several ranges give their product.\n"
      "Examples:\n"
      "  shapescope sweep --n 1..4096\n"
      "  shapescope sweep --m 4096 --k 4096 --n 1..8192:8 --backend cublas,cublaslt\n"
      "  shapescope sweep --n 4096 --backend cublaslt --lt-algos 8      # heuristic regret\n"
      "  shapescope sweep --m 8192 --n 4096 --k 4096 --layout nt --dtype fp8 --backend cublaslt\n"
      "  shapescope sweep --n 1..4096 --dry-run\n"
      "  shapescope sweep --n 1..4096 --dry-run --gpu h100-sxm --predict   # each point's predicted time, no GPU\n"
      "  shapescope sweep --n 4096 --backend cublas,custom                    # our kernels vs cuBLAS\n"
      "  shapescope sweep --n 1..8192 --devices all           # one worker per GPU of this host, one store\n"
      "  shapescope sweep --n 1..8192 --shard 3/16 --db s3.db  # one task of a job array (then: merge)\n"
      "  shapescope sweep --n 8192 --clocks burst              # boost clocks rather than the power limit\n"
      "  shapescope sweep --n 1..4096 --samples 10 --verbose   # a fixed count; where the wall time went\n"
      "A sweep killed half way resumes where it stopped: run the same command again.");
  add_dimension_options(cmd, o->shape.m, o->shape.n, o->shape.k, o->shape.batch);
  add_problem_options(cmd, o->shape);
  add_backends_option(cmd, o->backends,
                  "comma list: cublas, cublaslt, custom (our kernels), custom:<kernel>[:<BMxBN>[:<schedule>]]");
  add_lt_algos_option(cmd, o->lt_algos, "also time cuBLASLt's top K heuristic algorithms (h0 = its pick)");
  add_timing_options(cmd, o->timing);
  cmd->add_flag("--hot", o->hot, "no L2 flush between samples (labelled hot in the store)");
  cmd->add_flag("--verbose", o->verbose, "also print where the wall time went, the samples histogram, the sentinel");
  cmd->add_flag("--force", o->force, "re-measure points the store already has");
  cmd->add_flag("--dry-run", o->dry_run, "list the points, memory needed and estimated time; measure nothing");
  add_predict_options(cmd, o->predict, "the rough estimate (with --dry-run)");
  add_gpu_option(cmd, o->gpu, "with --dry-run --predict: the GPU to predict for: " + profile_keys());
  cmd->add_flag("--casts", o->casts, "fp8: also time each GEMM's casts (amax, scale, cast of A and of B; backend cast)");
  add_db_option(cmd, o->db, "result store (SQLite file)");
  auto* format = add_format_options(cmd, o->format, o->wide, "table | csv | json");
  add_out_option(cmd, o->out, "a file name, or - for standard output",
                 "write the results to this file instead of stdout (-: stdout)");
  cmd->add_option("--shard", o->shard, "I/N: measure every N-th point starting at the I-th");
  CLI::Option* device = add_device_option(cmd, o->device);
  cmd->add_option("--devices", o->devices,
                  "all | 0,2,...: one worker process per GPU, taking chunks of the plan from one queue, one store");
  cmd->add_option("--report-fd", o->report_fd, "(internal: a --devices worker reports on this fd)")->group("");
  cmd->add_option("--queue-fd", o->queue_fd, "(internal: a --devices worker reads its chunks from this fd)")->group("");
  cmd->add_option_function<std::string>(
         "--seed",
         [o](const std::string& text) {
           uint64_t value = 0;
           const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
           if (error != std::errc() || end != text.data() + text.size())
             throw usage_error(fmt::format("--seed: '{}' is not a number from 0 to 2^64-1", text));
           o->seed = value;
         },
         "seed of the pass shuffles")
      ->default_str(std::to_string(o->seed));
  cmd->callback([o, format, device] {
    if (o->out == "-") o->out.clear();  // standard output, as other Unix tools read "-"
    o->format_given = format->count() > 0;
    o->device_given = device->count() > 0;
    run_sweep(*o);
  });
}

}  // namespace shapescope
