// A performance model's predictions in words and JSON fields, for every command that predicts
// (explain, pad, sweep --dry-run): where the model came from, each prediction's class and held-out
// error, the kernel it assumed, and where a problem lies outside the measured range.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "model/perf_predict.hpp"
#include "views/explain.hpp"

namespace shapescope {

// "the performance model of NVIDIA H100 80GB HBM3 (132 SMs) in 'gpus/h100-sxm.json', fitted on 3072
// measured points of '...' (cuBLAS 13.1.0, SM clock 1980 MHz)".
std::string perf_model_text(const GpuPerfModel& model);
// "bf16 nn rows 16-byte aligned".
std::string perf_class_text(const PerfClass& cls);
// "held-out error 2.1 % median, 4.6 % p95".
std::string perf_error_text(const PerfClass& cls);
// "tile 128x256 on 132 slots, 2 rounds" (+ ", split-K 4"; ", memory-bound"): the kernel assumed.
std::string perf_config_text(const PerfPrediction& prediction);
// "M 20000 outside the measured 1..4096: extrapolated, the held-out error does not cover it"; "" inside.
std::string perf_outside_text(const PerfPrediction& prediction);

// The model as JSON fields (record Prediction), `why` it predicted.
nlohmann::ordered_json perf_model_json(const GpuPerfModel& model, const std::string& why);
// One prediction as JSON fields (record PredictedTime).
nlohmann::ordered_json predicted_time_json(const Problem& problem, const PerfPrediction& prediction);

// explain's predicted mode (ExplainReport::prediction): the first line, the target's evidence row, a
// point's rate where it has a measured or a predicted time.
std::string predicted_verdict_line(const ExplainReport& report);
std::string predicted_evidence(const ExplainReport& report);
std::optional<double> measured_or_predicted_tflops(const ExplainPoint& point);

}  // namespace shapescope
