// shapescope: why is this matmul shape slow, and what shape should I use?
// Exit codes: 0 ok, 1 internal error, 2 bad option or value, 3 a missing resource: no usable GPU
// (or the GPU cannot run the dtype; explain/pad with nothing stored), 4 not enough GPU memory,
// 5 result store unusable, 6 an output could not be written (stdout or --out: disk full, closed),
// 7 no gnuplot (plot, report), 130 interrupted (work saved).
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
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
// A closed stdin, stdout or stderr would hand its number to the next file opened (an output, a
// template), and what the command prints would land in that file. Each is held by /dev/null: stdout
// opened read-only, so that every write to it fails and is reported; stderr writable, as its lines
// were to be discarded anyway.
void hold_closed_standard_fds() {
  for (const int fd : {0, 1, 2}) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int held = open("/dev/null", fd == 2 ? O_WRONLY : O_RDONLY);
    if (held >= 0 && held != fd) {
      dup2(held, fd);
      close(held);
    }
  }
}

// Flushes and closes standard output: "" when all that was printed reached it, else why not.
std::string finish_stdout() noexcept {
  std::cout.flush();
  bool failed = !std::cout.good() || std::ferror(stdout) != 0;
  errno = 0;
  int error = std::fflush(stdout) != 0 ? errno : 0;
  failed = failed || error != 0 || std::ferror(stdout) != 0;
  if (std::fclose(stdout) != 0) {
    failed = true;
    if (error == 0) error = errno;
  }
  if (!failed) return "";
  return error != 0 ? fmt::format("standard output could not be written ({})", std::strerror(error))
                    : std::string("standard output could not be written");
}

// CLI11 answers an unknown first word with "A subcommand is required": name the word instead.
void check_first_argument(CLI::App& app, const std::vector<std::string>& args) {
  if (args.empty()) return;
  const std::string& first = args.front();
  if (first == "--help" || first == "-h" || first == "--version") return;
  std::vector<std::string> names;
  for (const CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
    if (command->get_name() == first) return;
    names.push_back(command->get_name());
  }
  const std::string list = fmt::format("{}", fmt::join(names, ", "));
  if (!first.empty() && first[0] == '-')
    throw usage_error(fmt::format("'{}' is not an option of shapescope; a command comes first ({})", first, list));
  throw usage_error(fmt::format("'{}' is not a command ({})", first, list));
}

// Parses and runs the command; its exit code.
int run_command(CLI::App& app, const std::vector<std::string>& given) {
  try {
    check_first_argument(app, given);
    std::vector<std::string> args(given.rbegin(), given.rend());  // CLI11 takes the arguments last-first
    app.parse(args);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    print_error_line("shapescope: " + one_line(parse_error_text(e, app, given)));
    return int(ExitCode::kUsage);
  } catch (const Error& e) {
    print_error_line(fmt::format("shapescope: {}", e.what()));
    return int(e.code());
  } catch (const std::exception& e) {
    // fmt::print throws when stdout is full or closed: that is a lost output, not a bug.
    if (std::ferror(stdout) != 0) return int(ExitCode::kWrite);
    print_error_line(fmt::format("shapescope: internal error: {}", e.what()));
    return int(ExitCode::kInternal);
  }
  return g_interrupted.load() ? int(ExitCode::kInterrupted) : 0;
}

// "'a.html'" or "'a.db', 'b.svg'": the outputs a command did not write.
std::string quoted(const std::vector<std::string>& paths) {
  std::string text;
  for (const std::string& path : paths) text += (text.empty() ? "'" : ", '") + path + "'";
  return text;
}

// The command's end, with ^C and SIGTERM held off (from here the outcome is decided): its outputs are
// put in place only when it succeeded, was not interrupted, and everything it printed, the lines
// that say what it wrote included, reached standard output; else they are removed and the old files
// stay. Returns the exit code.
int finish_command(int code, CommitPoint& outputs) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigprocmask(SIG_BLOCK, &signals, nullptr);
  if (code == 0 && g_interrupted.load()) code = int(ExitCode::kInterrupted);
  const std::vector<std::string> held = outputs.held();
  if (code == int(ExitCode::kInterrupted) && !held.empty())
    print_error_line(fmt::format("shapescope: interrupted: nothing written ({} as it was)", quoted(held)));
  if (code == 0) outputs.print();
  // Every command's output is checked here, --help's too: a full disk or a closed stdout is an
  // error (one line, exit 6), never a success with the output lost.
  const std::string lost = finish_stdout();
  if (!lost.empty()) {
    print_error_line("shapescope: " + lost +
                     (code == 0 && !held.empty() ? fmt::format("; nothing written ({} as it was)", quoted(held)) : ""));
    if (code == 0) code = int(ExitCode::kWrite);
  }
  if (code != 0) return code;
  try {
    outputs.put_in_place();
  } catch (const Error& e) {
    print_error_line(fmt::format("shapescope: {}", e.what()));
    return int(e.code());
  }
  return code;
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
  hold_closed_standard_fds();
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
               "Exit codes: 0 ok, 1 internal error, 2 bad option, 3 no usable GPU, 4 not enough GPU memory, 5 result\n"
               "store unusable, 6 an output could not be written (stdout, --out), 7 no gnuplot (plot, report),\n"
               "130 interrupted (measured points are kept).",
               "shapescope"};  // the name --help's usage lines start with
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
  register_calibrate_model(app);
  read_integer_options_whole(app);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  // A reader that closes the pipe (| head) makes a write fail (EPIPE), which finish_stdout reports as
  // a lost output (exit 6, as documented), instead of killing the process mid-command with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  // "shapescope help [COMMAND]" is "shapescope [COMMAND] --help".
  std::vector<std::string> args(argv + 1, argv + argc);
  g_arguments = args;
  if (!args.empty() && args.front() == "help") {
    args.erase(args.begin());
    args.push_back("--help");
  }
  // What the command writes waits here until it has ended (finish_command).
  CommitPoint outputs;
  return finish_command(run_command(app, args), outputs);
}
