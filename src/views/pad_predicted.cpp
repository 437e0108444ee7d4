#include "views/pad_predicted.hpp"

#include <unordered_map>

namespace shapescope {
namespace {

// Each problem predicted once (a candidate's step shares most GEMMs with the step).
struct Predictions {
  std::shared_ptr<const GpuPerfModel> model;
  ModelGpu gpu;
  std::unordered_map<Problem, std::optional<PerfPrediction>, ProblemHash> known;

  const PerfPrediction* of(const Problem& p) {
    auto it = known.find(p);
    if (it == known.end()) {
      std::string why;
      it = known.emplace(p, predict(model->model, p, why)).first;
    }
    return it->second ? &*it->second : nullptr;
  }
};

struct Sources {
  PadPrediction prediction;
  AnnotationOf annotation_of;
  GemmTimeOf time_of;
};

Sources sources(const std::shared_ptr<const GpuPerfModel>& model) {
  auto p = std::make_shared<Predictions>();
  p->model = model;
  p->gpu = perf_model_gpu(model->model);
  Sources s;
  s.prediction = {model, [p](const Problem& problem) { return p->of(problem); }};
  s.annotation_of = [p](const Problem& problem) -> std::optional<Annotation> {
    const PerfPrediction* got = p->of(problem);
    return got ? std::optional<Annotation>(predicted_annotation(problem, *got, p->gpu)) : std::nullopt;
  };
  s.time_of = [p](const Problem& problem) -> std::optional<GemmTime> {
    const PerfPrediction* got = p->of(problem);
    return got ? std::optional<GemmTime>(predicted_gemm_time(*got)) : std::nullopt;
  };
  return s;
}

}  // namespace

PadResult pad_predict(const ModelConfig& config, const PadRequest& request,
                      const std::shared_ptr<const GpuPerfModel>& model) {
  const Sources s = sources(model);
  PadResult result = pad_from_times(config, request, s.annotation_of, s.time_of);
  result.predicted = s.prediction;
  return result;
}

SizePadResult pad_sizes_predict(const Workload& workload, const std::shared_ptr<const GpuPerfModel>& model) {
  const Sources s = sources(model);
  SizePadResult result = pad_sizes_from_times(workload, s.annotation_of, s.time_of);
  result.predicted = s.prediction;
  return result;
}

}  // namespace shapescope
