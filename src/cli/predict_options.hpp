// --predict and --perf-model FILE (explain, pad, profile, sweep --dry-run): times from a GPU's performance
// model (model/perf_predict.hpp) where nothing is measured: the model shipped for --gpu KEY or for
// the GPU here (gpus/KEY.json, the folder `info --model` lists), or a file calibrate-model wrote. A
// model of another GPU than the one asked about is refused, never used.
#pragma once
#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "model/device_profile.hpp"
#include "core/backend_kind.hpp"
#include "model/perf_predict.hpp"
#include "views/explain.hpp"

namespace shapescope {

struct PredictOptions {
  bool predict = false;    // --predict
  std::string perf_model;  // --perf-model FILE: implies --predict
  const GpuProfile* scale_to = nullptr;  // --scale-to KEY: --perf-model's model scaled to this GPU
  bool wanted() const { return predict || !perf_model.empty() || scale_to; }
};

// `what`: what the predictions replace, for the help ("measuring").
void add_predict_options(CLI::App* cmd, PredictOptions& o, const std::string& what);

// The model to predict with: --perf-model's file, else the one shipped for `gpu` (--gpu), else the
// one shipped for the GPU here (device `device`); with --scale-to, --perf-model's scaled to that GPU
// (--gpu, if given, must name it). Error(kUsage), one line naming the option and its value, when
// there is none or when it is a model of another GPU than --gpu's or the one here.
std::shared_ptr<const GpuPerfModel> predict_model(const PredictOptions& o, const GpuProfile* gpu, int device);

// explain SHAPE --predict: the target and its neighbours predicted (views/explain.hpp). Refuses --tile
// and a backend other than cuBLAS: the model predicts the kernels cuBLAS chose where it was measured.
ExplainReport explain_predicted_request(const PredictOptions& o, const ExplainRequest& request,
                                        const GpuProfile* gpu, int device, const Problem& target);

// sweep: the model that predicts a --dry-run's plan of `dtype` (nullptr without --predict). Refuses
// --predict without --dry-run, --gpu without --predict, and a backend other than cuBLAS (fp8: cuBLASLt).
std::shared_ptr<const GpuPerfModel> plan_prediction(const PredictOptions& o, const GpuProfile* gpu,
                                                    const std::vector<BackendSpec>& backends, DType dtype,
                                                    bool dry_run, int device);

// profile: the model that predicts the step (nullptr without --predict). Refuses --gpu without
// --predict, a backend other than cuBLAS, and with --predict every option given on `cmd` that only a
// measurement reads (--clocks, --burst-idle, --samples, --pair-seconds, --what-if, --max-error), each
// in one line that names it and its value.
std::shared_ptr<const GpuPerfModel> profile_prediction(const CLI::App& cmd, const PredictOptions& o,
                                                       const GpuProfile* gpu, const BackendSpec& backend, int device);

// Error(kUsage) for a backend other than the one the model was fitted on for `dtype`: cuBLAS; fp8
// (--predict of a sweep's plan): cuBLASLt (--backend named).
void check_predicted_backend(const BackendSpec& backend, DType dtype = DType::kBf16);

// The model shipped for a GPU profile, nullptr when none is.
std::shared_ptr<const GpuPerfModel> shipped_perf_model(const GpuProfile& gpu);
// The models shipped (the gpus folder's *.json), sorted; empty when none.
std::vector<std::string> shipped_perf_model_files();

}  // namespace shapescope
