// A sweep over several GPUs of one host (`sweep --devices`): one worker process per GPU, each the
// same shapescope binary run again (/proc/self/exe) as `sweep ... --device I --report-fd 3
// --queue-fd 4`, all writing the one store (SQLite WAL, one transaction per point, as a single
// sweep does). The parent holds one queue of the plan's positions (ChunkQueue) and hands a chunk to
// whichever worker has finished its last one, so a slower GPU (another tenant, a lower power limit,
// another model) takes fewer chunks and the sweep ends when the work ends.
// Parent to worker, on fd 4, one line per message:
//   chunk POSITION...      (positions in the worker's plan: the same command's plan, so the same)
//   end
// Worker to parent, on fd 3:
//   device UUID NAME       (once, first: the GPU it measures on)
//   progress FRACTION MEASURED LAST_TFLOPS            (of the chunk in flight)
//   done MEASURED REUSED ANNOTATED NOISY THROTTLED FLOOR_S FLUSH_US CLOCK_MHZ INTERRUPTED [ID...]
//                          (once per chunk)
// The parent sums them into one progress line, one summary and a line per GPU. A worker that dies
// leaves its chunk in flight to the next run of the same command (its finished chunks are stored);
// the other workers go on with the queue. Plain C++ and POSIX (no CUDA).
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
// side by side); no clock (each GPU has its own: see the per-GPU lines).
SweepTotals combined(const std::vector<SweepTotals>& parts);
// One worker's chunks, one after another: counts and GPU-time floors added (the clock is the
// median of the chunks', kept by the caller).
void add_chunk(SweepTotals& into, const SweepTotals& chunk);

// The parent's queue: positions 0..positions-1 of the plan, handed out in chunks that shrink as the
// queue empties, so that the GPUs finish together. A chunk is a worker's share of what is left
// (`weight`: its measured speed over all the workers', next_weight()) divided by kShare, at least
// `min_chunk`; a worker's first chunk, before its speed is known, is smaller (kFirstShrink), so that a
// slow GPU (another tenant) does not hold a large part of the plan until the end. Each chunk's
// positions are spread evenly over what is left (a mix of small and large problems) and listed in
// plan order. Every position is handed out exactly once.
class ChunkQueue {
 public:
  static constexpr size_t kMinChunk = 16;
  static constexpr double kShare = 3;        // a chunk is 1/kShare of the worker's share of what is left
  static constexpr double kFirstShrink = 4;  // a first chunk is 1/kFirstShrink of an even share's
  ChunkQueue(size_t positions, size_t min_chunk = kMinChunk);
  std::vector<size_t> next(double weight);  // empty once the queue is empty
  size_t left() const { return left_.size(); }

 private:
  std::vector<size_t> left_;
  size_t min_chunk_;
};
std::string chunk_line(const std::vector<size_t>& positions);  // "chunk 0 7 14"
// A line from the parent: the chunk's positions, each below `plan_size`; nullopt for "end".
// Error(kInternal) for anything else.
std::optional<std::vector<size_t>> read_chunk_line(const std::string& line, size_t plan_size);
// The worker's first report line.
std::string device_line(const std::string& uuid, const std::string& name);

// The report lines, written by a worker and read by the parent.
std::string progress_line(const MeasureProgress& progress);
std::string done_line(const SweepTotals& totals);
// Reads a line into `progress` or `totals`; false for anything else.
bool read_report_line(const std::string& line, MeasureProgress& progress, std::optional<SweepTotals>& totals);

// The worker side: its GPU, measure()'s progress as report lines on `fd`, at most every 100 ms (and
// the last one), and each chunk's totals.
class WorkerReporter {
 public:
  explicit WorkerReporter(int fd) : fd_(fd) {}
  void device(const std::string& uuid, const std::string& name);
  ProgressCallback progress();
  void done(const SweepTotals& totals);

 private:
  void write_line(const std::string& line);
  int fd_;
  double last_ = -1;
};
// The worker side of the queue: blocks for the parent's next line on `fd`; nullopt at "end", at the
// end of the pipe (the parent is gone or interrupted) or when *interrupted.
std::optional<std::vector<size_t>> next_chunk(int fd, size_t plan_size, const std::atomic<bool>* interrupted);

// --devices: "all" (every GPU of the host) or a comma list of ordinals, each once. Error(kUsage)
// naming --devices for a malformed or repeated item; Error(kNoGpu) for an ordinal this host does not
// have (it has `count`). Call only where count > 0 (no GPU: the caller says so as sweep does).
std::vector<int> parse_devices(const std::string& text, int count);

// A worker's command line from the parent's: its arguments less --devices, --out, --format,
// --device, --report-fd and --queue-fd (and their values), plus --device ORDINAL --report-fd 3
// --queue-fd 4. An outer --shard stays: it is part of the plan the positions index.
std::vector<std::string> worker_arguments(const std::vector<std::string>& args, int ordinal);
constexpr int kReportFd = 3, kQueueFd = 4;

struct Worker {
  int ordinal = 0;          // the GPU
  std::vector<std::string> argv;  // argv[0] is the program
  // Filled in as it runs:
  pid_t pid = -1;
  std::string uuid, gpu_name;      // from its device line
  std::vector<size_t> in_flight;   // the positions of the chunk it measures now
  size_t chunks = 0;               // chunks finished
  size_t positions_done = 0;       // their positions
  double busy_s = 0;               // the time its finished chunks took, hand-out to report
  double handed_at = 0;            // when the chunk in flight was handed out
  MeasureProgress progress;        // of the chunk in flight
  std::optional<SweepTotals> totals;  // its finished chunks, added up
  std::vector<double> chunk_clocks;   // each finished chunk's median SM clock (MHz)
  double seconds = 0;              // from its start to its end
  int exit_code = -1;       // its exit status, or -1 when a signal ended it
  int signal = 0;           // the signal that ended it
  bool failed() const { return exit_code != 0 && exit_code != 130; }
  double median_clock_mhz() const;
};

// The share of the queue the worker `i` gets next: its speed (positions per busy second) over the
// sum of the live workers' speeds; a worker with no finished chunk yet counts at the others' mean
// and gets an even share shrunk by ChunkQueue::kFirstShrink. `live[j]`: worker j still takes chunks.
double next_weight(const std::vector<Worker>& workers, const std::vector<bool>& live, size_t i);

// Starts each worker (its stdout goes to the parent's stderr, its own process group, SIGTERM when
// the parent dies), hands each a chunk of `queue` and the next one whenever it reports a chunk
// done, until the queue is empty; reads their reports until all have exited, calling `on_report`
// after each progress or done line. When *interrupted becomes true, SIGINT goes to every worker
// once and no chunk more is handed out: each stops at its next safe point, keeping what it
// measured. Error(kInternal) when a worker cannot be started.
void run_workers(std::vector<Worker>& workers, ChunkQueue& queue, const std::function<void()>& on_report,
                 const std::atomic<bool>* interrupted);
// The summed progress of the workers: positions finished, and the chunks in flight by their
// fraction, over `positions`.
MeasureProgress summed_progress(const std::vector<Worker>& workers, size_t positions);

}  // namespace shapescope
