// `sweep --devices` without a GPU: the device list, the workers' command lines, the report lines,
// and the worker pool itself run on stand-in workers (/bin/sh scripts that write report lines on
// fd 3, fail, die by a signal, or stop at SIGINT); and the command's refusals, each one line.
#include "measure/workers.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <set>

#include "cli_util.hpp"
#include "common/error.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;

ExitCode code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    return e.code();
  }
  return ExitCode::kOk;
}

TEST(Devices, ParsesTheListAndRefusesGpusTheHostLacks) {
  EXPECT_EQ(parse_devices("all", 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(parse_devices("2,0", 4), (std::vector<int>{2, 0}));
  EXPECT_EQ(parse_devices("0", 1), (std::vector<int>{0}));
  for (const char* bad : {"", "a", "0,", ",0", "+1", "-1", "0,,1", " 0", "1.5", "0,0", "99999999999"})
    EXPECT_EQ(code_of([&] { parse_devices(bad, 4); }), ExitCode::kUsage) << bad;
  EXPECT_EQ(code_of([] { parse_devices("0,2", 2); }), ExitCode::kNoGpu);
  try {
    parse_devices("0,2", 2);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GPU 2 does not exist (this host has 2 GPUs: 0..1)"), std::string::npos)
        << e.what();
  }
}

TEST(Devices, WorkerArgumentsReplaceThePartsTheParentKeeps) {
  const std::vector<std::string> args = {"sweep", "--n",         "1..64",   "--devices", "all",   "--out=x.csv",
                                         "--format", "csv",      "--shard", "2/4",       "--db",  "s.db",
                                         "--samples", "5",       "--device", "3",        "--queue-fd=9"};
  EXPECT_EQ(worker_arguments(args, 1),
            (std::vector<std::string>{"sweep", "--n", "1..64", "--shard", "2/4", "--db", "s.db", "--samples", "5",
                                      "--device", "1", "--report-fd", "3", "--queue-fd", "4"}));
}

TEST(Devices, ReportLinesRoundTrip) {
  SweepTotals t;
  t.measured = 7;
  t.reused = 3;
  t.annotated = 10;
  t.noisy = 1;
  t.throttled = 2;
  t.floor_s = 1.25;
  t.flush_us = 19.5;
  t.clock_mhz = 1980;
  t.interrupted = true;
  t.point_ids = {4, 8, 15};
  MeasureProgress progress;
  std::optional<SweepTotals> read;
  ASSERT_TRUE(read_report_line(done_line(t), progress, read));
  ASSERT_TRUE(read);
  EXPECT_EQ(read->measured, 7u);
  EXPECT_EQ(read->throttled, 2u);
  EXPECT_DOUBLE_EQ(read->floor_s, 1.25);
  EXPECT_TRUE(read->interrupted);
  EXPECT_EQ(read->point_ids, t.point_ids);
  MeasureProgress p;
  p.fraction = 0.5;
  p.measured = 12;
  p.last_tflops = 700.5;
  ASSERT_TRUE(read_report_line(progress_line(p), progress, read));
  EXPECT_EQ(progress.measured, 12u);
  EXPECT_FALSE(read_report_line("done 1 2", progress, read));
  EXPECT_FALSE(read_report_line("done 1 2 3 4 5 6 7 8 0 x", progress, read));
  EXPECT_FALSE(read_report_line("hello", progress, read));
  EXPECT_FALSE(read_report_line(device_line("GPU-1", "NVIDIA H100"), progress, read));
}

// Every position exactly once; chunks shrink to the minimum; each spread over what was left.
TEST(Devices, QueueHandsOutEveryPositionOnceInShrinkingChunks) {
  ChunkQueue queue(4096);
  std::vector<int> seen(4096, 0);
  std::vector<size_t> sizes;
  for (auto chunk = queue.next(0.5); !chunk.empty(); chunk = queue.next(0.5)) {
    sizes.push_back(chunk.size());
    EXPECT_TRUE(std::is_sorted(chunk.begin(), chunk.end()));
    for (size_t p : chunk) ++seen[p];
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 4096);
  EXPECT_EQ(queue.left(), 0u);
  ASSERT_GE(sizes.size(), 10u);
  EXPECT_EQ(sizes.front(), (4096 + 5) / 6);
  EXPECT_TRUE(std::is_sorted(sizes.rbegin(), sizes.rend())) << "chunks grow";
  for (size_t i = 0; i + 1 < sizes.size(); ++i) EXPECT_GE(sizes[i], ChunkQueue::kMinChunk);
  // The first chunk mixes the plan's small and large problems (every 6th position or so).
  ChunkQueue fresh(600);
  const std::vector<size_t> first = fresh.next(0.5);
  EXPECT_EQ(first.front(), 0u);
  EXPECT_GE(first.back(), 590u);
  // Fewer positions than a minimum chunk: one chunk of them all, then nothing.
  ChunkQueue small(5);
  EXPECT_EQ(small.next(0.25).size(), 5u);
  EXPECT_TRUE(small.next(0.25).empty());
}

// A worker's share follows its measured speed; before it has one, a shrunk even share.
TEST(Devices, ShareFollowsEachGpusMeasuredSpeed) {
  std::vector<Worker> workers(3);
  const std::vector<bool> live = {true, true, true};
  EXPECT_DOUBLE_EQ(next_weight(workers, live, 0), 1.0 / 3 / ChunkQueue::kFirstShrink);
  workers[0].positions_done = 300;  // 100 positions a second
  workers[0].busy_s = 3;
  workers[1].positions_done = 100;  // 10 a second: another tenant
  workers[1].busy_s = 10;
  EXPECT_NEAR(next_weight(workers, live, 0), 100.0 / (100 + 10 + 55), 1e-12) << "the unmeasured one at the mean";
  EXPECT_NEAR(next_weight(workers, live, 1), 10.0 / (100 + 10 + 55), 1e-12);
  EXPECT_NEAR(next_weight(workers, {true, true, false}, 1), 10.0 / 110, 1e-12) << "a finished worker takes no share";
}

TEST(Devices, ChunkLinesRoundTripAndRefuseOtherPlans) {
  EXPECT_EQ(chunk_line({0, 7, 14}), "chunk 0 7 14");
  EXPECT_EQ(read_chunk_line("chunk 0 7 14", 15), (std::vector<size_t>{0, 7, 14}));
  EXPECT_FALSE(read_chunk_line("end", 15));
  for (const char* bad : {"chunk 0 7 15", "chunk", "chunk x", "chunk 1 -2", "hello", "end 3"})
    EXPECT_EQ(code_of([&] { read_chunk_line(bad, 15); }), ExitCode::kInternal) << bad;
}

// A stand-in worker: reads its chunks from fd 4, reports each done on fd 3 with one point id per
// position (1000 + position), "sleep"s per chunk, until "end".
Worker shell_worker(int ordinal, const std::string& per_chunk = "") {
  Worker w;
  w.ordinal = ordinal;
  const std::string script =
      "echo 'device GPU-" + std::to_string(ordinal) + " Stand-in GPU' >&3; "
      "while read kind rest <&4; do [ \"$kind\" = end ] && exit 0; " + per_chunk +
      " ids=''; n=0; for p in $rest; do ids=\"$ids $((1000+p))\"; n=$((n+1)); done; "
      "echo \"progress 0.5 1 100\" >&3; echo \"done $n 0 $n 0 0 0.1 19 1980 0$ids\" >&3; done; exit 0";
  w.argv = {"/bin/sh", "-c", script};
  return w;
}

TEST(Devices, PoolHandsTheQueueToWhoeverIsFreeAndCollectsEveryPoint) {
  // GPU 1 is slow (another tenant): it takes fewer chunks.
  std::vector<Worker> workers = {shell_worker(0), shell_worker(1, "sleep 0.3;")};
  ChunkQueue queue(300);
  size_t reports = 0;
  run_workers(workers, queue, [&] { ++reports; }, nullptr);
  EXPECT_GE(reports, 2u);
  std::vector<int64_t> ids;
  for (const Worker& w : workers) {
    EXPECT_EQ(w.exit_code, 0);
    EXPECT_FALSE(w.failed());
    EXPECT_TRUE(w.in_flight.empty());
    ASSERT_TRUE(w.totals);
    EXPECT_EQ(w.uuid, "GPU-" + std::to_string(w.ordinal));
    EXPECT_EQ(w.gpu_name, "Stand-in GPU");
    EXPECT_DOUBLE_EQ(w.median_clock_mhz(), 1980);
    ids.insert(ids.end(), w.totals->point_ids.begin(), w.totals->point_ids.end());
  }
  std::sort(ids.begin(), ids.end());
  std::vector<int64_t> want(300);
  for (int64_t i = 0; i < 300; ++i) want[size_t(i)] = 1000 + i;
  EXPECT_EQ(ids, want) << "a position measured twice or never";
  EXPECT_GT(workers[0].chunks, workers[1].chunks);
  EXPECT_EQ(workers[0].positions_done + workers[1].positions_done, 300u);
  const MeasureProgress sum = summed_progress(workers, 300);
  EXPECT_NEAR(sum.fraction, 1.0, 1e-9);
}

TEST(Devices, PoolGoesOnWhenAWorkerDiesAndNamesItsLostChunk) {
  std::vector<Worker> workers = {shell_worker(0, "sleep 0.05;"), shell_worker(1, "kill -9 $$;"), shell_worker(2)};
  workers[2].argv = {"/bin/sh", "-c", "exit 4"};
  ChunkQueue queue(200);
  run_workers(workers, queue, [] {}, nullptr);
  EXPECT_EQ(workers[1].signal, SIGKILL);
  EXPECT_FALSE(workers[1].in_flight.empty()) << "its chunk in flight is left for the next run";
  EXPECT_EQ(workers[2].exit_code, 4);
  EXPECT_TRUE(workers[2].failed());
  ASSERT_TRUE(workers[0].totals);
  EXPECT_EQ(queue.left(), 0u) << "the living worker took the rest of the queue";
  EXPECT_EQ(workers[0].positions_done + workers[1].in_flight.size() + workers[2].in_flight.size(), 200u);
}

// ^C in the parent reaches every worker once; each stops at its next safe point and reports.
TEST(Devices, PoolForwardsSigintOnce) {
  const std::string script =
      "n=0; trap 'n=$((n+1)); echo \"done 1 0 1 0 0 0 0 0 1 $n\" >&3; exit 130' INT; read kind rest <&4; "
      "echo 'progress 0.1 1 1' >&3; i=0; while [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; exit 9";
  std::vector<Worker> workers = {shell_worker(0), shell_worker(1)};
  for (Worker& w : workers) w.argv = {"/bin/sh", "-c", script};
  ChunkQueue queue(100);
  std::atomic<bool> interrupted{false};
  // Once both have set their trap (they report after it).
  run_workers(workers, queue, [&] {
    interrupted = workers[0].progress.measured == 1 && workers[1].progress.measured == 1;
  }, &interrupted);
  for (const Worker& w : workers) {
    EXPECT_EQ(w.exit_code, 130);
    EXPECT_FALSE(w.failed());
    ASSERT_TRUE(w.totals);
    EXPECT_TRUE(w.totals->interrupted);
    EXPECT_EQ(w.totals->point_ids, (std::vector<int64_t>{1})) << "SIGINT arrived more than once";
  }
  EXPECT_GT(queue.left(), 0u) << "no chunk more after ^C";
}

TEST(Devices, PoolSaysWhenAWorkerCannotStart) {
  std::vector<Worker> workers = {shell_worker(0)};
  workers[0].argv = {"/nonexistent/shapescope"};
  ChunkQueue queue(10);
  run_workers(workers, queue, [] {}, nullptr);
  EXPECT_EQ(workers[0].exit_code, 127);
  EXPECT_TRUE(workers[0].failed());
}

// The command: refusals in one line, before anything is written; without a GPU the message a
// single sweep gives, and no store.
class DevicesCli : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/shapescope_devices_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  bool empty() const { return fs::is_empty(dir_); }
  fs::path dir_;
};

TEST_F(DevicesCli, RefusalsAreOneLine) {
  struct Case {
    std::string args, expect;
  };
  for (const Case& c : std::vector<Case>{{"--devices all --device 1", "--devices: 'all' with --device 1"},
                                         {"--devices 0 --device 0", "give one of them"},
                                         {"--devices 0,0", "names GPU 0 twice"},
                                         {"--devices x", "--devices: 'x' is not 'all'"},
                                         {"--devices 0, ", "--devices: '0,' is not"},
                                         {"--devices 0 --dry-run", "--dry-run measures nothing"}}) {
    const CliRun r = run("sweep --n 1..64 --db s.db " + c.args, dir_.string());
    EXPECT_EQ(r.code, 2) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(empty()) << c.args;
  }
}

TEST_F(DevicesCli, WithoutAGpuSaysWhatASweepSays) {
  const CliRun plain = run("sweep --n 1..64 --db s.db", dir_.string());
  if (plain.code != 3) GTEST_SKIP() << "a GPU is present (or measuring works): " << plain.err;
  for (const char* devices : {"all", "0", "0,1", "7"}) {
    const CliRun r = run(std::string("sweep --n 1..64 --db s.db --devices ") + devices, dir_.string());
    EXPECT_EQ(r.code, 3) << devices;
    EXPECT_EQ(r.err, plain.err) << devices;
    EXPECT_TRUE(empty()) << devices;
  }
}

}  // namespace
}  // namespace shapescope
