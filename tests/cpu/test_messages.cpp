// Messages that name exactly what the user gave and what is wrong with it: CLI11's own wording never
// reaches the user, a value is quoted as given (never "inf"), a limit is the option's own, a store's
// bad rows and odd names are named or escaped, and nothing speaks of an option that was not given.
// Each runs the real binary on copies of committed stores.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "cli_util.hpp"
#include "device/device.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;

const std::string kData = SHAPESCOPE_TEST_DATA;
const std::string kSquares = kData + "/h200-2026-11-21/sweep_bf16_nn_1-4096.db";

int lines(const std::string& text) { return int(std::count(text.begin(), text.end(), '\n')); }

class Messages : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "shapescope_messages_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    fs::copy_file(kSquares, dir_ / "store.db");
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  CliRun in_dir(const std::string& args) { return run(args, dir_.string()); }
  // Runs SQL on a store of the folder (the test's own copy).
  void sql(const std::string& store, const std::string& statement) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / store).c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    const int rc = sqlite3_exec(db, statement.c_str(), nullptr, nullptr, &error);
    const std::string message = error ? error : "";
    sqlite3_free(error);
    sqlite3_close(db);
    ASSERT_EQ(rc, SQLITE_OK) << message;
  }
  // One line on stderr, exit `code`, the line holding every one of `words`.
  void expect_line(const std::string& args, int code, const std::vector<std::string>& words) {
    const CliRun r = in_dir(args);
    EXPECT_EQ(r.code, code) << args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1) << args << "\n" << r.err;
    for (const std::string& w : words) EXPECT_NE(r.err.find(w), std::string::npos) << args << ": no '" << w << "' in\n" << r.err;
  }
  fs::path dir_;
};

// CLI11's phrases, none of which may reach the user.
const std::vector<std::string> kParserWords = {"At Most", "required but received", "was not expected:", "were not expected",
                                               "is required", "Could not convert", "required INT", "required TEXT",
                                               "A subcommand", "Expected exactly"};

TEST_F(Messages, TheParsersWordingNeverReachesTheUser) {
  struct Case {
    std::string args;
    std::vector<std::string> words;  // what the line must name instead
  };
  const std::vector<Case> cases = {
      {"export --db store.db --db store.db", {"--db: given 2 times; give it once"}},
      {"export --db store.db --n 4 --n 5", {"--n: given 2 times; give it once, with a list as one value (1..64,128)"}},
      {"explain 1793 --samples", {"--samples: no value given", "a whole number", "shapescope explain --help"}},
      {"explain 1793 --db store.db --bogus 1", {"'--bogus' is not an option of explain", "shapescope explain --help"}},
      {"explain 1793 1794 --db store.db", {"'1794' is one argument too many", "explain"}},
      {"explain --db store.db", {"SHAPE: missing", "shapescope explain --help"}},
      {"merge out.db", {"IN: missing"}},
      {"", {"no command given"}},
      {"explain 1793 --pair-seconds abc --db store.db", {"--pair-seconds: 'abc' is not a number"}},
  };
  for (const Case& c : cases) {
    const CliRun r = in_dir(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1) << c.args << "\n" << r.err;
    for (const std::string& w : kParserWords) EXPECT_EQ(r.err.find(w), std::string::npos) << c.args << ": " << r.err;
    for (const std::string& w : c.words) EXPECT_NE(r.err.find(w), std::string::npos) << c.args << ": no '" << w << "' in\n" << r.err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "out.db"));
}

TEST_F(Messages, AValueIsQuotedAsGivenWithTheOptionsOwnRange) {
  expect_line("report --slowest x --db store.db --out r.html", 2, {"--slowest: 'x' is not a whole number from 1 to 100"});
  const CliRun slowest = in_dir("report --slowest x --db store.db --out r.html");
  EXPECT_EQ(slowest.err.find("9223372036854775807"), std::string::npos) << slowest.err;
  expect_line("report --slowest 101 --db store.db --out r.html", 2, {"--slowest: 101 must be between 1 and 100"});
  for (const std::string value : {"1e309", "-1e309", "nan", "inf"}) {
    const CliRun r = in_dir("explain 1793 --db store.db --pair-seconds " + value);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err, "shapescope: --pair-seconds: '" + value + "' is not a finite number\n");
  }
  expect_line("sweep --n 8 --dry-run --max-noise 1e400", 2, {"--max-noise: '1e400' is not a finite number"});
  expect_line("sweep --n 1..0 --dry-run", 2, {"--n: '1..0' is a reversed range (1 > 0), and sizes must be >= 1"});
  expect_line("sweep --n 0 --dry-run", 2, {"--n: '0': sizes must be >= 1"});
}

// An offset no GEMM can have is refused up front by the sweep, as every view refuses it.
TEST_F(Messages, AnOffsetPastTheLimitIsRefusedByEveryCommandAlike) {
  const std::string says = "--offset: 99999999999999 must be <= 2147483647 (elements)";
  for (const std::string args : {"sweep --n 8 --dry-run --offset 99999999999999",
                                  "explain 8 --db store.db --offset 99999999999999",
                                  "export --db store.db --offset 99999999999999",
                                  "plot flops --db store.db --offset 99999999999999 --out fig"}) {
    expect_line(args, 2, {says});
  }
  expect_line("export --db store.db --ld-pad 99999999999999", 2, {"--ld-pad: 99999999999999 must be <= 2147483647"});
}

// What the store lacks is named with the strides and offset asked for, not as the packed shape.
TEST_F(Messages, AMissingMeasurementIsNamedWithItsLeadingDimensionsAndOffset) {
  expect_line("explain 4096 --lda 4097 --offset 1 --db store.db", 3,
              {"holds no measurement of 4096x4096x4096 bf16 nn, lda 4097, offset 1 (cublas)"});
}

// A prediction of a shape no GPU can hold names SHAPE, the argument given, never --m/--n/--k.
TEST_F(Messages, AShapeTooLargeNamesShapeNotOptionsNeverGiven) {
  const CliRun r = in_dir("explain 2147483647 --gpu a100 --tile 256x128");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("shapescope: SHAPE: 2147483647x2147483647x2147483647", 0), 0u) << r.err;
  for (const std::string never : {"--m", "--n", "--k", "GPU memory"}) EXPECT_EQ(r.err.find(never), std::string::npos) << r.err;
}

// Zero, negative and NaN times are named by point, never drawn as "0.0 TFLOP/s" or left to gnuplot.
TEST_F(Messages, AStoreWithTimesThatAreNoTimesNamesTheRows) {
  sql("store.db", "UPDATE points SET median_us = 0 WHERE n = 64; UPDATE points SET min_us = -1 WHERE n = 65; "
                  "UPDATE points SET q1_us = 'nan' WHERE n = 66; UPDATE points SET median_us = -5 WHERE n = 67;");
  const std::string before = file_text((dir_ / "store.db").string());
  for (const std::string args : {"plot flops --db store.db --out fig", "report --db store.db --out r.html",
                                  "export --db store.db", "explain 1793 --db store.db"}) {
    const CliRun r = in_dir(args);
    EXPECT_EQ(r.code, 5) << args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("corrupt: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("with a time that is not a positive number"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("(64x64x64 bf16 nn: median 0 us)"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("(65x65x65 bf16 nn: min -1 us)"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(".dat"), std::string::npos) << r.err;  // no gnuplot's complaint about a data file
  }
  EXPECT_EQ(file_text((dir_ / "store.db").string()), before);
  EXPECT_FALSE(fs::exists(dir_ / "r.html"));
}

// A GPU name (or any name a store holds) with a terminal's escape sequence is printed as text.
TEST_F(Messages, NamesInAStoreArePrintedWithoutTheirEscapeCodes) {
  sql("store.db", "UPDATE points SET gpu_name = 'NVIDIA ' || char(27) || '[2J' || char(27) || ']0;owned' || char(7) || "
                  "' H200' || char(194, 155) || 'x', driver = 'x' || char(13) || 'y'");
  for (const std::string args : {"export --db store.db --n 1793", "export --db store.db --n 1793 --format csv",
                                  "explain 1793 --db store.db", "report --db store.db --out -"}) {
    const CliRun r = in_dir(args);
    EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
    for (const char c : {'\x1b', '\x07', '\r'}) EXPECT_EQ(r.out.find(c), std::string::npos) << args;
    EXPECT_EQ(r.out.find("\xc2\x9b"), std::string::npos) << args;
    EXPECT_NE(r.out.find("\\x1b[2J"), std::string::npos) << args << "\n" << r.out.substr(0, 2000);
  }
}


// Without a GPU, pad of a trace (or a list) answers from the store, as pad of a model does.
TEST_F(Messages, PadOfATraceWithoutAGpuReadsTheStore) {
  if (device_count() > 0) GTEST_SKIP() << "a GPU is present: pad would measure";
  fs::copy_file(kData + "/h200-2026-11-21-final/pad.db", dir_ / "pad.db");
  const std::string before = file_text((dir_ / "pad.db").string());
  const CliRun r = in_dir("pad --trace " + kData + "/traces/gpt2.json --db pad.db");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("measured on NVIDIA H200 (GPU-f294d34d-2190-4c77-a3fd-4577d362462b), driver 580.159.04, cuBLAS "
                       "13.1.0: 0 GEMMs measured now, 24 from the store 'pad.db'"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nrecommendation ("), std::string::npos) << r.out;
  // The store holds the step's GEMMs but none of 50257's candidates for the trace's own strides.
  EXPECT_NE(r.out.find("  50257: unknown: its candidates' GEMMs have no time (not in the store read"), std::string::npos)
      << r.out;
  EXPECT_EQ(file_text((dir_ / "pad.db").string()), before);
  expect_line("pad --gemms " + kData + "/gemms/jax-step.json --db store.db", 3,
              {"pad: no GPU here, and the store 'store.db' holds none of the 3 GEMMs of --gemms: '"});
}

// A damaged input is named, with what is wrong with it: not OUT, and never a file of the merge's own.
TEST_F(Messages, AMergeNamesTheInputThatIsBadAndWhy) {
  fs::copy_file(kData + "/h200-2026-11-21-final/pad.db", dir_ / "damaged.db");
  sql("damaged.db", "ALTER TABLE points DROP COLUMN noise");
  fs::copy_file(kData + "/h200-2026-11-21-final/explain.db", dir_ / "good.db");
  const CliRun r = in_dir("merge out.db good.db damaged.db");
  EXPECT_EQ(r.code, 5) << r.err;
  EXPECT_EQ(r.err, "shapescope: store 'damaged.db': damaged: its points table has no column 'noise', which a schema 1 "
                   "store has (it was not written by shapescope, or was changed since)\n");
  EXPECT_FALSE(fs::exists(dir_ / "out.db"));
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().filename().string().find("merge-input"), std::string::npos) << entry.path();
  // Merged with a good one, the older inputs' note is part of the one line the merge prints.
  const CliRun merged = in_dir("merge out.db good.db");
  EXPECT_EQ(merged.code, 0) << merged.err;
  EXPECT_EQ(lines(merged.out), 1) << merged.out;
  EXPECT_NE(merged.out.find("; 1 input of an older schema read through upgraded copies (left as it was)"),
            std::string::npos)
      << merged.out;
}

// The report's peak card says at which clock the peak was measured, and the fastest point's % of
// peak names the peak it is of (scaled to the point's clock): the two agree.
TEST_F(Messages, TheReportsPeakSaysWhichClockItIsOf) {
  const CliRun r = in_dir("report --db store.db --out -");
  if (r.code == 7) GTEST_SKIP() << "no gnuplot: " << r.err;
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("<div class=\"v\">687.6 TFLOP/s at 1500 MHz</div>"), std::string::npos);
  EXPECT_NE(r.out.find("a point's % of peak is of this peak scaled to the point's own SM clock"), std::string::npos);
  EXPECT_NE(r.out.find("at 4096 (87.1 % of the peak, 907.6 TFLOP/s at 1980 MHz)"), std::string::npos);
}

}  // namespace
}  // namespace shapescope
