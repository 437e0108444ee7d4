// One file per command: register_<cmd>(app) binds an options struct whose callback runs the command.
#pragma once
#include <CLI/CLI.hpp>

#include <atomic>
#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "core/problem.hpp"

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
void register_calibrate_model(CLI::App& app);

// explain SHAPE with several --db: the shape on each store's GPUs side by side (compare_gpus.cpp).
struct ExplainRequest;
void explain_across_stores(const ExplainRequest& request, const std::vector<std::string>& dbs, const Problem& target,
                           const GpuProfile* gpu, bool json);

// The folder of one kind of shapescope's data ("models": presets, "plots": gnuplot templates):
// $SHAPESCOPE_DATA/KIND when set; else PREFIX/share/shapescope/KIND beside an installed binary; else
// the source tree the binary was built from; else KIND beside the binary's folder. When none exists,
// the installed path (so that a message names where it looked).
std::string data_dir(const std::string& kind);
// "shapescope 0.1.0 (git v0.1.0-12-gabcdef), CUDA 13.0, cuBLAS 13.1.0, architectures 80;90a"
std::string version_text();
// Its first line ("shapescope 0.1.0 (v0.1.0-12-gabcdef)"), for a page's footer.
std::string version_line();
// --force of the commands whose output is a page, a table or a picture (check_output_path).
inline constexpr const char* kForceHelp = "replace a result store (an SQLite file) that the output path names";

// An output a command writes whole (an HTML page): to standard output for "-" (main() checks that it
// took it), else through OutputFile, put in place only when `write` returned (at main()'s commit
// point: once the command ended, was not interrupted and its standard output was written).
void write_whole_output(const std::string& path, const std::string& option,
                        const std::function<void(std::ostream&)>& write);

// A CLI11 refusal as shapescope says it (parse_errors.cpp): one line naming the option or argument
// and what is wrong, "(see shapescope CMD --help)" at its end; never CLI11's own wording. `args` as
// given (argv[1..]), after `app.parse` failed with `error`.
std::string parse_error_text(const CLI::ParseError& error, CLI::App& app, const std::vector<std::string>& args);

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
