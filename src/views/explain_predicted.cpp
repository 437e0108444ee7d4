// explain without a measurement, from a GPU's performance model (views/explain.hpp,
// explain_predicted): the target and its size neighbours predicted, each under the kernel the model
// assumed for it, and explained as the tile model explains a prediction, with the predicted times
// choosing the size fixes.
#include <fmt/format.h>

#include "common/error.hpp"
#include "views/explain.hpp"
#include "views/explain_names.hpp"
#include "views/explain_parts.hpp"

namespace shapescope {

ExplainReport explain_predicted(const ExplainRequest& o,
                                const std::shared_ptr<const GpuPerfModel>& model, const Problem& target,
                                const std::string& why) {
  const PerfModel& m = model->model;
  const ModelGpu gpu = perf_model_gpu(m);
  ExplainReport report;
  report.shape = o.shape_text;
  report.mode = "predicted";
  report.source = fmt::format(
      "predicted by the performance model of {} ({} SMs) in '{}', fitted on {} measured points of '{}' (cuBLAS {}, "
      "SM clock {:.0f} MHz); nothing measured ({})",
      m.gpu, m.sm_count, model->file, m.points, m.source, m.cublas, m.clock_mhz, why);
  if (m.scaled) report.source += "; scaled: " + m.scaled->terms();
  report.prediction = ExplainPrediction{model, why, {}};
  // A point the model predicts; nullopt with its reason among the points not measured.
  explain_target_and_neighbours(o, target, report, [&](Role role, std::string label, Candidate c) {
    std::string why_not;
    const std::optional<PerfPrediction> got = predict(m, c.problem, why_not);
    if (!got) {
      if (role == Role::kTarget)
        throw Error(ExitCode::kNoGpu, fmt::format("explain: {}; no time predicted for {} ({})", why_not,
                                                  c.problem.shape_string(), why));
      report.missing.push_back({label, why_not});
      return std::optional<ExplainPoint>();
    }
    ExplainPoint p;
    p.role = role;
    p.label = std::move(label);
    p.annotation = predicted_annotation(c.problem, *got, gpu);
    p.predicted_us = got->us;
    p.candidate = std::move(c);
    report.prediction->points.push_back(*got);
    return std::optional<ExplainPoint>(std::move(p));
  });
  return report;
}

}  // namespace shapescope
