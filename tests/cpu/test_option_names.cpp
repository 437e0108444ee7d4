// One name, one meaning: an option shared by several commands means the same in each, is refused in
// the same line in each, and shows the default written in one place. Runs the real binary on copies
// of committed stores (one H200's squares, one H100's explain points, and the two merged).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "cli_util.hpp"
#include "common/error.hpp"
#include "model/device_profile.hpp"
#include "store/store.hpp"
#include "views/explain.hpp"
#include "views/pad.hpp"
#include "views/profile.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;

const std::string kData = SHAPESCOPE_TEST_DATA;
const std::string kH200 = kData + "/h200-2026-11-21/sweep_bf16_nn_1-4096.db";
const std::string kH100 = kData + "/h100-2026-11-25-explain/explain.db";

class OptionNames : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "shapescope_names_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    fs::copy_file(kH200, dir_ / "h200.db");
    std::ofstream(dir_ / "gemms.csv") << "m,n,k,layout,dtype,batch,count\n1793,1793,1793,nn,bf16,1,1\n";
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  CliRun in_dir(const std::string& args) { return run(args, dir_.string()); }
  // Both GPUs in one store (merge reads its inputs only).
  void merge_both() {
    const CliRun m = in_dir("merge both.db h200.db '" + kH100 + "'");
    ASSERT_EQ(m.code, 0) << m.err;
  }
  fs::path dir_;
};

// The GPU names of an export's CSV rows, in order.
std::vector<std::string> gpu_column(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  size_t column = 0, at = 0;
  for (size_t start = 0; (at = line.find(',', start)) != std::string::npos && line.substr(start, at - start) != "gpu_name";
       start = at + 1)
    ++column;
  std::vector<std::string> names;
  while (std::getline(in, line)) {
    size_t start = 0;
    for (size_t c = 0; c < column; ++c) start = line.find(',', start) + 1;
    names.push_back(line.substr(start, line.find(',', start) - start));
  }
  return names;
}

// --gpu KEY is a GPU model in every command; a GPU's name is refused, and where the command selects
// stored points the line names --gpu-name.
TEST_F(OptionNames, GpuIsAModelInEveryCommand) {
  const std::string keys = profile_keys();
  for (const std::string command : {"export --db h200.db", "plot flops --db h200.db", "report --db h200.db",
                                    "explain 1793 --db h200.db", "plot tilegrid 1793 --tile 256x128"}) {
    const CliRun r = in_dir(command + " --gpu 'H100 80GB'");
    EXPECT_EQ(r.code, int(ExitCode::kUsage)) << command << "\n" << r.err;
    const bool selects = command.rfind("explain", 0) != 0;
    EXPECT_EQ(r.err, "shapescope: --gpu: 'H100 80GB' is not a known GPU profile (" + keys + ")" +
                         (selects ? "; a GPU's name as the store records it: --gpu-name 'H100 80GB'" : "") + "\n")
        << command;
    EXPECT_TRUE(r.out.empty()) << command;
  }
  // An alias is the profile's key: the model, not a part of a name.
  const CliRun model = in_dir("plot tilegrid 1793 --gpu H100 --tile 256x128 --out fig/");
  if (model.code != int(ExitCode::kNoGnuplot)) {
    ASSERT_EQ(model.code, 0) << model.err;
    EXPECT_TRUE(fs::exists(dir_ / "fig" / "tilegrid-1793-h100-sxm.svg"));
  }
}

TEST_F(OptionNames, GpuSelectsTheModelsPointsAndGpuNameTheName) {
  merge_both();
  const CliRun h100 = in_dir("export --db both.db --n 1793 --gpu h100");
  ASSERT_EQ(h100.code, 0) << h100.err;
  const CliRun h200 = in_dir("export --db both.db --n 1793 --gpu h200");
  ASSERT_EQ(h200.code, 0) << h200.err;
  const std::vector<std::string> h100_names = gpu_column(h100.out), h200_names = gpu_column(h200.out);
  ASSERT_FALSE(h100_names.empty());
  ASSERT_FALSE(h200_names.empty());
  for (const std::string& name : h100_names) EXPECT_EQ(name, "NVIDIA H100 80GB HBM3");
  for (const std::string& name : h200_names) EXPECT_EQ(name, "NVIDIA H200");
  // The name's own filter finds the same points, case-insensitive.
  const CliRun by_name = in_dir("export --db both.db --n 1793 --gpu-name 'h100 80gb'");
  ASSERT_EQ(by_name.code, 0) << by_name.err;
  EXPECT_EQ(by_name.out, h100.out);
  // Neither option takes the other's values.
  const CliRun no_such = in_dir("export --db both.db --gpu a100");
  EXPECT_EQ(no_such.code, int(ExitCode::kUsage));
  EXPECT_NE(no_such.err.find("--gpu: 'a100' matches no GPU in 'both.db'"), std::string::npos) << no_such.err;
  const CliRun key_as_name = in_dir("export --db both.db --gpu-name h100-sxm");
  EXPECT_EQ(key_as_name.code, int(ExitCode::kUsage));
  EXPECT_NE(key_as_name.err.find("--gpu-name: 'h100-sxm' matches no GPU"), std::string::npos) << key_as_name.err;
  const CliRun empty = in_dir("export --db both.db --gpu-name ''");
  EXPECT_EQ(empty.code, int(ExitCode::kUsage));
  EXPECT_EQ(empty.err, "shapescope: --gpu-name: '' is empty (part of a GPU's name as the store records it)\n");
  // A picture of both is refused with the option that tells them apart: their models differ.
  const CliRun mixed = in_dir("plot flops --db both.db --n 1793 --out fig/");
  EXPECT_EQ(mixed.code, int(ExitCode::kUsage));
  EXPECT_EQ(mixed.err, "shapescope: --gpu: the selection mixes GPUs 'NVIDIA H100 80GB HBM3', 'NVIDIA H200'; choose one "
                       "(e.g. --gpu h100-sxm)\n");
}

// --format json is the convention; explain, pad and profile take --json as the same option.
TEST_F(OptionNames, FormatJsonIsTheJsonOfEveryCommand) {
  for (const std::string command : {"explain 1793 --db h200.db", "pad --model gpt2 --tokens 12288 --dry-run",
                                    "profile --gemms gemms.csv --db h200.db --no-verdict"}) {
    const CliRun json = in_dir(command + " --format json");
    ASSERT_EQ(json.code, 0) << command << "\n" << json.err;
    EXPECT_NO_THROW((void)nlohmann::json::parse(json.out)) << command;
    EXPECT_EQ(in_dir(command + " --json").out, json.out) << command;
    const CliRun table = in_dir(command + " --format table");
    ASSERT_EQ(table.code, 0) << command << "\n" << table.err;
    EXPECT_EQ(in_dir(command).out, table.out) << command;
    const CliRun csv = in_dir(command + " --format csv");
    EXPECT_EQ(csv.code, int(ExitCode::kUsage)) << command;
    EXPECT_EQ(csv.err, "shapescope: --format: 'csv' is not a format (table, json)\n") << command;
    const CliRun both = in_dir(command + " --json --format table");
    EXPECT_EQ(both.code, int(ExitCode::kUsage)) << command;
    EXPECT_NE(both.err.find("--format: cannot be given with --json"), std::string::npos) << both.err;
  }
  for (const std::string command : {"export --db h200.db --n 1..3", "sweep --n 64 --dry-run"}) {
    const CliRun r = in_dir(command + " --format yaml");
    EXPECT_EQ(r.code, int(ExitCode::kUsage)) << command;
    EXPECT_EQ(r.err, "shapescope: --format: 'yaml' is not a format (table, csv, json)\n") << command;
  }
}

// A shared option is refused in the same line by every command that takes it.
TEST_F(OptionNames, SharedOptionsAreRefusedAlike) {
  for (const std::string command : {"sweep --n 64 --dry-run", "explain 1793 --db h200.db", "export --db h200.db",
                                    "plot flops --db h200.db", "report --db h200.db",
                                    "pad --model gpt2 --tokens 12288 --dry-run"}) {
    const CliRun r = in_dir(command + " --dtype bf8");
    EXPECT_EQ(r.code, int(ExitCode::kUsage)) << command;
    EXPECT_EQ(r.err, "shapescope: --dtype: 'bf8' is not a dtype (bf16, fp16, fp32, tf32, fp8)\n") << command;
  }
  for (const std::string command : {"sweep", "export --db h200.db", "report --db h200.db", "plot flops --db h200.db"}) {
    const CliRun r = in_dir(command + " --n 64 --out ''");
    EXPECT_EQ(r.code, int(ExitCode::kUsage)) << command;
    EXPECT_EQ(r.err.rfind("shapescope: --out: '' is empty (", 0), 0u) << command << "\n" << r.err;
    for (const std::string dim : {"--m", "--k", "--batch"}) {
      const CliRun d = in_dir(command + " " + dim + " ''");
      EXPECT_EQ(d.code, int(ExitCode::kUsage)) << command << " " << dim;
      EXPECT_EQ(d.err, "shapescope: " + dim + ": '' is empty\n") << command << " " << dim;
    }
  }
}

// A selection's sizes are read as the option is: a bad range is refused in the words sweep's plan
// uses, before any store is opened.
TEST_F(OptionNames, SelectionSizesAreReadAsGiven) {
  for (const std::string command : {"sweep --dry-run", "export --db missing.db", "report --db missing.db --out r.html",
                                    "plot flops --db missing.db"}) {
    const CliRun r = in_dir(command + " --n 5..1");
    EXPECT_EQ(r.code, int(ExitCode::kUsage)) << command;
    EXPECT_EQ(r.err, "shapescope: --n: '5..1' is a reversed range (5 > 1); write '1..5'\n") << command;
  }
}

// The line of `help` that shows `option`, "" when none does.
std::string help_line(const std::string& help, const std::string& option) {
  std::istringstream in(help);
  for (std::string line; std::getline(in, line);)
    if (line.find("  " + option + " ") != std::string::npos) return line;
  return "";
}

// Each default is written once, where the command's request keeps it: --help shows that value.
TEST(OptionDefaults, ComeFromTheRequestsTheyFill) {
  const std::vector<std::pair<std::string, double>> pairs = {{"explain", ExplainRequest{}.pair_seconds},
                                                             {"pad", PadRequest{}.pair_seconds},
                                                             {"profile", ProfileRequest{}.pair_seconds}};
  for (const auto& [command, seconds] : pairs) {
    const std::string line = help_line(run(command + " --help").out, "--pair-seconds");
    std::ostringstream shown;  // CLI11 shows a default as "--name TYPE=VALUE"
    shown << "=" << seconds << " ";
    EXPECT_NE(line.find(shown.str()), std::string::npos) << command << ": " << line;
  }
  for (const std::string command : {"info", "sweep", "explain", "pad", "profile", "plot", "export", "report"}) {
    const std::string line = help_line(run(command + " --help").out, "--db");
    EXPECT_NE(line.find(std::string("=") + kDefaultStore + " "), std::string::npos) << command << ": " << line;
  }
}

}  // namespace
}  // namespace shapescope
