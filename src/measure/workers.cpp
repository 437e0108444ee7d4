#include "measure/workers.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "timing/stats.hpp"

namespace shapescope {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

SweepTotals totals_of(const MeasureOutcome& outcome) {
  SweepTotals t;
  t.measured = outcome.measured;
  t.reused = outcome.reused;
  t.annotated = outcome.annotated;
  for (const StoredPoint& p : outcome.points) {
    t.noisy += p.result.timing.noisy;
    t.throttled += p.result.timing.throttled;
  }
  t.floor_s = outcome.gpu_floor_s;
  t.flush_us = outcome.flush_us;
  t.clock_mhz = outcome.median_clock_mhz;
  t.interrupted = outcome.interrupted;
  t.point_ids = outcome.point_ids;
  return t;
}

SweepTotals combined(const std::vector<SweepTotals>& parts) {
  SweepTotals all;
  std::vector<double> clocks, flushes;
  for (const SweepTotals& t : parts) {
    all.measured += t.measured;
    all.reused += t.reused;
    all.annotated += t.annotated;
    all.noisy += t.noisy;
    all.throttled += t.throttled;
    all.floor_s = std::max(all.floor_s, t.floor_s);
    all.interrupted = all.interrupted || t.interrupted;
    all.point_ids.insert(all.point_ids.end(), t.point_ids.begin(), t.point_ids.end());
    if (t.clock_mhz > 0) clocks.push_back(t.clock_mhz);
    if (t.flush_us > 0) flushes.push_back(t.flush_us);
  }
  if (!clocks.empty()) all.clock_mhz = median(clocks);
  if (!flushes.empty()) all.flush_us = median(flushes);
  return all;
}

std::string progress_line(const MeasureProgress& p) {
  return fmt::format("progress {:.6f} {} {:.6g}", p.fraction, p.measured, p.last_tflops);
}

std::string done_line(const SweepTotals& t) {
  std::string line = fmt::format("done {} {} {} {} {} {:.9g} {:.9g} {:.9g} {}", t.measured, t.reused, t.annotated,
                                 t.noisy, t.throttled, t.floor_s, t.flush_us, t.clock_mhz, int(t.interrupted));
  for (int64_t id : t.point_ids) line += fmt::format(" {}", id);
  return line;
}

bool read_report_line(const std::string& line, MeasureProgress& progress, std::optional<SweepTotals>& totals) {
  std::istringstream in(line);
  std::string kind;
  in >> kind;
  if (kind == "progress") {
    MeasureProgress p;
    if (!(in >> p.fraction >> p.measured >> p.last_tflops)) return false;
    progress = p;
    return true;
  }
  if (kind != "done") return false;
  SweepTotals t;
  int interrupted = 0;
  if (!(in >> t.measured >> t.reused >> t.annotated >> t.noisy >> t.throttled >> t.floor_s >> t.flush_us >>
        t.clock_mhz >> interrupted))
    return false;
  t.interrupted = interrupted != 0;
  int64_t id = 0;
  while (in >> id) t.point_ids.push_back(id);
  if (!in.eof()) return false;
  totals = std::move(t);
  return true;
}

void WorkerReporter::write_line(const std::string& line) {
  const std::string text = line + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    // The parent is gone: it can no longer draw progress; the measurements still go to the store.
    if (n <= 0) return;
    done += size_t(n);
  }
}

ProgressCallback WorkerReporter::progress() {
  return [this](const MeasureProgress& p) {
    const double now = now_s();
    if (!p.finished && now - last_ < 0.1) return;
    last_ = now;
    write_line(progress_line(p));
  };
}

void WorkerReporter::done(const SweepTotals& totals) { write_line(done_line(totals)); }

std::vector<int> parse_devices(const std::string& text, int count) {
  std::vector<int> ordinals;
  if (text == "all") {
    for (int i = 0; i < count; ++i) ordinals.push_back(i);
    return ordinals;
  }
  std::set<int> seen;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    int value = -1;
    const auto [end, error] = std::from_chars(text.data() + start, text.data() + comma, value);
    if (error != std::errc() || end != text.data() + comma || comma == start || value < 0)
      throw usage_error(fmt::format("--devices: '{}' is not 'all' or a comma list of GPU ordinals (e.g. 0,2)", text));
    if (!seen.insert(value).second) throw usage_error(fmt::format("--devices: '{}' names GPU {} twice", text, value));
    ordinals.push_back(value);
    start = comma + 1;
  }
  for (int ordinal : ordinals)
    if (ordinal >= count)
      throw Error(ExitCode::kNoGpu, fmt::format("--devices: '{}': GPU {} does not exist (this host has {} GPU{}: 0..{})",
                                                text, ordinal, count, count == 1 ? "" : "s", count - 1));
  return ordinals;
}

std::vector<std::string> worker_arguments(const std::vector<std::string>& args, int ordinal, const Shard& shard,
                                          int fd) {
  const std::set<std::string> dropped = {"--devices", "--out", "--format", "--shard", "--device", "--report-fd"};
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const size_t equals = a.find('=');
    if (a.rfind("--", 0) == 0 && equals != std::string::npos && dropped.count(a.substr(0, equals))) continue;
    if (dropped.count(a)) {
      ++i;  // and its value
      continue;
    }
    out.push_back(a);
  }
  for (const std::string& a : {std::string("--device"), std::to_string(ordinal), std::string("--shard"), shard.text(),
                               std::string("--report-fd"), std::to_string(fd)})
    out.push_back(a);
  return out;
}

namespace {

constexpr int kReportFd = 3;

// In the child, between fork and exec: only async-signal-safe calls.
[[noreturn]] void exec_worker(const std::vector<char*>& argv, int report_fd, int read_fd) {
  setpgid(0, 0);  // a terminal's ^C reaches the parent only, which forwards it once
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  dup2(STDERR_FILENO, STDOUT_FILENO);  // the parent's stdout holds its table alone
  if (report_fd != kReportFd) {
    dup2(report_fd, kReportFd);
    close(report_fd);
  }
  close(read_fd);
  execv(argv[0], argv.data());
  _exit(127);
}

void start(Worker& w, int& read_fd) {
  int fds[2];
  if (pipe(fds) != 0)
    throw Error(ExitCode::kInternal, fmt::format("sweep --devices: cannot make a pipe ({})", std::strerror(errno)));
  // The parent's end must not leak into the other workers.
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  std::vector<char*> argv;
  for (std::string& a : w.argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    throw Error(ExitCode::kInternal, fmt::format("sweep --devices: cannot start the worker for GPU {} ({})", w.ordinal,
                                                 std::strerror(errno)));
  }
  if (pid == 0) exec_worker(argv, fds[1], fds[0]);
  close(fds[1]);
  w.pid = pid;
  read_fd = fds[0];
}

void record_exit(Worker& w, int status) {
  if (WIFEXITED(status)) {
    w.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    w.signal = WTERMSIG(status);
  }
}

// Reads what is there on one worker's pipe; false at its end.
bool drain(Worker& w, int fd, std::string& pending, const std::function<void()>& on_report) {
  char buffer[65536];
  const ssize_t n = read(fd, buffer, sizeof buffer);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  pending.append(buffer, size_t(n));
  size_t newline;
  while ((newline = pending.find('\n')) != std::string::npos) {
    const std::string line = pending.substr(0, newline);
    pending.erase(0, newline + 1);
    if (read_report_line(line, w.progress, w.totals) && line.rfind("progress", 0) == 0) on_report();
  }
  return true;
}

}  // namespace

void run_workers(std::vector<Worker>& workers, const std::function<void()>& on_report,
                 const std::atomic<bool>* interrupted) {
  std::vector<int> fds(workers.size(), -1);
  std::vector<std::string> pending(workers.size());
  try {
    for (size_t i = 0; i < workers.size(); ++i) start(workers[i], fds[i]);
  } catch (...) {
    for (size_t i = 0; i < workers.size(); ++i) {
      if (workers[i].pid <= 0) continue;
      kill(workers[i].pid, SIGINT);
      int status = 0;
      waitpid(workers[i].pid, &status, 0);
      close(fds[i]);
    }
    throw;
  }
  bool forwarded = false;
  size_t open = workers.size();
  while (open > 0) {
    if (interrupted != nullptr && interrupted->load() && !forwarded) {
      for (const Worker& w : workers) kill(w.pid, SIGINT);
      forwarded = true;
    }
    std::vector<pollfd> polled;
    std::vector<size_t> which;
    for (size_t i = 0; i < workers.size(); ++i) {
      if (fds[i] < 0) continue;
      polled.push_back({fds[i], POLLIN, 0});
      which.push_back(i);
    }
    // A short timeout: a SIGINT arriving between the check above and poll() is seen soon.
    if (poll(polled.data(), polled.size(), 100) < 0 && errno != EINTR)
      throw Error(ExitCode::kInternal, fmt::format("sweep --devices: poll failed ({})", std::strerror(errno)));
    for (size_t j = 0; j < polled.size(); ++j) {
      if (polled[j].revents == 0) continue;
      const size_t i = which[j];
      if (drain(workers[i], fds[i], pending[i], on_report)) continue;
      close(fds[i]);
      fds[i] = -1;
      --open;
    }
  }
  for (Worker& w : workers) {
    int status = 0;
    while (waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
    record_exit(w, status);
  }
}

MeasureProgress summed_progress(const std::vector<Worker>& workers) {
  MeasureProgress sum;
  double weight = 0, done = 0;
  for (const Worker& w : workers) {
    const double points = double(std::max<size_t>(w.points, 1));
    weight += points;
    done += points * (w.totals ? 1.0 : w.progress.fraction);
    sum.measured += w.totals ? w.totals->measured : w.progress.measured;
    if (w.progress.last_tflops > 0) sum.last_tflops = w.progress.last_tflops;
  }
  sum.fraction = weight > 0 ? done / weight : 0;
  return sum;
}

}  // namespace shapescope
