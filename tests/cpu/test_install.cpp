// The installed tool: `cmake --install` to a temporary prefix, then the installed binary run from
// another folder finds its presets and plot templates under PREFIX/share/shapescope, not in the
// source tree; SHAPESCOPE_DATA overrides; --version names the version and what it was built with.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli_util.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;

class Installed : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    prefix_ = fs::temp_directory_path() / ("shapescope_install_" + std::to_string(getpid()));
    fs::remove_all(prefix_);
    const std::string cmd = std::string(SHAPESCOPE_CMAKE) + " --install '" + kBuildDir + "' --prefix '" +
                            prefix_.string() + "' > '" + prefix_.string() + ".log' 2>&1";
    install_code_ = std::system(cmd.c_str());
    fs::create_directories(prefix_ / "elsewhere");
  }
  static void TearDownTestSuite() {
    fs::remove_all(prefix_);
    fs::remove(prefix_.string() + ".log");
  }
  void SetUp() override { ASSERT_EQ(install_code_, 0) << "cmake --install failed: see " << prefix_ << ".log"; }

  // The installed binary, run from a folder outside both the prefix's bin/ and the source tree.
  CliRun installed(const std::string& args, const std::string& env = "env -u SHAPESCOPE_DATA") {
    return run_binary(env + " '" + (prefix_ / "bin" / "shapescope").string() + "'", args,
                      (prefix_ / "elsewhere").string());
  }

  static fs::path prefix_;
  static int install_code_;
};
fs::path Installed::prefix_;
int Installed::install_code_ = -1;

TEST_F(Installed, PutsTheBinaryAndItsDataUnderThePrefix) {
  EXPECT_TRUE(fs::is_regular_file(prefix_ / "bin" / "shapescope"));
  EXPECT_TRUE(fs::is_regular_file(prefix_ / "share" / "shapescope" / "models" / "gpt2.json"));
  EXPECT_TRUE(fs::is_regular_file(prefix_ / "share" / "shapescope" / "plots" / "flops.gp"));
}

TEST_F(Installed, VersionNamesTheBuildAndTheInstalledData) {
  const CliRun r = installed("--version");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("shapescope ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(SHAPESCOPE_GPU_BUILD ? "built with CUDA " : "built with no GPU support"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find((prefix_ / "share" / "shapescope" / "models").string()), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(SHAPESCOPE_MODELS_DIR), std::string::npos) << "the installed binary reads the source tree: "
                                                                  << r.out;
}

TEST_F(Installed, PadFindsItsPresetsFromAnotherFolder) {
  const CliRun r = installed("pad --model gpt2 --tokens 12288 --dry-run");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("lm_head"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("50257"), std::string::npos) << r.out;
}

TEST_F(Installed, PlotFindsItsTemplatesFromAnotherFolder) {
  if (std::system("command -v gnuplot > /dev/null 2>&1") != 0) GTEST_SKIP() << "no gnuplot (CI installs gnuplot-nox)";
  const std::string store = std::string(SHAPESCOPE_TEST_DATA) + "/h200-2026-11-21/sweep_bf16_nn_1-4096.db";
  const CliRun r = installed("plot flops --db '" + store + "' --out figs/");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::is_regular_file(prefix_ / "elsewhere" / "figs" / "flops.svg")) << r.err;
}

TEST_F(Installed, ReportFindsItsTemplatesFromAnotherFolder) {
  if (std::system("command -v gnuplot > /dev/null 2>&1") != 0) GTEST_SKIP() << "no gnuplot (CI installs gnuplot-nox)";
  const std::string store = std::string(SHAPESCOPE_TEST_DATA) + "/h200-2026-11-21/sweep_bf16_nn_1-4096.db";
  const CliRun r = installed("report --db '" + store + "' --n 1..64 --out page.html");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::is_regular_file(prefix_ / "elsewhere" / "page.html")) << r.err;
}

TEST_F(Installed, DataOverrideIsHonouredAndNamedWhenMissing) {
  const CliRun r = installed("pad --model gpt2 --tokens 12288 --dry-run", "SHAPESCOPE_DATA=/nonexistent/data");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/data/models"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace shapescope
