// `shapescope explain SHAPE`: one shape's speed, its cause and the fix, from measurements of the
// shape and its neighbours (measured now, read from the store, or predicted by the model).
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <memory>
#include <vector>

#include "backends/variants.hpp"
#include "cli/commands.hpp"
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
  int device = 0;
  std::string gpu;          // a profile: answer for that GPU (from the store, else the model)
  bool json = false;
};

void write(const ExplainOptions& o, const ExplainReport& report) {
  if (o.json) {
    write_explain_json(std::cout, report);
  } else {
    write_explain_text(std::cout, report);
  }
}

void run_explain(const ExplainOptions& o) {
  const ShapeArg shape = parse_shape_option(o.request.shape);
  check_db_option(o.request.db);
  const std::optional<BackendKind> kind = parse_backend_kind(o.request.backend);
  if (!kind)
    throw usage_error(fmt::format("--backend: '{}' is not a backend explain can use (cublas, cublaslt, custom:...)",
                                  o.request.backend));
  if (kind == BackendKind::kCustom) {
    const auto variants = select_variants(o.request.backend);
    if (variants.size() != 1)
      throw usage_error(fmt::format("--backend: '{}' selects {} variants; explain needs one (e.g. custom:{})", o.request.backend,
                                    variants.size(), variants.front()->key()));
  }
  if (o.request.lt_algos < 1 || o.request.lt_algos > 64) throw usage_error(fmt::format("--lt-algos: {} must be between 1 and 64", o.request.lt_algos));
  if (o.request.lt_algos > 1 && kind != BackendKind::kCublasLt)
    throw usage_error(fmt::format("--lt-algos: {} needs --backend cublaslt", o.request.lt_algos));
  check_samples(o.request.samples);
  const GpuProfile* profile = nullptr;
  if (!o.gpu.empty()) {
    profile = find_profile(o.gpu);
    if (!profile) throw usage_error(fmt::format("--gpu: '{}' is not a known GPU profile ({})", o.gpu, profile_keys()));
  }
  if (!o.request.tile.empty() && o.gpu.empty()) throw usage_error(fmt::format("--tile: '{}' needs --gpu NAME (a model prediction)", o.request.tile));
  if (!o.request.tile.empty() && !parse_tile(o.request.tile))
    throw usage_error(fmt::format("--tile: '{}' is not BMxBN (e.g. 256x128, each 1..1024)", o.request.tile));
  const Problem target = plan_one(o.request, shape.m, shape.n, shape.k);
  check_fp8_backend(target.dtype, o.request.backend);

  // A GPU named: its points in the store if there are any, else the model. --tile asks for the model.
  const bool have_gpu = profile == nullptr && device_count() > 0;
  if (!have_gpu) {
    write(o, explain_without_gpu(o.request, shape, profile, target));
    return;
  }

  // With a GPU: measure the target first (its tile and slots choose the wave neighbours), then the
  // neighbours; the store supplies whatever is already measured.
  // Checked now, written only when a point is measured.
  Store store(o.request.db);
  const DeviceContext device = query_device(o.device);
  fmt::print(stderr, "{}\n", device_header(device));
  std::vector<std::unique_ptr<Progress>> bars;  // drawn on stderr
  const ProgressFor progress_for = [&](size_t points) {
    bars.push_back(std::make_unique<Progress>(points, isatty(STDERR_FILENO) == 1));
    return bars.back()->callback();
  };
  write(o, explain_measured(o.request, shape, target, device, store, progress_for, &g_interrupted));
}

}  // namespace

void register_explain(CLI::App& app) {
  auto o = std::make_shared<ExplainOptions>();
  auto* cmd = app.add_subcommand("explain", "Why one shape is fast or slow, and what size to use instead");
  cmd->footer(
      "SHAPE is N (square: M = N = K) or MxNxK. With a GPU, the shape and its neighbours (n-1, n+1, the\n"
      "nearest multiples of 8..256 below and above, the sizes where the last wave fills) are measured,\n"
      "reusing the store. Without one, they are read from the store (--db); with --gpu NAME --tile BMxBN\n"
      "the model predicts for a GPU you do not have.\n"
      "Examples:\n"
      "  shapescope explain 1793\n"
      "  shapescope explain 4096x1x4096                  # decode-like: one token\n"
      "  shapescope explain 4095 --layout nt --backend cublaslt --lt-algos 8\n"
      "  shapescope explain 1793 --db h200.db            # on a laptop, from a store measured elsewhere\n"
      "  shapescope explain 1793 --gpu a100 --tile 256x128   # model only\n"
      "  shapescope explain 1793 --json");
  cmd->add_option("SHAPE", o->request.shape, "N or MxNxK")->required();
  cmd->add_option("--batch", o->request.plan.batch, "batch count (one value)");
  add_problem_options(cmd, o->request.plan);
  cmd->add_option("--backend", o->request.backend, "cublas | cublaslt | custom:<kernel>:<BMxBN>:<schedule> (one of ours)");
  cmd->add_option("--lt-algos", o->request.lt_algos, "time cuBLASLt's top K algorithms too (heuristic regret)");
  cmd->add_option("--samples", o->request.samples, "samples per point");
  cmd->add_option("--db", o->request.db, "result store (SQLite file)");
  add_device_option(cmd, o->device);
  cmd->add_option("--gpu", o->gpu, "answer for this GPU: " + profile_keys() + " (store, else the model)");
  cmd->add_option("--tile", o->request.tile, "BMxBN: the tile a model prediction assumes (with --gpu)");
  cmd->add_flag("--json", o->json, "the same content as JSON fields");
  cmd->callback([o] { run_explain(*o); });
}

}  // namespace shapescope
