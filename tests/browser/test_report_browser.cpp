// `shapescope report` and `profile --html` in a real browser (label `browser`): each page (the
// committed H200 sweep's, a profiled step's) is opened in headless Chromium, which must load it
// without a single network request (its NetLog) and without a console message (a refused resource
// or a script error would print one), build the DOM we wrote (figures, hover titles, tables) and
// take a screenshot of it. Skips, saying why, where no Chromium is installed (Debian: apt-get install
// chromium-headless-shell; .ci/run installs it). SHAPESCOPE_SCREENSHOT=PATH (the report's) and
// SHAPESCOPE_PROFILE_SCREENSHOT=PATH keep the screenshots there, to look at.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "../cpu/cli_util.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;

const std::string kStore = std::string(SHAPESCOPE_TEST_DATA) + "/h200-2026-11-21/sweep_bf16_nn_1-4096.db";

// $SHAPESCOPE_BROWSER, else the first of Debian's Chromium programs on PATH; "" when none.
std::string find_browser() {
  if (const char* named = std::getenv("SHAPESCOPE_BROWSER")) return named;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::vector<std::string> folders;
  for (std::string dir; std::getline(dirs, dir, ':');) folders.push_back(dir);
  for (const char* name : {"chromium-headless-shell", "chromium", "chromium-browser"}) {
    for (const std::string& dir : folders) {
      const fs::path candidate = fs::path(dir) / name;
      if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
  }
  return {};
}

// What the browser did with one page.
struct Visit {
  int code = -1;
  std::string dom;        // --dump-dom
  std::string console;    // the console messages it logged
  std::string requests;   // the URLs of the network requests in its NetLog
};

class ReportInBrowser : public ::testing::Test {
 protected:
  void SetUp() override {
    browser_ = find_browser();
    if (browser_.empty())
      GTEST_SKIP() << "no Chromium on PATH (apt-get install chromium-headless-shell, or set SHAPESCOPE_BROWSER)";
    dir_ = fs::temp_directory_path() / ("shapescope_browser_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // The flags every run gets: no sandbox (CI runs as root), no GPU, nothing fetched by the browser
  // itself, a fresh profile.
  std::string browser_command(const std::string& flags, const fs::path& page) {
    const fs::path profile = dir_ / ("profile" + std::to_string(runs_++));
    return "'" + browser_ + "' --no-sandbox --disable-gpu --disable-background-networking --disable-component-update " +
           "--no-first-run --hide-scrollbars --user-data-dir='" + profile.string() + "' " + flags + " 'file://" +
           page.string() + "'";
  }

  Visit visit(const fs::path& page) {
    const fs::path netlog = dir_ / "netlog.json";
    const CliRun r = run_binary(
        "timeout 120 " + browser_command("--enable-logging=stderr --v=0 --log-net-log='" + netlog.string() + "' --dump-dom",
                                         page),
        "");
    Visit v;
    v.code = r.code;
    v.dom = r.out;
    std::stringstream lines(r.err);
    for (std::string line; std::getline(lines, line);)
      if (line.find(":CONSOLE") != std::string::npos) v.console += line + "\n";
    const std::string log = file_text(netlog.string());
    const std::regex url("\"url\":\"([^\"]*)\"");
    for (auto it = std::sregex_iterator(log.begin(), log.end(), url); it != std::sregex_iterator(); ++it)
      v.requests += (*it)[1].str() + "\n";
    return v;
  }

  // A screenshot of the page, width x height, checked to be a PNG of that size; kept at $keep_env.
  std::string screenshot(const fs::path& page, uint32_t width, uint32_t height, const char* keep_env) {
    const fs::path shot = dir_ / (page.stem().string() + ".png");
    const CliRun s = run_binary("timeout 120 " + browser_command(fmt_size(width, height) + " --screenshot='" +
                                                                     shot.string() + "'", page),
                                "");
    EXPECT_EQ(s.code, 0) << s.err;
    const std::string png = file_text(shot.string());
    if (png.size() <= 24) {
      ADD_FAILURE() << "no screenshot";
      return png;
    }
    EXPECT_EQ(png.substr(1, 3), "PNG");
    // IHDR: width and height, big-endian, at bytes 16..23.
    auto be32 = [&](size_t at) {
      return (uint32_t(uint8_t(png[at])) << 24) | (uint32_t(uint8_t(png[at + 1])) << 16) |
             (uint32_t(uint8_t(png[at + 2])) << 8) | uint32_t(uint8_t(png[at + 3]));
    };
    EXPECT_EQ(be32(16), width);
    EXPECT_EQ(be32(20), height);
    if (const char* keep = std::getenv(keep_env)) fs::copy_file(shot, keep, fs::copy_options::overwrite_existing);
    return png;
  }
  static std::string fmt_size(uint32_t width, uint32_t height) {
    return "--window-size=" + std::to_string(width) + "," + std::to_string(height);
  }

  std::string browser_;
  fs::path dir_;
  int runs_ = 0;
};

// The checks themselves can fail: a page that fetches an image and logs an error is caught by both.
TEST_F(ReportInBrowser, TheChecksCatchARequestAndAConsoleMessage) {
  const fs::path page = dir_ / "bad.html";
  std::ofstream(page) << "<!DOCTYPE html><html><head><title>bad</title></head><body><img src=\"http://192.0.2.1/x.png\">"
                         "<script>console.error('boom')</script></body></html>\n";
  const Visit v = visit(page);
  ASSERT_EQ(v.code, 0);
  EXPECT_NE(v.requests.find("http://192.0.2.1/x.png"), std::string::npos) << v.requests;
  EXPECT_NE(v.console.find("boom"), std::string::npos) << v.console;
}

TEST_F(ReportInBrowser, TheSweepsPageLoadsWithNoRequestAndNoConsoleMessage) {
  const fs::path page = dir_ / "report.html";
  const std::string store_before = file_text(kStore);
  const CliRun made = run("report --db '" + kStore + "' --out '" + page.string() + "'");
  ASSERT_EQ(made.code, 0) << made.err;
  EXPECT_TRUE(file_text(kStore) == store_before) << "report changed the store";

  const Visit v = visit(page);
  ASSERT_EQ(v.code, 0) << v.console;
  EXPECT_EQ(v.requests, "") << "the page made network requests";
  EXPECT_EQ(v.console, "") << "the page logged console messages";
  // The DOM the browser built holds what we wrote: both figures, a hover title per point in each,
  // the slow-shapes table with explain's verdicts.
  EXPECT_EQ(occurrences(v.dom, "<svg"), 2u);
  EXPECT_EQ(occurrences(v.dom, "<g class=\"tip\"><title>"), 2u * 4096u);
  EXPECT_NE(v.dom.find("Slowest shapes against their neighbours"), std::string::npos);
  EXPECT_NE(v.dom.find("2096 does 0.1 % more work in 6.8x less time than 2095"), std::string::npos);
  EXPECT_EQ(v.dom.find("<script"), std::string::npos);

  // A page of text and two figures compresses to hundreds of KB; a blank or error page to a few.
  EXPECT_GT(screenshot(page, 1280, 2400, "SHAPESCOPE_SCREENSHOT").size(), 100000u);
}

// `profile --html`: an H100 trace's GEMMs against the committed H200 store of the same model, as a
// page that fetches nothing and says first that the GPUs differ.
TEST_F(ReportInBrowser, TheProfilePageLoadsWithNoRequestAndNoConsoleMessage) {
  if (run("info").code == 0) GTEST_SKIP() << "a GPU is present: profile would measure instead of reading the store";
  const fs::path store = dir_ / "pad.db";
  fs::copy_file(std::string(SHAPESCOPE_TEST_DATA) + "/h200-2026-11-21-final/pad.db", store);
  const std::string store_before = file_text(store.string());
  const fs::path page = dir_ / "profile.html";
  const CliRun made = run("profile --trace '" + std::string(SHAPESCOPE_TEST_DATA) + "/traces/gpt2.json' --db '" +
                          store.string() + "' --html '" + page.string() + "'");
  ASSERT_EQ(made.code, 0) << made.err;
  EXPECT_TRUE(file_text(store.string()) == store_before) << "profile changed the store";

  const Visit v = visit(page);
  ASSERT_EQ(v.code, 0) << v.console;
  EXPECT_EQ(v.requests, "") << "the page made network requests";
  EXPECT_EQ(v.console, "") << "the page logged console messages";
  EXPECT_NE(v.dom.find("another GPU: the trace was recorded on NVIDIA H100 80GB HBM3 (132 SMs)"), std::string::npos);
  EXPECT_NE(v.dom.find("GEMMs by time per step"), std::string::npos);
  EXPECT_EQ(occurrences(v.dom, "<code class=\"shape\">"), 15u);  // one row per distinct GEMM of the step
  EXPECT_NE(v.dom.find("16-byte alignment"), std::string::npos);  // explain's verdict on the LM head, from the store
  EXPECT_EQ(v.dom.find("<script"), std::string::npos);

  // A page of tables compresses to a few hundred KB; a blank or error page to a few.
  EXPECT_GT(screenshot(page, 1280, 1600, "SHAPESCOPE_PROFILE_SCREENSHOT").size(), 50000u);
}

}  // namespace
}  // namespace shapescope
