#include "cli/predict_options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "core/backend_kind.hpp"
#include "device/device.hpp"
#include "model/input_file.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;

std::shared_ptr<const GpuPerfModel> read_model(const std::string& file, const std::string& option) {
  const std::string origin = fmt::format("{}: '{}'", option, file);
  auto out = std::make_shared<GpuPerfModel>();
  out->model = read_perf_model(read_text_file(file, origin), origin);
  out->file = file;
  return out;
}

// "gpus/h200.json is a model of NVIDIA H200 (h200)".
std::string model_of(const GpuPerfModel& g) {
  const GpuProfile* p = profile_for_device_name(g.model.gpu);
  return fmt::format("is a model of {}{}", g.model.gpu, p ? " (" + p->key + ")" : "");
}

// What predicts with a model of another GPU: --gpu its key, where the profiles know its GPU.
std::string other_gpu_hint(const GpuPerfModel& g) {
  const GpuProfile* p = profile_for_device_name(g.model.gpu);
  return p ? fmt::format("pass --gpu {} to predict for the GPU it was fitted on", p->key)
           : "--gpu names no profile of its GPU: use it on that GPU, or where there is none";
}

// The GPU keys whose models are shipped: "h100-sxm, h200".
std::string shipped_keys() {
  std::vector<std::string> keys;
  for (const std::string& f : shipped_perf_model_files()) keys.push_back(fs::path(f).stem().string());
  return keys.empty() ? "none" : fmt::format("{}", fmt::join(keys, ", "));
}

}  // namespace

void add_predict_options(CLI::App* cmd, PredictOptions& o, const std::string& what) {
  cmd->add_flag("--predict", o.predict,
                fmt::format("predicted times instead of {}: the performance model shipped for --gpu KEY (or the GPU "
                            "here), each marked with its held-out error",
                            what));
  cmd->add_option_function<std::string>(
      "--perf-model",
      [&o](const std::string& text) {
        if (text.empty()) throw usage_error("--perf-model: '' is empty (a performance model: calibrate-model --out)");
        o.perf_model = text;
      },
      "predict with this performance model (calibrate-model --out) instead of the one shipped; implies --predict");
  cmd->add_option_function<std::string>(
      "--scale-to",
      [&o](const std::string& text) {
        o.scale_to = find_profile(text);
        if (!o.scale_to)
          throw usage_error(fmt::format("--scale-to: '{}' is not a known GPU profile ({})", text, profile_keys()));
      },
      "predict for this GPU (a --gpu KEY) with --perf-model's model of another: its memory time scaled by the two "
      "GPUs' bandwidths, its compute time by their SM clocks, every prediction marked so");
}

std::vector<std::string> shipped_perf_model_files() {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(data_dir("gpus"), ec))
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::shared_ptr<const GpuPerfModel> shipped_perf_model(const GpuProfile& gpu) {
  const fs::path file = fs::path(data_dir("gpus")) / (gpu.key + ".json");
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return nullptr;
  auto model = read_model(file.string(), "--gpu");
  if (!perf_model_fits(model->model, &gpu, ""))
    throw usage_error(fmt::format("--gpu: '{}': the model shipped for it, '{}', {}", gpu.key, file.string(), model_of(*model)));
  return model;
}

namespace {

std::shared_ptr<const GpuPerfModel> scaled_model(const PredictOptions& o, const GpuProfile* gpu) {
  if (o.perf_model.empty())
    throw usage_error(fmt::format("--scale-to: '{}' scales the model --perf-model FILE names: give one (the H100's is "
                                  "gpus/h100-sxm.json, `info --model` lists them)",
                                  o.scale_to->key));
  if (gpu && gpu != o.scale_to)
    throw usage_error(fmt::format("--scale-to: '{}' is the GPU predicted for, --gpu names another ({})", o.scale_to->key,
                                  gpu->key));
  auto out = std::make_shared<GpuPerfModel>(*read_model(o.perf_model, "--perf-model"));
  out->model = scale_perf_model(out->model, *o.scale_to, "--scale-to");
  return out;
}

}  // namespace

std::shared_ptr<const GpuPerfModel> predict_model(const PredictOptions& o, const GpuProfile* gpu, int device) {
  if (o.scale_to) return scaled_model(o, gpu);
  // The GPU here is the one predicted for unless --gpu names another.
  const std::string here = !gpu && device_count() > 0 ? query_device(device).gpu_name : "";
  if (!o.perf_model.empty()) {
    auto model = read_model(o.perf_model, "--perf-model");
    if (gpu && !perf_model_fits(model->model, gpu, ""))
      throw usage_error(fmt::format("--perf-model: '{}' {}, not of --gpu {}; {}", o.perf_model, model_of(*model),
                                    gpu->key, other_gpu_hint(*model)));
    if (!gpu && !perf_model_fits(model->model, nullptr, here))
      throw usage_error(fmt::format("--perf-model: '{}' {}, not of this GPU ({}); {}", o.perf_model, model_of(*model),
                                    here, other_gpu_hint(*model)));
    return model;
  }
  if (gpu) {
    if (auto model = shipped_perf_model(*gpu)) return model;
    throw usage_error(fmt::format("--gpu: '{}' has no performance model shipped (shipped: {}, in '{}'); fit one on its "
                                  "sweep with calibrate-model and pass --perf-model FILE",
                                  gpu->key, shipped_keys(), data_dir("gpus")));
  }
  if (here.empty())
    throw usage_error(fmt::format("--predict: no GPU here to predict for: name one with --gpu KEY (shipped: {}), or "
                                  "pass --perf-model FILE", shipped_keys()));
  const GpuProfile* profile = profile_for_device_name(here);
  if (auto model = profile ? shipped_perf_model(*profile) : nullptr) return model;
  throw usage_error(fmt::format("--predict: no performance model is shipped for this GPU ({}; shipped: {}); fit one "
                                "with calibrate-model and pass --perf-model FILE, or name another GPU with --gpu KEY",
                                here, shipped_keys()));
}

ExplainReport explain_predicted_request(const PredictOptions& o, const ExplainRequest& request,
                                        const GpuProfile* gpu, int device, const Problem& target) {
  if (request.tile)
    throw usage_error(fmt::format("--tile: '{}x{}' is the tile model's; --predict takes each kernel the performance "
                                  "model measured (give one of them)",
                                  request.tile->first, request.tile->second));
  check_predicted_backend(request.backend);
  return explain_predicted(request, predict_model(o, gpu, device), target, "--predict");
}

void check_predicted_backend(const BackendSpec& backend, DType dtype) {
  // fp8 has no cuBLAS call: its points are cuBLASLt's first heuristic choice.
  const bool fp8 = dtype == DType::kFp8;
  if (backend.kind != (fp8 ? BackendKind::kCublasLt : BackendKind::kCublas))
    throw usage_error(fmt::format("--backend: '{}': the performance model predicts {}'s own choice of kernel "
                                  "(what it was fitted on); --predict takes --backend {}{}",
                                  backend.text(), fp8 ? "cuBLASLt" : "cuBLAS", fp8 ? "cublaslt" : "cublas",
                                  fp8 ? " for fp8" : ""));
}

std::shared_ptr<const GpuPerfModel> plan_prediction(const PredictOptions& o, const GpuProfile* gpu,
                                                    const std::vector<BackendSpec>& backends, DType dtype,
                                                    bool dry_run, int device) {
  if (!o.wanted()) {
    if (gpu)
      throw usage_error(fmt::format("--gpu: '{}' names the GPU --dry-run --predict predicts for; add them (a sweep "
                                    "measures on the GPU here)", gpu->key));
    return nullptr;
  }
  if (!dry_run)
    throw usage_error(fmt::format("{}: predicts the plan's times with --dry-run; a sweep measures them",
                                  o.predict ? "--predict" : "--perf-model '" + o.perf_model + "'"));
  for (const BackendSpec& b : backends) check_predicted_backend(b, dtype);
  return predict_model(o, gpu, device);
}

std::shared_ptr<const GpuPerfModel> profile_prediction(const CLI::App& cmd, const PredictOptions& o,
                                                       const GpuProfile* gpu, const BackendSpec& backend, int device) {
  if (!o.wanted()) {
    if (gpu)
      throw usage_error(fmt::format("--gpu: '{}' names the GPU --predict predicts for; add --predict (without it "
                                    "profile measures on the GPU here, or reads --db)",
                                    gpu->key));
    return nullptr;
  }
  // What each option does when measuring, which a prediction does not.
  static const std::vector<std::pair<std::string, std::string>> measuring = {
      {"--clocks", "is the clock state the GEMMs are measured in; predicted times are at the clock the model was "
                   "fitted at"},
      {"--burst-idle", "paces GEMMs measured at burst clocks"},
      {"--samples", "is how often each GEMM is measured"},
      {"--pair-seconds", "is how long the what-ifs are measured against the step"},
      {"--what-if", "measures those what-ifs applied at once as a step; predicted, each list's changes at once are "
                    "the model's sum"},
      {"--what-if-seconds", "is how long the --what-if step is replayed against the step"},
      {"--max-error", "keeps precision what-ifs by the numerical error a GPU measures"},
      {"--micro-batches", "prices an fp8 what-if's weight casts, measured kernels the model does not predict"},
  };
  for (const auto& [name, what] : measuring) {
    const CLI::Option* given = cmd.get_option_no_throw(name);
    if (given && given->count() > 0)
      throw usage_error(fmt::format("{}: '{}' {}; with --predict nothing is measured", name,
                                    fmt::join(given->results(), ","), what));
  }
  check_predicted_backend(backend);
  return predict_model(o, gpu, device);
}

}  // namespace shapescope
