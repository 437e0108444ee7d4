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
#include <cmath>
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
  std::vector<double> flushes;
  for (const SweepTotals& t : parts) {
    all.measured += t.measured;
    all.reused += t.reused;
    all.annotated += t.annotated;
    all.noisy += t.noisy;
    all.throttled += t.throttled;
    all.floor_s = std::max(all.floor_s, t.floor_s);
    all.interrupted = all.interrupted || t.interrupted;
    all.point_ids.insert(all.point_ids.end(), t.point_ids.begin(), t.point_ids.end());
    if (t.flush_us > 0) flushes.push_back(t.flush_us);
  }
  if (!flushes.empty()) all.flush_us = median(flushes);
  return all;
}

void add_chunk(SweepTotals& into, const SweepTotals& chunk) {
  into.measured += chunk.measured;
  into.reused += chunk.reused;
  into.annotated += chunk.annotated;
  into.noisy += chunk.noisy;
  into.throttled += chunk.throttled;
  into.floor_s += chunk.floor_s;
  if (chunk.flush_us > 0) into.flush_us = chunk.flush_us;
  into.interrupted = into.interrupted || chunk.interrupted;
  into.point_ids.insert(into.point_ids.end(), chunk.point_ids.begin(), chunk.point_ids.end());
}

ChunkQueue::ChunkQueue(size_t positions, size_t min_chunk) : min_chunk_(std::max<size_t>(min_chunk, 1)) {
  left_.resize(positions);
  for (size_t i = 0; i < positions; ++i) left_[i] = i;
}

std::vector<size_t> ChunkQueue::next(double weight) {
  const size_t left = left_.size();
  const size_t share = size_t(std::ceil(double(left) * std::clamp(weight, 0.0, 1.0) / kShare));
  const size_t size = std::min(left, std::max(share, min_chunk_));
  // Every (left/size)-th of what is left, so that a chunk mixes small and large problems.
  std::vector<size_t> chunk;
  std::vector<bool> taken(left, false);
  for (size_t i = 0; i < size; ++i) {
    const size_t at = size_t(double(i) * double(left) / double(size));
    taken[at] = true;
    chunk.push_back(left_[at]);
  }
  std::vector<size_t> rest;
  rest.reserve(left - size);
  for (size_t i = 0; i < left; ++i)
    if (!taken[i]) rest.push_back(left_[i]);
  left_ = std::move(rest);
  return chunk;
}

double next_weight(const std::vector<Worker>& workers, const std::vector<bool>& live, size_t i) {
  const auto speed = [](const Worker& w) { return w.busy_s > 0 ? double(w.positions_done) / w.busy_s : 0.0; };
  size_t count = 0, known = 0;
  double sum = 0;
  for (size_t j = 0; j < workers.size(); ++j) {
    if (!live[j] && j != i) continue;
    ++count;
    if (speed(workers[j]) > 0) {
      ++known;
      sum += speed(workers[j]);
    }
  }
  if (count == 0) return 1.0;
  if (speed(workers[i]) <= 0) return 1.0 / double(count) / ChunkQueue::kFirstShrink;
  // Workers not measured yet count at the mean of those that are.
  const double total = sum + double(count - known) * sum / double(known);
  return speed(workers[i]) / total;
}

std::string chunk_line(const std::vector<size_t>& positions) {
  std::string line = "chunk";
  for (size_t p : positions) line += fmt::format(" {}", p);
  return line;
}

std::optional<std::vector<size_t>> read_chunk_line(const std::string& line, size_t plan_size) {
  std::istringstream in(line);
  std::string kind;
  in >> kind;
  if (kind == "end" && in.eof()) return std::nullopt;
  std::vector<size_t> positions;
  size_t p = 0;
  while (kind == "chunk" && in >> p && p < plan_size) positions.push_back(p);
  if (kind != "chunk" || !in.eof() || positions.empty() || p >= plan_size)
    throw Error(ExitCode::kInternal, fmt::format("sweep worker: the parent sent '{}', not a chunk of this plan's {} "
                                                 "positions (is it the same build?)", line.substr(0, 80), plan_size));
  return positions;
}

std::string device_line(const std::string& uuid, const std::string& name) { return fmt::format("device {} {}", uuid, name); }

double Worker::median_clock_mhz() const { return chunk_clocks.empty() ? 0.0 : median(chunk_clocks); }

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
  if (line.rfind("device ", 0) == 0) return false;  // the worker's GPU: read by the pool
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

void WorkerReporter::device(const std::string& uuid, const std::string& name) { write_line(device_line(uuid, name)); }

std::optional<std::vector<size_t>> next_chunk(int fd, size_t plan_size, const std::atomic<bool>* interrupted) {
  std::string line;
  char c = 0;
  for (;;) {
    if (interrupted != nullptr && interrupted->load()) return std::nullopt;
    const ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;  // the parent closed the queue
    if (c == '\n') break;
    line += c;
  }
  return read_chunk_line(line, plan_size);
}

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

std::vector<std::string> worker_arguments(const std::vector<std::string>& args, int ordinal) {
  const std::set<std::string> dropped = {"--devices", "--out", "--format", "--device", "--report-fd", "--queue-fd"};
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
  for (const std::string& a : {std::string("--device"), std::to_string(ordinal), std::string("--report-fd"),
                               std::to_string(kReportFd), std::string("--queue-fd"), std::to_string(kQueueFd)})
    out.push_back(a);
  return out;
}

namespace {

// In the child, between fork and exec: only async-signal-safe calls. The pipe ends go to fds 3 and 4
// by way of fds above both, so that neither overwrites the other.
[[noreturn]] void exec_worker(const std::vector<char*>& argv, int report_fd, int queue_fd) {
  setpgid(0, 0);  // a terminal's ^C reaches the parent only, which forwards it once
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  struct sigaction default_pipe {};
  default_pipe.sa_handler = SIG_DFL;
  sigaction(SIGPIPE, &default_pipe, nullptr);  // the parent ignores it; the worker is an ordinary sweep
  dup2(STDERR_FILENO, STDOUT_FILENO);  // the parent's stdout holds its table alone
  const int report = fcntl(report_fd, F_DUPFD, 10);
  const int queue = fcntl(queue_fd, F_DUPFD, 10);
  if (report < 0 || queue < 0) _exit(127);
  dup2(report, kReportFd);
  dup2(queue, kQueueFd);
  close(report);
  close(queue);
  if (report_fd != kReportFd && report_fd != kQueueFd) close(report_fd);
  if (queue_fd != kReportFd && queue_fd != kQueueFd) close(queue_fd);
  execv(argv[0], argv.data());
  _exit(127);
}

// The parent's ends of one worker's two pipes (-1 once closed).
struct Ends {
  int report = -1;  // reads the worker's reports
  int queue = -1;   // writes its chunks
};

void make_pipe(int fds[2]) {
  if (pipe(fds) != 0)
    throw Error(ExitCode::kInternal, fmt::format("sweep --devices: cannot make a pipe ({})", std::strerror(errno)));
}

void start(Worker& w, Ends& ends) {
  int report[2], queue[2];
  make_pipe(report);
  try {
    make_pipe(queue);
  } catch (...) {
    close(report[0]);
    close(report[1]);
    throw;
  }
  // The parent's ends must not leak into the other workers.
  fcntl(report[0], F_SETFD, FD_CLOEXEC);
  fcntl(queue[1], F_SETFD, FD_CLOEXEC);
  std::vector<char*> argv;
  for (std::string& a : w.argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {report[0], report[1], queue[0], queue[1]}) close(fd);
    throw Error(ExitCode::kInternal, fmt::format("sweep --devices: cannot start the worker for GPU {} ({})", w.ordinal,
                                                 std::strerror(errno)));
  }
  if (pid == 0) exec_worker(argv, report[1], queue[0]);
  close(report[1]);
  close(queue[0]);
  w.pid = pid;
  ends.report = report[0];
  ends.queue = queue[1];
}

void record_exit(Worker& w, int status) {
  if (WIFEXITED(status)) {
    w.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    w.signal = WTERMSIG(status);
  }
}

void close_queue(Ends& ends) {
  if (ends.queue >= 0) close(ends.queue);
  ends.queue = -1;
}

// Writes one line to a worker's queue; a worker that is gone (EPIPE: SIGPIPE is ignored meanwhile)
// is seen at the end of its report pipe.
void send(Ends& ends, const std::string& line) {
  if (ends.queue < 0) return;
  const std::string text = line + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(ends.queue, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return close_queue(ends);
    done += size_t(n);
  }
}

// The worker's next chunk (its share by next_weight), or "end" (then its queue is closed) when the
// queue is empty or the sweep was interrupted.
void hand_out(std::vector<Worker>& workers, std::vector<Ends>& all, size_t i, ChunkQueue& queue, bool stopping) {
  Worker& w = workers[i];
  Ends& ends = all[i];
  std::vector<bool> live(workers.size());
  for (size_t j = 0; j < workers.size(); ++j) live[j] = all[j].queue >= 0;
  w.in_flight = stopping ? std::vector<size_t>{} : queue.next(next_weight(workers, live, i));
  w.handed_at = now_s();
  w.progress = MeasureProgress{};
  if (w.in_flight.empty()) {
    send(ends, "end");
    return close_queue(ends);
  }
  send(ends, chunk_line(w.in_flight));
}

// One report line: the worker's GPU, a progress line, or a chunk done (then the next is handed out).
void on_line(std::vector<Worker>& workers, std::vector<Ends>& ends, size_t i, const std::string& line,
             ChunkQueue& queue, bool stopping, const std::function<void()>& on_report) {
  Worker& w = workers[i];
  if (line.rfind("device ", 0) == 0) {
    std::istringstream in(line.substr(7));
    in >> w.uuid;
    std::getline(in >> std::ws, w.gpu_name);
    return;
  }
  std::optional<SweepTotals> chunk;
  if (!read_report_line(line, w.progress, chunk)) return;
  if (chunk) {
    if (!w.totals) w.totals = SweepTotals{};
    add_chunk(*w.totals, *chunk);
    if (chunk->clock_mhz > 0) w.chunk_clocks.push_back(chunk->clock_mhz);
    ++w.chunks;
    w.positions_done += w.in_flight.size();
    w.busy_s += now_s() - w.handed_at;
    hand_out(workers, ends, i, queue, stopping || chunk->interrupted);
  }
  on_report();
}

// Reads what is there on worker i's report pipe; false at its end.
bool drain(std::vector<Worker>& workers, std::vector<Ends>& ends, size_t i, std::string& pending, ChunkQueue& queue,
           bool stopping, const std::function<void()>& on_report) {
  char buffer[65536];
  const ssize_t n = read(ends[i].report, buffer, sizeof buffer);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  pending.append(buffer, size_t(n));
  size_t newline;
  while ((newline = pending.find('\n')) != std::string::npos) {
    const std::string line = pending.substr(0, newline);
    pending.erase(0, newline + 1);
    on_line(workers, ends, i, line, queue, stopping, on_report);
  }
  return true;
}

// SIGPIPE ignored while the pool runs: a worker that died must not take the parent with it.
struct IgnoreSigpipe {
  struct sigaction old {};
  IgnoreSigpipe() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &old);
  }
  ~IgnoreSigpipe() { sigaction(SIGPIPE, &old, nullptr); }
};

void start_all(std::vector<Worker>& workers, std::vector<Ends>& ends, ChunkQueue& queue) {
  try {
    for (size_t i = 0; i < workers.size(); ++i) start(workers[i], ends[i]);
  } catch (...) {
    for (size_t i = 0; i < workers.size(); ++i) {
      if (workers[i].pid <= 0) continue;
      kill(workers[i].pid, SIGINT);
      close_queue(ends[i]);
      int status = 0;
      waitpid(workers[i].pid, &status, 0);
      close(ends[i].report);
    }
    throw;
  }
  for (size_t i = 0; i < workers.size(); ++i) hand_out(workers, ends, i, queue, false);
}

}  // namespace

void run_workers(std::vector<Worker>& workers, ChunkQueue& queue, const std::function<void()>& on_report,
                 const std::atomic<bool>* interrupted) {
  const IgnoreSigpipe ignore_sigpipe;
  std::vector<Ends> ends(workers.size());
  std::vector<std::string> pending(workers.size());
  const double started = now_s();
  start_all(workers, ends, queue);
  bool forwarded = false;
  size_t open = workers.size();
  while (open > 0) {
    if (interrupted != nullptr && interrupted->load() && !forwarded) {
      for (size_t i = 0; i < workers.size(); ++i) {
        kill(workers[i].pid, SIGINT);
        close_queue(ends[i]);
      }
      forwarded = true;
    }
    std::vector<pollfd> polled;
    std::vector<size_t> which;
    for (size_t i = 0; i < workers.size(); ++i) {
      if (ends[i].report < 0) continue;
      polled.push_back({ends[i].report, POLLIN, 0});
      which.push_back(i);
    }
    // A short timeout: a SIGINT arriving between the check above and poll() is seen soon.
    if (poll(polled.data(), polled.size(), 100) < 0 && errno != EINTR)
      throw Error(ExitCode::kInternal, fmt::format("sweep --devices: poll failed ({})", std::strerror(errno)));
    for (size_t j = 0; j < polled.size(); ++j) {
      if (polled[j].revents == 0) continue;
      const size_t i = which[j];
      if (drain(workers, ends, i, pending[i], queue, forwarded, on_report)) continue;
      close(ends[i].report);
      ends[i].report = -1;
      close_queue(ends[i]);
      workers[i].seconds = now_s() - started;
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

MeasureProgress summed_progress(const std::vector<Worker>& workers, size_t positions) {
  MeasureProgress sum;
  double done = 0;
  for (const Worker& w : workers) {
    done += double(w.positions_done) + double(w.in_flight.size()) * w.progress.fraction;
    sum.measured += (w.totals ? w.totals->measured : 0) + w.progress.measured;
    if (w.progress.last_tflops > 0) sum.last_tflops = w.progress.last_tflops;
  }
  sum.fraction = positions > 0 ? done / double(positions) : 0;
  return sum;
}

}  // namespace shapescope
