// The options that name a workload and a model's step, shared by pad and profile: the source
// (--trace, --gemms, --model, --config), the presets, and --tokens, --train, --tp, --dtype.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "model/gemm_list.hpp"
#include "model/trace_import.hpp"
#include "shape/range.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;

// A range of token counts is one analysis per count; past the caller's limit it is almost surely a
// missing step. tp above this is no machine anyone has.
constexpr int64_t kMaxTp = 1024;

// The presets: models/ of shapescope's data (see data_dir()).
fs::path models_dir() { return data_dir("models"); }
// A preset's file: models/NAME.json of the data folder.
fs::path preset_path(const std::string& name) { return models_dir() / (name + ".json"); }

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

}  // namespace

void add_workload_source_options(CLI::App* cmd, WorkloadSource& source) {
  cmd->add_option("--trace", source.trace, "a PyTorch profiler trace (Chrome JSON, recorded with record_shapes=True)");
  cmd->add_option("--gemms", source.gemms, "a GEMM list: CSV or JSON (m, n, k, layout, dtype, batch, count)");
  cmd->add_option("--model", source.model, "a preset: models/NAME.json");
  cmd->add_option("--config", source.config, "a Hugging Face style config.json");
}

void add_cast_range_option(CLI::App* cmd, WorkloadSource& source) {
  const auto read = [&source](const std::string& name) {
    if (name.empty())
      throw usage_error(fmt::format("--cast-range: '' is no range name; give the name the program's "
                                    "torch.profiler.record_function gave its fp8 casts (default {})",
                                    kDefaultCastRange));
    source.cast_range = name;
    source.cast_range_given = true;
  };
  cmd->add_option_function<std::string>("--cast-range", read,
                                         "with --trace: the record_function range around the fp8 casts (its kernels "
                                         "are the step's casts)")
      ->default_str(kDefaultCastRange);
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
  if (s.cast_range_given)
    throw usage_error(fmt::format("--cast-range: '{}' names a range in a trace's events: it goes with --trace FILE{}",
                                  s.cast_range, given.empty() ? "" : fmt::format(", not with {}", given[0].first)));
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
  const fs::path path = preset_path(s.model);
  ModelConfig c = load_model_config(path.string(), fmt::format("--model: preset '{}' ({})", s.model, path.string()));
  c.name = s.model;
  return c;
}

std::string preset_file(const WorkloadSource& s) {
  if (s.model.empty() || !s.config.empty()) return "";
  const std::vector<std::string> presets = preset_names(models_dir());
  if (std::find(presets.begin(), presets.end(), s.model) == presets.end()) return "";
  return preset_path(s.model).string();
}

Workload load_file_workload(const WorkloadSource& s) {
  if (!s.trace.empty()) return load_torch_trace(s.trace, fmt::format("--trace: '{}'", s.trace), {s.cast_range});
  return load_gemm_list(s.gemms, fmt::format("--gemms: '{}'", s.gemms));
}

void add_step_options(CLI::App* cmd, StepArgs& step, const std::string& tokens_help) {
  cmd->add_option("--tokens", step.tokens, tokens_help);
  cmd->add_flag("--train", step.train, "forward and both backward GEMMs of each Linear (default: forward only)");
  cmd->add_option("--tp", step.tp, "tensor-parallel ranks");
  add_dtype_option(cmd, step.dtype, "fp8: cublaslt, each pass in its recipe's nt form");
  cmd->add_option("--recipe", step.recipe,
                  "fp8's training recipe: tensor (default; gradients e5m2) | row | block (1x128 activations and "
                  "gradients, 128x128 weights)");
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
  const DType dtype = dtype_option(step.dtype);
  if (!step.recipe.empty()) {
    const Fp8Recipe recipe = recipe_option(step.recipe);
    if (dtype != DType::kFp8)
      throw usage_error(fmt::format("--recipe: '{}' is an fp8 recipe; --dtype is {} (give --dtype fp8)", step.recipe,
                                    step.dtype));
    // A training recipe names the scaling; each pass's formats follow from it (model/fp8_steps.hpp).
    if (recipe.scaling == Fp8Scaling::kBlock1x128 || recipe != Fp8Recipe{recipe.scaling})
      throw usage_error(fmt::format("--recipe: '{}' names one GEMM's recipe; a step takes tensor, row or block (each "
                                    "pass gets its own scales and formats from it)",
                                    step.recipe));
    out.fp8 = recipe.scaling;
  }
  check_tp(config, step.tp);
  out.dtype = dtype;
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
  if (!step.recipe.empty()) refuse("--recipe", step.recipe);
}

}  // namespace shapescope
