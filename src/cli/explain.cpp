// `shapescope explain SHAPE`: one shape's speed, its cause and the fix, from measurements of the
// shape and its neighbours (measured now, read from the store, or predicted by the model).
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <memory>
#include <vector>

#include "cli/commands.hpp"
#include "cli/predict_options.hpp"
#include "common/error.hpp"
#include "core/backend_kind.hpp"
#include "device/device.hpp"
#include "report/explain_report.hpp"
#include "report/output.hpp"
#include "store/store.hpp"
#include "views/explain.hpp"

namespace shapescope {
namespace {

struct ExplainOptions {
  ExplainRequest request;
  std::string shape;        // SHAPE as given
  ShapeOptions problem;     // --batch, --dtype, --layout, ... as given (m, n and k unused: SHAPE gives them)
  TimingOptions timing;
  int device = 0;
  const GpuProfile* gpu = nullptr;  // --gpu: answer for that GPU model (from the store, else the model)
  std::vector<std::string> dbs;  // --db as given; several: the shape on each store's GPUs
  bool json = false;
  bool wide = false;
  PredictOptions predict;  // --predict, --perf-model
};

void write(const ExplainOptions& o, const ExplainReport& report) {
  if (o.json) {
    write_explain_json(std::cout, report);
  } else {
    write_explain_text(std::cout, report);
  }
}

// SHAPE and the problem options read once: the target, and the form its neighbours are planned in.
Problem plan_target(const ExplainOptions& o, ExplainRequest& request) {
  SizePlan plan = plan_size(o.problem, request.shape.m, request.shape.n, request.shape.k, "SHAPE");
  if (plan.problems.size() != 1)
    throw usage_error(fmt::format("--batch: '{}' must be one value for explain", o.problem.batch));
  request.form = plan.form;
  return plan.problems.front();
}

void run_explain(const ExplainOptions& o) {
  check_wide_text(o.wide, o.json);
  ExplainRequest request = o.request;
  request.shape = parse_shape_option(o.shape);
  request.shape_text = o.shape;
  check_lt_algos_backend(o.request.lt_algos, o.request.backend.kind == BackendKind::kCublasLt);
  request.measure = measure_options(o.timing);
  request.clocks_given = o.timing.clocks_option && o.timing.clocks_option->count() > 0;
  if (o.request.alternatives < 1 || o.request.alternatives > 64)
    throw usage_error(fmt::format("--alternatives: {} must be between 1 and 64", o.request.alternatives));
  if (o.request.tile && !o.gpu)
    throw usage_error(fmt::format("--tile: '{}x{}' needs --gpu KEY (a model prediction)", o.request.tile->first,
                                  o.request.tile->second));
  const Problem target = plan_target(o, request);
  check_fp8_backend(target.dtype, o.request.backend.kind);
  if (o.predict.wanted()) return write(o, explain_predicted_request(o.predict, request, o.gpu, o.device, target));
  if (o.dbs.size() > 1) return explain_across_stores(request, o.dbs, target, o.gpu, o.json);

  // A GPU named: its points in the store if there are any, else the model. --tile asks for the model.
  const bool have_gpu = o.gpu == nullptr && device_count() > 0;
  if (!have_gpu) {
    // Nothing stored of the shape: the GPU's shipped performance model, where there is one.
    if (o.gpu && !o.request.tile && o.request.backend.kind == BackendKind::kCublas)
      request.perf_model = shipped_perf_model(*o.gpu);
    write(o, explain_without_gpu(request, o.gpu, target));
    return;
  }

  // With a GPU: measure the target first (its tile and slots choose the wave neighbours), then the
  // neighbours; the store supplies whatever is already measured.
  // Checked now, written only when a point is measured.
  Store store(request.db);
  const DeviceContext device = query_device(o.device);
  fmt::print(stderr, "{}\n", device_header(device));
  std::vector<std::unique_ptr<Progress>> bars;  // drawn on stderr
  const ProgressFor progress_for = [&](size_t points) {
    bars.push_back(std::make_unique<Progress>(points, isatty(STDERR_FILENO) == 1));
    return bars.back()->callback();
  };
  // Each phase as it ends, with where its seconds went: explain of a long GEMM takes a while.
  const PhaseDone phase_done = [](const std::string& name, double seconds) {
    fmt::print(stderr, "explain: {} in {:.1f} s\n", name, seconds);
  };
  write(o, explain_measured(request, target, device, store, progress_for, &g_interrupted, phase_done));
}

}  // namespace

void register_explain(CLI::App& app) {
  auto o = std::make_shared<ExplainOptions>();
  auto* cmd = app.add_subcommand("explain", "Why one shape is fast or slow, and what size to use instead");
  cmd->footer(
      "SHAPE is N (square: M = N = K) or MxNxK. With a GPU, the shape and its neighbours (n-1, n+1, the\n"
      "nearest multiples of 8..256 below and above, the sizes where the last wave fills) are measured,\n"
      "reusing the store, and with them the controls that prove each cause: our kernel with one fixed\n"
      "tile over the same sizes (what the shape costs), the same GEMM with 16- and 32-byte rows and\n"
      "contiguous operands (what the layout costs), the copy that padding at run time would add,\n"
      "cuBLASLt's top algorithms (what the library's choice costs), an empty kernel (the launch\n"
      "floor) and the same GEMM in other precisions (fp32: tf32, bf16, fp16; bf16/fp16 nt, nn, tn: fp8), each\n"
      "with its output's error against an fp64 reference of the same inputs. Then they are measured again together, in paired passes against the shape (A B B A):\n"
      "the verdict follows each ratio's 95 % interval, whatever the clock does. The passes pair what\n"
      "the verdict and its fixes rest on, then the fastest others as --pair-seconds allows; the rest\n"
      "keep their survey times, marked 'survey', and nothing is compared with them.\n"
      "Without a GPU they are read from the store (--db); with --gpu KEY and nothing stored (or --predict)\n"
      "the GPU's shipped performance model predicts their times, each with its held-out error; with\n"
      "--gpu KEY --tile BMxBN the tile model gives tiles and waves only, for a GPU you do not have.\n"
      "Examples:\n"
      "  shapescope explain 1793\n"
      "  shapescope explain 4096x1x4096                  # decode-like: one token\n"
      "  shapescope explain 4095 --layout nt --backend cublaslt --lt-algos 8\n"
      "  shapescope explain 1793 --db h200.db            # on a laptop, from a store measured elsewhere\n"
      "  shapescope explain 1793 --gpu h100-sxm --predict   # predicted by the H100's performance model\n"
      "  shapescope explain 1793 --gpu a100 --tile 256x128   # model only\n"
      "  shapescope explain 4096 --lda 4097 --offset 1   # an x[..., 1:] view\n"
      "  shapescope explain 3080 --no-controls           # neighbours only\n"
      "  shapescope explain 1793 --format json\n"
      "  shapescope explain 8192 --pair-seconds 10     # big GEMMs at the power limit: more pairs\n"
      "  shapescope explain 1793 --db h100.db --db h200.db   # the shape on each GPU, side by side");
  cmd->add_option("SHAPE", o->shape, "N or MxNxK")->required();
  add_range_option(cmd, "--batch", o->problem.batch, "batch count (one value)");
  add_problem_options(cmd, o->problem);
  add_backend_option(cmd, o->request.backend, "explain",
                     {BackendKind::kCublas, BackendKind::kCublasLt, BackendKind::kCustom},
                     "cublas | cublaslt | custom:<kernel>:<BMxBN>:<schedule> (one of ours)");
  add_lt_algos_option(cmd, o->request.lt_algos, "time cuBLASLt's top K algorithms too (heuristic regret)");
  add_timing_options(cmd, o->timing);
  cmd->add_flag("--no-controls", [o](int64_t) { o->request.controls = false; },
                "measure the size neighbours only: no fixed kernel, layout controls, copy, floor or alternatives");
  cmd->add_flag("--no-precision", [o](int64_t) { o->request.precision = false; },
                "no precision controls (the same GEMM in tf32, bf16, fp16 or fp8, and their errors)");
  cmd->add_option("--alternatives", o->request.alternatives, "cuBLASLt algorithms timed at the target and its neighbour");
  add_pair_seconds_option(cmd, o->request.pair_seconds, "pair what the verdict rests on with the target, then the other points that fit");
  add_max_error_option(cmd, o->request.max_error);
  add_db_option(cmd, o->dbs, o->request.db, "result store (SQLite file); several: the shape on each one's GPUs side by side");
  add_device_option(cmd, o->device);
  add_gpu_option(cmd, o->gpu, "answer for this GPU model: " + profile_keys() + " (its points in the store, else the model)");
  add_tile_option(cmd, o->request.tile, "BMxBN: the tile a model prediction assumes (with --gpu)");
  add_predict_options(cmd, o->predict, "measuring or reading the store");
  add_result_format_options(cmd, o->json, o->wide);
  cmd->callback([o] { run_explain(*o); });
}

}  // namespace shapescope
