// A sweep over several GPUs of one host (`sweep --devices`): one worker process per GPU, each the
// same shapescope binary run again (/proc/self/exe) as `sweep ... --device I --shard K/N
// --report-fd 3` on an interleaved shard of the plan, all writing the one store (SQLite WAL, one
// transaction per point, as a single sweep does). Workers report on a pipe, one line per message:
//   progress FRACTION MEASURED LAST_TFLOPS
//   done MEASURED REUSED ANNOTATED NOISY THROTTLED FLOOR_S FLUSH_US CLOCK_MHZ INTERRUPTED [ID...]
// The parent sums them into one progress line and one summary. Plain C++ and POSIX (no CUDA).
#pragma once
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "measure/measure.hpp"
#include "measure/progress.hpp"
#include "shape/plan.hpp"

namespace shapescope {

// What one sweep (or one worker of it) did, for the summary line.
struct SweepTotals {
  size_t measured = 0, reused = 0, annotated = 0, noisy = 0, throttled = 0;
  double floor_s = 0, flush_us = 0, clock_mhz = 0;
  bool interrupted = false;
  std::vector<int64_t> point_ids;  // the points of its plan that the store holds, in plan order
};
SweepTotals totals_of(const MeasureOutcome& outcome);
// Several workers' totals as one: counts added, the GPU-time floor of the busiest GPU (they run
// side by side), the median of their clocks.
SweepTotals combined(const std::vector<SweepTotals>& parts);

// The report lines, written by a worker and read by the parent.
std::string progress_line(const MeasureProgress& progress);
std::string done_line(const SweepTotals& totals);
// Reads a line into `progress` or `totals`; false for anything else.
bool read_report_line(const std::string& line, MeasureProgress& progress, std::optional<SweepTotals>& totals);

// The worker side: measure()'s progress as report lines on `fd`, at most every 100 ms (and the
// last one), and the totals at the end.
class WorkerReporter {
 public:
  explicit WorkerReporter(int fd) : fd_(fd) {}
  ProgressCallback progress();
  void done(const SweepTotals& totals);

 private:
  void write_line(const std::string& line);
  int fd_;
  double last_ = -1;
};

// --devices: "all" (every GPU of the host) or a comma list of ordinals, each once. Error(kUsage)
// naming --devices for a malformed or repeated item; Error(kNoGpu) for an ordinal this host does not
// have (it has `count`). Call only where count > 0 (no GPU: the caller says so as sweep does).
std::vector<int> parse_devices(const std::string& text, int count);

// A worker's command line from the parent's: its arguments less --devices, --out, --format and
// --shard (and their values), plus --device ORDINAL --shard SHARD --report-fd FD.
std::vector<std::string> worker_arguments(const std::vector<std::string>& args, int ordinal, const Shard& shard,
                                          int fd);

struct Worker {
  int ordinal = 0;          // the GPU
  Shard shard;              // its part of the plan
  std::vector<std::string> argv;  // argv[0] is the program
  size_t points = 0;        // points of its plan, to weigh its progress
  // Filled in as it runs:
  pid_t pid = -1;
  MeasureProgress progress;
  std::optional<SweepTotals> totals;
  int exit_code = -1;       // its exit status, or -1 when a signal ended it
  int signal = 0;           // the signal that ended it
  bool failed() const { return exit_code != 0 && exit_code != 130; }
};

// Starts each worker (its stdout goes to the parent's stderr, its own process group, SIGTERM when
// the parent dies), reads their reports until all have exited, calling `on_report` after each
// progress line. When *interrupted becomes true, SIGINT goes to every worker once: each stops at
// its next safe point, keeping what it measured. Error(kInternal) when a worker cannot be started.
void run_workers(std::vector<Worker>& workers, const std::function<void()>& on_report,
                 const std::atomic<bool>* interrupted);
// The summed progress of the workers, weighted by their points.
MeasureProgress summed_progress(const std::vector<Worker>& workers);

}  // namespace shapescope
