// Running the real shapescope binary from a test: exit code, stdout and stderr.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace shapescope {

// This build's binary and build folder, defined in build_paths.cpp, which CMake writes into each build
// folder: the tests' own sources then read the same in every build, and the CPU-only build after the
// full one (scripts/test.sh) finds them compiled in ccache.
extern const char* const kShapescopeBin;
extern const char* const kBuildDir;

struct CliRun {
  int code = -1;
  std::string out, err;
};

// Runs `BINARY ARGS` (through the shell, so ARGS may quote and set variables before BINARY), in
// `cwd` when one is given.
inline CliRun run_binary(const std::string& binary, const std::string& args, const std::string& cwd = "") {
  // ctest runs tests in parallel processes: each needs its own file.
  static int counter = 0;
  const std::string err_path = ::testing::TempDir() + "shapescope_cli_stderr_" +
                               std::to_string(getpid()) + "_" + std::to_string(counter++) + ".txt";
  const std::string cmd = (cwd.empty() ? "" : "cd '" + cwd + "' && ") + binary + " " + args +
                          " 2>" + err_path;
  CliRun r;
  FILE* pipe = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_path);
  r.err.assign(std::istreambuf_iterator<char>(in), {});
  std::remove(err_path.c_str());
  return r;
}

// A file's bytes ("" when it cannot be read).
inline std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// How many times `part` occurs in `text`, without overlaps.
inline size_t occurrences(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

// Runs the shapescope of this build: `shapescope ARGS`, in `cwd` when one is given.
inline CliRun run(const std::string& args, const std::string& cwd = "") { return run_binary(kShapescopeBin, args, cwd); }

}  // namespace shapescope
