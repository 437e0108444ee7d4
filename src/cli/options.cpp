// The option groups and checks that several commands share, written once.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <limits>
#include <sstream>

#include "backends/variants.hpp"
#include "cli/commands.hpp"
#include "common/error.hpp"
#include "core/backend_kind.hpp"
#include "model/gemm_list.hpp"
#include "model/trace_import.hpp"
#include "model/explain.hpp"
#include "shape/plan.hpp"
#include "shape/range.hpp"
#include "store/store.hpp"
#include "views/plot_select.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;

// A range of token counts is one analysis per count; past the caller's limit it is almost surely a
// missing step. tp above this is no machine anyone has.
constexpr int64_t kMaxTp = 1024;

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

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) items.push_back(item);
  if (!text.empty() && text.back() == ',') items.push_back("");
  return items;
}

}  // namespace

std::vector<std::string> parse_backends(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& item : split_list(text)) {
    if (auto why = backend_name_error(item)) throw usage_error(*why);
    if (std::find(out.begin(), out.end(), item) != out.end())
      throw usage_error(fmt::format("--backend: '{}' is given twice in '{}'", item, text));
    out.push_back(item);
  }
  if (out.empty()) throw usage_error("--backend: '' is empty (cublas, cublaslt, custom)");
  return out;
}

void add_problem_options(CLI::App* cmd, ShapeOptions& shape) {
  cmd->add_option("--dtype", shape.dtype, "bf16 | fp16 | fp32 | tf32 | fp8 (e4m3, layout nt)");
  cmd->add_option("--layout", shape.layout, "nn (torch.mm(a, b)) | nt (x @ W.t()) | tn | tt; row-major, as PyTorch");
  cmd->add_option("--ld-pad", shape.ld_pad, "elements added to every leading dimension");
  cmd->add_option("--lda", shape.lda, "explicit leading dimension of A (elements)");
  cmd->add_option("--ldb", shape.ldb, "explicit leading dimension of B (elements)");
  cmd->add_option("--ldc", shape.ldc, "explicit leading dimension of C (elements)");
  cmd->add_option("--offset", shape.offset, "base-pointer offset of A and B in elements (the x[..., 1:] case)");
}

void add_workload_source_options(CLI::App* cmd, WorkloadSource& source) {
  cmd->add_option("--trace", source.trace, "a PyTorch profiler trace (Chrome JSON, recorded with record_shapes=True)");
  cmd->add_option("--gemms", source.gemms, "a GEMM list: CSV or JSON (m, n, k, layout, dtype, batch, count)");
  cmd->add_option("--model", source.model, "a preset: models/NAME.json");
  cmd->add_option("--config", source.config, "a Hugging Face style config.json");
}

SourceKind source_kind(const WorkloadSource& s) {
  std::vector<std::pair<const char*, std::string>> given;
  for (const auto& [option, value] : {std::pair{"--trace", s.trace}, std::pair{"--gemms", s.gemms},
                                      std::pair{"--model", s.model}, std::pair{"--config", s.config}})
    if (!value.empty()) given.emplace_back(option, value);
  if (given.size() > 1)
    throw usage_error(fmt::format("{}: '{}' and {} '{}' both given; give one workload", given[0].first, given[0].second,
                                  given[1].first, given[1].second));
  if (!s.trace.empty()) return SourceKind::kTrace;
  if (!s.gemms.empty()) return SourceKind::kGemms;
  return SourceKind::kModel;
}

std::string preset_list() { return joined(preset_names(models_dir())); }

ModelConfig resolve_model(const WorkloadSource& s) {
  if (!s.config.empty()) {
    ModelConfig c = load_model_config(s.config, fmt::format("--config: '{}'", s.config));
    c.name = s.config;
    return c;
  }
  const fs::path dir = models_dir();
  const std::vector<std::string> presets = preset_names(dir);
  if (s.model.empty())
    throw usage_error(fmt::format("--model: give a preset ({}) or --config FILE (a Hugging Face config.json), or the "
                                  "GEMMs themselves: --trace FILE or --gemms FILE",
                                  joined(presets)));
  if (std::find(presets.begin(), presets.end(), s.model) == presets.end())
    throw usage_error(fmt::format("--model: '{}' is not a preset ({}); or use --config FILE (a Hugging Face config.json)",
                                  s.model, presets.empty() ? "none found in " + dir.string() : joined(presets)));
  const fs::path path = dir / (s.model + ".json");
  ModelConfig c = load_model_config(path.string(), fmt::format("--model: preset '{}' ({})", s.model, path.string()));
  c.name = s.model;
  return c;
}

Workload load_file_workload(const WorkloadSource& s) {
  if (!s.trace.empty()) return load_torch_trace(s.trace, fmt::format("--trace: '{}'", s.trace));
  return load_gemm_list(s.gemms, fmt::format("--gemms: '{}'", s.gemms));
}

void add_step_options(CLI::App* cmd, StepArgs& step, const std::string& tokens_help) {
  cmd->add_option("--tokens", step.tokens, tokens_help);
  cmd->add_flag("--train", step.train, "forward and both backward GEMMs of each Linear (default: forward only)");
  cmd->add_option("--tp", step.tp, "tensor-parallel ranks");
  cmd->add_option("--dtype", step.dtype, "bf16 | fp16 | fp32 | tf32 | fp8 (forward only, cublaslt)");
}

ParsedStep parse_step(const StepArgs& step, const ModelConfig& config, size_t max_counts, const char* command) {
  const bool one = max_counts == 1;
  if (step.tokens.empty())
    throw usage_error(fmt::format("--tokens: give the tokens per step (batch x sequence), e.g. --tokens 12288{}",
                                  one ? "" : " or --tokens 1..64"));
  ParsedStep out;
  out.tokens = parse_range(step.tokens, "--tokens");
  if (out.tokens.size() > max_counts)
    throw usage_error(fmt::format("--tokens: '{}' has {} values; {} takes {}", step.tokens, out.tokens.size(), command,
                                  one ? std::string("one (e.g. 12288)")
                                      : fmt::format("at most {} (e.g. 1..64 or 64..8192*2)", max_counts)));
  if (step.tp < 1 || step.tp > kMaxTp)
    throw usage_error(fmt::format("--tp: {} must be between 1 and {}", step.tp, kMaxTp));
  const std::optional<DType> dtype = parse_dtype(step.dtype);
  if (!dtype) throw usage_error(fmt::format("--dtype: '{}' is not a dtype (bf16, fp16, fp32, tf32, fp8)", step.dtype));
  if (*dtype == DType::kFp8 && step.train)
    throw usage_error("--dtype: 'fp8' runs only as nt GEMMs (the forward); --train also needs nn and tn");
  check_tp(config, step.tp);
  out.dtype = *dtype;
  return out;
}

void refuse_step_options(const StepArgs& step, const std::string& source_option) {
  const auto refuse = [&](const std::string& option, const std::string& value) {
    throw usage_error(fmt::format("{}: '{}' goes with --model or --config; {} records its own shapes", option, value,
                                  source_option));
  };
  if (!step.tokens.empty()) refuse("--tokens", step.tokens);
  if (step.train) refuse("--train", "true");
  if (step.tp != 1) refuse("--tp", std::to_string(step.tp));
  if (step.dtype != "bf16") refuse("--dtype", step.dtype);
}

ClockState clock_state_option(const std::string& text) {
  const std::optional<ClockState> clocks = parse_clock_state(text);
  if (!clocks || *clocks == ClockState::kUnrecorded)
    throw usage_error(fmt::format("--clocks: '{}' is not a clock state (sustained, burst)", text));
  return *clocks;
}

void check_samples(int samples) {
  if (samples < 1 || samples > 100000)
    throw usage_error(fmt::format("--samples: {} must be between 1 and 100000", samples));
}

void add_pair_seconds_option(CLI::App* cmd, double& seconds, const std::string& what) {
  cmd->add_option("--pair-seconds", seconds,
                  fmt::format("measuring: {} in paired passes for at most this long per run (0: no pairing)", what))
      ->capture_default_str();
}

void check_pair_seconds(double seconds) {
  if (!(seconds >= 0 && seconds <= 60))
    throw usage_error(fmt::format("--pair-seconds: {} must be between 0 (no pairing) and 60", seconds));
}

void add_timing_options(CLI::App* cmd, TimingOptions& t) {
  t.samples_option = cmd->add_option("--samples", t.samples,
                                     "exactly N samples per point (shuffled passes), instead of the stopping rule")
                         ->default_str("");
  t.rule_options = {
      cmd->add_option("--min-samples", t.min_samples, "stopping rule: samples every point gets first"),
      cmd->add_option("--max-samples", t.max_samples, "stopping rule: samples no point goes beyond"),
      cmd->add_option("--target-noise", t.target_noise_pct,
                      "stopping rule: stop when the median's 95 % confidence interval is within this "
                      "percentage of it on either side")};
  cmd->add_option("--max-noise", t.max_noise_pct, "flag points whose relative IQR is above this percentage");
  t.clocks_option = cmd->add_option("--clocks", t.clocks,
                  "sustained (passes back to back after a warm-up, at the power limit for large GEMMs) | "
                  "burst (short bursts with idle cool-downs: boost clocks)");
  cmd->add_option("--warmup-ms", t.warmup_ms, "GEMM load before the first sample (sustained clocks)");
}

MeasureOptions measure_options(const TimingOptions& t) {
  MeasureOptions m;
  if (t.samples_option && t.samples_option->count() > 0) {
    check_samples(t.samples);
    for (const CLI::Option* rule : t.rule_options)
      if (rule->count() > 0)
        throw usage_error(fmt::format("{}: --samples {} fixes the count of every point; leave out {} (the "
                                      "stopping rule's option) or --samples",
                                      rule->get_name(), t.samples, rule->get_name()));
    m.samples = t.samples;
  }
  if (t.min_samples < kMinAdaptiveSamples || t.min_samples > 100000)
    throw usage_error(fmt::format("--min-samples: {} must be between {} and 100000 (the median's interval needs "
                                  "{}; --samples N for a fixed count)",
                                  t.min_samples, kMinAdaptiveSamples, kMinAdaptiveSamples));
  if (t.max_samples < t.min_samples || t.max_samples > 100000)
    throw usage_error(fmt::format("--max-samples: {} must be between --min-samples ({}) and 100000", t.max_samples,
                                  t.min_samples));
  if (!(t.target_noise_pct > 0 && t.target_noise_pct <= 100))
    throw usage_error(fmt::format("--target-noise: {} must be a percentage in (0, 100]", t.target_noise_pct));
  if (!(t.max_noise_pct > 0 && t.max_noise_pct <= 100))
    throw usage_error(fmt::format("--max-noise: {} must be a percentage in (0, 100]", t.max_noise_pct));
  const std::optional<ClockState> clocks = parse_clock_state(t.clocks);
  if (!clocks || *clocks == ClockState::kUnrecorded)
    throw usage_error(fmt::format("--clocks: '{}' is not a clock state (sustained, burst)", t.clocks));
  if (!(t.warmup_ms >= 0 && t.warmup_ms <= 60000))
    throw usage_error(fmt::format("--warmup-ms: {} must be between 0 and 60000", t.warmup_ms));
  m.rule = StopRule{t.min_samples, t.max_samples, t.target_noise_pct / 100.0};
  m.max_noise = t.max_noise_pct / 100.0;
  m.clocks = *clocks;
  m.warmup_ms = t.warmup_ms;
  return m;
}

void check_fp8_backend(DType dtype, const std::string& backend) {
  if (dtype == DType::kFp8 && backend == to_string(BackendKind::kCublas))
    throw usage_error("--backend: 'cublas' has no fp8 (cublasGemmEx); use --backend cublaslt");
}

ShapeArg parse_shape_option(const std::string& text) {
  const std::optional<ShapeArg> shape = parse_shape(text);
  if (!shape) throw usage_error(fmt::format("SHAPE: '{}' is not N or MxNxK with positive sizes (e.g. 1793, 4096x1x4096)", text));
  constexpr int64_t kMaxSize = std::numeric_limits<int32_t>::max();  // cuBLAS takes 32-bit sizes
  if (shape->m > kMaxSize || shape->n > kMaxSize || shape->k > kMaxSize)
    throw usage_error(fmt::format("SHAPE: '{}' has a size above {} (cuBLAS takes 32-bit sizes)", text, kMaxSize));
  return *shape;
}

void check_db_option(const std::string& db) {
  if (db.empty()) throw usage_error("--db: '' is empty (a store file, e.g. shapescope.db)");
}

void check_store_for_dry_run(const std::string& db) {
  check_db_option(db);
  std::error_code ec;
  if (fs::exists(db, ec)) Store(db, Store::Access::kReadOnly);
}

CLI::Option* add_device_option(CLI::App* cmd, int& device) {
  // Taken as text so that "-1" or "x" gets a message of ours rather than CLI11's range dump.
  return cmd->add_option_function<std::string>(
      "--device",
      [&device](const std::string& text) {
        int value = -1;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc() || end != text.data() + text.size() || value < 0)
          throw usage_error(fmt::format("--device: '{}' is not a CUDA device ordinal (0, 1, ...)", text));
        device = value;
      },
      "CUDA device ordinal")
      ->default_str(std::to_string(device));
}

void add_selection_options(CLI::App* cmd, PlotFilter& filter) {
  cmd->add_option("--cublas", filter.cublas, "cuBLAS version starts with this");
  cmd->add_option("--dtype", filter.dtype, "bf16 | fp16 | fp32 | tf32 | fp8");
  cmd->add_option("--layout", filter.layout, "nn | nt | tn | tt");
  cmd->add_option("--backend", filter.backend, "comma list: cublas, cublaslt");
  cmd->add_option("--algo", filter.algo, "comma list: default (cublas), h0, h1, ... (cublaslt's heuristic order)");
  cmd->add_option("--kernel", filter.kernel, "main kernel's name contains this (case-insensitive)");
  cmd->add_option("--m", filter.m, "range of M, as sweep takes it (1..4096, 1..4096:8, 64..8192*2, lists)");
  cmd->add_option("--n", filter.n, "range of N");
  cmd->add_option("--k", filter.k, "range of K");
  cmd->add_option("--batch", filter.batch, "range of batch counts (default 1)");
  cmd->add_option("--ld-pad", filter.ld_pad, "points swept with this --ld-pad (default 0)");
  cmd->add_option("--offset", filter.offset, "points swept with this --offset (default 0)");
  cmd->add_flag("--hot", filter.hot, "points measured --hot (warm L2) instead of cold ones");
  cmd->add_option("--clocks", filter.clocks,
                  "points measured in this clock state: sustained | burst | unrecorded (before states were "
                  "recorded); default: any");
}

namespace {
// T's whole decimal numbers, passed on as such (CLI11 would read a leading 0 as octal).
template <class T>
CLI::Validator whole_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        T value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error == std::errc() && end == text.data() + text.size()) {
          text = std::to_string(value);
          return "";
        }
        return fmt::format("'{}' is not a whole number from {} to {}", text, std::numeric_limits<T>::min(),
                           std::numeric_limits<T>::max());
      },
      "");
}
}  // namespace

void read_integer_options_whole(CLI::App& app) {
  const CLI::Validator whole_signed = whole_number<int64_t>(), whole_unsigned = whole_number<uint64_t>();
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
    for (CLI::Option* option : command->get_options([](CLI::Option*) { return true; })) {
      if (option->get_type_name() == "INT") option->transform(whole_signed);
      if (option->get_type_name() == "UINT") option->transform(whole_unsigned);
    }
  }
}

}  // namespace shapescope
