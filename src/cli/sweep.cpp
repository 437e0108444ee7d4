// shapescope sweep: time GEMMs over shape ranges into the result store, then print them.
#include <fmt/format.h>
#include <unistd.h>

#include <charconv>
#include <optional>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "device/device.hpp"
#include "shape/plan.hpp"
#include "shape/range.hpp"
#include "store/store.hpp"
#include "views/annotated.hpp"
#include "measure/measure.hpp"
#include "report/output.hpp"

namespace shapescope {
namespace {

struct SweepOptions {
  ShapeOptions shape;
  std::string backends = "cublas";
  int lt_algos = 1;
  int samples = 10;
  double max_noise_pct = 5;
  int max_rounds = 2;
  bool hot = false;
  bool force = false;
  bool dry_run = false;
  std::string db = "shapescope.db";
  std::string format = "table";
  std::string out;
  std::string shard;
  int device = 0;
  double warmup_ms = 300;
  uint64_t seed = 0x5eed;
  bool format_given = false;  // --format on the command line (set by the callback)
};

void validate(const SweepOptions& o) {
  check_samples(o.samples);
  if (!(o.max_noise_pct > 0 && o.max_noise_pct <= 100))
    throw usage_error(fmt::format("--max-noise: {} must be a percentage in (0, 100]", o.max_noise_pct));
  if (o.max_rounds < 0 || o.max_rounds > 100)
    throw usage_error(fmt::format("--max-rounds: {} must be between 0 and 100", o.max_rounds));
  if (o.lt_algos < 1 || o.lt_algos > 64)
    throw usage_error(fmt::format("--lt-algos: {} must be between 1 and 64", o.lt_algos));
  if (!(o.warmup_ms >= 0 && o.warmup_ms <= 60000))
    throw usage_error(fmt::format("--warmup-ms: {} must be between 0 and 60000", o.warmup_ms));
  if (!parse_format(o.format))
    throw usage_error(fmt::format("--format: '{}' is not a format (table, csv, json)", o.format));
  check_db_option(o.db);
  if (o.dry_run && o.format_given)
    throw usage_error(fmt::format("--format: '{}' formats measured results; --dry-run prints its plan as a table",
                                  o.format));
  if (o.dry_run && !o.out.empty())
    throw usage_error(fmt::format("--out: '{}' takes measured results; --dry-run prints its plan to stdout "
                                  "(redirect it to keep it)",
                                  o.out));
}

void print_dry_run(const std::vector<Problem>& problems, const std::vector<std::string>& backends,
                   const SweepOptions& o) {
  // Without a GPU the L2 (flush size) is unknown: assume an H100's 50 MiB.
  DeviceContext device;
  device.l2_bytes = 50ll << 20;
  std::string where = "assuming a 50 MiB L2 (no GPU here)";
  if (device_count() > 0) {
    device = query_device(o.device);
    where = device_header(device);
  }
  write_dry_run(problems, backends.size(), plan_cost(problems, backends, o.lt_algos, o.samples, o.hot, device),
                where, o.samples);
}

// The checks that need the backends and the plan; the shard's problems.
std::vector<Problem> checked_problems(const SweepOptions& o, const std::vector<std::string>& backends) {
  if (o.lt_algos > 1 && std::find(backends.begin(), backends.end(), "cublaslt") == backends.end())
    throw usage_error(fmt::format("--lt-algos: {} needs --backend cublaslt", o.lt_algos));
  auto problems = take_shard(plan_problems(o.shape), o.shard);
  if (problems.empty()) throw usage_error(fmt::format("--shard: '{}' selects no points", o.shard));
  if (problems.front().dtype == DType::kFp8 &&
      std::find(backends.begin(), backends.end(), "cublas") != backends.end())
    throw usage_error(fmt::format("--backend: '{}' includes cublas, which has no fp8 (cublasGemmEx); "
                                  "use --backend cublaslt",
                                  o.backends));
  return problems;
}

MeasureRequest measure_request(const SweepOptions& o, const std::vector<Problem>& problems,
                               const std::vector<std::string>& backends) {
  MeasureRequest request;
  request.problems = problems;
  request.backends = backends;
  request.lt_algos = o.lt_algos;
  request.force = o.force;
  request.measure.samples = o.samples;
  request.measure.max_noise = o.max_noise_pct / 100.0;
  request.measure.max_extra_rounds = o.max_rounds;
  request.measure.hot = o.hot;
  request.measure.warmup_ms = o.warmup_ms;
  request.measure.seed = o.seed;
  return request;
}

// The last line on stderr: what was measured and reused, the GPU-time floor and the clock.
void print_summary(const SweepOptions& o, const MeasureOutcome& outcome) {
  size_t noisy = 0, throttled = 0;
  for (const StoredPoint& p : outcome.points) {
    noisy += p.result.timing.noisy;
    throttled += p.result.timing.throttled;
  }
  const double wall = process_seconds();
  std::string floor;
  if (outcome.measured > 0 && !o.hot)
    floor = fmt::format("; GPU-time floor {:.2f} s (samples x (kernel + {:.1f} us flush)), wall/floor {:.2f}",
                        outcome.gpu_floor_s, outcome.flush_us, wall / outcome.gpu_floor_s);
  std::string clock;
  if (outcome.measured > 0)
    clock = outcome.median_clock_mhz > 0
                ? fmt::format("; median SM clock {:.0f} MHz", outcome.median_clock_mhz)
                : std::string("; SM clock unknown (no NVML)");
  fmt::print(stderr, "measured {} points, reused {}, annotated {} in {:.2f} s wall{}{}; {} noisy, {} throttled\n",
             outcome.measured, outcome.reused, outcome.annotated, wall, floor, clock, noisy, throttled);
}

void run_sweep(const SweepOptions& o) {
  validate(o);
  const auto backends = parse_backends(o.backends);
  const auto problems = checked_problems(o, backends);
  if (o.dry_run) {
    print_dry_run(problems, backends, o);
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
  fmt::print(stderr, "{}\n", device_header(device));
  fmt::print(stderr, "{}; {} samples per point, shuffled passes; store {}\n",
             o.hot ? "hot L2 (no flush: a throughput-like figure)"
                   : fmt::format("cold L2 (flush {} MiB before each sample)", device.l2_bytes >> 20),
             o.samples, o.db);
  warn_if_absurd(plan_cost(problems, backends, o.lt_algos, o.samples, o.hot, device), o.samples);

  Progress progress(count_points(problems.size(), backends, o.lt_algos), isatty(STDERR_FILENO) == 1);
  const MeasureOutcome outcome =
      measure(measure_request(o, problems, backends), device, store, progress.callback(), &g_interrupted);
  const std::vector<Annotation> annotations = annotate_and_save(store, outcome.points);

  for (const auto& why : outcome.skipped) fmt::print(stderr, "skipped: {}\n", why);
  const Format format = *parse_format(o.format);
  if (out_file && !outcome.interrupted) {
    write_points(out_file->stream(), format, outcome.points, annotations);
    out_file->commit();
  } else if (!out_file) {
    write_points(std::cout, format, outcome.points, annotations);
  }
  print_summary(o, outcome);
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
      "  shapescope sweep --n 4096 --backend cublas,custom                    # our kernels vs cuBLAS\n"
      "A sweep killed half way resumes where it stopped: run the same command again.");
  std::vector<std::pair<CLI::Option*, std::string*>> ranges = {
      {cmd->add_option("--m", o->shape.m, "rows of A and C (range)"), &o->shape.m},
      {cmd->add_option("--n", o->shape.n, "columns of B and C (range)"), &o->shape.n},
      {cmd->add_option("--k", o->shape.k, "inner dimension (range)"), &o->shape.k},
      {cmd->add_option("--batch", o->shape.batch, "batch count, strided batched GEMM (range)"),
       &o->shape.batch}};
  add_problem_options(cmd, o->shape);
  cmd->add_option("--backend", o->backends,
                  "comma list: cublas, cublaslt, custom (our kernels), custom:<kernel>[:<BMxBN>[:<schedule>]]");
  cmd->add_option("--lt-algos", o->lt_algos,
                  "also time cuBLASLt's top K heuristic algorithms (h0 = its pick)");
  cmd->add_option("--samples", o->samples, "samples per point (shuffled passes)");
  cmd->add_option("--max-noise", o->max_noise_pct,
                  "re-measure points whose relative IQR is above this percentage");
  cmd->add_option("--max-rounds", o->max_rounds, "re-measurement rounds before a point is flagged noisy");
  cmd->add_flag("--hot", o->hot, "no L2 flush between samples (labelled hot in the store)");
  cmd->add_flag("--force", o->force, "re-measure points the store already has");
  cmd->add_flag("--dry-run", o->dry_run, "list the points, memory needed and estimated time; measure nothing");
  cmd->add_option("--db", o->db, "result store (SQLite file)");
  auto* format = cmd->add_option("--format", o->format, "table | csv | json");
  cmd->add_option("--out", o->out, "write the results to this file instead of stdout");
  cmd->add_option("--shard", o->shard, "I/N: measure every N-th point starting at the I-th");
  add_device_option(cmd, o->device);
  cmd->add_option("--warmup-ms", o->warmup_ms, "GEMMs run before the first sample");
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
  cmd->callback([o, ranges, format] {
    o->format_given = format->count() > 0;
    // An empty value means "not given" to the planner: a given-but-empty one is an error here.
    for (const auto& [option, value] : ranges)
      if (option->count() > 0 && value->empty()) parse_range(*value, option->get_name());
    run_sweep(*o);
  });
}

}  // namespace shapescope
