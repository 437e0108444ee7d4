// profile's what-ifs from recorded explanations: a fix's saving per step from its paired ratio and
// interval, the ranking, the step with each GEMM's best change, and what is left out.
#include <gtest/gtest.h>

#include <sstream>

#include "report/profile_html.hpp"
#include "report/profile_report.hpp"
#include "views/profile.hpp"
#include "views/what_ifs.hpp"

namespace shapescope {
namespace {

ExplainPoint point(Role role, double us, std::optional<PairedRatio> paired = std::nullopt) {
  ExplainPoint p;
  p.role = role;
  p.time_us = us;
  p.paired = paired;
  return p;
}

PairedRatio ratio(double low, double median, double high) {
  PairedRatio r;
  r.low = low, r.median = median, r.high = high, r.pairs = 16;
  return r;
}

// One GEMM of `calls` per step at `row_us`, whose explanation's one fix (a padding to a point at
// `fix_us`, the target at `target_us` in explain's passes) has the paired ratio `r`.
ProfileEntry padded_entry(double calls, double row_us, double target_us, double fix_us, std::optional<PairedRatio> r) {
  ProfileEntry e;
  e.row.calls_per_step = calls;
  e.row.time = GemmTime{row_us, 0.01};
  ExplainReport x;
  x.points = {point(Role::kTarget, target_us), point(Role::kNeighbour, fix_us, r)};
  Fix f;
  f.kind = FixKind::kPadUp;
  f.point = 1;
  f.time_us = fix_us;
  x.explanation.fixes = {f};
  e.explanation = x;
  return e;
}

TEST(WhatIfs, ASavingIsCallsTimesTimesOneMinusThePairedRatioWithItsInterval) {
  ProfileResult r;
  r.measured = MeasurementSummary{};
  r.totals.measured_us = 10000;
  // 10 calls of 500 us; the fix takes 0.8 of the GEMM (0.78..0.82 paired): 1000 us per step (900..1100).
  r.entries.push_back(padded_entry(10, 500, 480, 384, ratio(0.78, 0.8, 0.82)));
  // 100 calls of 20 us, a fix at 0.5: 1000 us too, but unpaired.
  r.entries.push_back(padded_entry(100, 20, 20, 10, std::nullopt));
  // A fix whose interval straddles the 2 % minimum effect: not a what-if.
  r.entries.push_back(padded_entry(100, 30, 30, 29.4, ratio(0.97, 0.98, 0.99)));
  // 4 calls of 200 us, a fix at 0.9: 80 us per step.
  r.entries.push_back(padded_entry(4, 200, 200, 180, ratio(0.89, 0.9, 0.91)));
  const WhatIfs w = what_ifs(r);
  ASSERT_EQ(w.ranked.size(), 3u);
  EXPECT_NEAR(w.ranked[0].saving_us, 1000, 1e-9);
  EXPECT_EQ(w.ranked[0].entry, 0u) << "equal savings keep the profile's order";
  EXPECT_NEAR(*w.ranked[0].saving_low_us, 10 * 500 * (1 - 0.82), 1e-9);
  EXPECT_NEAR(*w.ranked[0].saving_high_us, 10 * 500 * (1 - 0.78), 1e-9);
  EXPECT_EQ(w.ranked[1].entry, 1u);
  EXPECT_FALSE(w.ranked[1].paired());
  EXPECT_EQ(w.not_paired, 1u);
  EXPECT_NEAR(w.ranked[2].saving_us, 80, 1e-9);
  EXPECT_EQ(w.ranked[0].kind, WhatIfKind::kPadding);
  EXPECT_NEAR(w.with_all_us, 10000 - 1000 - 1000 - 80, 1e-9);
}

TEST(WhatIfs, AGroupedCallSlowerThanItsLoopIsAWhatIfAlreadyInTheTotal) {
  ProfileResult r;
  r.measured = MeasurementSummary{};
  r.totals.measured_us = 5000;
  ProfileEntry e;
  e.row.calls_per_step = 2;
  e.row.time = GemmTime{300, 0.01};  // the faster way, as profile takes it
  e.grouped_us = 660;
  e.loop_us = 300;
  r.entries.push_back(e);
  ProfileEntry close = e;
  close.grouped_us = 301;  // within 2 %: nothing to change
  r.entries.push_back(close);
  ProfileEntry ours = e;
  ours.custom_us = 290;  // our grouped kernel beats the loop: the grouped call stays
  ours.row.time = GemmTime{290, 0.01};
  r.entries.push_back(ours);
  const WhatIfs w = what_ifs(r);
  ASSERT_EQ(w.ranked.size(), 1u);
  EXPECT_EQ(w.ranked[0].kind, WhatIfKind::kGrouping);
  EXPECT_NEAR(w.ranked[0].saving_us, 2 * 360, 1e-9);
  EXPECT_DOUBLE_EQ(w.with_all_us, 5000) << "the row's time already is the loop's";
  EXPECT_EQ(what_if_name(WhatIfKind::kGrouping), "grouping");
}

TEST(WhatIfs, OneChangeOfEachKindPerGemmTheOneThatSavesMost) {
  ProfileResult r;
  r.measured = MeasurementSummary{};
  r.totals.measured_us = 10000;
  ProfileEntry e = padded_entry(10, 500, 500, 400, ratio(0.79, 0.8, 0.81));
  ExplainReport& x = *e.explanation;
  x.points.push_back(point(Role::kNeighbour, 300, ratio(0.59, 0.6, 0.61)));  // a better padding
  x.points.push_back(point(Role::kAlternative, 450, ratio(0.89, 0.9, 0.91)));
  Fix better = x.explanation.fixes.front(), algorithm = better;
  better.point = 2, better.time_us = 300;
  algorithm.kind = FixKind::kAlgorithm, algorithm.point = 3, algorithm.time_us = 450;
  x.explanation.fixes.push_back(better);
  x.explanation.fixes.push_back(algorithm);
  r.entries.push_back(e);
  const WhatIfs w = what_ifs(r);
  ASSERT_EQ(w.ranked.size(), 2u);
  EXPECT_EQ(w.ranked[0].kind, WhatIfKind::kPadding);
  EXPECT_EQ(*w.ranked[0].fix, 1u);
  EXPECT_NEAR(w.ranked[0].saving_us, 10 * 500 * 0.4, 1e-9);
  EXPECT_EQ(w.ranked[1].kind, WhatIfKind::kAlgorithm);
  EXPECT_NEAR(w.with_all_us, 10000 - 2000, 1e-9) << "the GEMM's best change only";
}

// The page (profile --html) and the text put the ranked what-ifs first and after the total.
TEST(WhatIfs, ThePageAndTheTextShowThem) {
  ProfileResult r;
  r.measured = MeasurementSummary{};
  r.totals.measured_us = 10000;
  r.entries.push_back(padded_entry(10, 500, 480, 384, ratio(0.78, 0.8, 0.82)));
  r.entries.back().row.problem.m = 1793, r.entries.back().row.problem.n = 1793, r.entries.back().row.problem.k = 1793;
  r.entries.back().explanation->points[1].label = "1800";
  r.workload.gemms.resize(1);  // the row's GEMM (its origin)
  std::ostringstream page, text;
  write_profile_html(page, r, ProfileHtmlOptions{});
  const std::string html = page.str();
  const size_t what_ifs = html.find("<h2 id=\"what-ifs\">"), gemms = html.find("<h2 id=\"gemms\">");
  ASSERT_NE(what_ifs, std::string::npos);
  EXPECT_LT(what_ifs, gemms) << "the what-ifs come first";
  EXPECT_NE(html.find("1793x1793x1793"), std::string::npos);
  EXPECT_NE(html.find("padding"), std::string::npos);
  write_profile_text(text, r);
  EXPECT_NE(text.str().find("what would make this step faster"), std::string::npos);
  EXPECT_NE(text.str().find("with each GEMM's best change"), std::string::npos);
  ProfileResult stored = r;
  stored.measured.reset();  // from a store: nothing was paired, no what-ifs
  stored.stored = StoredSource{};
  std::ostringstream none;
  write_profile_html(none, stored, ProfileHtmlOptions{});
  EXPECT_EQ(none.str().find("what-ifs"), std::string::npos);
}

}  // namespace
}  // namespace shapescope
