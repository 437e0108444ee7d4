// Input files past the limits (model/input_file.hpp): JSON nested deeper than kMaxJsonDepth and
// files larger than kMaxInputBytes get one line and exit 2 through every command that reads them,
// never a crash; and the inputs the fuzz targets (tests/fuzz/) found, each as its own case.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_util.hpp"
#include "common/error.hpp"
#include "model/gemm_list.hpp"
#include "model/input_file.hpp"
#include "model/pad.hpp"
#include "model/trace_import.hpp"
#include "shape/range.hpp"
#include "model_util.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;

// A file of its own under the test's temporary folder, removed at the end of the test.
class InputFile : public ::testing::Test {
 protected:
  fs::path path(const std::string& name) {
    const fs::path p = fs::path(::testing::TempDir()) / ("shapescope_limits_" + std::to_string(getpid()) + "_" + name);
    made_.push_back(p);
    return p;
  }
  fs::path write(const std::string& name, const std::string& text) {
    const fs::path p = path(name);
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  void TearDown() override {
    for (const fs::path& p : made_) fs::remove(p);
  }
  // One line on stderr naming the option and the file, exit 2 (a crash reads as -1 or 128 + signal).
  static void expect_refused(const CliRun& r, const std::string& option, const std::string& words) {
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(occurrences(r.err, "\n"), 1u) << r.err;
    EXPECT_EQ(r.err.rfind("shapescope: " + option, 0), 0u) << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
  }

 private:
  std::vector<fs::path> made_;
};

TEST_F(InputFile, SeventyThousandLevelsOfGemmListAreOneLineNotACrash) {
  const std::string nested = std::string(70'000, '[') + std::string(70'000, ']');
  const fs::path list = write("nested.json", nested);
  const std::string words = "nests JSON arrays and objects deeper than 100 levels (at line 1)";
  expect_refused(run("profile --gemms " + list.string()), "--gemms: '" + list.string() + "'", words);
  expect_refused(run("pad --gemms " + list.string()), "--gemms: '" + list.string() + "'", words);
  expect_refused(run("profile --trace " + list.string()), "--trace: '" + list.string() + "'", words);
  expect_refused(run("pad --config " + list.string() + " --tokens 4096"), "--config: '" + list.string() + "'", words);
}

TEST_F(InputFile, AFileOverTheSizeLimitIsRefusedBeforeItIsRead) {
  // A sparse file: one byte over the limit costs no disk.
  const fs::path big = path("big.json");
  std::ofstream(big).put('[');
  fs::resize_file(big, kMaxInputBytes + 1);
  const std::string words = "is larger than 256 MiB (268435457 bytes), the limit on an input file";
  expect_refused(run("profile --gemms " + big.string()), "--gemms: '" + big.string() + "'", words);
  expect_refused(run("pad --trace " + big.string()), "--trace: '" + big.string() + "'", words);
}

// A FIFO blocks a reader until a writer comes (none will), a device may never end, a directory holds
// no text: each is refused in one line for every option that names an input file, and nothing waits
// (the timeout turns a hang into exit 137 instead of a test that never ends).
TEST_F(InputFile, AFifoADeviceOrADirectoryIsRefusedForEveryInputFile) {
  const fs::path fifo = path("pipe");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const fs::path folder = path("folder");
  fs::create_directory(folder);
  const std::string sweep = std::string(SHAPESCOPE_TEST_DATA) + "/h200-2026-11-21/sweep_bf16_nn_1-4096.db";
  const auto bounded = [](const std::string& args) { return run_binary(std::string("timeout -s KILL 20 ") + kShapescopeBin, args); };
  for (const auto& [file, words] : {std::pair{fifo.string(), "is a FIFO (named pipe), not a regular file"},
                                    std::pair{std::string("/dev/zero"), "is a character device, not a regular file"},
                                    std::pair{folder.string(), "is a directory, not a file"}}) {
    for (const std::string option : {"--trace", "--gemms"}) {
      expect_refused(bounded("profile " + option + " " + file), option + ": '" + file + "'", words);
      expect_refused(bounded("pad " + option + " " + file + " --dry-run"), option + ": '" + file + "'", words);
    }
    expect_refused(bounded("pad --config " + file + " --tokens 8 --dry-run"), "--config: '" + file + "'", words);
    expect_refused(bounded("profile --config " + file + " --tokens 8"), "--config: '" + file + "'", words);
    // A store: the store's own line (exit 5), for a reader, a writer and every other store argument.
    for (const std::string& args : {"export --db " + file, "explain 1793 --db " + file, "sweep --n 8 --dry-run --db " + file,
                                    "plot flops --db " + sweep + " --calibration " + file + " --out " + path("fig").string(),
                                    "merge " + path("merged.db").string() + " " + file}) {
      const CliRun r = bounded(args);
      EXPECT_EQ(r.code, 5) << args << ": " << r.err;
      EXPECT_EQ(r.err, "shapescope: store '" + file + "': cannot open: it " + words + "\n") << args;
    }
  }
}

// A link to nothing is named as one: not "nothing has been measured into it", which reads as an empty store.
TEST_F(InputFile, ADanglingLinkAsAStoreIsNamedAsOne) {
  const fs::path link = path("link.db");
  fs::create_symlink(path("absent.db"), link);
  const std::string gemms = std::string(SHAPESCOPE_TEST_DATA) + "/gemms/jax-step.json";
  for (const std::string& args : {"export --db " + link.string(), "explain 1793 --db " + link.string(),
                                  "profile --gemms " + gemms + " --db " + link.string(),
                                  "report --db " + link.string() + " --out " + path("r.html").string()}) {
    const CliRun r = run(args);
    EXPECT_EQ(r.code, 5) << args << ": " << r.err;
    EXPECT_EQ(r.err, "shapescope: store '" + link.string() + "': cannot open: it is a dangling symbolic link (to '" +
                         path("absent.db").string() + "', which does not exist)\n")
        << args;
  }
  EXPECT_FALSE(fs::exists(path("absent.db")));
}

TEST(JsonLimits, DepthIsCountedOutsideStringsUpToTheLimit) {
  const auto nested = [](int levels, const std::string& inner) {
    return std::string(size_t(levels), '[') + inner + std::string(size_t(levels), ']');
  };
  EXPECT_NO_THROW(parse_json_text(nested(kMaxJsonDepth, "1"), "x"));
  // Brackets inside a string, escaped quotes included, are text.
  EXPECT_NO_THROW(parse_json_text(nested(kMaxJsonDepth, R"("[[[\"[[[{{{")"), "x"));
  expect_usage_error([&] { parse_json_text(nested(kMaxJsonDepth + 1, "1"), "--gemms: 'l.json'"); }, "--gemms: 'l.json'",
                     "deeper than 100 levels (at line 1)");
  expect_usage_error([&] { parse_json_text("{\"a\":\n" + nested(kMaxJsonDepth, "{}") + "}", "o"); }, "o",
                     "deeper than 100 levels (at line 2)");
}

// Found by fuzz_range: a value with a newline made a message of two lines.
TEST(OneLine, ControlCharactersInAQuotedValueAreEscaped) {
  expect_usage_error([] { parse_range("64\nx\x01", "--n"); }, "--n: '64\\nx\\x01' is not a range", "");
  const CliRun r = run("sweep --n \"$(printf '64\\nx\\t')\" --dry-run");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "shapescope: --n: '64\\nx\\t' is not a range (expected A, A..B, A..B:STEP or A..B*FACTOR)\n");
}

// The same for an integer option's value that is not a number (an --lda with a newline in it).
TEST(OneLine, AnOptionValueThatIsNotANumberIsOneLine) {
  const CliRun r = run("explain 4096 --lda \"$(printf '1\\n2')\"");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "shapescope: --lda: '1\\n2' is not a whole number\n");
}

// Found by fuzz_gemm_list: a number beyond a double's range escaped as nlohmann's out_of_range,
// which the CLI reported as an internal error (exit 1).
TEST(JsonLimits, ANumberTooLargeForADoubleIsInvalidJson) {
  expect_usage_error([] { parse_gemm_list(R"([{"m": 8E926}])", "--gemms: 'l.json'"); }, "--gemms: 'l.json'",
                     "is not valid JSON (number overflow parsing '8E926')");
  expect_usage_error([] { parse_torch_trace(R"({"traceEvents": [1e999]})", "--trace: 't.json'"); }, "--trace: 't.json'",
                     "is not valid JSON (number overflow parsing '1e999')");
}

}  // namespace
}  // namespace shapescope
