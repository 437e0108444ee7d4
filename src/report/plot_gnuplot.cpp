#include "report/plot_gnuplot.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "common/output_file.hpp"

namespace shapescope {

namespace {

// The shortest text that reads back as the same number; gnuplot takes NaN for "no value".
std::string gnuplot_number(double value) {
  if (!std::isfinite(value)) return "NaN";
  return fmt::format("{}", value);
}

std::string one_line(std::string_view text) {
  std::string out;
  for (char c : text) out += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
  return out;
}

}  // namespace

void Figure::set_text(std::string_view name, std::string_view value) {
  definitions.push_back(fmt::format("{} = {}", name, gnuplot_string(value)));
}

void Figure::set_number(std::string_view name, double value) {
  definitions.push_back(fmt::format("{} = {}", name, gnuplot_number(value)));
}

void Figure::set_texts(std::string_view name, const std::vector<std::string>& values) {
  std::vector<std::string> quoted;
  for (const std::string& v : values) quoted.push_back(gnuplot_string(v));
  // gnuplot has no empty arrays: a template loops over a count kept beside the array instead.
  if (quoted.empty()) quoted.push_back("\"\"");
  definitions.push_back(fmt::format("array {}[{}] = [{}]", name, quoted.size(), fmt::join(quoted, ", ")));
  definitions.push_back(fmt::format("{}_COUNT = {}", name, values.size()));
}

void Figure::set_numbers(std::string_view name, const std::vector<double>& values) {
  std::vector<std::string> numbers;
  for (double v : values) numbers.push_back(gnuplot_number(v));
  if (numbers.empty()) numbers.push_back("NaN");
  definitions.push_back(fmt::format("array {}[{}] = [{}]", name, numbers.size(), fmt::join(numbers, ", ")));
  definitions.push_back(fmt::format("{}_COUNT = {}", name, values.size()));
}

size_t Figure::add_block(DataBlock block) {
  blocks.push_back(std::move(block));
  return blocks.size() - 1;
}

std::string gnuplot_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) >= 0x20) {
      out += c;
    }
  }
  return out + "\"";
}

std::string tooltip_field(const std::vector<std::string>& lines) {
  std::string out = "\"";
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += "\\n";
    for (char c : lines[i]) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\'' || c == '\\') {
        out += '`';
      } else if (u < 0x20 || u >= 0x7f) {
        out += '?';
      } else {
        out += c;
      }
    }
  }
  return out + "\"";
}

std::string PlotPaths::file(std::string_view extension) const {
  return (std::filesystem::path(dir) / fmt::format("{}.{}", name, extension)).string();
}

PlotPaths plot_paths(const std::string& out, const std::string& default_name) {
  namespace fs = std::filesystem;
  if (out.empty()) throw usage_error("--out: '' is empty (a directory, DIR/, or a path prefix such as out/flops)");
  std::error_code ec;
  PlotPaths paths;
  if (out.back() == '/' || fs::is_directory(out, ec)) {
    fs::create_directories(out, ec);
    if (ec || !fs::is_directory(out))
      throw usage_error(fmt::format("--out: '{}' is not a directory that can be made ({})", out,
                                    ec ? ec.message() : "exists as a file"));
    paths.dir = out;
    paths.name = default_name;
    return paths;
  }
  const fs::path prefix(out);
  const fs::path parent = prefix.has_parent_path() ? prefix.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec))
    throw usage_error(fmt::format("--out: '{}': directory '{}' does not exist (end --out with '/' to make it)", out,
                                  parent.string()));
  paths.dir = parent.string();
  paths.name = prefix.filename().string();
  if (paths.name.empty() || paths.name == "." || paths.name == "..")
    throw usage_error(fmt::format("--out: '{}' names no file", out));
  return paths;
}

std::string script_text(const Figure& figure, std::string_view template_text, const PlotPaths& paths,
                        std::string_view command_line) {
  std::string s;
  s += fmt::format("# shapescope plot {}: made by\n#   {}\n", figure.kind, one_line(command_line));
  s += fmt::format("# Reads {0}.dat (its blocks and columns are described at its top) and writes {0}.svg\n"
                   "# (hover a point for its annotations) and {0}.png. To restyle, edit this file and run\n"
                   "#   gnuplot {0}.gp\n"
                   "# in this directory. Below: the figure's values, then the template plots/{1}.gp.\n\n",
                   one_line(paths.name), figure.kind);
  s += fmt::format("NAME = {}\n", gnuplot_string(paths.name));
  s += "DATA = NAME.'.dat'\n";
  s += fmt::format("WIDTH = {}\nHEIGHT = {}\n", figure.width, figure.height);
  for (const std::string& line : figure.definitions) s += line + "\n";
  // gnuplot-nox builds differ: pngcairo (anti-aliased) where cairo is there, libgd's png otherwise.
  s += "\nFORMATS = 'svg png'\n"
       "PNG_TERMINAL = strstrt(' '.GPVAL_TERMINALS.' ', ' pngcairo ') > 0 ? 'pngcairo' : 'png'\n"
       "terminal(format) = format eq 'svg' \\\n"
       "  ? sprintf(\"set terminal svg size %d,%d mouse standalone noenhanced font 'Arial,12' background '#ffffff'\", "
       "WIDTH, HEIGHT) \\\n"
       "  : sprintf(\"set terminal %s size %d,%d noenhanced background '#ffffff'%s\", PNG_TERMINAL, WIDTH, HEIGHT, \\\n"
       "            PNG_TERMINAL eq 'pngcairo' ? \" font 'Arial,11'\" : '')\n\n";
  s += "# ---- template plots/" + figure.kind + ".gp ----\n";
  s += template_text;
  if (!s.empty() && s.back() != '\n') s += '\n';
  return s;
}

std::string data_text(const Figure& figure, std::string_view title) {
  std::string s = fmt::format("# shapescope plot {}: {}\n", figure.kind, one_line(title));
  s += "# Blocks are separated by two blank lines (gnuplot's `index`):\n";
  for (size_t i = 0; i < figure.blocks.size(); ++i)
    s += fmt::format("#   index {}: {} ({} rows)\n", i, one_line(figure.blocks[i].title), figure.blocks[i].rows.size());
  for (size_t i = 0; i < figure.blocks.size(); ++i) {
    const DataBlock& b = figure.blocks[i];
    if (i > 0) s += "\n\n";
    s += fmt::format("# index {}: {}\n# {}\n", i, one_line(b.title), one_line(b.columns));
    for (const std::string& row : b.rows) s += row + "\n";
  }
  return s;
}

std::string find_gnuplot(const std::string& program) {
  const std::string install = "install it (Debian/Ubuntu: apt-get install gnuplot-nox) or name it with --gnuplot PATH";
  if (program.empty()) throw Error(ExitCode::kNoGnuplot, "plot: --gnuplot is empty; " + install);
  if (program.find('/') != std::string::npos) {
    if (access(program.c_str(), X_OK) != 0)
      throw Error(ExitCode::kNoGnuplot, fmt::format("plot: gnuplot '{}' is not an executable file ({}); {}", program,
                                                std::strerror(errno), install));
    return program;
  }
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t colon = dirs.find(':', start);
    std::string dir = dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + program;
    struct stat st {};
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(candidate.c_str(), X_OK) == 0)
      return candidate;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  throw Error(ExitCode::kNoGnuplot, fmt::format("plot: '{}' is not on PATH; {}", program, install));
}

std::string run_gnuplot(const std::string& gnuplot, const PlotPaths& paths, const PlotPaths& shown) {
  const std::string script = paths.name + ".gp";
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) throw Error(ExitCode::kInternal, fmt::format("plot: pipe() failed: {}", std::strerror(errno)));
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<char*> argv = {const_cast<char*>(gnuplot.c_str()), const_cast<char*>(script.c_str()), nullptr};
  const std::string dir = paths.dir;
  const pid_t pid = fork();
  if (pid < 0) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    throw Error(ExitCode::kInternal, fmt::format("plot: fork() failed: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    // gnuplot's stdout and stderr both come back through the pipe: shapescope's stdout stays ours.
    dup2(pipe_fds[1], STDOUT_FILENO);
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    if (chdir(dir.c_str()) != 0) {
      constexpr char kMessage[] = "cannot enter the output directory\n";
      [[maybe_unused]] const ssize_t n = write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
      _exit(126);
    }
    execv(argv[0], argv.data());
    constexpr char kMessage[] = "exec failed\n";
    [[maybe_unused]] const ssize_t n = write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
    _exit(127);
  }
  close(pipe_fds[1]);
  std::string output;
  char buffer[4096];
  while (true) {
    const ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n > 0) {
      output.append(buffer, size_t(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw Error(ExitCode::kInternal, fmt::format("plot: waitpid() failed: {}", std::strerror(errno)));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    // gnuplot reports an error as the offending line, a caret, then the message, after any
    // warnings: keep the last line that is not a warning.
    std::string message;
    size_t start = 0;
    while (start < output.size()) {
      const size_t end = output.find('\n', start);
      const std::string line = output.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (line.find_first_not_of(" \t^") != std::string::npos && line.find("warning:") == std::string::npos) message = line;
      if (end == std::string::npos) break;
      start = end + 1;
    }
    if (message.empty()) message = output.substr(0, 200);
    const std::string how = WIFEXITED(status) ? fmt::format("exit {}", WEXITSTATUS(status))
                                              : fmt::format("signal {}", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    throw Error(ExitCode::kInternal,
                fmt::format("plot: gnuplot failed ({}) on the script for '{}' (nothing was written): {}", how,
                            shown.file("gp"), one_line(message)));
  }
  return output;
}

namespace {

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw usage_error(fmt::format("--out: cannot write '{}': {}", path, std::strerror(errno)));
  out << text;
  out.close();
  if (!out) throw usage_error(fmt::format("--out: writing '{}' failed: {}", path, std::strerror(errno)));
}

}  // namespace

std::string render_figure(const Figure& figure, const std::string& template_path, const PlotPaths& paths,
                          const std::string& gnuplot, std::string_view command_line, std::string_view title) {
  std::ifstream in(template_path, std::ios::binary);
  if (!in)
    throw Error(ExitCode::kInternal, fmt::format("plot: the template '{}' cannot be read ({}); name the plots/ "
                                                 "directory with --templates DIR",
                                                 template_path, std::strerror(errno)));
  std::stringstream text;
  text << in.rdbuf();
  // Exit 3 before anything is written when gnuplot is missing.
  const std::string program = find_gnuplot(gnuplot);
  // The four files are made in a temporary folder beside their destination and moved into place
  // only when all of them came out: a failing gnuplot leaves the old figure as it was.
  OutputFolder work(paths.dir, "--out");
  const PlotPaths staged{work.path(), paths.name};
  write_file(staged.file("gp"), script_text(figure, text.str(), staged, command_line));
  write_file(staged.file("dat"), data_text(figure, title));
  std::string warnings = run_gnuplot(program, staged, paths);
  for (const char* extension : {"svg", "png"}) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(staged.file(extension), ec);
    if (ec || size == 0)
      throw Error(ExitCode::kInternal, fmt::format("plot: gnuplot wrote no '{}' from the script for '{}' (nothing "
                                                   "was written)",
                                                   paths.file(extension), paths.file("gp")));
  }
  work.commit({paths.name + ".gp", paths.name + ".dat", paths.name + ".svg", paths.name + ".png"});
  return warnings;
}

}  // namespace shapescope
