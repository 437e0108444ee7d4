// Issue 18's promise, tested the way CI runs (as root, so permissions protect nothing): a command that
// fails, or only reads, leaves every file byte for byte as it was, and makes none. Each test works in
// its own temporary folder, holding copies of the committed stores, and removes it afterwards.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "cli_util.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "device/device.hpp"
#include "store/store.hpp"

extern char** environ;

namespace shapescope {
namespace {

namespace fs = std::filesystem;

const std::string kData = SHAPESCOPE_TEST_DATA;
const std::string kSquares = kData + "/h200-2026-11-21/sweep_bf16_nn_1-4096.db";

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Every file under `dir` (recursively) and its bytes, and the files beside /dev/null that a
// device-as-prefix bug would write.
using Snapshot = std::map<std::string, std::string>;
Snapshot snapshot(const fs::path& dir) {
  Snapshot files;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file()) files[fs::relative(entry.path(), dir).string()] = read_bytes(entry.path());
  for (const char* extension : {"svg", "png", "gp", "dat"}) {
    const std::string beside_null = std::string("/dev/null.") + extension;
    if (fs::exists(beside_null)) files[beside_null] = "(exists)";
  }
  return files;
}

// Names the files that differ, appeared or went, for a readable failure.
std::string difference(const Snapshot& before, const Snapshot& after) {
  std::string out;
  for (const auto& [name, bytes] : before) {
    auto found = after.find(name);
    if (found == after.end()) out += " removed:" + name;
    else if (found->second != bytes) out += " changed:" + name;
  }
  for (const auto& [name, bytes] : after)
    if (!before.count(name)) out += " created:" + name;
  return out;
}

int lines(const std::string& text) { return int(std::count(text.begin(), text.end(), '\n')); }

// Runs SQL on a store with SQLite itself (as another tool would); false on any error.
bool sqlite_exec(const fs::path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  bool ok = sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
            sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
  sqlite3_close(db);
  return ok;
}

// A writer killed (kill -9) right after running `sql` on the store, leaving what it leaves: a
// rollback -journal for a transaction it had begun, or a -wal and -shm after a commit in WAL mode.
void killed_writer(const fs::path& path, const std::string& sql) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    sqlite3* db = nullptr;
    if (sqlite3_open(path.c_str(), &db) == SQLITE_OK) sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
    raise(SIGKILL);
    _exit(1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
}

class DataSafety : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "shapescope_safety_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    // A committed store (rollback journal, no annotations table, as measured on the H200), a
    // results file a user cares about, and an earlier figure.
    fs::copy_file(kSquares, dir_ / "store.db");
    // As committed: rollback journal (bytes 18 and 19 of the header are 1; WAL makes them 2). Other
    // tests read the committed stores in place: were one of them to write, this says so here.
    const std::string header = read_bytes(dir_ / "store.db").substr(0, 20);
    ASSERT_EQ(header.substr(18, 2), std::string("\x01\x01", 2))
        << kSquares << " is no longer as committed (it was opened for writing): git checkout it";
    std::ofstream(dir_ / "results.csv") << "precious user data\n";
    fs::create_directories(dir_ / "figures");
    std::ofstream(dir_ / "figures" / "flops.svg") << "an earlier figure\n";
    // The same store in WAL mode, as every store a sweep wrote is; no -wal while no one writes.
    fs::copy_file(kSquares, dir_ / "swept.db");
    ASSERT_TRUE(sqlite_exec(dir_ / "swept.db", "PRAGMA journal_mode = WAL"));
    ASSERT_FALSE(fs::exists(dir_ / "swept.db-wal"));
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  // The command's exit code, with every file under the folder unchanged; a failing command says
  // one line.
  int expect_untouched(const std::string& args) { return untouched_run(args).code; }
  CliRun untouched_run(const std::string& args) {
    const Snapshot before = snapshot(dir_);
    const CliRun r = run(args, dir_.string());
    const Snapshot after = snapshot(dir_);
    EXPECT_EQ(difference(before, after), "") << args << "\n" << r.err;
    if (r.code != 0) {
      EXPECT_EQ(lines(r.err), 1) << args << "\n" << r.err;
    }
    return r;
  }

  fs::path dir_;
};

// Read-only commands on a committed store: not a byte changes, no -wal/-shm/-journal appears.
TEST_F(DataSafety, ReadOnlyCommandsChangeNoByte) {
  if (device_count() > 0) GTEST_SKIP() << "a GPU is present: explain would measure";
  EXPECT_EQ(expect_untouched("explain 1793 --db store.db"), 0);
  EXPECT_EQ(expect_untouched("explain 1793 --db store.db --json"), 0);
  EXPECT_EQ(expect_untouched("explain 4095 --db store.db --layout nt"), int(ExitCode::kNoGpu));
  EXPECT_EQ(expect_untouched("sweep --n 1..64 --db store.db --dry-run"), 0);
  EXPECT_EQ(expect_untouched("pad --model gpt2 --tokens 12288 --train --dry-run"), 0);
  EXPECT_EQ(expect_untouched("export --db store.db"), 0);
  EXPECT_EQ(expect_untouched("export --db store.db --format json --n 1..64"), 0);
  // Predicted (a performance model, nothing measured), from the store's GPU's model or another's.
  EXPECT_EQ(expect_untouched("explain 1793 --db store.db --gpu h200 --predict"), 0);
  EXPECT_EQ(expect_untouched("explain 1793 --db store.db --gpu h100-sxm"), 0);
  EXPECT_EQ(expect_untouched("sweep --n 1..64 --db store.db --dry-run --gpu h200 --predict"), 0);
  EXPECT_EQ(expect_untouched("pad --model gpt2 --tokens 12288 --train --db store.db --gpu h200 --predict"), 0);
  // A store in WAL mode: no -wal or -shm appears beside it.
  EXPECT_EQ(expect_untouched("explain 1793 --db swept.db"), 0);
  EXPECT_EQ(expect_untouched("export --db swept.db --n 1..64"), 0);
}

TEST_F(DataSafety, PlotReadsTheStoreAndWritesOnlyItsFigure) {
  const Snapshot before = snapshot(dir_);
  const CliRun r = run("plot flops --db " + (dir_ / "store.db").string() + " --out " + (dir_ / "out").string() + "/");
  if (r.code == int(ExitCode::kNoGnuplot)) GTEST_SKIP() << "no gnuplot: " << r.err;
  ASSERT_EQ(r.code, 0) << r.err;
  Snapshot after = snapshot(dir_);
  for (const char* name : {"out/flops.svg", "out/flops.png", "out/flops.gp", "out/flops.dat"}) {
    EXPECT_EQ(after.count(name), 1u) << name;
    after.erase(name);
  }
  EXPECT_EQ(difference(before, after), "");
}

// A measuring command that fails (here: no GPU) writes nothing: not the --out file, not the store,
// and no new empty shapescope.db.
TEST_F(DataSafety, FailingMeasuringCommandsWriteNothing) {
  if (device_count() > 0) GTEST_SKIP() << "a GPU is present: these commands would succeed";
  EXPECT_EQ(expect_untouched("sweep --n 64 --out results.csv"), int(ExitCode::kNoGpu));
  EXPECT_EQ(expect_untouched("sweep --n 64 --out results.csv --db store.db"), int(ExitCode::kNoGpu));
  EXPECT_EQ(expect_untouched("sweep --n 64"), int(ExitCode::kNoGpu));
  EXPECT_EQ(expect_untouched("info"), int(ExitCode::kNoGpu));
  EXPECT_EQ(expect_untouched("info --db store.db"), int(ExitCode::kNoGpu));
  EXPECT_EQ(expect_untouched("info --db store.db --calibrate"), int(ExitCode::kNoGpu));
  EXPECT_EQ(expect_untouched("explain 1793"), int(ExitCode::kNoGpu));
  EXPECT_EQ(expect_untouched("pad --model gpt2 --tokens 12288 --db store.db"), int(ExitCode::kNoGpu));
  EXPECT_EQ(expect_untouched("sweep --n 64 --out results.csv --db swept.db"), int(ExitCode::kNoGpu));
  EXPECT_EQ(expect_untouched("info --db swept.db"), int(ExitCode::kNoGpu));
}

// With a GPU: a sweep that fails after its checks began (the plan does not fit in memory, exit 4)
// still writes nothing; info without --calibrate only reads; a sweep that succeeds replaces --out
// and creates its store at the first point.
TEST_F(DataSafety, OnAGpuOnlySuccessWrites) {
  if (device_count() == 0) GTEST_SKIP() << "no GPU: the failing cases above cover this machine";
  EXPECT_EQ(expect_untouched("sweep --n 200000 --out results.csv --db store.db"), int(ExitCode::kOutOfMemory));
  EXPECT_EQ(expect_untouched("info --db store.db"), 0);
  const CliRun r = run("sweep --n 64,65 --samples 3 --format csv --out results.csv --db new.db", dir_.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string csv = read_bytes(dir_ / "results.csv");
  EXPECT_EQ(csv.rfind("id,backend,", 0), 0u) << csv.substr(0, 200);
  EXPECT_GE(std::count(csv.begin(), csv.end(), '\n'), 3) << csv;  // the header and both shapes
  EXPECT_TRUE(fs::exists(dir_ / "new.db"));
}

// Outputs that would destroy something are refused before anything runs, GPU or not.
TEST_F(DataSafety, DangerousOutputsAreRefused) {
  EXPECT_EQ(expect_untouched("sweep --n 64 --out store.db --db store.db"), int(ExitCode::kUsage));
  EXPECT_EQ(expect_untouched("sweep --n 64 --out ./store.db --db store.db"), int(ExitCode::kUsage));
  EXPECT_EQ(expect_untouched("sweep --n 64 --out store.db-wal --db store.db"), int(ExitCode::kUsage));
  EXPECT_EQ(expect_untouched("sweep --n 64 --out store.db-journal --db store.db"), int(ExitCode::kUsage));
  EXPECT_EQ(expect_untouched("export --db store.db --out store.db"), int(ExitCode::kUsage));
  EXPECT_EQ(expect_untouched("export --db store.db --out /dev/null"), int(ExitCode::kUsage));
  EXPECT_EQ(expect_untouched("export --db store.db --out results.csv --dtype fp16"), int(ExitCode::kUsage));
  EXPECT_EQ(expect_untouched("sweep --n 64 --out figures"), int(ExitCode::kUsage));
  EXPECT_EQ(expect_untouched("sweep --n 64 --out /dev/null"), int(ExitCode::kUsage));
  EXPECT_EQ(expect_untouched("plot flops --db store.db --out /dev/null"), int(ExitCode::kUsage));
  EXPECT_FALSE(fs::exists("/dev/null.svg"));
  // The figure's data file would be the store: store.dat read as --db, written as --out store.
  fs::copy_file(dir_ / "store.db", dir_ / "store.dat");
  EXPECT_EQ(expect_untouched("plot flops --db store.dat --out store"), int(ExitCode::kUsage));
  EXPECT_EQ(expect_untouched("report --db store.db --out store.db"), int(ExitCode::kUsage));
  EXPECT_EQ(expect_untouched("report --db store.db --out ./store.db-wal"), int(ExitCode::kUsage));
  EXPECT_EQ(expect_untouched("report --db store.db --out /dev/null"), int(ExitCode::kUsage));
  EXPECT_EQ(expect_untouched("report --db store.db --out figures"), int(ExitCode::kUsage));
  EXPECT_EQ(expect_untouched("sweep --n 64 --db figures"), int(ExitCode::kStore));
  EXPECT_EQ(expect_untouched("explain 1793 --db figures"), int(ExitCode::kStore));
  EXPECT_EQ(expect_untouched("export --db figures"), int(ExitCode::kStore));
  EXPECT_EQ(expect_untouched("sweep --n 64 --db ''"), int(ExitCode::kUsage));
  EXPECT_EQ(expect_untouched("info --db ''"), int(ExitCode::kUsage));
  EXPECT_EQ(expect_untouched("pad --model gpt2 --tokens 12288 --db ''"), int(ExitCode::kUsage));
}

// A store of a newer schema is refused by every command, and not a byte of it changes.
TEST_F(DataSafety, NewerSchemaIsRefusedAndNeverRewritten) {
  fs::copy_file(kSquares, dir_ / "newer.db");
  ASSERT_TRUE(sqlite_exec(dir_ / "newer.db", "UPDATE meta SET value = '99' WHERE key = 'schema_version'"));
  for (const char* args : {"explain 1793 --db newer.db", "export --db newer.db", "plot flops --db newer.db --out figures/",
                           "info --db newer.db", "info --db newer.db --calibrate", "sweep --n 64 --db newer.db"}) {
    const CliRun r = untouched_run(args);
    EXPECT_EQ(r.code, int(ExitCode::kStore)) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("newer shapescope (schema version 99"), std::string::npos) << args << "\n" << r.err;
  }
}

// A write that a killed process cut off: a rollback -journal that must be rolled back before anyone
// reads, or a -wal without the -shm that reading it would make. Each is refused in one line that
// says how to recover, and the files stay as they are (immutable reads would see half a write).
TEST_F(DataSafety, CutOffWritesAreRefusedAsTheyAre) {
  fs::copy_file(kSquares, dir_ / "hot.db");
  killed_writer(dir_ / "hot.db", "PRAGMA cache_size = 5; BEGIN; UPDATE points SET median_us = median_us * 1000; "
                                 "DELETE FROM kernels;");
  ASSERT_GT(fs::file_size(dir_ / "hot.db-journal"), 0u);
  for (const char* args : {"explain 1793 --db hot.db", "export --db hot.db", "plot flops --db hot.db --out figures/",
                           "sweep --n 64 --db hot.db"}) {
    const CliRun r = untouched_run(args);
    EXPECT_EQ(r.code, int(ExitCode::kStore)) << args;
    EXPECT_NE(r.err.find("'hot.db-journal' holds what to roll back"), std::string::npos) << args << "\n" << r.err;
  }
  fs::copy_file(kSquares, dir_ / "wal.db");
  killed_writer(dir_ / "wal.db", "PRAGMA journal_mode = WAL; UPDATE points SET median_us = 1 WHERE n = 64;");
  fs::remove(dir_ / "wal.db-shm");
  const CliRun r = untouched_run("export --db wal.db --n 64");
  EXPECT_EQ(r.code, int(ExitCode::kStore));
  EXPECT_NE(r.err.find("'wal.db-wal' holds writes that SQLite reads only by making 'wal.db-shm'"), std::string::npos)
      << r.err;
}

// A sweep killed after a commit leaves a -wal and -shm: views read the committed point through them
// (not the older copy in the main file) and change neither.
TEST_F(DataSafety, LeftOverWalIsReadThroughAsItIs) {
  fs::copy_file(kSquares, dir_ / "wal.db");
  killed_writer(dir_ / "wal.db", "PRAGMA journal_mode = WAL; UPDATE points SET median_us = 12345.5 WHERE n = 64;");
  ASSERT_GT(fs::file_size(dir_ / "wal.db-wal"), 0u);
  ASSERT_TRUE(fs::exists(dir_ / "wal.db-shm"));
  const CliRun r = untouched_run("export --db wal.db --n 64 --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("12345.5"), std::string::npos) << r.out.substr(0, 400);
  if (device_count() > 0) return;  // these would measure
  EXPECT_EQ(expect_untouched("explain 64 --db wal.db"), 0);
  EXPECT_EQ(expect_untouched("sweep --n 64 --db wal.db"), int(ExitCode::kNoGpu));
}

// A damaged page is found by the check on open and named in one line.
TEST_F(DataSafety, DamagedStoreIsOneLine) {
  fs::copy_file(kSquares, dir_ / "damaged.db");
  {
    std::fstream file(dir_ / "damaged.db", std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(699 * 4096);  // an interior page of the points table
    file << std::string(8, '\xff');
  }
  for (const char* args : {"export --db damaged.db", "explain 1793 --db damaged.db"}) {
    const CliRun r = untouched_run(args);
    EXPECT_EQ(r.code, int(ExitCode::kStore)) << args;
    // quick_check's first problem ("Page 700: ...") or SQLite's own word for the damage, as the first
    // statement to touch the page finds it: one line either way.
    EXPECT_NE(r.err.find("store 'damaged.db': not a shapescope store or corrupt ("), std::string::npos)
        << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
  }
}

// A figure whose rendering fails leaves the earlier figure as it was, with no temporary files.
TEST_F(DataSafety, FailingPlotKeepsTheEarlierFigure) {
  fs::create_directories(dir_ / "templates");
  std::ofstream(dir_ / "templates" / "flops.gp") << "plot DATA index 0 using 1:2 with pointz\n";
  const int code = expect_untouched("plot flops --db store.db --out figures/ --templates templates");
  EXPECT_TRUE(code == int(ExitCode::kInternal) || code == int(ExitCode::kNoGnuplot)) << code;
  EXPECT_EQ(expect_untouched("plot flops --db store.db --out figures/ --templates nowhere"), int(ExitCode::kUsage));
  EXPECT_EQ(expect_untouched("plot flops --db store.db --out figures/ --gnuplot /nonexistent/gnuplot"),
            int(ExitCode::kNoGnuplot));
  // The report draws its figures in a scratch folder beside --out: a failing gnuplot leaves none.
  fs::copy_file(dir_ / "templates" / "flops.gp", dir_ / "templates" / "waves.gp");
  const int report = expect_untouched("report --db store.db --out page.html --templates templates");
  EXPECT_TRUE(report == int(ExitCode::kInternal) || report == int(ExitCode::kNoGnuplot)) << report;
}

// kill -9 while a figure is being drawn: the earlier figure is intact. The stand-in gnuplot sleeps,
// and the whole process group (shapescope and its gnuplot) is killed as a user's kill -9 would.
TEST_F(DataSafety, KilledPlotKeepsTheEarlierFigure) {
  const fs::path gnuplot = dir_ / "slow-gnuplot";
  std::ofstream(gnuplot) << "#!/bin/sh\nexec sleep 60\n";
  fs::permissions(gnuplot, fs::perms::owner_all);
  const Snapshot before = snapshot(dir_);
  const std::string db = (dir_ / "store.db").string(), out = (dir_ / "figures").string() + "/";
  const std::string gnuplot_path = gnuplot.string();
  std::vector<const char*> argv = {kShapescopeBin, "plot", "flops", "--db", db.c_str(), "--out", out.c_str(),
                                   "--gnuplot", gnuplot_path.c_str(), nullptr};
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, kShapescopeBin, nullptr, &attr, const_cast<char* const*>(argv.data()), environ), 0);
  posix_spawnattr_destroy(&attr);
  // Wait until the figure is being made (its temporary folder exists), then kill. On a busy machine
  // getting there can take many seconds: up to two minutes.
  bool staging = false;
  const auto start = std::chrono::steady_clock::now();
  while (!staging && std::chrono::steady_clock::now() - start < std::chrono::minutes(2)) {
    for (const auto& entry : fs::directory_iterator(dir_ / "figures"))
      if (entry.path().filename().string().rfind(".shapescope-", 0) == 0) staging = true;
    if (!staging) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(-pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(staging) << "the plot never started drawing";
  EXPECT_TRUE(WIFSIGNALED(status));
  Snapshot after = snapshot(dir_);
  // What a killed process cannot clean up is its hidden staging folder; the figure is the old one.
  for (auto it = after.begin(); it != after.end();)
    it = it->first.find("/.shapescope-") != std::string::npos ? after.erase(it) : std::next(it);
  EXPECT_EQ(difference(before, after), "");
}

// The output file itself: nothing reaches the destination before commit(), not even when the
// writer is killed; after commit() it holds exactly the new bytes.
TEST_F(DataSafety, OutputFileReplacesOnlyOnCommit) {
  const std::string path = (dir_ / "results.csv").string();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    OutputFile file(path, "--out");
    file.stream() << std::string(1 << 20, 'x');
    file.stream().flush();
    raise(SIGKILL);
    _exit(1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(read_bytes(path), "precious user data\n");
  {
    OutputFile abandoned(path, "--out");
    abandoned.stream() << "half";
  }
  EXPECT_EQ(read_bytes(path), "precious user data\n");
  OutputFile file(path, "--out");
  file.stream() << "new results\n";
  file.commit();
  EXPECT_EQ(read_bytes(path), "new results\n");
  size_t temporaries = 0;
  for (const auto& entry : fs::directory_iterator(dir_))
    temporaries += entry.path().filename().string().find(".shapescope-") != std::string::npos;
  EXPECT_EQ(temporaries, 1u);  // the killed child's, which nothing could remove
}

TEST_F(DataSafety, OutputPathChecks) {
  const std::string store = (dir_ / "store.db").string();
  EXPECT_THROW(check_output_path(store, "--out", {store}), Error);
  EXPECT_THROW(check_output_path((dir_ / "." / "store.db").string(), "--out", {store}), Error);
  EXPECT_THROW(check_output_path(store + "-journal", "--out", {store}), Error);
  EXPECT_THROW(check_output_path(dir_.string(), "--out", {}), Error);
  EXPECT_THROW(check_output_path("/dev/null", "--out", {}), Error);
  EXPECT_THROW(check_output_path((dir_ / "no" / "x.csv").string(), "--out", {}), Error);
  // Another store's -wal (or -shm, -journal) beside it, read by this command or not: never, not even
  // where a store may be replaced.
  { std::ofstream((dir_ / "other.db").string(), std::ios::binary) << std::string("SQLite format 3\0", 16); }
  for (const char* suffix : {"-wal", "-shm", "-journal"})
    EXPECT_THROW(check_output_path((dir_ / "other.db").string() + suffix, "--out", {store}, StoreAtOutput::kReplace),
                 Error) << suffix;
  EXPECT_NO_THROW(check_output_path((dir_ / "other.db-notes").string(), "--out", {store}));
  EXPECT_NO_THROW(check_output_path((dir_ / "results.csv").string(), "--out", {store}));
  EXPECT_NO_THROW(check_output_path((dir_ / "new.csv").string(), "--out", {store}));
}

// Store opens: read-only and not-yet-written read-write opens change nothing; a newer schema is
// refused without a write; the annotations table is (re)made at the first save of annotations, and a
// rebuild for another model version says so in one line.
TEST_F(DataSafety, StoreOpensWriteOnlyWhenTheyMust) {
  const fs::path store = dir_ / "store.db";
  const Snapshot before = snapshot(dir_);
  {
    Store reader(store.string(), Store::Access::kReadOnly);
    EXPECT_GT(reader.load_all().size(), 4000u);
  }
  {
    Store measuring(store.string());
    EXPECT_GT(measuring.load_all().size(), 4000u);
  }
  { Store missing((dir_ / "new.db").string()); }
  EXPECT_EQ(difference(before, snapshot(dir_)), "");

  Store(store.string()).open_for_writing();
  EXPECT_NE(read_bytes(store), before.at("store.db"));
  const int64_t id = Store(store.string(), Store::Access::kReadOnly).load_all().front().id;
  auto save = [&](int version) {
    ::testing::internal::CaptureStderr();
    Store(store.string()).save_annotations(DerivedTable{version, {"tile"}}, {{id, {{"tile", std::string("128x256")}}}});
    return ::testing::internal::GetCapturedStderr();
  };
  EXPECT_EQ(save(7), "");  // the store had no annotations table: nothing is replaced
  const std::string said = save(8);
  EXPECT_NE(said.find("store '" + store.string() + "': rebuilt the annotations table for model version 8 (it held version 7"),
            std::string::npos)
      << said;
  EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << said;

  // A WAL-mode store that a sweep wrote is read without a -wal or -shm appearing.
  const Snapshot written = snapshot(dir_);
  {
    Store reader(store.string(), Store::Access::kReadOnly);
    EXPECT_GT(reader.load_all().size(), 4000u);
  }
  EXPECT_EQ(difference(written, snapshot(dir_)), "");
}

}  // namespace
}  // namespace shapescope
