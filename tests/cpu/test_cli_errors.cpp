// Failures at the edges of a command: its outputs cannot be written (a full disk, /dev/full, a
// closed stdout or stderr), an output that is one of its own inputs, an output behind a symbolic
// link, odd --out values. Each runs the real binary in a temporary folder holding a copy of a
// committed store and compares checksums (CI runs as root: permissions protect nothing).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "cli_util.hpp"
#include "common/error.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;

const std::string kData = SHAPESCOPE_TEST_DATA;
const std::string kSquares = kData + "/h200-2026-11-21/sweep_bf16_nn_1-4096.db";
const std::string kTemplates = std::string(SHAPESCOPE_TEST_DATA) + "/../../plots";

int lines(const std::string& text) { return int(std::count(text.begin(), text.end(), '\n')); }

std::string checksum_of(const fs::path& path) { return file_text(path.string()); }

class CliErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "shapescope_errors_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    fs::copy_file(kSquares, dir_ / "store.db");
    std::ofstream(dir_ / "gemms.csv") << "m,n,k,layout,dtype,batch,count\n1793,1793,1793,nn,bf16,1,1\n";
    fs::create_directories(dir_ / "templates");
    for (const char* name : {"flops.gp", "waves.gp"}) fs::copy_file(fs::path(kTemplates) / name, dir_ / "templates" / name);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  // `shapescope ARGS` in the folder; ARGS may redirect stdout.
  CliRun in_dir(const std::string& args) { return run(args, dir_.string()); }
  // `shapescope ARGS` with stderr closed (or redirected by `stderr`): only the exit code is seen.
  int with_stderr(const std::string& args, const std::string& stderr_to) {
    return run_binary("{ " + std::string(kShapescopeBin), args + " " + stderr_to + "; }", dir_.string()).code;
  }
  // `shapescope ARGS` as on a full disk: no file may grow past 8 blocks (the shell's ulimit -f; the
  // write fails with EFBIG instead of SIGXFSZ, which is ignored).
  CliRun on_full_disk(const std::string& args) {
    return run_binary("trap '' XFSZ; ulimit -f 8; " + std::string(kShapescopeBin), args, dir_.string());
  }
  fs::path dir_;
};

// A lost output is an error: exit 6 and one line, never 0 with the output gone.
TEST_F(CliErrors, UnwritableStdoutFailsEveryCommand) {
  for (const std::string& args :
       {std::string("export --db store.db"), std::string("explain 1793 --db store.db"),
        std::string("explain 1793 --db store.db --json"), std::string("pad --model gpt2 --tokens 12288 --train --dry-run"),
        std::string("sweep --n 1..64 --db store.db --dry-run"), std::string("--help"), std::string("export --help"),
        std::string("profile --gemms gemms.csv --db store.db")}) {
    for (const char* target : {"> /dev/full", ">&-"}) {
      const CliRun r = in_dir(args + " " + target);
      EXPECT_EQ(r.code, int(ExitCode::kWrite)) << args << " " << target << "\n" << r.err;
      EXPECT_NE(r.err.find("standard output could not be written"), std::string::npos) << args << "\n" << r.err;
    }
  }
}

// A reader that stops early (| head) closes the pipe: a lost output too (exit 6, one line), not a
// process killed by SIGPIPE (exit 141). The plan's 250 kB outgrow the pipe's buffer.
TEST_F(CliErrors, AClosedPipeIsALostOutput) {
  run_binary("{ " + std::string(kShapescopeBin),
             "sweep --n 1..4096 --dry-run 2>err.txt; echo $? > code.txt; } | head -c 1 >/dev/null", dir_.string());
  EXPECT_EQ(file_text((dir_ / "code.txt").string()), "6\n");
  const std::string err = file_text((dir_ / "err.txt").string());
  EXPECT_NE(err.find("standard output could not be written"), std::string::npos) << err;
  EXPECT_EQ(occurrences(err, "shapescope: "), 1u) << err << "(the plan's own lines go to stderr too)";
}

// `export > points.csv` on a full disk: exit 6, not a silently truncated file.
TEST_F(CliErrors, FullDiskUnderStdoutIsAnError) {
  const CliRun r = on_full_disk("export --db store.db > points.csv");
  EXPECT_EQ(r.code, int(ExitCode::kWrite)) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
}

// A full disk under --out is no bad option: exit 6, naming --out's file, not the hidden temporary
// one, and leaving no file behind.
TEST_F(CliErrors, FullDiskUnderOutNamesTheTarget) {
  const CliRun r = on_full_disk("export --db store.db --out points.csv");
  EXPECT_EQ(r.code, int(ExitCode::kWrite)) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("'points.csv'"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(".shapescope-"), std::string::npos) << r.err;
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().filename().string().find(".shapescope-"), std::string::npos) << entry.path();
  EXPECT_FALSE(fs::exists(dir_ / "points.csv"));
}

// The error path never throws: a closed or full stderr keeps the documented exit code.
TEST_F(CliErrors, ClosedOrFullStderrKeepsTheExitCode) {
  for (const char* to : {"2>&-", "2>/dev/full"}) {
    EXPECT_EQ(with_stderr("export --db nosuch.db", to), int(ExitCode::kStore)) << to;
    EXPECT_EQ(with_stderr("info", to), int(ExitCode::kNoGpu)) << to;
    EXPECT_EQ(with_stderr("sweep --n 0", to), int(ExitCode::kUsage)) << to;
    EXPECT_EQ(with_stderr("nosuchcommand", to), int(ExitCode::kUsage)) << to;
    EXPECT_EQ(with_stderr("export --db store.db --n 1..4 > /dev/null", to), 0) << to;
  }
}

// An unknown command or a leading unknown option is named, not "a subcommand is required".
TEST_F(CliErrors, UnknownCommandIsNamed) {
  for (const std::string word : {"frobnicate", "--frob"}) {
    const CliRun r = in_dir(word);
    EXPECT_EQ(r.code, int(ExitCode::kUsage)) << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("'" + word + "'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("sweep"), std::string::npos) << r.err;
  }
}

// An integer option is read whole and in decimal: never clamped, never octal.
TEST_F(CliErrors, IntegerOptionsAreReadWhole) {
  const CliRun huge = in_dir("sweep --n 64 --lda 99999999999999999999 --dry-run");
  EXPECT_EQ(huge.code, int(ExitCode::kUsage)) << huge.err;
  EXPECT_NE(huge.err.find("--lda: '99999999999999999999'"), std::string::npos) << huge.err;
  EXPECT_EQ(huge.err.find("9223372036854775807 must"), std::string::npos) << huge.err;
  const CliRun octal = in_dir("sweep --n 64 --lda 010 --dry-run");
  EXPECT_EQ(octal.code, int(ExitCode::kUsage)) << octal.err;
  EXPECT_NE(octal.err.find("--lda: 10 "), std::string::npos) << octal.err;
}

// No command writes over its own inputs: plot's and report's templates, under any spelling.
TEST_F(CliErrors, TemplatesAreNeverOverwritten) {
  const std::string before = checksum_of(dir_ / "templates" / "flops.gp");
  for (const std::string& args :
       {std::string("plot flops --db store.db --templates templates --out templates/"),
        std::string("plot flops --db store.db --templates templates --out ./templates/flops"),
        std::string("report --db store.db --templates templates --out templates/flops.gp"),
        std::string("report --db store.db --templates ./templates --out templates/../templates/waves.gp")}) {
    const CliRun r = in_dir(args);
    EXPECT_EQ(r.code, int(ExitCode::kUsage)) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("reads"), std::string::npos) << args << "\n" << r.err;
  }
  EXPECT_EQ(checksum_of(dir_ / "templates" / "flops.gp"), before);
  EXPECT_EQ(checksum_of(dir_ / "templates" / "waves.gp"), file_text(kTemplates + "/waves.gp"));
  EXPECT_FALSE(fs::exists(dir_ / "templates" / "flops.dat"));
}

// A symbolic link as --out: its target is replaced, the link stays a link.
TEST_F(CliErrors, OutputThroughASymlinkWritesItsTarget) {
  fs::create_directories(dir_ / "real");
  std::ofstream(dir_ / "real" / "points.csv") << "old\n";
  fs::create_symlink("real/points.csv", dir_ / "link.csv");
  const CliRun r = in_dir("export --db store.db --n 1..3 --out link.csv");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.csv"));
  EXPECT_EQ(lines(file_text((dir_ / "real" / "points.csv").string())), 4);
  // No temporary file is left beside the link or the target.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "real"), {}), 1);
}

// merge's OUT as a symbolic link: the merge lands in the link's target, and the link stays.
TEST_F(CliErrors, MergeThroughASymlinkWritesItsTarget) {
  fs::create_directories(dir_ / "real");
  fs::copy_file(dir_ / "store.db", dir_ / "real" / "merged.db");
  fs::copy_file(kData + "/h200-2026-11-21-explain/explain.db", dir_ / "other.db");
  fs::create_symlink("real/merged.db", dir_ / "link.db");
  const std::string before = checksum_of(dir_ / "real" / "merged.db");
  const CliRun r = in_dir("merge link.db other.db");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.db"));
  EXPECT_NE(checksum_of(dir_ / "real" / "merged.db"), before);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "real"), {}), 1);
  const CliRun again = in_dir("export --db link.db --format csv");
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_GT(lines(again.out), lines(in_dir("export --db store.db --format csv").out));
}

// One store under two spellings is one GPU, not two.
TEST_F(CliErrors, OneStoreGivenTwiceIsRefused) {
  for (const std::string& args : {std::string("explain 1793 --db store.db --db ./store.db"),
                                  std::string("plot compare --db store.db --db ../" + dir_.filename().string() +
                                              "/store.db --n 1..64 --out cmp")}) {
    const CliRun r = in_dir(args);
    EXPECT_EQ(r.code, int(ExitCode::kUsage)) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("given twice"), std::string::npos) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << args << "\n" << r.out;
  }
}

// A dry run that promises to reuse the store's points opens the store: a file that is no store
// fails it as it would fail the real run.
TEST_F(CliErrors, DryRunChecksTheStore) {
  std::ofstream(dir_ / "junk.db") << "not a database, just some bytes that SQLite will not take for one\n";
  const std::string junk = checksum_of(dir_ / "junk.db");
  for (const std::string& args : {std::string("sweep --n 1..64 --dry-run --db junk.db"),
                                  std::string("pad --model gpt2 --tokens 12288 --train --dry-run --db junk.db"),
                                  std::string("pad --gemms gemms.csv --dry-run --db junk.db")}) {
    const CliRun r = in_dir(args);
    EXPECT_EQ(r.code, int(ExitCode::kStore)) << args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1) << args << "\n" << r.err;
  }
  EXPECT_EQ(checksum_of(dir_ / "junk.db"), junk);
  EXPECT_EQ(in_dir("sweep --n 1..64 --dry-run --db absent.db").code, 0);
  EXPECT_FALSE(fs::exists(dir_ / "absent.db"));
}

// An option that would do nothing in its combination is refused, not ignored.
TEST_F(CliErrors, OptionsThatDoNothingAreRefused) {
  for (const std::string& args : {std::string("export --db store.db --wide"),
                                  std::string("export --db store.db --format json --wide"),
                                  std::string("sweep --n 64 --format csv --wide")}) {
    const CliRun r = in_dir(args);
    EXPECT_EQ(r.code, int(ExitCode::kUsage)) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("--wide"), std::string::npos) << args << "\n" << r.err;
  }
}

// "-" is standard output; an empty --out is refused, not taken as standard output.
TEST_F(CliErrors, DashIsStdoutAndEmptyIsRefused) {
  const CliRun dash = in_dir("export --db store.db --n 1..3 --out -");
  EXPECT_EQ(dash.code, 0) << dash.err;
  EXPECT_EQ(lines(dash.out), 4);
  EXPECT_FALSE(fs::exists(dir_ / "-"));
  for (const std::string& args : {std::string("export --db store.db --out ''"), std::string("sweep --n 64 --out ''"),
                                  std::string("report --db store.db --out ''")}) {
    const CliRun r = in_dir(args);
    EXPECT_EQ(r.code, int(ExitCode::kUsage)) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("--out"), std::string::npos) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << args;
  }
  const CliRun plot = in_dir("plot flops --db store.db --out -");
  EXPECT_EQ(plot.code, int(ExitCode::kUsage)) << plot.err;
  EXPECT_FALSE(fs::exists(dir_ / "-.svg"));
}

}  // namespace
}  // namespace shapescope
