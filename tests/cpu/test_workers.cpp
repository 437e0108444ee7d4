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
                                         "--samples", "5"};
  EXPECT_EQ(worker_arguments(args, 1, Shard{6, 8}, 3),
            (std::vector<std::string>{"sweep", "--n", "1..64", "--db", "s.db", "--samples", "5", "--device", "1",
                                      "--shard", "6/8", "--report-fd", "3"}));
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
}

Worker shell_worker(int ordinal, const std::string& script, size_t points) {
  Worker w;
  w.ordinal = ordinal;
  w.shard = Shard{int64_t(ordinal) + 1, 3};
  w.argv = {"/bin/sh", "-c", script};
  w.points = points;
  return w;
}

TEST(Devices, PoolCollectsReportsExitCodesAndSignals) {
  std::vector<Worker> workers = {
      shell_worker(0, "echo 'progress 0.5 2 100' >&3; echo 'done 4 1 5 0 1 0.5 19 1980 0 11 12 13 14 15' >&3", 5),
      shell_worker(1, "echo 'progress 0.25 1 50' >&3; exit 4", 4),
      shell_worker(2, "kill -9 $$", 1)};
  size_t reports = 0;
  run_workers(workers, [&] { ++reports; }, nullptr);
  EXPECT_GE(reports, 2u);
  EXPECT_EQ(workers[0].exit_code, 0);
  ASSERT_TRUE(workers[0].totals);
  EXPECT_EQ(workers[0].totals->point_ids, (std::vector<int64_t>{11, 12, 13, 14, 15}));
  EXPECT_FALSE(workers[0].failed());
  EXPECT_EQ(workers[1].exit_code, 4);
  EXPECT_TRUE(workers[1].failed());
  EXPECT_FALSE(workers[1].totals);
  EXPECT_EQ(workers[2].signal, SIGKILL);
  // Weighted by points: the finished worker counts whole, the failed one at its last report.
  const MeasureProgress sum = summed_progress(workers);
  EXPECT_NEAR(sum.fraction, (5 * 1.0 + 4 * 0.25 + 1 * 0.0) / 10, 1e-9);
  EXPECT_EQ(sum.measured, 4u + 1u);
  const SweepTotals all = combined({*workers[0].totals, *workers[0].totals});
  EXPECT_EQ(all.measured, 8u);
  EXPECT_DOUBLE_EQ(all.floor_s, 0.5);
  EXPECT_EQ(all.point_ids.size(), 10u);
}

// ^C in the parent reaches every worker once; each stops at its next safe point and reports.
TEST(Devices, PoolForwardsSigintOnce) {
  const std::string script =
      "n=0; trap 'n=$((n+1)); echo \"done 1 0 1 0 0 0 0 0 1 $n\" >&3; exit 130' INT; "
      "echo 'progress 0.1 1 1' >&3; i=0; while [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; exit 9";
  std::vector<Worker> workers = {shell_worker(0, script, 1), shell_worker(1, script, 1)};
  std::atomic<bool> interrupted{false};
  // Once both have set their trap (they report after it).
  run_workers(workers, [&] {
    interrupted = workers[0].progress.measured == 1 && workers[1].progress.measured == 1;
  }, &interrupted);
  for (const Worker& w : workers) {
    EXPECT_EQ(w.exit_code, 130);
    EXPECT_FALSE(w.failed());
    ASSERT_TRUE(w.totals);
    EXPECT_TRUE(w.totals->interrupted);
    EXPECT_EQ(w.totals->point_ids, (std::vector<int64_t>{1})) << "SIGINT arrived more than once";
  }
}

TEST(Devices, PoolSaysWhenAWorkerCannotStart) {
  std::vector<Worker> workers = {shell_worker(0, "exit 0", 1)};
  workers[0].argv = {"/nonexistent/shapescope"};
  run_workers(workers, [] {}, nullptr);
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
