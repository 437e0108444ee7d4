// One file per command: register_<cmd>(app) binds an options struct whose callback runs the command.
#pragma once
#include <CLI/CLI.hpp>

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

#include "core/problem.hpp"

namespace shapescope {

void register_info(CLI::App& app);
void register_sweep(CLI::App& app);
void register_explain(CLI::App& app);
void register_pad(CLI::App& app);
void register_plot(CLI::App& app);
void register_export(CLI::App& app);

// The options that describe a problem besides its dimensions, shared by the commands that plan
// problems: --dtype, --layout, --ld-pad, --lda/--ldb/--ldc, --offset.
struct ShapeOptions;
void add_problem_options(CLI::App* cmd, ShapeOptions& shape);
// "--backend cublas,cublaslt,custom:..." as a list; Error(kUsage) for an unknown or repeated item.
std::vector<std::string> parse_backends(const std::string& text);
// --samples: between 1 and 100000 (Error(kUsage) naming the option and the value otherwise).
void check_samples(int samples);
// cuBLAS has no fp8 GEMM (cublasGemmEx): Error(kUsage) for fp8 with --backend cublas.
void check_fp8_backend(DType dtype, const std::string& backend);

// The options that select stored points (plot, export): --cublas, --dtype, --layout, --backend,
// --algo, --kernel, --m/--n/--k, --batch, --ld-pad, --offset, --hot. (--gpu is each command's own.)
struct PlotFilter;
void add_selection_options(CLI::App* cmd, PlotFilter& filter);

// SHAPE of explain and plot tilegrid: N or MxNxK, each size at most 2^31-1 (cuBLAS takes 32-bit
// sizes); Error(kUsage) naming SHAPE and the value otherwise.
struct ShapeArg;
ShapeArg parse_shape_option(const std::string& text);
// One-line refusals shared by the commands: --db '' (a usage error rather than a store error).
void check_db_option(const std::string& db);
// --device N: a non-negative ordinal, refused in one line naming the value otherwise.
void add_device_option(CLI::App* cmd, int& device);

// The folder of one kind of shapescope's data ("models": presets, "plots": gnuplot templates):
// $SHAPESCOPE_DATA/KIND when set; else PREFIX/share/shapescope/KIND beside an installed binary; else
// the source tree the binary was built from; else KIND beside the binary's folder. When none exists,
// the installed path (so that a message names where it looked).
std::string data_dir(const std::string& kind);
// "shapescope 0.1.0 (git v0.1.0-12-gabcdef), CUDA 13.0, cuBLAS 13.1.0, architectures 80;90a"
std::string version_text();

// Set by SIGINT/SIGTERM: long work stops at the next safe point, keeping what was measured.
extern std::atomic<bool> g_interrupted;
// Seconds since the process started (for the wall time a sweep reports).
double process_seconds();
// "GPU 0: NVIDIA H100 80GB HBM3 (132 SMs, cc 9.0), driver 580.159.04, CUDA 13.0, cuBLAS 13.1.0"
struct DeviceContext;
std::string device_header(const DeviceContext& device);

}  // namespace shapescope
