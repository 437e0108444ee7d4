// shapescope: why is this matmul shape slow, and what shape should I use?
// Exit codes: 0 ok, 1 internal error, 2 bad option or value, 3 a missing resource: no usable GPU
// (or the GPU cannot run the dtype; explain/pad with nothing stored), or no gnuplot (plot, report),
// 4 not enough GPU memory, 5 result store unusable, 130 interrupted (work saved).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "core/device_context.hpp"

namespace shapescope {

std::atomic<bool> g_interrupted{false};
std::vector<std::string> g_arguments;

namespace {
const auto g_process_start = std::chrono::steady_clock::now();

void on_signal(int) {
  g_interrupted.store(true);
  // A second ^C ends the process at once.
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
}
}  // namespace

double process_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - g_process_start).count();
}

std::string device_header(const DeviceContext& d) {
  return fmt::format("GPU {}: {} ({} SMs, cc {}.{}, L2 {} MiB), driver {}, CUDA {}, cuBLAS {}",
                     d.ordinal, d.gpu_name, d.sm_count, d.cc_major, d.cc_minor, d.l2_bytes >> 20,
                     d.driver, d.cuda_runtime, d.cublas);
}

}  // namespace shapescope

int main(int argc, char** argv) {
  using namespace shapescope;
  CLI::App app{"shapescope: why is this matmul shape slow, and what shape should I use?\n"
               "  shapescope info                      the GPU, its clocks and library versions\n"
               "  shapescope sweep --n 1..4096         time square bf16 matmuls into shapescope.db\n"
               "  shapescope explain 1793              why one shape is slow, and the size to use\n"
               "  shapescope pad --model gpt2 --tokens 12288 --train   pad-or-not for a model's GEMMs\n"
               "  shapescope profile --trace step.json  your workload's GEMMs, measured, ranked, explained\n"
               "  shapescope plot flops --out out/     TFLOP/s by size, SVG (hover) + PNG via gnuplot\n"
               "  shapescope export --format csv       stored points with their annotations (no GPU needed)\n"
               "  shapescope report --out report.html  one self-contained page of a sweep (no GPU needed)\n"
               "  shapescope merge all.db a.db b.db    several stores (shards, GPUs) into one\n"
               "Exit codes: 0 ok, 1 internal error, 2 bad option, 3 no usable GPU (plot, report: no gnuplot), 4 not\n"
               "enough GPU memory, 5 result store unusable, 130 interrupted (measured points are kept)."};
  app.set_version_flag("--version", version_text());
  // --help shows each option's default (subcommands inherit this).
  app.option_defaults()->always_capture_default();
  app.require_subcommand(1);
  register_info(app);
  register_sweep(app);
  register_explain(app);
  register_pad(app);
  register_plot(app);
  register_export(app);
  register_report(app);
  register_merge(app);
  register_profile(app);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  // "shapescope help [COMMAND]" is "shapescope [COMMAND] --help".
  std::vector<std::string> args(argv + 1, argv + argc);
  g_arguments = args;
  if (!args.empty() && args.front() == "help") {
    args.erase(args.begin());
    args.push_back("--help");
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last-first
  try {
    app.parse(args);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "shapescope: {} (see shapescope --help)\n", one_line(e.what()));
    return int(ExitCode::kUsage);
  } catch (const Error& e) {
    fmt::print(stderr, "shapescope: {}\n", e.what());
    return int(e.code());
  } catch (const std::exception& e) {
    fmt::print(stderr, "shapescope: internal error: {}\n", e.what());
    return int(ExitCode::kInternal);
  }
  return g_interrupted.load() ? int(ExitCode::kInterrupted) : 0;
}
