// The options of the commands that plan and measure problems (sweep, explain; pad and profile take
// the timing's --samples and --clocks alone): the problem's layout, the backends, the timing.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <optional>
#include <sstream>

#include "backends/variants.hpp"
#include "cli/commands.hpp"
#include "common/error.hpp"
#include "core/backend_kind.hpp"
#include "model/explain.hpp"
#include "shape/plan.hpp"
#include "store/store.hpp"
#include "views/profile.hpp"

namespace shapescope {

void add_problem_options(CLI::App* cmd, ShapeOptions& shape) {
  add_dtype_option(cmd, shape.dtype, "fp8: e4m3, layout nt");
  cmd->add_option("--recipe", shape.recipe,
                  "fp8's scaling: tensor (default) | row | block (A 1x128, B 128x128) | block-1x128; an e5m2 "
                  "operand as e.g. tensor:e5m2xe4m3");
  cmd->add_option("--layout", shape.layout, "nn (torch.mm(a, b)) | nt (x @ W.t()) | tn | tt; row-major, as PyTorch");
  cmd->add_option("--ld-pad", shape.ld_pad, "elements added to every leading dimension");
  cmd->add_option("--lda", shape.lda, "explicit leading dimension of A (elements)");
  cmd->add_option("--ldb", shape.ldb, "explicit leading dimension of B (elements)");
  cmd->add_option("--ldc", shape.ldc, "explicit leading dimension of C (elements)");
  cmd->add_option("--offset", shape.offset, "base-pointer offset of A and B in elements (the x[..., 1:] case)");
}

void add_timing_options(CLI::App* cmd, TimingOptions& t) {
  t.samples_option =
      add_samples_option(cmd, t.samples, "exactly N samples per point (shuffled passes), instead of the stopping rule");
  t.rule_options = {
      cmd->add_option("--min-samples", t.min_samples, "stopping rule: samples every point gets first"),
      cmd->add_option("--max-samples", t.max_samples, "stopping rule: samples no point goes beyond"),
      cmd->add_option("--target-noise", t.target_noise_pct,
                      "stopping rule: stop when the median's 95 % confidence interval is within this "
                      "percentage of it on either side")};
  cmd->add_option("--max-noise", t.max_noise_pct, "flag points whose relative IQR is above this percentage");
  t.clocks_option = add_clocks_option(cmd, t.clocks);
  cmd->add_option("--warmup-ms", t.warmup_ms, "GEMM load before the first sample (sustained clocks)");
  add_burst_idle_option(cmd, t.burst_idle);
}

CLI::Option* add_burst_idle_option(CLI::App* cmd, double& idle) {
  const auto read = [&idle](const double& value) {
    if (!(value >= 0 && value <= 100))
      throw usage_error(fmt::format("--burst-idle: {} must be between 0 and 100 (times each graph's GPU time)", value));
    idle = value;
  };
  return cmd->add_option_function<double>("--burst-idle", read,
                                          fmt::format("burst clocks: idle this many times each graph's GPU time after "
                                                      "it, so that the GPU stays below its power limit (default {:g})",
                                                      MeasureOptions{}.burst_idle));
}

MeasureOptions measure_options(const TimingOptions& t) {
  MeasureOptions m;
  if (t.samples_option && t.samples_option->count() > 0) {
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
  if (!(t.warmup_ms >= 0 && t.warmup_ms <= 60000))
    throw usage_error(fmt::format("--warmup-ms: {} must be between 0 and 60000", t.warmup_ms));
  m.rule = StopRule{t.min_samples, t.max_samples, t.target_noise_pct / 100.0};
  m.max_noise = t.max_noise_pct / 100.0;
  m.clocks = t.clocks;
  m.warmup_ms = t.warmup_ms;
  m.burst_idle = t.burst_idle;
  return m;
}

CLI::Option* add_backends_option(CLI::App* cmd, std::vector<BackendSpec>& backends, const std::string& help) {
  return cmd
      ->add_option_function<std::string>(
          "--backend",
          [&backends](const std::string& text) {
            std::vector<std::string> items;
            std::stringstream in(text);
            for (std::string item; std::getline(in, item, ',');) items.push_back(item);
            if (!text.empty() && text.back() == ',') items.push_back("");  // "cublas," names an empty backend too
            std::vector<BackendSpec> out;
            for (const std::string& item : items) {
              const BackendSpec spec = parse_backend_spec(item);
              if (std::find(out.begin(), out.end(), spec) != out.end())
                throw usage_error(fmt::format("--backend: '{}' is given twice in '{}'", item, text));
              out.push_back(spec);
            }
            if (out.empty()) throw usage_error("--backend: '' is empty (cublas, cublaslt, custom)");
            backends = out;
          },
          help)
      ->default_str(backends.empty() ? "" : backends.front().text());
}

namespace {

// A --backend item for a command that runs one of `kinds` (our kernels as one variant).
BackendSpec one_backend(const std::string& text, const std::string& command, const std::vector<BackendKind>& kinds) {
  const bool ours = std::find(kinds.begin(), kinds.end(), BackendKind::kCustom) != kinds.end();
  std::optional<BackendSpec> spec;
  try {
    spec = parse_backend_spec(text);
  } catch (const Error&) {
    // A selection of our kernels that names no variant says which part is wrong.
    if (ours && text.rfind(to_string(BackendKind::kCustom), 0) == 0) throw;
  }
  if (!spec || std::find(kinds.begin(), kinds.end(), spec->kind) == kinds.end()) {
    std::string names;
    for (BackendKind kind : kinds)
      names += (names.empty() ? "" : ", ") + std::string(to_string(kind)) +
               (kind == BackendKind::kCustom ? ":<kernel>:<BMxBN>:<schedule>" : "");
    throw usage_error(fmt::format("--backend: '{}' is not a backend {} can use ({})", text, command, names));
  }
  if (spec->kind == BackendKind::kCustom) {
    const auto variants = select_variants(*spec);
    if (variants.size() != 1)
      throw usage_error(fmt::format("--backend: '{}' selects {} variants; {} needs one (e.g. custom:{})", text,
                                    variants.size(), command, variants.front()->key()));
  }
  return *spec;
}

}  // namespace

CLI::Option* add_backend_option(CLI::App* cmd, BackendSpec& backend, const std::string& command,
                                const std::vector<BackendKind>& kinds, const std::string& help) {
  return cmd
      ->add_option_function<std::string>(
          "--backend", [&backend, command, kinds](const std::string& text) { backend = one_backend(text, command, kinds); },
          help)
      ->default_str(backend.text());
}

CLI::Option* add_max_error_option(CLI::App* cmd, std::optional<double>& max_error) {
  return cmd->add_option_function<double>(
      "--max-error",
      [&max_error](const double& given) {
        if (!(given > 0 && given <= 1))
          throw usage_error(fmt::format("--max-error: {} must be a relative error above 0 and at most 1 (e.g. 0.05)", given));
        max_error = given;
      },
      "precision fixes (fp8 per recipe, with its casts) only where the relative error against fp64, the worse of "
      "Gaussian and outlier-channel inputs, is at most this");
}

void check_fp8_backend(DType dtype, BackendKind backend) {
  if (dtype == DType::kFp8 && backend == BackendKind::kCublas)
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

void check_store_for_dry_run(const std::string& db) {
  std::error_code ec;
  if (std::filesystem::exists(db, ec)) Store(db, Store::Access::kReadOnly);
}

void add_step_clocks_option(CLI::App* cmd, ClockState& clocks, bool& given, bool& replay_always) {
  const auto read = [&clocks, &given, &replay_always](const std::string& text) {
    replay_always = text == "replay";
    given = text != "step" && !replay_always;
    const std::optional<ClockState> state = parse_clock_state(text);
    if (given && (!state || *state == ClockState::kUnrecorded))
      throw usage_error(fmt::format("--clocks: '{}' is not a clock state (step, replay, sustained, burst)", text));
    if (given) clocks = *state;
  };
  cmd->add_option_function<std::string>("--clocks", read,
                                        "step (a trace's step replayed in its order, its other kernels stood in for: "
                                        "the clock it runs at, unless it ran at the boost clock by its GEMMs' times and "
                                        "by the NVML samples recorded with it near its power limit) | replay (the step "
                                        "replayed whatever its clock) | sustained (the power limit) | burst (boost clocks)")
      ->default_str("step");
}

CLI::Option* add_what_if_seconds_option(CLI::App* cmd, double& seconds) {
  return add_real_option(cmd, "--what-if-seconds", seconds, kWhatIfMinSeconds, 600,
                         "a replayed step: its passes go on until the --what-if step's saving is known within +-5 %, "
                         "for at most this many seconds (up to 4 times as long while that step has fewer than 3 pairs)");
}

void check_what_if_seconds(const CLI::Option& option, bool what_ifs, const std::string& no_step, bool paired) {
  if (option.count() == 0) return;
  const std::string given = fmt::format("--what-if-seconds: '{}'", option.as<std::string>());
  if (!what_ifs) throw usage_error(given + " needs --what-if (the changed step whose saving it measures)");
  if (!no_step.empty())
    throw usage_error(fmt::format("{} bounds the replay of a trace's step; {} has no step to replay", given, no_step));
  if (paired)
    throw usage_error(given + " bounds the replay of the step; --clocks sustained and burst pair its GEMMs instead");
}

}  // namespace shapescope
