// The keys of every JSON document the commands print, per object in output order (json_schema.hpp
// says how they are used). A new key: a line here and its write; the CPU tests run every command's
// JSON through check_json, and python/shapescope/_fields.py is generated from this table.
#include "report/json_schema.hpp"

namespace shapescope {
namespace {

constexpr JsonType kInt = JsonType::kInt, kReal = JsonType::kReal, kText = JsonType::kText, kBool = JsonType::kBool,
                   kInts = JsonType::kInts, kTexts = JsonType::kTexts, kRecord = JsonType::kRecord,
                   kRecords = JsonType::kRecords;

// sweep --format json, export --format json: an array of points; and inside explain's and a GPU
// comparison's documents. A model prediction's point has only the annotation's fields (align_m on).
const std::vector<JsonRecord> kPointRecords = {
    {"Point",
     {{"id", kInt}, {"backend", kText}, {"algo", kText}, {"dtype", kText}, {"layout", kText}, {"m", kInt}, {"n", kInt},
      {"k", kInt}, {"batch", kInt}, {"lda", kInt}, {"ldb", kInt}, {"ldc", kInt}, {"off_a", kInt}, {"off_b", kInt},
      {"off_c", kInt}, {"mode", kText}, {"clocks", kText}, {"recipe", kText}, {"cast", kText}, {"gpu_name", kText},
      {"gpu_uuid", kText}, {"driver", kText}, {"cuda_runtime", kText}, {"cublas", kText}, {"cublaslt", kText},
      {"median_us", kReal}, {"min_us", kReal}, {"max_us", kReal}, {"q1_us", kReal}, {"q3_us", kReal},
      {"samples", kInt}, {"noise", kReal}, {"noisy", kBool}, {"sm_clock_mhz", kReal}, {"throttle_reasons", kInt},
      {"throttled", kBool}, {"stop", kText}, {"median_ci", kReal}, {"sentinel_drift", kReal}, {"reruns", kInt},
      {"drifted", kBool}, {"tflops", kReal},
      // cuBLASLt's algorithm and its configuration (null for other backends)
      {"lt_algo_id", kInt}, {"lt_tile_id", kInt}, {"lt_tile", kText}, {"lt_stages_id", kInt}, {"lt_stages", kText},
      {"lt_splitk", kInt}, {"lt_reduction_scheme", kInt}, {"lt_reduction", kText}, {"lt_swizzle", kInt},
      {"lt_custom_option", kInt}, {"lt_cluster_shape_id", kInt}, {"lt_cluster", kText}, {"lt_inner_shape_id", kInt},
      {"lt_waves_count", kReal}, {"lt_workspace_bytes", kInt},
      {"measured_at", kText}, {"command", kText}, {"annotated", kBool},
      // the annotation (model/annotation_fields.cpp): alignment, kernel, tile grid, slots, waves, roofline, regret
      {"align_m", kInt}, {"align_n", kInt}, {"align_k", kInt}, {"lda_align_bytes", kInt}, {"ldb_align_bytes", kInt},
      {"ldc_align_bytes", kInt}, {"a_base_align_bytes", kInt}, {"b_base_align_bytes", kInt},
      {"c_base_align_bytes", kInt}, {"aligned_16b", kInt}, {"kernel", kText}, {"kernel_family", kText},
      {"kernel_says", kText}, {"tile_source", kText}, {"tile_m", kInt}, {"tile_n", kInt}, {"tile_k", kInt},
      {"stages", kInt}, {"splits", kInt}, {"split_source", kText}, {"tiles_m", kInt}, {"tiles_n", kInt},
      {"tiles", kInt}, {"tile_efficiency", kReal}, {"launched_ctas", kInt}, {"cluster_size", kInt},
      {"ctas_per_sm", kInt}, {"occupancy_limiter", kText}, {"data_parallel_slots", kInt}, {"persistent", kInt},
      {"slots", kInt}, {"waves", kReal}, {"wave_rounds", kInt}, {"wave_efficiency", kReal}, {"waves_over", kText},
      {"flops", kReal}, {"min_bytes", kReal}, {"intensity", kReal}, {"bound", kText}, {"peak_tflops", kReal},
      {"peak_source", kText}, {"bandwidth_gbs", kReal}, {"bandwidth_source", kText}, {"attainable_tflops", kReal},
      {"pct_peak", kReal}, {"pct_roof", kReal}, {"regret", kReal}, {"best_algo", kText},
      {"kernels", kRecords, "Kernel"}}},
    {"Kernel",
     {{"name", kText}, {"grid_x", kInt}, {"grid_y", kInt}, {"grid_z", kInt}, {"block_x", kInt}, {"block_y", kInt},
      {"block_z", kInt}, {"cluster_x", kInt}, {"cluster_y", kInt}, {"cluster_z", kInt}, {"registers", kInt},
      {"static_smem", kInt}, {"dynamic_smem", kInt}, {"duration_us", kReal}}},
};

// explain SHAPE --json; with several --db, a GpuComparison.
const std::vector<JsonRecord> kExplainRecords = {
    {"ExplainResult",
     {{"shape", kText}, {"mode", kText}, {"source", kText}, {"verdict", kRecord, "Verdict"},
      {"effects", kRecords, "Effect"}, {"points", kRecords, "ExplainPoint"}, {"regret", kReal},
      {"fixed_kernel", kText}, {"fixed_kernel_loss", kReal}, {"fixes", kRecords, "Fix"},
      {"fp8", kRecord, "Fp8Explain"}, {"not_measured", kRecords, "NotMeasured"}, {"paired", kRecord, "PairedRun"},
      {"wall_s", kReal}, {"prediction", kRecord, "Prediction"}, {"text", kText}}},
    {"Verdict",
     {{"text", kText}, {"against", kText}, {"time_ratio", kReal}, {"work_ratio", kReal}, {"throughput_ratio", kReal},
      {"gap_us", kReal}, {"unexplained_us", kReal}, {"threshold", kReal}, {"bound", kText}, {"roof_us", kReal}}},
    {"Effect",
     {{"effect", kText}, {"cost_us", kReal}, {"measured", kBool}, {"evidence", kInts}, {"detail", kText}}},
    {"ExplainPoint",
     {{"index", kInt}, {"role", kText}, {"label", kText}, {"why", kText}, {"size", kInt}, {"of", kInt},
      {"supports", kTexts}, {"point", kRecord, "Point"}, {"error", kRecord, "NumericalError"},
      {"error_outliers", kRecord, "NumericalError"}, {"per_call", kBool}, {"pairing", kText},
      {"paired", kRecord, "PairedRatio"}, {"predicted", kRecord, "PredictedTime"}}},
    {"PairedRatio",
     {{"time_us", kReal}, {"ratio", kReal}, {"low", kReal}, {"high", kReal}, {"pairs", kInt}, {"verdict", kText}}},
    {"NumericalError",
     {{"dtype", kText}, {"recipe", kText}, {"data", kText}, {"relative", kReal}, {"max_abs", kReal},
      {"reference_max", kReal}, {"non_finite", kInt}, {"elements", kInt}, {"measured_at", kText}}},
    {"Fix",
     {{"text", kText}, {"point", kText}, {"copy", kText}, {"time_us", kReal}, {"speedup", kReal},
      {"extra_flops", kReal}, {"extra_bytes", kReal}, {"casts_us", kReal}, {"per_step_us", kReal}}},
    {"Fp8Explain", {{"causes", kRecords, "Fp8Cause"}, {"over_max_error", kInt}}},
    {"Fp8Cause",
     {{"cause", kText}, {"dim", kText}, {"value", kInt}, {"block_size", kInt}, {"evidence", kInt},
      {"cost_us", kReal}, {"text", kText}}},
    {"NotMeasured", {{"what", kText}, {"why", kText}}},
    // A performance model (model/perf_predict.hpp) where nothing was measured: the model, and one
    // prediction (its class's held-out error, the kernel it assumed, where it lies outside the data).
    {"Prediction",
     {{"gpu", kText}, {"sm_count", kInt}, {"file", kText}, {"fitted_on", kText}, {"points", kInt}, {"held_out", kInt},
      {"cublas", kText}, {"clock_mhz", kReal}, {"floor_us", kReal}, {"scaled", kText}, {"why", kText}}},
    {"PredictedTime",
     {{"time_us", kReal}, {"tflops", kReal}, {"class", kText}, {"error_median", kReal}, {"error_p95", kReal},
      {"held_out", kInt}, {"tile_m", kInt}, {"tile_n", kInt}, {"splits", kInt}, {"slots", kInt}, {"rounds", kInt},
      {"memory_bound", kBool}, {"scaled", kText}, {"outside", kTexts}}},
    {"PairedRun",
     {{"text", kText}, {"passes", kInt}, {"seconds", kReal}, {"clock_low_mhz", kReal}, {"clock_median_mhz", kReal},
      {"clock_high_mhz", kReal}, {"power_w", kReal}, {"min_effect", kReal}, {"paired_points", kInt},
      {"survey_only_points", kInt}, {"budget_s", kReal}, {"pair_all_seconds", kReal}}},
    {"GpuComparison",
     {{"shape", kText}, {"dtype", kText}, {"layout", kText}, {"backend", kText}, {"algo", kText},
      {"gpus", kRecords, "GpuRow"}, {"missing", kTexts}, {"text", kText}}},
    {"GpuRow",
     {{"gpu", kText}, {"store", kText}, {"time_us", kReal}, {"tflops", kReal}, {"kernel", kText}, {"tile", kText},
      {"tiles", kText}, {"waves", kReal}, {"sm_clock_mhz", kReal}, {"point", kRecord, "Point"}}},
};

// profile --json
const std::vector<JsonRecord> kProfileRecords = {
    {"ProfileResult",
     {{"source", kText}, {"recorded_on", kText}, {"recorded_on_sms", kInt}, {"measured_on", kText},
      {"gpu_match", kText}, {"other_gpu", kText}, {"outside", kText}, {"steps", kInt}, {"mode", kText},
      {"numbers", kText}, {"backend", kText}, {"samples", kInt}, {"db", kText}, {"prediction", kRecord, "Prediction"},
      {"gemms", kRecords, "ProfileGemm"},
      {"totals", kRecord, "ProfileTotals"}, {"total_text", kText}, {"unmapped", kRecords, "UnmappedOp"},
      {"notes", kTexts}, {"skipped", kTexts}, {"fused_note", kText}, {"clocks_note", kText},
      {"what_ifs", kRecord, "WhatIfs"}, {"fp8_casts", kRecord, "Fp8Casts"}, {"trace_casts", kRecord, "TraceCasts"},
      {"text", kText}}},
    {"ProfileGemm",
     {{"shape", kText}, {"dtype", kText}, {"origin", kText}, {"problems", kRecords, "GemmProblem"},
      {"grouped", kBool}, {"group_rows_estimated", kBool}, {"usually_fused", kBool}, {"in_total", kBool},
      {"backend", kText}, {"count", kInt}, {"calls_per_step", kReal}, {"median_us", kReal}, {"noise", kReal},
      {"predicted", kBool}, {"error_median", kReal}, {"error_p95", kReal}, {"prediction", kRecord, "PredictedTime"},
      {"not_predicted", kText}, {"step_us", kReal}, {"share", kReal}, {"trace_kernels", kInt},
      {"trace_kernel_us", kReal}, {"trace_step_us", kReal}, {"trace_kernel_names", kTexts}, {"kernel", kText},
      {"grouped_call_us", kReal},
      {"per_group_loop_us", kReal}, {"our_grouped_kernel_us", kReal}, {"tiles", kText}, {"waves", kText},
      {"verdict", kText}, {"fix", kText}, {"verdict_shape", kText}, {"no_verdict", kText}}},
    {"GemmProblem",
     {{"m", kInt}, {"n", kInt}, {"k", kInt}, {"batch", kInt}, {"layout", kText}, {"lda", kInt}, {"ldb", kInt},
      {"ldc", kInt}}},
    {"ProfileTotals",
     {{"calls_per_step", kReal}, {"measured_us", kReal}, {"measured_gemms", kInt}, {"missing_gemms", kInt},
      {"outside_gemms", kInt}, {"trace_us", kReal}, {"compared_gemms", kInt}, {"compared_measured_us", kReal},
      {"compared_trace_us", kReal}, {"ratio", kReal}, {"unmapped_ops", kInt}, {"unmapped_trace_us", kReal},
      {"trace_all_kernels_us", kReal}, {"trace_other_kernels_us", kReal}, {"predicted", kBool},
      {"error_median", kReal}, {"error_p95", kReal}, {"outside_range_gemms", kInt}, {"outside_range_us", kReal}}},
    {"UnmappedOp", {{"op", kText}, {"reason", kText}, {"count", kInt}, {"kernel_us", kReal}}},
    {"WhatIfs",
     {{"ranked", kRecords, "WhatIf"}, {"same_dtype", kRecord, "WhatIfList"}, {"precision", kRecord, "WhatIfList"},
      {"changed_steps", kRecords, "ChangedStep"}, {"step_us", kReal}, {"lines", kTexts},
      {"not_predicted", kRecords, "NotPredicted"}}},
    {"NotPredicted", {{"kind", kText}, {"what", kText}, {"why", kText}, {"gemms", kInts}}},
    {"WhatIfList", {{"ranked", kRecords, "WhatIf"}, {"all", kRecord, "ChangedStep"}}},
    {"WhatIf",
     {{"number", kInt}, {"kind", kText}, {"change", kText}, {"calls_per_step", kReal}, {"now_us", kReal},
      {"after_us", kReal}, {"saving_us", kReal}, {"saving_low_us", kReal}, {"saving_high_us", kReal},
      {"paired", kBool}, {"changes_dtype", kBool}, {"predicted", kBool}, {"error", kReal},
      {"ratio", kRecord, "PairedRatioRecord"}}},
    {"PairedRatioRecord", {{"median", kReal}, {"low", kReal}, {"high", kReal}, {"pairs", kInt}}},
    {"ChangedStep",
     {{"name", kText}, {"what_ifs", kInt}, {"replayed", kBool}, {"predicted", kBool}, {"before_us", kReal},
      {"after_us", kReal}, {"text", kText}, {"why_not", kText}, {"named", kBool}, {"saving_known", kBool},
      {"ratio", kRecord, "PairedRatioRecord"}}},
    {"Fp8Casts", {{"us_per_step", kReal}, {"casts", kInt}, {"measured", kInt}, {"text", kText}}},
    {"TraceCasts",
     {{"range", kText}, {"found_by", kText}, {"ranges_per_step", kReal}, {"kernels_per_step", kReal},
      {"us_per_step", kReal}, {"kernel_names", kTexts}, {"gemms_and_casts_us", kReal},
      {"trace_gemms_and_casts_us", kReal}, {"ratio", kReal}, {"ours_us", kReal}, {"fused_saving_us", kReal},
      {"lines", kTexts}}},
};

// pad --json: a model's dimensions (PadResult) or a trace's or GEMM list's sizes (PadSizesResult).
const std::vector<JsonRecord> kPadRecords = {
    {"PadResult",
     {{"mode", kText}, {"model", kRecord, "PadModel"}, {"train", kBool}, {"tp", kInt}, {"dtype", kText},
      {"backend", kText}, {"left_out", kText}, {"copy_note", kText}, {"source", kRecord, "PadNumbers"},
      {"prediction", kRecord, "Prediction"}, {"steps", kRecords, "PadStep"}, {"text", kText}}},
    {"PadModel",
     {{"name", kText}, {"description", kText}, {"source", kText}, {"model_type", kText}, {"layout", kText},
      {"vocab_size", kInt}, {"hidden_size", kInt}, {"intermediate_size", kInt}, {"num_attention_heads", kInt},
      {"num_key_value_heads", kInt}, {"head_dim", kInt}, {"num_hidden_layers", kInt}, {"tied_embeddings", kBool},
      {"weight_parameters", kInt}}},
    {"PadNumbers",
     {{"gpu", kText}, {"gpu_uuid", kText}, {"driver", kText}, {"cublas", kText}, {"measured", kInt},
      {"reused", kInt}, {"db", kText}, {"samples", kInt}, {"clock_state", kText}, {"clocks", kText},
      {"copy_bandwidth_gbs", kReal}, {"paired", kRecords, "PadPairedRun"}, {"not_paired", kTexts}}},
    {"PadPairedRun",
     {{"dtype", kText}, {"calls", kInt}, {"comparisons", kInt}, {"passes", kInt}, {"seconds", kReal},
      {"clock_low_mhz", kReal}, {"clock_median_mhz", kReal}, {"clock_high_mhz", kReal}, {"power_w", kReal},
      {"settled", kBool}, {"warmup_s", kReal}}},
    {"PadStep",
     {{"tokens", kInt}, {"tflop_per_step", kReal}, {"gemm_time_us", kReal}, {"noise", kReal},
      {"gemms", kRecords, "PadGemm"}, {"dimensions", kRecords, "PadDimension"}}},
    {"PadGemm",
     {{"linear", kText}, {"pass", kText}, {"layout", kText}, {"m", kInt}, {"n", kInt}, {"k", kInt}, {"count", kInt},
      {"gflop", kReal}, {"median_us", kReal}, {"noise", kReal}, {"predicted", kRecord, "PredictedTime"}}},
    {"PadDimension",
     {{"name", kText}, {"value", kInt}, {"gemm_size", kInt}, {"where", kText}, {"note", kText},
      {"candidates", kRecords, "PadCandidate"}, {"recommendation", kRecord, "Recommendation"}}},
    {"PadCandidate",
     {{"value", kInt}, {"gemm_size", kInt}, {"why", kText}, {"touched", kInt}, {"extra_params", kInt},
      {"extra_params_pct", kReal}, {"extra_gflop", kReal}, {"extra_flops_pct", kReal}, {"copy_bytes", kInt},
      {"copy_us", kReal}},
     "Saving"},
    // A measured candidate's GEMM time per step before and after; the last four of a paired one.
    {"Saving",
     {{"before_us", kReal}, {"after_us", kReal}, {"saving_us", kReal}, {"saving_pct", kReal},
      {"threshold_pct", kReal}, {"significant", kBool}, {"saving_low_pct", kReal}, {"saving_high_pct", kReal},
      {"pairs", kInt}, {"cannot_tell", kBool}}},
    {"Recommendation", {{"action", kText}, {"value", kInt}, {"text", kText}}},
    {"PadSizesResult",
     {{"mode", kText}, {"source", kText}, {"recorded_on", kText}, {"backend", kText},
      {"numbers", kRecord, "PadNumbers"}, {"prediction", kRecord, "Prediction"}, {"tflop_per_step", kReal}, {"gemm_time_us", kReal}, {"noise", kReal},
      {"sizes", kRecords, "PadSize"}, {"notes", kTexts}, {"text", kText}}},
    {"PadSize",
     {{"value", kInt}, {"uses", kText}, {"calls", kInt}, {"gflop", kReal}, {"where", kText}, {"note", kText},
      {"candidates", kRecords, "PadSizeCandidate"}, {"recommendation", kRecord, "Recommendation"}}},
    {"PadSizeCandidate", {{"value", kInt}, {"why", kText}, {"touched", kInt}, {"extra_gflop", kReal}}, "Saving"},
};

}  // namespace

const std::vector<JsonRecord>& json_records() {
  static const std::vector<JsonRecord> records = [] {
    std::vector<JsonRecord> all;
    for (const std::vector<JsonRecord>* part : {&kPointRecords, &kExplainRecords, &kProfileRecords, &kPadRecords})
      all.insert(all.end(), part->begin(), part->end());
    return all;
  }();
  return records;
}

}  // namespace shapescope
