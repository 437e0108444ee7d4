// One file per command: register_<cmd>(app) binds an options struct whose callback runs the command.
#pragma once
#include <CLI/CLI.hpp>

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

#include "core/problem.hpp"
#include "core/states.hpp"
#include "timing/measure_options.hpp"

namespace shapescope {

void register_info(CLI::App& app);
void register_sweep(CLI::App& app);
void register_explain(CLI::App& app);
void register_pad(CLI::App& app);
void register_plot(CLI::App& app);
void register_export(CLI::App& app);
void register_report(CLI::App& app);
void register_merge(CLI::App& app);

// The options that describe a problem besides its dimensions, shared by the commands that plan
// problems: --dtype, --layout, --ld-pad, --lda/--ldb/--ldc, --offset.
struct ShapeOptions;
void add_problem_options(CLI::App* cmd, ShapeOptions& shape);
// "--backend cublas,cublaslt,custom:..." as a list; Error(kUsage) for an unknown or repeated item.
std::vector<std::string> parse_backends(const std::string& text);
// --samples: between 1 and 100000 (Error(kUsage) naming the option and the value otherwise).
void check_samples(int samples);
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

// One-line refusals shared by the commands: --db '' (a usage error rather than a store error).
void check_db_option(const std::string& db);
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
