// `shapescope pad --model NAME --tokens N [--train]`: pad-or-not for every dimension of a model that
// its GEMMs see. Lists the Linear GEMMs of one step, proposes padded sizes per dimension, measures
// every GEMM each candidate touches (reusing the store) and reports the GEMM time per step before
// and after, with the cost of each candidate. `--dry-run` lists GEMMs and candidates with no GPU.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "core/backend_kind.hpp"
#include "device/device.hpp"
#include "report/output.hpp"
#include "report/pad_report.hpp"
#include "shape/range.hpp"
#include "store/store.hpp"
#include "views/pad.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;

// A range of token counts is one analysis per count; past this it is almost surely a missing step.
constexpr size_t kMaxTokenCounts = 256;
constexpr int64_t kMaxTp = 1024;

struct PadOptions {
  std::string model;
  std::string config;
  std::string tokens;
  bool train = false;
  int64_t tp = 1;
  std::string dtype = "bf16";
  std::string backend = "cublas";
  int samples = 10;
  std::string db = "shapescope.db";
  int device = 0;
  bool json = false;
  bool dry_run = false;
};

// The presets: models/ of shapescope's data (see data_dir()).
fs::path models_dir() { return data_dir("models"); }

std::vector<std::string> preset_names(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".json") names.push_back(it->path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

ModelConfig resolve_model(const PadOptions& o) {
  if (!o.model.empty() && !o.config.empty())
    throw usage_error(fmt::format("--model: '{}' and --config '{}' both given; give one", o.model, o.config));
  if (!o.config.empty()) {
    ModelConfig c = load_model_config(o.config, fmt::format("--config: '{}'", o.config));
    c.name = o.config;
    return c;
  }
  const fs::path dir = models_dir();
  const std::vector<std::string> presets = preset_names(dir);
  if (o.model.empty())
    throw usage_error(fmt::format("--model: give a preset ({}) or --config FILE (a Hugging Face config.json)",
                                  joined(presets)));
  if (std::find(presets.begin(), presets.end(), o.model) == presets.end())
    throw usage_error(fmt::format("--model: '{}' is not a preset ({}); or use --config FILE (a Hugging Face config.json)",
                                  o.model, presets.empty() ? "none found in " + dir.string() : joined(presets)));
  const fs::path path = dir / (o.model + ".json");
  ModelConfig c = load_model_config(path.string(), fmt::format("--model: preset '{}' ({})", o.model, path.string()));
  c.name = o.model;
  return c;
}

void run_pad(const PadOptions& o) {
  const ModelConfig config = resolve_model(o);
  if (o.tokens.empty())
    throw usage_error("--tokens: give the tokens per step (batch x sequence), e.g. --tokens 12288 or --tokens 1..64");
  const std::vector<int64_t> tokens = parse_range(o.tokens, "--tokens");
  if (tokens.size() > kMaxTokenCounts)
    throw usage_error(fmt::format("--tokens: '{}' has {} values; pad takes at most {} (e.g. 1..64 or 64..8192*2)",
                                  o.tokens, tokens.size(), kMaxTokenCounts));
  if (o.tp < 1 || o.tp > kMaxTp) throw usage_error(fmt::format("--tp: {} must be between 1 and {}", o.tp, kMaxTp));
  const std::optional<DType> dtype = parse_dtype(o.dtype);
  if (!dtype) throw usage_error(fmt::format("--dtype: '{}' is not a dtype (bf16, fp16, fp32, tf32, fp8)", o.dtype));
  const std::optional<BackendKind> kind = parse_backend_kind(o.backend);
  if (kind != BackendKind::kCublas && kind != BackendKind::kCublasLt)
    throw usage_error(fmt::format("--backend: '{}' is not a backend pad can use (cublas, cublaslt)", o.backend));
  if (*dtype == DType::kFp8 && o.train)
    throw usage_error("--dtype: 'fp8' runs only as nt GEMMs (the forward); --train also needs nn and tn");
  check_fp8_backend(*dtype, o.backend);
  check_samples(o.samples);
  check_tp(config, o.tp);
  check_db_option(o.db);

  PadRequest request;
  request.tokens = tokens;
  request.train = o.train;
  request.tp = o.tp;
  request.dtype = *dtype;
  request.dtype_name = o.dtype;
  request.backend = o.backend;
  request.samples = o.samples;
  request.db = o.db;
  auto write = [&](const PadResult& result) {
    if (o.json) {
      write_pad_json(std::cout, config, request, result);
    } else {
      write_pad_text(std::cout, config, request, result);
    }
  };
  if (o.dry_run) {
    const PadResult result = pad_plan(config, request);
    write(result);
    write_pad_dry_run_cost(std::cerr, request, result);
    return;
  }
  if (device_count() == 0)
    throw Error(ExitCode::kNoGpu,
                "pad: no GPU here, and measuring needs one; --dry-run lists the GEMMs and candidates without it");

  // Checked now, written only when a GEMM is measured.
  Store store(o.db);
  const DeviceContext device = query_device(o.device);
  fmt::print(stderr, "{}\n", device_header(device));
  std::vector<std::unique_ptr<Progress>> bars;  // one per measure() call, drawn on stderr
  const ProgressFor progress_for = [&](size_t points) {
    bars.push_back(std::make_unique<Progress>(points, isatty(STDERR_FILENO) == 1));
    return bars.back()->callback();
  };
  write(pad_measure(config, request, device, store, progress_for, &g_interrupted));
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
      "padding them adds (priced at the calibrated bandwidth of `info --calibrate`). It recommends the\n"
      "best candidate per dimension, or says leave it when no saving is above 2 % and the noise.\n"
      "Left out: the attention core (QK^T, softmax, PV), which runs as a fused FlashAttention kernel, not as\n"
      "cuBLAS GEMMs; and everything else that is not a GEMM.\n"
      "Tensor parallelism (--tp): column-parallel Linears (QKV, MLP up/gate/fc, LM head) split their\n"
      "output, row-parallel ones (attention out, MLP down/proj) their input; a size tp does not divide is refused.\n"
      "Presets (models/*.json, values from Hugging Face): {}\n"
      "Examples:\n"
      "  shapescope pad --model gpt2 --tokens 12288 --train\n"
      "  shapescope pad --model gpt2 --tokens 12288 --train --dry-run      # no GPU needed\n"
      "  shapescope pad --model llama3-8b --tokens 1..8,16,32,64           # decode-like sizes\n"
      "  shapescope pad --model llama3-70b --tokens 8192 --tp 8 --train\n"
      "  shapescope pad --config config.json --tokens 4096 --json",
      joined(preset_names(models_dir()))));
  cmd->add_option("--model", o->model, "a preset: models/NAME.json");
  cmd->add_option("--config", o->config, "a Hugging Face style config.json");
  cmd->add_option("--tokens", o->tokens, "tokens per step (batch x sequence); a range for decode-like sizes");
  cmd->add_flag("--train", o->train, "forward and both backward GEMMs of each Linear (default: forward only)");
  cmd->add_option("--tp", o->tp, "tensor-parallel ranks");
  cmd->add_option("--dtype", o->dtype, "bf16 | fp16 | fp32 | tf32 | fp8 (forward only, cublaslt)");
  cmd->add_option("--backend", o->backend, "cublas | cublaslt");
  cmd->add_option("--samples", o->samples, "samples per GEMM");
  cmd->add_option("--db", o->db, "result store (SQLite file)");
  add_device_option(cmd, o->device);
  cmd->add_flag("--json", o->json, "JSON instead of the tables");
  cmd->add_flag("--dry-run", o->dry_run, "list the GEMMs and candidates; measure nothing (no GPU needed)");
  cmd->callback([o] { run_pad(*o); });
}

}  // namespace shapescope
