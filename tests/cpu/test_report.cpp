// `shapescope report`: which shapes the view picks as slow, the regret and our-kernel rows (against
// numbers recomputed here from the stored medians), the HTML's self-containment, inline_svg's
// rewriting of gnuplot's SVG, and the command's refusals with the store left byte for byte.
#include <gtest/gtest.h>

#include "report/explain_report.hpp"
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "report/html_report.hpp"
#include "views/report.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;

const std::string kData = SHAPESCOPE_TEST_DATA;
const std::string kStore = kData + "/h200-2026-11-21/sweep_bf16_nn_1-4096.db";
const std::string kGallery = kData + "/h200-2026-11-21-explain/gallery.db";
const std::string kLadder = kData + "/h200-2026-11-21-ladder/ladder.db";

// A square point of size n that took `us` and ran `kernel`.
void add_point(Selection& s, int64_t n, double us, const std::string& kernel) {
  StoredPoint p;
  p.key.backend = BackendKind::kCublas;
  p.key.algo = "default";
  p.key.problem.m = p.key.problem.n = p.key.problem.k = n;
  p.result.timing.median_us = us;
  KernelRecord k;
  k.name = kernel;
  p.kernels.push_back(k);
  Annotation a;
  a.main_kernel = 0;
  s.points.push_back(p);
  s.annotations.push_back(a);
}

SweptAxis square_axis() {
  SweptAxis axis;
  axis.dim = SweptAxis::Dim::kSquare;
  axis.name = "n";
  return axis;
}

TEST(ReportSlowShapes, TheWorstOfEachKernelAgainstTheFastestLargerNeighbour) {
  Selection s;
  // Times rise with n, except 10 (3x 12's time), 11 (2x) and 30 (1.5x 31's) on other kernels.
  for (int64_t n = 1; n <= 40; ++n) {
    double us = 10 + double(n);
    std::string kernel = "fast";
    if (n == 10) us = 3 * (10 + 12), kernel = "slow_a";
    if (n == 11) us = 2 * (10 + 12), kernel = "slow_a";
    if (n == 30) us = 1.5 * (10 + 31), kernel = "slow_b";
    add_point(s, n, us, kernel);
  }
  std::reverse(s.points.begin(), s.points.end());  // the view sorts by size itself
  std::reverse(s.annotations.begin(), s.annotations.end());
  size_t slow_count = 0;
  const std::vector<SlowShape> slow = slow_shapes(s, square_axis(), 12, 1, slow_count);
  EXPECT_EQ(slow_count, 3u);
  ASSERT_EQ(slow.size(), 2u);  // 11 is slow_a's too, and one per kernel is shown
  EXPECT_EQ(s.points[slow[0].index].key.problem.n, 10);
  EXPECT_EQ(s.points[slow[0].neighbour].key.problem.n, 12);
  EXPECT_DOUBLE_EQ(slow[0].speedup, 3.0);
  EXPECT_EQ(slow[0].same_kernel, 2u);
  EXPECT_EQ(s.points[slow[1].index].key.problem.n, 30);
  EXPECT_EQ(s.points[slow[1].neighbour].key.problem.n, 31);
  EXPECT_DOUBLE_EQ(slow[1].speedup, 1.5);
  EXPECT_EQ(slow[1].same_kernel, 1u);

  const std::vector<SlowShape> two = slow_shapes(s, square_axis(), 12, 2, slow_count);
  ASSERT_EQ(two.size(), 3u);
  EXPECT_EQ(s.points[two[1].index].key.problem.n, 11);  // 2x, between 10's 3x and 30's 1.5x
  EXPECT_EQ(slow_shapes(s, square_axis(), 1, 2, slow_count).size(), 1u);
}

TEST(ReportSlowShapes, ASmallerOrFarNeighbourDoesNotCount) {
  Selection s;
  add_point(s, 1, 5, "k");     // faster, but smaller: not a neighbour that could replace 2
  add_point(s, 2, 50, "k");
  for (int64_t n = 3; n <= 2 + int64_t(kNeighbourSteps); ++n) add_point(s, n, 60, "k");
  add_point(s, 3 + int64_t(kNeighbourSteps), 1, "k");  // faster, but 9 steps above 2
  size_t slow_count = 0;
  const std::vector<SlowShape> slow = slow_shapes(s, square_axis(), 100, 100, slow_count);
  // 3..10 have the fast size within their eight steps; 2 has it nine steps above and 1 below it.
  EXPECT_EQ(slow_count, kNeighbourSteps);
  for (const SlowShape& w : slow) {
    EXPECT_NE(s.points[w.index].key.problem.n, 2);
    EXPECT_EQ(s.points[w.neighbour].key.problem.n, 3 + int64_t(kNeighbourSteps));
  }
}

TEST(ReportView, TheCommittedSweepsSlowestShapesWithExplainsVerdicts) {
  ReportRequest request;
  request.db = kStore;
  const ReportView v = report_view(request);
  ASSERT_EQ(v.main.points.size(), 4096u);
  ASSERT_TRUE(v.axis.has_value());
  ASSERT_EQ(v.slowest.size(), 12u);
  const StoredPoint& worst = v.main.points[v.slowest[0].index];
  EXPECT_EQ(worst.key.problem.n, 2095);
  EXPECT_EQ(v.main.points[v.slowest[0].neighbour].key.problem.n, 2096);
  EXPECT_NEAR(v.slowest[0].speedup,
              worst.result.timing.median_us / v.main.points[v.slowest[0].neighbour].result.timing.median_us, 1e-12);
  ASSERT_TRUE(v.slowest[0].explanation) << v.slowest[0].explain_error;
  const std::string verdict = explain_verdict_line(*v.slowest[0].explanation);
  const std::string fix = explain_fix_line(*v.slowest[0].explanation);
  EXPECT_EQ(verdict.rfind("2096 does 0.1 % more work in 6.8x less time than 2095", 0), 0u) << verdict;
  EXPECT_EQ(fix.rfind("pad to 2096", 0), 0u) << fix;
  std::map<std::string, int> kernels;
  for (size_t i = 0; i < v.slowest.size(); ++i) {
    const SlowShape& w = v.slowest[i];
    EXPECT_GE(w.speedup, kSlowSpeedup);
    if (i > 0) {
      EXPECT_LE(w.speedup, v.slowest[i - 1].speedup);
    }
    EXPECT_TRUE(w.explanation) << w.explain_error;
    const StoredPoint& p = v.main.points[w.index];
    EXPECT_LE(p.key.problem.flops(), v.main.points[w.neighbour].key.problem.flops());
    EXPECT_EQ(++kernels[p.kernels[size_t(v.main.annotations[w.index].main_kernel)].name], 1);
  }
  EXPECT_GT(v.slow_count, 3000u);  // every size that is not a multiple of 8 has a multiple above it
  EXPECT_EQ(v.how.points, 4096u);
  EXPECT_EQ(v.how.samples_min, 10);
  EXPECT_TRUE(v.regret.empty());
  EXPECT_TRUE(v.ours.empty());
}

TEST(ReportView, RegretRowsAreTheHeuristicsFirstChoiceAgainstTheFastestAlgorithm) {
  ReportRequest request;
  request.db = kGallery;
  request.filter.n = size_filter("64..4096:64", "--n");
  const ReportView v = report_view(request);
  ASSERT_EQ(v.regret.size(), 64u);
  for (size_t i = 0; i < v.regret.size(); ++i) {
    const RegretRow& r = v.regret[i];
    const StoredPoint& h0 = v.lt_points.points[r.h0];
    EXPECT_EQ(h0.key.algo, "h0");
    double best = h0.result.timing.median_us;
    for (const StoredPoint& p : v.lt_points.points)
      if (p.key.problem == h0.key.problem) best = std::min(best, p.result.timing.median_us);
    EXPECT_DOUBLE_EQ(v.lt_points.points[r.best].result.timing.median_us, best);
    EXPECT_NEAR(r.regret, h0.result.timing.median_us / best - 1, 1e-12);
    if (i > 0) {
      EXPECT_LE(r.regret, v.regret[i - 1].regret);
    }
  }
  EXPECT_GT(v.regret.front().regret, 0.05);
  EXPECT_EQ(v.main.points.front().key.backend, BackendKind::kCublas);  // the figures draw cuBLAS's default
}

TEST(ReportView, OurKernelsAgainstCublasOnTheSameShapes) {
  ReportRequest request;
  request.db = kLadder;
  request.filter.layout = Layout::kNN;
  const ReportView v = report_view(request);
  ASSERT_FALSE(v.ours.empty());
  EXPECT_FALSE(v.axis.has_value());  // squares and other shapes: no one swept size
  const auto wgmma = std::find_if(v.ours.begin(), v.ours.end(),
                                  [](const OursRow& o) { return o.variant == "05_wgmma_tma:128x256:streamk"; });
  ASSERT_NE(wgmma, v.ours.end());
  EXPECT_EQ(wgmma->shapes, 98u);
  double cublas = 0, ours = 0;
  for (const StoredPoint& p : v.main.points)
    if (p.key.problem == wgmma->largest_problem) cublas = p.result.timing.median_us;
  ASSERT_GT(cublas, 0);
  ReportRequest custom = request;
  custom.filter.backends = {"custom"};
  custom.filter.algos = {wgmma->variant};
  for (const StoredPoint& p : report_view(custom).main.points)
    if (p.key.problem == wgmma->largest_problem) ours = p.result.timing.median_us;
  EXPECT_NEAR(wgmma->largest_share, cublas / ours, 1e-12);
  EXPECT_EQ(wgmma->largest_problem.m, 4096);
  EXPECT_GE(wgmma->best_share, wgmma->median_share);
  EXPECT_LE(wgmma->worst_share, wgmma->median_share);
  for (size_t i = 1; i < v.ours.size(); ++i) EXPECT_LE(v.ours[i].median_share, v.ours[i - 1].median_share);
}

TEST(InlineSvg, ScriptsHandlersAndNamespacesGoHoverTextBecomesATitle) {
  const std::string svg =
      "<?xml version=\"1.0\" encoding=\"utf-8\"  standalone=\"no\"?>\n"
      "<svg  onload=\"gnuplot_svg.Init(evt)\" width=\"1000\" height=\"600\" viewBox=\"0 0 1000 600\"\n"
      " xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n"
      "<title>Gnuplot</title>\n<script type=\"text/javascript\" > <![CDATA[ var x = '<g>'; ]]>\n</script>\n"
      "<!-- a comment -->\n<defs><circle id='gpDot' r='0.5'/></defs>\n"
      "<g fill=\"none\" color=\"black\">\n</g>\n"
      "<g onmousemove=\"gnuplot_svg.showHypertext(evt,'1793x1793x1793\\nwaves 0.91 -> 1 (91% full)')\" "
      "onmouseout=\"gnuplot_svg.hideHypertext()\"><title> </title>\n"
      "\t<use xlink:href='#gpDot' style='filter:url(#greybox)'/></g>\n"
      "<text id=\"coord_text\" visibility=\"hidden\"> </text>\n"
      "<image x='10' xlink:href='data:image/png;base64,AAAA' onclick='gnuplot_svg.toggleGrid();'/>\n</svg>\n";
  const std::string out = inline_svg(svg, "f-");
  for (const char* gone : {"<?xml", "<script", "CDATA", "onload", "onmousemove", "onclick", "onmouseout", "xmlns",
                           "http", "Gnuplot", "<image", "coord_text", "width=", "<!--", "<g fill"})
    EXPECT_EQ(out.find(gone), std::string::npos) << gone << " in\n" << out;
  EXPECT_NE(out.find("<svg class=\"figure-svg\" viewBox=\"0 0 1000 600\">"), std::string::npos) << out;
  EXPECT_NE(out.find("<g class=\"tip\"><title>1793x1793x1793\nwaves 0.91 -&gt; 1 (91% full)</title>"), std::string::npos)
      << out;
  EXPECT_NE(out.find("<circle id='f-gpDot'"), std::string::npos) << out;
  EXPECT_NE(out.find("<use xlink:href='#f-gpDot' style='filter:url(#f-greybox)'/>"), std::string::npos) << out;
  EXPECT_EQ(occurrences(out, "<title>"), 1u);
  EXPECT_EQ(html_escape("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
}

class ReportCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("shapescope_report_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    store_before_ = file_text(kStore);
  }
  void TearDown() override {
    EXPECT_TRUE(file_text(kStore) == store_before_) << "report changed the store";
    EXPECT_FALSE(fs::exists(kStore + "-wal"));
    EXPECT_FALSE(fs::exists(kStore + "-shm"));
    fs::remove_all(dir_);
  }
  fs::path dir_;
  std::string store_before_;
};

TEST_F(ReportCommand, ThePageIsSelfContained) {
  const fs::path out = dir_ / "report.html";
  const CliRun r = run("report --db '" + kStore + "' --n 1..512 --out '" + out.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string html = file_text(out.string());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"), std::string::npos);
  // Nothing that a browser would fetch: no URL, script, external style, font or image.
  for (const char* external : {"http://", "https://", "//www.", "<script", " src=", "@import", "@font-face",
                               "<link", "<iframe", "<object", "<embed", "<image", "data:font"})
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  for (size_t at = html.find("url("); at != std::string::npos; at = html.find("url(", at + 1))
    EXPECT_EQ(html.compare(at, 5, "url(#"), 0) << html.substr(at, 40);
  for (size_t at = html.find("href="); at != std::string::npos; at = html.find("href=", at + 1))
    EXPECT_EQ(html[at + 6], '#') << html.substr(at, 40);  // in-page links and SVG references only
  // Both figures, with the hover text of each of the 512 points in each.
  EXPECT_EQ(occurrences(html, "<svg class=\"figure-svg\""), 2u);
  EXPECT_EQ(occurrences(html, "<g class=\"tip\"><title>"), 2u * 512u);
  EXPECT_NE(html.find("NVIDIA H200"), std::string::npos);
  EXPECT_NE(html.find("580.159.04"), std::string::npos);
  EXPECT_NE(html.find("Slowest shapes against their neighbours"), std::string::npos);
  EXPECT_NE(html.find("--n 1..512"), std::string::npos);
  // What was written is said on stdout, as plot and merge say it; stderr stays empty.
  EXPECT_EQ(r.out.rfind("report: 512 points of NVIDIA H200 from '", 0), 0u) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST_F(ReportCommand, RefusalsLeaveEveryFileAsItWas) {
  const fs::path out = dir_ / "old.html";
  std::ofstream(out) << "old page\n";
  struct Case {
    std::string args, words;
    int code;
  };
  const std::vector<Case> cases = {
      {"--out '" + kStore + "'", "--out", 2},
      {"--out '" + dir_.string() + "'", "--out", 2},
      {"--out /dev/null", "--out", 2},
      {"--out ''", "--out", 2},
      {"--out '" + out.string() + "' --slowest 0", "--slowest", 2},
      {"--out '" + out.string() + "' --slowest -1", "--slowest: -1", 2},
      {"--out '" + out.string() + "' --dtype fp16", "no point", 2},
      {"--out '" + out.string() + "' --gnuplot /nonexistent/gnuplot", "gnuplot", 7},  // no gnuplot
      {"--out '" + out.string() + "' --templates '" + dir_.string() + "'", "--templates", 2},
  };
  for (const Case& c : cases) {
    const CliRun r = run("report --db '" + kStore + "' " + c.args);
    EXPECT_EQ(r.code, c.code) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.words), std::string::npos) << c.args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.args << ": " << r.err;
    EXPECT_EQ(file_text(out.string()), "old page\n") << c.args;
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1) << "a file was left behind";
  const CliRun missing = run("report --db '" + (dir_ / "none.db").string() + "' --out '" + out.string() + "'");
  EXPECT_EQ(missing.code, 5) << missing.err;
}

}  // namespace
}  // namespace shapescope
