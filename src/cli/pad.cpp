// `shapescope pad --model NAME --tokens N [--train]` (or --trace/--gemms FILE): pad-or-not for every
// dimension of a model that its GEMMs see. Lists the Linear GEMMs of one step, proposes padded sizes per dimension, measures
// every GEMM each candidate touches (reusing the store) and reports the GEMM time per step before
// and after, with the cost of each candidate. `--dry-run` lists GEMMs and candidates with no GPU.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/predict_options.hpp"
#include "common/error.hpp"
#include "core/backend_kind.hpp"
#include "device/device.hpp"
#include "report/output.hpp"
#include "report/pad_report.hpp"
#include "shape/range.hpp"
#include "store/store.hpp"
#include "views/pad.hpp"
#include "views/pad_predicted.hpp"

namespace shapescope {
namespace {

// A range of token counts is one analysis per count; past this it is almost surely a missing step.
constexpr size_t kMaxTokenCounts = 256;

struct PadOptions {
  WorkloadSource source;
  StepArgs step;
  BackendSpec backend{BackendKind::kCublas};
  PadRequest request;  // --samples, --clocks, --db, --pair-seconds (their defaults: PadRequest's)
  int device = 0;
  bool json = false;
  bool wide = false;
  bool dry_run = false;
  PredictOptions predict;          // --predict, --perf-model
  const GpuProfile* gpu = nullptr;  // --gpu: the GPU --predict predicts for
};

// pad --predict: the performance model to predict with; nullptr when not predicting.
std::shared_ptr<const GpuPerfModel> predicting(const PadOptions& o) {
  if (!o.predict.wanted()) {
    if (o.gpu)
      throw usage_error(fmt::format("--gpu: '{}' names the GPU --predict predicts for; add --predict (without it pad "
                                    "measures on the GPU here, or reads the store)", o.gpu->key));
    return nullptr;
  }
  if (o.dry_run)
    throw usage_error("--dry-run: lists the GEMMs and candidates with no times; --predict gives them predicted times: "
                      "give one of the two");
  check_predicted_backend(BackendSpec(o.backend.kind));
  return predict_model(o.predict, o.gpu, o.device);
}

// A model's step: --model or --config with --tokens and the rest.
PadRequest model_request(const PadOptions& o, const ModelConfig& config) {
  const ParsedStep step = parse_step(o.step, config, kMaxTokenCounts, "pad");
  PadRequest request = o.request;
  request.tokens = step.tokens;
  request.train = o.step.train;
  request.tp = o.step.tp;
  request.dtype = step.dtype;
  request.fp8 = step.fp8;
  request.dtype_name = o.step.dtype + (step.dtype == DType::kFp8 ? " " + std::string(to_string(step.fp8)) : "");
  return request;
}

// The store, the device (its header on stderr) and a progress line per measure() call.
struct Measuring {
  Store store;
  DeviceContext device;
  std::vector<std::unique_ptr<Progress>> bars;  // drawn on stderr
  ProgressFor progress_for;

  Measuring(const PadOptions& o) : store(o.request.db), device(query_device(o.device)) {
    fmt::print(stderr, "{}\n", device_header(device));
    progress_for = [this](size_t points) {
      bars.push_back(std::make_unique<Progress>(points, isatty(STDERR_FILENO) == 1));
      return bars.back()->callback();
    };
  }
};

// pad --trace / --gemms: the sizes of the workload's GEMMs are the knobs.
void run_pad_sizes(const PadOptions& o, const PadRequest& request, const std::shared_ptr<const GpuPerfModel>& model) {
  const Workload w = load_file_workload(o.source);
  if (w.gemms.empty())
    throw usage_error(fmt::format("{}: no GEMM to pad ({})", w.source,
                                  w.unmapped.empty() ? "it holds none" : w.unmapped.front().op + ": " + w.unmapped.front().reason));
  auto write = [&](const SizePadResult& result) {
    o.json ? write_pad_sizes_json(std::cout, request, result) : write_pad_sizes_text(std::cout, request, result);
  };
  if (model) return write(pad_sizes_predict(w, model));
  if (o.dry_run) {
    check_store_for_dry_run(request.db);
    return write(pad_sizes_plan(w, request));
  }
  // No GPU: the answer from the store's GEMMs, when it holds them (read-only), as for a model.
  if (device_count() == 0) return write(pad_sizes_from_store(w, request));
  Measuring m(o);
  write(pad_sizes_measure(w, request, m.device, m.store, m.progress_for, &g_interrupted));
}

void run_pad(PadOptions o) {
  check_wide_text(o.wide, o.json);
  const SourceKind kind = source_kind(o.source);
  o.request.backend = o.backend.kind;
  // The model first: a refusal of it names no input file.
  const std::shared_ptr<const GpuPerfModel> model = predicting(o);
  if (kind != SourceKind::kModel) {
    refuse_step_options(o.step, kind == SourceKind::kTrace ? "--trace" : "--gemms");
    return run_pad_sizes(o, o.request, model);
  }
  const ModelConfig config = resolve_model(o.source);
  const PadRequest request = model_request(o, config);
  check_fp8_backend(request.dtype, o.backend.kind);
  auto write = [&](const PadResult& result) {
    o.json ? write_pad_json(std::cout, config, request, result) : write_pad_text(std::cout, config, request, result);
  };
  if (model) return write(pad_predict(config, request, model));
  if (o.dry_run) {
    check_store_for_dry_run(request.db);
    const PadResult result = pad_plan(config, request);
    write(result);
    write_pad_dry_run_cost(std::cerr, request, result);
    return;
  }
  // No GPU: the answer from the store's GEMMs, when it holds them (read-only).
  if (device_count() == 0) return write(pad_from_store(config, request));
  // Checked now, written only when a GEMM is measured.
  Measuring m(o);
  write(pad_measure(config, request, m.device, m.store, m.progress_for, &g_interrupted));
}

}  // namespace

void register_pad(CLI::App& app) {
  auto o = std::make_shared<PadOptions>();
  auto* cmd = app.add_subcommand("pad", "Pad-or-not for every dimension of a model's GEMMs, measured");
  cmd->footer(fmt::format(
      "Lists the Linear GEMMs of one step (per Linear: forward nt; with --train also the input gradient\n"
      "nn and the weight gradient tn), identical shapes merged with their count per step. For each\n"
      "dimension a model author chooses (vocabulary, hidden, intermediate, heads and KV heads x head_dim,\n"
      "tokens) it proposes padded sizes: the next multiples of 8..256 above (none for a size that already\n"
      "is a multiple of 256), and the size that fills the last wave of the measured kernel. It measures\n"
      "every GEMM each candidate touches (reusing the store) and reports the GEMM time per step before and\n"
      "after, the saving, and the cost: extra parameters and FLOPs; for tokens, the run-time copy that\n"
      "padding them adds (priced at the calibrated bandwidth of `info --calibrate`). The step and every\n"
      "candidate are then measured again together, in paired passes (--pair-seconds), so that the GPU's\n"
      "clock is the same on both sides of each saving, given with its 95 % interval. It recommends the\n"
      "best candidate per dimension when the whole interval saves more than 2 %, says it cannot tell when\n"
      "the interval straddles 2 %, and says leave it otherwise.\n"
      "Left out: the attention core (QK^T, softmax, PV), which runs as a fused FlashAttention kernel, not as\n"
      "cuBLAS GEMMs; and everything else that is not a GEMM.\n"
      "Tensor parallelism (--tp): column-parallel Linears (QKV, MLP up/gate/fc, LM head) split their\n"
      "output, row-parallel ones (attention out, MLP down/proj) their input; a size tp does not divide is refused.\n"
      "With --trace FILE or --gemms FILE (a PyTorch profiler trace, a GEMM list) no config names the\n"
      "dimensions: every distinct M, N and K of the GEMMs is a size to pad, changed everywhere it appears\n"
      "(50257 in GPT-2's trace is the LM head's N, its weight gradient's M and its input gradient's K).\n"
      "With --predict (no GPU needed) every GEMM's time is predicted by the performance model shipped for\n"
      "--gpu KEY (or --perf-model FILE), each with its class's held-out error; a saving counts only above\n"
      "that error, and a GEMM the model cannot predict leaves its step's time unknown.\n"
      "Presets (models/*.json, values from Hugging Face): {}\n"
      "Examples:\n"
      "  shapescope pad --model gpt2 --tokens 12288 --train\n"
      "  shapescope pad --model gpt2 --tokens 12288 --train --dry-run      # no GPU needed\n"
      "  shapescope pad --model llama3-8b --tokens 1..8,16,32,64           # decode-like sizes\n"
      "  shapescope pad --model llama3-70b --tokens 8192 --tp 8 --train\n"
      "  shapescope pad --config config.json --tokens 4096 --format json\n"
      "  shapescope pad --trace step.json                                  # the trace's own sizes\n"
      "  shapescope pad --gemms gemms.csv --dry-run\n"
      "  shapescope pad --gemms gemms.csv --gpu h100-sxm --predict          # no GPU: the H100's performance model",
      preset_list()));
  add_workload_source_options(cmd, o->source);
  add_step_options(cmd, o->step, "tokens per step (batch x sequence); a range for decode-like sizes");
  add_backend_option(cmd, o->backend, "pad", {BackendKind::kCublas, BackendKind::kCublasLt}, "cublas | cublaslt");
  add_samples_option(cmd, o->request.samples, "samples per GEMM");
  add_clocks_option(cmd, o->request.clocks);
  add_pair_seconds_option(cmd, o->request.pair_seconds, "measure the step and every candidate again together");
  add_db_option(cmd, o->request.db, "result store (SQLite file)");
  add_device_option(cmd, o->device);
  add_result_format_options(cmd, o->json, o->wide);
  cmd->add_flag("--dry-run", o->dry_run, "list the GEMMs and candidates; measure nothing (no GPU needed)");
  add_predict_options(cmd, o->predict, "measuring (no GPU needed)");
  add_gpu_option(cmd, o->gpu, "with --predict: the GPU to predict for: " + profile_keys());
  cmd->callback([o] { run_pad(*o); });
}

}  // namespace shapescope
