// Errors that end a command, each with its documented exit code (README "Exit codes").
#pragma once
#include <cstdio>
#include <stdexcept>
#include <string>

namespace shapescope {

enum class ExitCode : int {
  kOk = 0,
  kInternal = 1,      // a CUDA/cuBLAS/CUPTI call failed mid-run, or a bug
  kUsage = 2,         // a bad option or option value
  kNoGpu = 3,         // a missing resource: no usable GPU, or the GPU cannot run what was asked
                      // (dtype, layout)
  kOutOfMemory = 4,   // the sweep's largest point does not fit in free GPU memory
  kStore = 5,         // the result store cannot be opened, written or is corrupt
  kWrite = 6,         // an output could not be written: standard output or --out (disk full, closed)
  kNoGnuplot = 7,     // plot, report: gnuplot is not installed or not executable
  kInterrupted = 130  // SIGINT/SIGTERM: what was measured is saved
};

// The message as one line: a control character (a newline in an option value or a file's JSON string
// that the message quotes, a terminal's escape sequence in a name a store holds) is written as an
// escape, \n, \t, \r or \xHH; so is a C1 control character in UTF-8 (U+0080..U+009F, which some
// terminals read as an escape too), as \u0080..\u009f.
inline std::string one_line(const std::string& message) {
  std::string out;
  out.reserve(message.size());
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < message.size(); ++i) {
    const char c = message[i];
    const auto byte = static_cast<unsigned char>(c);
    if (byte == 0xc2 && i + 1 < message.size() && static_cast<unsigned char>(message[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(message[i + 1]) <= 0x9f) {
      const auto next = static_cast<unsigned char>(message[++i]);
      out += {'\\', 'u', '0', '0', kHex[next >> 4], kHex[next & 15]};
      continue;
    }
    if (byte >= 0x20 && byte != 0x7f) {
      out += c;
      continue;
    }
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else out += {'\\', 'x', kHex[byte >> 4], kHex[byte & 15]};
  }
  return out;
}

// One line of text for stderr (no trailing newline, no control character) and the code to exit with.
class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(one_line(message)), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

inline Error usage_error(const std::string& message) { return Error(ExitCode::kUsage, message); }

// The error path's one line on stderr. Never throws: a closed or full stderr loses the line, never
// the exit code (fmt::print would throw from inside the handler that reports the first error).
inline void print_error_line(const std::string& line) noexcept {
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fputc('\n', stderr);
  std::fflush(stderr);
}

}  // namespace shapescope
