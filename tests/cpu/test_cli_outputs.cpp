// Where commands may write, run as the user runs them (the real binary, in a temporary folder of
// copies of the committed stores; files compared by checksum): never over an input's SQLite files,
// never a page, table or picture over a result store unless --force, one merge into a store at a
// time, and an output put in place only when the command ended without ^C or SIGTERM and with its
// standard output written.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "cli_util.hpp"
#include "common/error.hpp"

extern char** environ;

namespace shapescope {
namespace {

namespace fs = std::filesystem;

const std::string kData = SHAPESCOPE_TEST_DATA;
const std::string kExplain = kData + "/h200-2026-11-21-final/explain.db";       // 94 points
const std::string kOtherExplain = kData + "/h200-2026-11-21-explain/explain.db";  // 92 points, another run
const std::string kSquares = kData + "/h200-2026-11-21/sweep_bf16_nn_1-4096.db";  // 4096 points
const std::string kTrace = kData + "/traces/gpt2.json";

size_t checksum(const fs::path& path) { return std::hash<std::string>{}(file_text(path.string())); }

int64_t count_points(const std::string& path) {
  sqlite3* db = nullptr;
  int64_t n = -1;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM points", -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW)
      n = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return n;
}

// A process of the binary with its stdout and stderr in files.
struct Spawned {
  pid_t pid = 0;
  std::string out, err;
  int wait() const {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
};

Spawned spawn(const std::vector<std::string>& args, const std::string& out, const std::string& err) {
  std::vector<const char*> argv = {kShapescopeBin};
  for (const std::string& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&files, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  Spawned s;
  s.out = out;
  s.err = err;
  if (posix_spawn(&s.pid, kShapescopeBin, &files, nullptr, const_cast<char* const*>(argv.data()), environ) != 0) s.pid = -1;
  posix_spawn_file_actions_destroy(&files);
  return s;
}

class Outputs : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/shapescope_outputs_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string copy(const std::string& from, const std::string& name) {
    fs::copy_file(from, dir_ / name, fs::copy_options::overwrite_existing);
    return path(name);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir_ / name) << text; }
  std::set<std::string> files() const {
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) names.insert(entry.path().filename().string());
    return names;
  }
  // Whether a file whose name starts with `prefix` is in the folder.
  bool has_file_starting(const std::string& prefix) const {
    for (const auto& entry : fs::directory_iterator(dir_))
      if (entry.path().filename().string().rfind(prefix, 0) == 0) return true;
    return false;
  }
  // Runs `args` in the folder and expects one line of usage error naming `words`, every file as it was.
  void expect_refused(const std::string& args, const std::string& words) {
    std::map<std::string, size_t> before;
    for (const std::string& name : files()) before[name] = fs::is_regular_file(dir_ / name) ? checksum(dir_ / name) : 0;
    const CliRun r = run(args, dir_.string());
    EXPECT_EQ(r.code, int(ExitCode::kUsage)) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(r.out, "") << args;
    std::map<std::string, size_t> after;
    for (const std::string& name : files()) after[name] = fs::is_regular_file(dir_ / name) ? checksum(dir_ / name) : 0;
    EXPECT_EQ(after, before) << args;
  }

  fs::path dir_;
};

// merge wrote the merged store at an input's write-ahead-log path: every later command on the input
// was refused, and SQLite's recovery deleted the merge.
TEST_F(Outputs, MergeNeverWritesOverAnInputsSqliteFiles) {
  copy(kExplain, "good.db");
  copy(kOtherExplain, "a.db");
  copy(kExplain, "b.db");
  for (const char* suffix : {"-wal", "-journal", "-shm"})
    expect_refused(fmt::format("merge good.db{} good.db", suffix),
                   fmt::format("OUT: 'good.db{}' is the {} file of the input 'good.db'", suffix, suffix + 1));
  expect_refused("merge b.db-wal a.db b.db", "OUT: 'b.db-wal' is the wal file of the input 'b.db'");
  expect_refused("merge ./b.db-shm a.db b.db", "OUT: './b.db-shm' is the shm file of the input 'b.db'");
}

// A page, a table or a picture over a result store: refused unless --force; through a link too.
TEST_F(Outputs, PagesTablesAndPicturesNeverReplaceAStore) {
  copy(kExplain, "s.db");
  copy(kOtherExplain, "page.html");
  copy(kOtherExplain, "table.csv");
  copy(kOtherExplain, "fig.svg");
  copy(kOtherExplain, "other.db");
  fs::create_symlink("other.db", dir_ / "link.db");
  const std::string refusal = "is an SQLite database (a result store?), which this output would replace";
  expect_refused("export --db s.db --out table.csv", "--out: 'table.csv' " + refusal + "; give another name, or --force");
  expect_refused("report --db s.db --out page.html", "--out: 'page.html' " + refusal);
  expect_refused("plot flops --db s.db --n 1..64 --out fig", "--out: './fig.svg' " + refusal);
  expect_refused(fmt::format("profile --trace {} --db s.db --html link.db", kTrace), "--html: 'link.db' " + refusal);
  // sweep's --force re-measures: its --out never replaces a store.
  expect_refused("sweep --n 64 --db new.db --out table.csv", "--out: 'table.csv' " + refusal + "; give another name (or remove it first)");
  // --force replaces it, as asked.
  const CliRun r = run("export --db s.db --out table.csv --force", dir_.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(file_text(path("table.csv")).rfind("id,backend,", 0), 0u) << file_text(path("table.csv")).substr(0, 80);
}

// Two merges into one store at once (a job array's merge step run twice): the second waits for the
// first and merges into its result; neither side is lost.
TEST_F(Outputs, TwoMergesIntoOneStoreKeepBothSides) {
  const std::string a = copy(kSquares, "a.db"), b = copy(kOtherExplain, "b.db");
  const std::string base = copy(kExplain, "base.db");
  // What the two give one after the other.
  ASSERT_EQ(run(fmt::format("merge {} {} {}", path("seq.db"), base, a)).code, 0);
  ASSERT_EQ(run(fmt::format("merge {} {}", path("seq.db"), b)).code, 0);
  const int64_t both = count_points(path("seq.db"));
  ASSERT_GT(both, count_points(a));
  for (const bool exists : {true, false}) {
    for (int trial = 0; trial < 3; ++trial) {
      const std::string out = path("out.db");
      fs::remove(out);
      if (exists) {
        copy(kExplain, "out.db");
      } else {
        // Without OUT, both start from nothing: base joins the second merge's inputs.
        fs::remove(out);
      }
      const std::vector<std::string> first = exists ? std::vector<std::string>{"merge", out, a}
                                                     : std::vector<std::string>{"merge", out, base, a};
      const Spawned one = spawn(first, path("1.out"), path("1.err"));
      const Spawned two = spawn({"merge", out, b}, path("2.out"), path("2.err"));
      ASSERT_GT(one.pid, 0);
      ASSERT_GT(two.pid, 0);
      EXPECT_EQ(one.wait(), 0) << file_text(path("1.err"));
      EXPECT_EQ(two.wait(), 0) << file_text(path("2.err"));
      EXPECT_EQ(count_points(out), both) << "OUT " << (exists ? "existing" : "new") << ", trial " << trial << ": "
                                         << file_text(path("1.out")) << file_text(path("2.out"))
                                         << file_text(path("1.err")) << file_text(path("2.err"));
      EXPECT_FALSE(has_file_starting(".out.db.shapescope-"));
    }
  }
}

// A merge into a store another merge holds waits, says so in one line, and goes on when it is free.
TEST_F(Outputs, MergeIntoABusyStoreWaits) {
  const std::string out = copy(kExplain, "out.db"), b = copy(kOtherExplain, "b.db");
  // O_CLOEXEC: a lock the merge inherited would be its own, and it would wait for itself.
  const int fd = open(out.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX), 0);
  const Spawned merge = spawn({"merge", out, b}, path("m.out"), path("m.err"));
  const auto start = std::chrono::steady_clock::now();
  while (file_text(path("m.err")).find("waiting") == std::string::npos &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(10))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_NE(file_text(path("m.err")).find("merge: another merge is writing '" + out + "'"), std::string::npos)
      << file_text(path("m.err"));
  EXPECT_EQ(waitpid(merge.pid, nullptr, WNOHANG), 0) << "the merge did not wait";
  close(fd);
  EXPECT_EQ(merge.wait(), 0) << file_text(path("m.err"));
  EXPECT_EQ(count_points(out), 94 + 92);
}

// ^C or SIGTERM while a command works: the signal is held (the process stopped) until the command's
// temporary output appears, so that it lands mid-way. The old file stays, no success line is printed
// and the exit code is 130.
void interrupt_mid_way(const std::function<Spawned()>& start, const std::function<bool()>& found, bool& caught,
                       int& code) {
  caught = false;
  for (int attempt = 0; attempt < 20 && !caught; ++attempt) {
    const Spawned s = start();
    ASSERT_GT(s.pid, 0);
    int status = 0;
    const auto begin = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - begin < std::chrono::seconds(20)) {
      if (found()) {
        kill(s.pid, SIGSTOP);
        caught = true;
        break;
      }
      if (waitpid(s.pid, &status, WNOHANG) == s.pid) break;
    }
    if (!caught) continue;
    kill(s.pid, SIGTERM);
    kill(s.pid, SIGCONT);
    code = s.wait();
  }
}

TEST_F(Outputs, InterruptedMergeLeavesOutAndSaysNoSuccess) {
  const std::string out = copy(kExplain, "out.db"), a = copy(kSquares, "a.db"), b = copy(kOtherExplain, "b.db");
  const size_t before = checksum(out);
  bool caught = false;
  int code = -1;
  interrupt_mid_way([&] { return spawn({"merge", out, a, b}, path("m.out"), path("m.err")); },
                    [&] { return has_file_starting(".out.db.shapescope-"); }, caught, code);
  ASSERT_TRUE(caught) << "the merge always ended before its staged file was seen";
  EXPECT_EQ(code, int(ExitCode::kInterrupted)) << file_text(path("m.err"));
  EXPECT_EQ(file_text(path("m.out")), "");
  EXPECT_NE(file_text(path("m.err")).find("interrupted: nothing written ('" + out + "' as it was)"), std::string::npos)
      << file_text(path("m.err"));
  EXPECT_EQ(checksum(out), before);
  EXPECT_FALSE(has_file_starting(".out.db.shapescope-"));
}

TEST_F(Outputs, InterruptedReportLeavesOutAndSaysNoSuccess) {
  if (std::system("command -v gnuplot > /dev/null 2>&1") != 0) GTEST_SKIP() << "no gnuplot (CI installs gnuplot-nox)";
  const std::string db = copy(kSquares, "s.db");
  write("page.html", "the old page\n");
  bool caught = false;
  int code = -1;
  // The figures are drawn in a scratch folder beside --out while the page is made.
  interrupt_mid_way([&] { return spawn({"report", "--db", db, "--out", path("page.html")}, path("r.out"), path("r.err")); },
                    [&] { return has_file_starting(".shapescope-"); }, caught, code);
  ASSERT_TRUE(caught) << "the report always ended before its scratch folder was seen";
  EXPECT_EQ(code, int(ExitCode::kInterrupted)) << file_text(path("r.err"));
  EXPECT_EQ(file_text(path("r.out")), "");
  EXPECT_EQ(file_text(path("page.html")), "the old page\n");
  EXPECT_FALSE(has_file_starting(".shapescope-"));
  EXPECT_FALSE(has_file_starting(".page.html.shapescope-"));
}

// Standard output full: the command fails (exit 6) and its files stay as they were, never replaced
// before the line that says so could be written.
TEST_F(Outputs, FullStdoutLeavesEveryOutputAsItWas) {
  const std::string db = copy(kExplain, "s.db");
  copy(kExplain, "out.db");
  copy(kOtherExplain, "b.db");
  write("t.csv", "old table\n");
  write("page.html", "old page\n");
  for (const char* extension : {"svg", "png", "gp", "dat"}) write(std::string("fig.") + extension, "old figure\n");
  const bool gnuplot = std::system("command -v gnuplot > /dev/null 2>&1") == 0;
  std::vector<std::string> commands = {"export --db s.db --out t.csv", "merge out.db b.db", "merge new.db b.db"};
  if (gnuplot) {
    commands.push_back("plot flops --db s.db --n 1..4096 --out fig");
    commands.push_back("report --db s.db --out page.html");
  }
  for (const std::string& command : commands) {
    std::map<std::string, size_t> before;
    for (const std::string& name : files()) before[name] = checksum(dir_ / name);
    const CliRun r = run(command + " > /dev/full", dir_.string());
    EXPECT_EQ(r.code, int(ExitCode::kWrite)) << command << ": " << r.err;
    EXPECT_NE(r.err.find("standard output could not be written"), std::string::npos) << command << ": " << r.err;
    EXPECT_NE(r.err.find("nothing written"), std::string::npos) << command << ": " << r.err;
    std::map<std::string, size_t> after;
    for (const std::string& name : files()) after[name] = checksum(dir_ / name);
    EXPECT_EQ(after, before) << command;
  }
}

}  // namespace
}  // namespace shapescope
