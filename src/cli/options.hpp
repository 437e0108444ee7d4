// The options that several commands share, each registered by one function that also checks its
// value as CLI11 reads it: a bad value is refused in one line naming the option and the value
// (Error(kUsage), exit 2) before the command runs, and the command gets the value typed.
#pragma once
#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/backend_kind.hpp"
#include "core/problem.hpp"
#include "core/states.hpp"
#include "model/device_profile.hpp"
#include "model/model_config.hpp"
#include "model/workload.hpp"
#include "timing/measure_options.hpp"

namespace shapescope {

// --db, one store: refused when '' (a usage error rather than a store error). `help` says how the
// command opens it.
CLI::Option* add_db_option(CLI::App* cmd, std::string& db, const std::string& help);
// --db given once or more (explain, plot: several stores' GPUs side by side): each refused when '',
// one store twice refused; `db` becomes the first given.
CLI::Option* add_db_option(CLI::App* cmd, std::vector<std::string>& dbs, std::string& db, const std::string& help);
// --clocks of a measuring command: sustained or burst (`clocks` holds the default).
CLI::Option* add_clocks_option(CLI::App* cmd, ClockState& clocks);
// --clocks of profile: the step's own clock (`step`, the default: a trace's step replayed unless it ran
// at the boost clock, model/profile.hpp: step_clock_call), `replay` (`replay_always` set: replayed
// whatever its clock) or a state every GEMM is measured in (sustained, burst: `given` set).
void add_step_clocks_option(CLI::App* cmd, ClockState& clocks, bool& given, bool& replay_always);
// --what-if-seconds of profile: how long a replayed step's passes may go on for the --what-if step's
// move (4 to 600 s: at least the step's own replay limit). check_what_if_seconds refuses it, given, where it bounds nothing: without
// --what-if, for a workload with no step to replay (`no_step`: its name; "" for a trace), and at
// --clocks sustained or burst (`paired`), where the changed step is paired, not replayed.
CLI::Option* add_what_if_seconds_option(CLI::App* cmd, double& seconds);
void check_what_if_seconds(const CLI::Option& option, bool what_ifs, const std::string& no_step, bool paired);
// --clocks of a selection of stored points: sustained, burst or unrecorded; not given: any.
CLI::Option* add_clocks_option(CLI::App* cmd, std::optional<ClockState>& clocks);
// --samples: exactly N samples per point, N between 1 and 100000.
CLI::Option* add_samples_option(CLI::App* cmd, int& samples, const std::string& help);
// --pair-seconds of explain, pad and profile: the longest paired run, 0 (no pairing) to 60 seconds,
// checked when given (one line naming the value). `what` says what is paired.
CLI::Option* add_pair_seconds_option(CLI::App* cmd, double& seconds, const std::string& what);
// --max-error of explain and profile: the largest relative error (normwise, against fp64; the worse of
// Gaussian and outlier-channel inputs) a precision fix may bring, above 0 and at most 1.
CLI::Option* add_max_error_option(CLI::App* cmd, std::optional<double>& max_error);
// An integer option between `low` and `high`: a value outside, or one that is no whole number, is
// refused naming the option and that range ("--slowest: 'x' is not a whole number from 1 to 100").
CLI::Option* add_int_option(CLI::App* cmd, const std::string& name, int& value, int low, int high,
                            const std::string& help);
// A real option between `low` and `high` (inclusive): a value outside is refused naming the option,
// the value and that range ("--what-if-seconds: 2 must be between 4 and 600").
CLI::Option* add_real_option(CLI::App* cmd, const std::string& name, double& value, double low, double high,
                             const std::string& help);
// --lt-algos: cuBLASLt's top K algorithms, K between 1 and 64.
CLI::Option* add_lt_algos_option(CLI::App* cmd, int& lt_algos, const std::string& help);
// --lt-algos above 1 times cuBLASLt's alternatives: refused without cublaslt among the backends.
void check_lt_algos_backend(int lt_algos, bool cublaslt);
// --tile BMxBN of a model prediction (explain, plot tilegrid), each 1..1024.
CLI::Option* add_tile_option(CLI::App* cmd, std::optional<std::pair<int, int>>& tile, const std::string& help);
enum class Format;  // report/output.hpp
// --format table | csv | json, and --wide (every column of the table, kernel names whole; refused with
// CSV or JSON). check_wide refuses it so and sets the tables wide (report/table.hpp).
CLI::Option* add_format_options(CLI::App* cmd, Format& format, bool& wide, const std::string& help);
void check_wide(bool wide, Format format);
// --format table | json of a command that prints one result (explain, pad, profile; `json` set for
// json), --json (the same as --format json, for the scripts that spell it so) and --wide (every
// table's every column, whole; check_wide_text refuses it with json).
void add_result_format_options(CLI::App* cmd, bool& json, bool& wide);
void check_wide_text(bool wide, bool json);
// --gnuplot and --templates of the commands that draw figures (plot, report); check_templates
// refuses a folder that lacks one of the kinds' templates (KIND.gp).
void add_gnuplot_options(CLI::App* cmd, std::string& gnuplot, std::string& templates, const std::string& templates_help);
void check_templates(const std::string& templates, const std::vector<std::string>& kinds);
// --device N: a non-negative ordinal.
CLI::Option* add_device_option(CLI::App* cmd, int& device);

// The options that describe a problem besides its dimensions, shared by the commands that plan
// problems: --dtype, --layout, --ld-pad, --lda/--ldb/--ldc, --offset.
struct ShapeOptions;
void add_problem_options(CLI::App* cmd, ShapeOptions& shape);
// --backend of sweep: "cublas,cublaslt,custom:..." as a list, typed; Error(kUsage) for an unknown
// or repeated item.
CLI::Option* add_backends_option(CLI::App* cmd, std::vector<BackendSpec>& backends, const std::string& help);
// --backend of a command that runs one backend: one of `kinds` (our kernels as one variant), typed;
// Error(kUsage) naming the value, `command` and what it can use otherwise.
CLI::Option* add_backend_option(CLI::App* cmd, BackendSpec& backend, const std::string& command,
                                const std::vector<BackendKind>& kinds, const std::string& help);
// How a measuring sweep times its points: --samples N (exactly N each) or the stopping rule
// (--min-samples, --max-samples, --target-noise), --max-noise (the noisy flag), --clocks, --warmup-ms,
// --burst-idle.
struct TimingOptions {
  int samples = 0;  // 0: not given
  int min_samples = StopRule{}.min_samples;
  int max_samples = StopRule{}.max_samples;
  double target_noise_pct = StopRule{}.target * 100;
  double max_noise_pct = 5;
  ClockState clocks = ClockState::kSustained;
  double warmup_ms = 300;
  double burst_idle = MeasureOptions{}.burst_idle;
  CLI::Option* samples_option = nullptr;  // which were given (set by add_timing_options)
  CLI::Option* clocks_option = nullptr;
  std::vector<CLI::Option*> rule_options;
};
void add_timing_options(CLI::App* cmd, TimingOptions& timing);
// --burst-idle X (0..100; refused when read): the idle time after each burst graph, in its GPU times.
CLI::Option* add_burst_idle_option(CLI::App* cmd, double& idle);
// The checks that take several options together (one line naming the option and its value, exit 2)
// and the options they make.
MeasureOptions measure_options(const TimingOptions& timing);
// cuBLAS has no fp8 GEMM (cublasGemmEx): Error(kUsage) for fp8 with --backend cublas.
void check_fp8_backend(DType dtype, BackendKind backend);

// --gpu KEY: one GPU model of the built-in profiles (model/device_profile.hpp: a100, h100, h200, ...)
// in every command that takes it: the points measured on a GPU of that model (explain, plot, export,
// report) and the GPU a model prediction is for (explain, plot tilegrid --tile). Refused as read when
// KEY is no profile; where the command takes --gpu-name (a GPU's name as a store records it), the
// refusal names it.
CLI::Option* add_gpu_option(CLI::App* cmd, const GpuProfile*& gpu, const std::string& help);

// --out of a command that writes a file (sweep, export, report) or files (plot): `help` says what it
// takes, the default shown is `out`'s; '' refused as read ("--out: '' is empty (WHAT)").
CLI::Option* add_out_option(CLI::App* cmd, std::string& out, const std::string& what, const std::string& help);
// --dtype bf16 | fp16 | fp32 | tf32 | fp8 of every command that takes one, checked as read (one line
// naming the value) and kept as given (a problem's or a step's, planned later; the default shown is
// `dtype`'s) or typed (a selection's). `note` follows the list in --help.
CLI::Option* add_dtype_option(CLI::App* cmd, std::string& dtype, const std::string& note);
CLI::Option* add_dtype_option(CLI::App* cmd, std::optional<DType>& dtype, const std::string& note);
// A range option as sweep takes it (shape/range.hpp): kept as given for a plan (refused as read when
// empty; the planner reads it), or read whole as a selection's sizes (refused as read as the planner
// would refuse it).
struct SizeFilter;
CLI::Option* add_range_option(CLI::App* cmd, const std::string& name, std::string& range, const std::string& help);
CLI::Option* add_range_option(CLI::App* cmd, const std::string& name, SizeFilter& range, const std::string& help);
// --m, --n, --k and --batch: the sizes of sweep's plan, or of a selection's points.
void add_dimension_options(CLI::App* cmd, std::string& m, std::string& n, std::string& k, std::string& batch);
void add_dimension_options(CLI::App* cmd, SizeFilter& m, SizeFilter& n, SizeFilter& k, SizeFilter& batch);

// The options that select stored points (plot, export, report): --gpu, --gpu-name, --cublas, --dtype,
// --layout, --backend, --algo, --kernel, --m/--n/--k, --batch, --ld-pad, --offset, --hot, --clocks.
struct PlotFilter;
void add_selection_options(CLI::App* cmd, PlotFilter& filter);

// The options that name a workload, shared by pad and profile: a PyTorch profiler trace (--trace), a
// GEMM list (--gemms), or a model (--model NAME: a preset; --config FILE: a Hugging Face config.json).
struct WorkloadSource {
  std::string trace, gemms, model, config;
  // profile's --cast-range: the range that marks a trace's fp8 casts (model/trace_casts.hpp).
  std::string cast_range = kDefaultCastRange;
  bool cast_range_given = false;
};
void add_workload_source_options(CLI::App* cmd, WorkloadSource& source);
// --cast-range NAME, an empty name refused as it is read; source_kind() refuses it without --trace.
void add_cast_range_option(CLI::App* cmd, WorkloadSource& source);
enum class SourceKind { kTrace, kGemms, kModel };
// Which source was given; Error(kUsage) naming the options when none or two are.
SourceKind source_kind(const WorkloadSource& source);
// The model of --model or --config (Error(kUsage) for an unknown preset or a bad config).
ModelConfig resolve_model(const WorkloadSource& source);
// The file a preset (--model NAME) is read from; "" for another source or a name that is no preset.
std::string preset_file(const WorkloadSource& source);
// The workload of --trace or --gemms (Error(kUsage) in one line for a bad file).
Workload load_file_workload(const WorkloadSource& source);
// The presets' names, for --help and messages: "deepseek-v2-lite, falcon-7b, ..."
std::string preset_list();
// Every integer option of every command is read whole, in decimal and in range, and every real one
// finite, or refused naming the option and the value as given (CLI11 alone reads
// 99999999999999999999 as 9223372036854775807, 010 as 8, 1e309 as inf); number_options.cpp.
void read_integer_options_whole(CLI::App& app);

// A model's step, shared by pad and profile: --tokens, --train, --tp, --dtype.
struct StepArgs {
  std::string tokens;
  bool train = false;
  int64_t tp = 1;
  std::string dtype = "bf16";
  std::string recipe;  // fp8's training recipe: tensor (default), row, block
};
void add_step_options(CLI::App* cmd, StepArgs& step, const std::string& tokens_help);
// The token counts (at most `max_counts` of them, which `command` takes), tp and dtype, checked:
// Error(kUsage) naming the option and value.
struct ParsedStep {
  std::vector<int64_t> tokens;
  DType dtype = DType::kBf16;
  Fp8Scaling fp8 = Fp8Scaling::kTensor;
};
ParsedStep parse_step(const StepArgs& step, const ModelConfig& config, size_t max_counts, const char* command);
// A trace or GEMM list records its own shapes: a step option given with one is refused, naming it.
void refuse_step_options(const StepArgs& step, const std::string& source_option);

// SHAPE of explain and plot tilegrid: N or MxNxK, each size at most 2^31-1 (cuBLAS takes 32-bit
// sizes); Error(kUsage) naming SHAPE and the value otherwise.
struct ShapeArg;
ShapeArg parse_shape_option(const std::string& text);
// A dry run promises that the store's points are reused: when --db exists, it is opened read-only
// now, so that a file that is no store, or a newer store, fails the dry run (exit 5) as the real
// run would.
void check_store_for_dry_run(const std::string& db);


}  // namespace shapescope
