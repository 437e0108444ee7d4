// One file per command: register_<cmd>(app) binds an options struct whose callback runs the command.
#pragma once
#include <CLI/CLI.hpp>

#include <atomic>
#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "core/problem.hpp"
#include "core/states.hpp"
#include "timing/measure_options.hpp"
#include "model/pad.hpp"
#include "model/workload.hpp"

namespace shapescope {

void register_info(CLI::App& app);
void register_sweep(CLI::App& app);
void register_explain(CLI::App& app);
void register_pad(CLI::App& app);
void register_plot(CLI::App& app);
void register_export(CLI::App& app);
void register_report(CLI::App& app);
void register_merge(CLI::App& app);
void register_profile(CLI::App& app);

// The options that describe a problem besides its dimensions, shared by the commands that plan
// problems: --dtype, --layout, --ld-pad, --lda/--ldb/--ldc, --offset.
struct ShapeOptions;
void add_problem_options(CLI::App* cmd, ShapeOptions& shape);
// "--backend cublas,cublaslt,custom:..." as a list; Error(kUsage) for an unknown or repeated item.
std::vector<std::string> parse_backends(const std::string& text);
// --samples: between 1 and 100000 (Error(kUsage) naming the option and the value otherwise).
void check_samples(int samples);
// --pair-seconds of explain, pad and profile: the longest paired run, 0 (no pairing) to 60 seconds
// (Error(kUsage) naming the value otherwise). `what` says what is paired.
void add_pair_seconds_option(CLI::App* cmd, double& seconds, const std::string& what);
void check_pair_seconds(double seconds);
// --clocks of pad and profile: sustained or burst (Error(kUsage) naming the value otherwise).
ClockState clock_state_option(const std::string& text);
// How a measuring sweep times its points: --samples N (exactly N each) or the stopping rule
// (--min-samples, --max-samples, --target-noise), --max-noise (the noisy flag), --clocks, --warmup-ms.
struct TimingOptions {
  int samples = 0;  // 0: not given
  int min_samples = StopRule{}.min_samples;
  int max_samples = StopRule{}.max_samples;
  double target_noise_pct = StopRule{}.target * 100;
  double max_noise_pct = 5;
  std::string clocks = std::string(to_string(ClockState::kSustained));
  double warmup_ms = 300;
  CLI::Option* samples_option = nullptr;  // which were given (set by add_timing_options)
  CLI::Option* clocks_option = nullptr;
  std::vector<CLI::Option*> rule_options;
};
void add_timing_options(CLI::App* cmd, TimingOptions& timing);
// The checks (one line naming the option and its value, exit 2) and the options they make.
MeasureOptions measure_options(const TimingOptions& timing);
// cuBLAS has no fp8 GEMM (cublasGemmEx): Error(kUsage) for fp8 with --backend cublas.
void check_fp8_backend(DType dtype, const std::string& backend);

// The options that select stored points (plot, export, report): --cublas, --dtype, --layout, --backend,
// --algo, --kernel, --m/--n/--k, --batch, --ld-pad, --offset, --hot. (--gpu is each command's own.)
struct PlotFilter;
void add_selection_options(CLI::App* cmd, PlotFilter& filter);

// The options that name a workload, shared by pad and profile: a PyTorch profiler trace (--trace), a
// GEMM list (--gemms), or a model (--model NAME: a preset; --config FILE: a Hugging Face config.json).
struct WorkloadSource {
  std::string trace, gemms, model, config;
};
void add_workload_source_options(CLI::App* cmd, WorkloadSource& source);
enum class SourceKind { kTrace, kGemms, kModel };
// Which source was given; Error(kUsage) naming the options when none or two are.
SourceKind source_kind(const WorkloadSource& source);
// The model of --model or --config (Error(kUsage) for an unknown preset or a bad config).
ModelConfig resolve_model(const WorkloadSource& source);
// The workload of --trace or --gemms (Error(kUsage) in one line for a bad file).
Workload load_file_workload(const WorkloadSource& source);
// The presets' names, for --help and messages: "deepseek-v2-lite, falcon-7b, ..."
std::string preset_list();
// Every integer option of every command is read whole, in decimal and in range, or refused naming the
// option and the value (CLI11 alone reads 99999999999999999999 as 9223372036854775807, 010 as 8).
void read_integer_options_whole(CLI::App& app);

// A model's step, shared by pad and profile: --tokens, --train, --tp, --dtype.
struct StepArgs {
  std::string tokens;
  bool train = false;
  int64_t tp = 1;
  std::string dtype = "bf16";
};
void add_step_options(CLI::App* cmd, StepArgs& step, const std::string& tokens_help);
// The token counts (at most `max_counts` of them, which `command` takes), tp and dtype, checked:
// Error(kUsage) naming the option and value.
struct ParsedStep {
  std::vector<int64_t> tokens;
  DType dtype = DType::kBf16;
};
ParsedStep parse_step(const StepArgs& step, const ModelConfig& config, size_t max_counts, const char* command);
// A trace or GEMM list records its own shapes: a step option given with one is refused, naming it.
void refuse_step_options(const StepArgs& step, const std::string& source_option);

// SHAPE of explain and plot tilegrid: N or MxNxK, each size at most 2^31-1 (cuBLAS takes 32-bit
// sizes); Error(kUsage) naming SHAPE and the value otherwise.
struct ShapeArg;
ShapeArg parse_shape_option(const std::string& text);
// One-line refusals shared by the commands: --db '' (a usage error rather than a store error).
void check_db_option(const std::string& db);
// A dry run promises that the store's points are reused: when --db exists, it is opened read-only
// now, so that a file that is no store, or a newer store, fails the dry run (exit 5) as the real
// run would.
void check_store_for_dry_run(const std::string& db);
// --device N: a non-negative ordinal, refused in one line naming the value otherwise.
CLI::Option* add_device_option(CLI::App* cmd, int& device);

// explain SHAPE with several --db: the shape on each store's GPUs side by side (compare_gpus.cpp).
struct ExplainRequest;
void explain_across_stores(const ExplainRequest& request, const std::vector<std::string>& dbs, const Problem& target,
                           const std::string& gpu, bool json);

// The folder of one kind of shapescope's data ("models": presets, "plots": gnuplot templates):
// $SHAPESCOPE_DATA/KIND when set; else PREFIX/share/shapescope/KIND beside an installed binary; else
// the source tree the binary was built from; else KIND beside the binary's folder. When none exists,
// the installed path (so that a message names where it looked).
std::string data_dir(const std::string& kind);
// "shapescope 0.1.0 (git v0.1.0-12-gabcdef), CUDA 13.0, cuBLAS 13.1.0, architectures 80;90a"
std::string version_text();
// Its first line ("shapescope 0.1.0 (v0.1.0-12-gabcdef)"), for a page's footer.
std::string version_line();
// An output a command writes whole (an HTML page): to standard output for "-" (main() checks that it
// took it), else through OutputFile, put in place only when `write` returned.
void write_whole_output(const std::string& path, const std::string& option,
                        const std::function<void(std::ostream&)>& write);

// The command line as given (argv[1..]): a --devices parent runs its workers with it.
extern std::vector<std::string> g_arguments;
// Set by SIGINT/SIGTERM: long work stops at the next safe point, keeping what was measured.
extern std::atomic<bool> g_interrupted;
// Seconds since the process started (for the wall time a sweep reports).
double process_seconds();
// "GPU 0: NVIDIA H100 80GB HBM3 (132 SMs, cc 9.0), driver 580.159.04, CUDA 13.0, cuBLAS 13.1.0"
struct DeviceContext;
std::string device_header(const DeviceContext& device);

}  // namespace shapescope
