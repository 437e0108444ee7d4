// explain's paired passes pair what the verdict rests on first and the other points as their budget
// allows (model/explain_pairing.hpp); a point they leave out keeps its survey time and the
// explanation compares nothing with it, and the text and JSON say which points were paired. The
// points are shaped like explain 2048x250880x4096 on an H100 (a 6 ms GEMM, ~100 points).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "model/device_profile.hpp"
#include "model/explain_pairing.hpp"
#include "report/explain_report.hpp"
#include "report/json_schema.hpp"
#include "report/table.hpp"
#include "model/workload.hpp"
#include "views/explain.hpp"

namespace shapescope {
namespace {

// A packed bf16 nn GEMM.
Problem gemm(int64_t m, int64_t n, int64_t k) { return packed_problem(m, n, k, Layout::kNN, DType::kBf16); }

// A measured point: its time, and the annotation fields explain reads.
ExplainPoint point(Role role, const std::string& label, const Problem& problem, double time_us,
                   const std::string& why = "", const std::string& algo = "default") {
  ExplainPoint p;
  p.role = role;
  p.label = label;
  p.candidate.dim = Dim::kM;
  p.candidate.value = problem.m;
  p.candidate.why = why;
  p.candidate.problem = problem;
  p.time_us = time_us;
  p.noise = 0.01;
  p.algo = algo;
  p.kernel = "nvjet_" + label;
  Annotation& a = p.annotation;
  a.alignment = alignment_of(problem);
  a.roofline = roofline_of(problem, model_gpu(*find_profile("h100-sxm")), time_us);
  a.waves = waves_of(99, 100);
  a.grid = tile_grid(problem.m, problem.n, 1, 128, 128);
  a.main_kernel = 0;
  return p;
}

// Indices of the points of a role.
std::vector<size_t> of_role(const std::vector<ExplainPoint>& points, Role role) {
  std::vector<size_t> out;
  for (size_t i = 0; i < points.size(); ++i)
    if (points[i].role == role) out.push_back(i);
  return out;
}

bool has(const std::vector<size_t>& list, size_t i) { return std::find(list.begin(), list.end(), i) != list.end(); }

// The target, 16 size neighbours (two unaligned ones at 6x its time), cuBLASLt's 8 alternatives, our
// fixed kernel at each library point, bf16 in fp8 with its two casts, and the launch floor: survey
// times of the H100's run.
std::vector<ExplainPoint> survey_points() {
  const int64_t n = 250880, k = 4096;
  std::vector<ExplainPoint> p = {point(Role::kTarget, "2048x250880x4096", gemm(2048, n, k), 5992.0)};
  const std::vector<std::pair<int64_t, double>> sizes = {
      {1792, 5250.7}, {1920, 5641.3}, {1984, 5999.9}, {2016, 5731.6}, {2032, 5990.7}, {2040, 6202.4},
      {2047, 6209.9}, {2049, 6207.2}, {2056, 6173.3}, {2064, 5951.8}, {2080, 6229.5}, {2112, 6107.4},
      {2176, 6458.7}, {2304, 6617.9}};
  for (const auto& [m, us] : sizes) p.push_back(point(Role::kNeighbour, std::to_string(m), gemm(m, n, k), us, "m"));
  p.push_back(point(Role::kNeighbour, "N-1", gemm(2048, n - 1, k), 37333.4, "N-1"));
  p.push_back(point(Role::kNeighbour, "K+1", gemm(2048, n, k + 1), 35892.6, "K+1"));
  const std::vector<double> alternatives = {5971.3, 5839.1, 6102.6, 5826.7, 5969.6, 6394.7, 5751.3, 6189.7};
  for (size_t h = 0; h < alternatives.size(); ++h) {
    const std::string algo = "h" + std::to_string(h);
    p.push_back(point(Role::kAlternative, algo, gemm(2048, n, k), alternatives[h], "", algo));
  }
  const size_t library = p.size() - alternatives.size();
  for (size_t i = 0; i < library; ++i) {
    ExplainPoint f = point(Role::kFixedKernel, p[i].label, p[i].candidate.problem, *p[i].time_us * 1.9);
    f.of = i;
    p.push_back(f);
  }
  Problem fp8 = gemm(2048, n, k);
  fp8.dtype = DType::kFp8;
  p.push_back(point(Role::kPrecision, "fp8 block", fp8, 3541.6));
  const size_t precision = p.size() - 1;
  for (const char* cast : {"cast A", "cast B"}) {
    ExplainPoint c = point(Role::kCast, cast, gemm(2048, n, k), 30.8);
    c.of = precision;
    c.per_call = std::string(cast) == "cast A";
    p.push_back(c);
  }
  p.push_back(point(Role::kLaunchFloor, "empty kernel", gemm(1, 1, 1), 3.7));
  return p;
}

TEST(ExplainPairing, APassCostsEachPointTwiceWithTheTargetAroundIt) {
  std::vector<ExplainPoint> p = {point(Role::kTarget, "t", gemm(128, 128, 128), 100.0),
                                 point(Role::kNeighbour, "a", gemm(120, 128, 128), 50.0),
                                 point(Role::kNeighbour, "b", gemm(136, 128, 128), 200.0)};
  // T a T b T b T a T: the target 5 times, each point twice.
  EXPECT_DOUBLE_EQ(pass_estimate_us(p, {0, 1, 2}), 5 * 100.0 + 2 * 50.0 + 2 * 200.0);
  EXPECT_DOUBLE_EQ(pass_estimate_us(p, {0}), 100.0);
}

// With no budget the passes pair what the survey's explanation rests on, and only that.
TEST(ExplainPairing, WithoutBudgetOnlyWhatTheVerdictRestsOn) {
  const std::vector<ExplainPoint> p = survey_points();
  const Explanation survey = explain(p);
  const PairingChoice c = choose_paired(p, survey, PairingBudget{0, 9});
  ASSERT_FALSE(c.paired.empty());
  EXPECT_EQ(c.paired.front(), 0u);
  EXPECT_EQ(c.paired.size(), c.needed);
  if (survey.verdict.against) {
    EXPECT_TRUE(has(c.paired, *survey.verdict.against));
  }
  for (const Fix& f : survey.fixes) EXPECT_TRUE(has(c.paired, *f.point)) << p[*f.point].label;
  for (const Effect& x : survey.effects)
    for (size_t i : x.evidence.indices()) EXPECT_TRUE(has(c.paired, i)) << p[i].label;
  ASSERT_TRUE(survey.reference.best_alternative);
  EXPECT_EQ(p[*survey.reference.best_alternative].label, "h6");
  EXPECT_TRUE(has(c.paired, *survey.reference.best_alternative));
  // cuBLASLt's first choice, the other side of its regret; the same GEMM in fp8.
  const std::vector<size_t> alternatives = of_role(p, Role::kAlternative);
  EXPECT_TRUE(has(c.paired, alternatives[0]));
  EXPECT_TRUE(has(c.paired, of_role(p, Role::kPrecision).front()));
  // A handful, not the survey's ~60.
  EXPECT_LE(c.paired.size(), 8u);
}

// A budget pairs more, the fastest per FLOP first, within (passes x one pass); what it leaves out
// would not fit, and the launch floor and the casts are never paired (their own times place the target).
TEST(ExplainPairing, ABudgetAddsTheFastestPerFlopThatFit) {
  const std::vector<ExplainPoint> p = survey_points();
  const Explanation survey = explain(p);
  const PairingBudget budget{1.5, 9};
  const PairingChoice c = choose_paired(p, survey, budget);
  const PairingChoice needed = choose_paired(p, survey, PairingBudget{0, 9});
  EXPECT_GT(c.paired.size(), needed.paired.size());
  for (size_t i : needed.paired) EXPECT_TRUE(has(c.paired, i));
  EXPECT_DOUBLE_EQ(c.pass_us, pass_estimate_us(p, c.paired));
  EXPECT_LE(c.pass_us * budget.passes, budget.seconds * 1e6);
  const double target = *p[0].time_us;
  const auto cost = [&](size_t i) { return 2 * (*p[i].time_us + target); };
  const auto per_flop = [&](size_t i) { return *p[i].time_us / p[i].candidate.problem.flops(); };
  for (size_t i = 1; i < p.size(); ++i) {
    const Role role = p[i].role;
    if (role == Role::kLaunchFloor || role == Role::kCast) {
      EXPECT_FALSE(has(c.paired, i)) << p[i].label;
      continue;
    }
    if (role == Role::kFixedKernel && has(c.paired, i)) {
      EXPECT_TRUE(has(c.paired, *p[i].of)) << p[i].label;
    }
    if (has(c.paired, i) || (role == Role::kFixedKernel && !has(c.paired, *p[i].of))) continue;
    EXPECT_GT(c.pass_us + cost(i), budget.seconds * 1e6 / budget.passes) << p[i].label << " fits but is left out";
    // A library point left out that runs faster per FLOP than one added costs more than it.
    if (role != Role::kNeighbour && role != Role::kAlternative) continue;
    for (size_t j : c.paired) {
      if (!has(needed.paired, j) && (p[j].role == Role::kNeighbour || p[j].role == Role::kAlternative) &&
          per_flop(i) < per_flop(j)) {
        EXPECT_GT(cost(i), cost(j)) << p[i].label << " left out before " << p[j].label;
      }
    }
  }
  // cuBLASLt's h3, the fastest per FLOP after what the verdict needs, is paired; the unaligned sizes,
  // at 6x the time, do not fit.
  const std::vector<size_t> alternatives = of_role(p, Role::kAlternative);
  EXPECT_FALSE(has(needed.paired, alternatives[3]));
  EXPECT_TRUE(has(c.paired, alternatives[3]));
  for (size_t i : of_role(p, Role::kNeighbour)) {
    if (p[i].label == "N-1" || p[i].label == "K+1") {
      EXPECT_FALSE(has(c.paired, i)) << p[i].label;
    }
  }
  // Every pairable point with a budget that holds them all.
  const PairingChoice all = choose_paired(p, survey, PairingBudget{c.all_pass_us * 9 / 1e6 + 1e-3, 9});
  EXPECT_EQ(all.paired.size(), p.size() - 3);  // not the two casts and the floor
}

// The target paired: a neighbour the passes left out does not become the verdict's comparison, a fix
// or an effect's evidence, whatever its survey time (measured at another moment, here 8 % faster
// per FLOP); paired, the same reading does.
TEST(ExplainPairing, APointLeftOutOfThePairingIsComparedWithNothing) {
  const Problem t = gemm(4096, 4096, 4096);
  std::vector<ExplainPoint> p = {point(Role::kTarget, "4096x4096x4096", t, 1000.0),
                                 point(Role::kNeighbour, "4032", gemm(4032, 4096, 4096), 1000.0 * 4032 / 4096 / 1.08,
                                       "multiple of 64 below"),
                                 point(Role::kAlternative, "h0", t, 1001.0, "", "h0")};
  PairedRatio one;
  one.pairs = 8;
  p[0].paired = one;
  PairedRatio same = one;
  same.median = 1.001, same.low = 0.995, same.high = 1.006;
  p[2].paired = same;
  EXPECT_TRUE(left_out_of_pairing(p[0], p[1]));
  EXPECT_FALSE(left_out_of_pairing(p[0], p[2]));
  const Explanation e = explain(p);
  EXPECT_EQ(e.verdict.kind, VerdictKind::kFast);
  EXPECT_NE(e.verdict.against, std::optional<size_t>(1));
  for (const Fix& f : e.fixes) EXPECT_NE(f.point, std::optional<size_t>(1));
  for (const Effect& x : e.effects) EXPECT_FALSE(has(x.evidence.indices(), 1));
  EXPECT_NE(e.reference.best_aligned, std::optional<size_t>(1));

  PairedRatio faster = one;
  faster.median = 1 / 1.08 * 4032 / 4096, faster.low = faster.median * 0.99, faster.high = faster.median * 1.01;
  p[1].paired = faster;
  const Explanation paired = explain(p);
  EXPECT_EQ(paired.verdict.kind, VerdictKind::kSlower);
  EXPECT_EQ(paired.verdict.against, std::optional<size_t>(1));
}

// The text marks the points left out ("survey", with their noise, and no ratio to the target), the
// paired line counts what was paired and what would pair every point; the JSON says per point.
TEST(ExplainPairing, TheTextAndJsonSayWhichPointsWerePaired) {
  const Problem t = gemm(4096, 4096, 4096);
  ExplainReport r;
  r.shape = "4096x4096x4096";
  r.mode = "measured";
  r.points = {point(Role::kTarget, "4096x4096x4096", t, 1000.0),
              point(Role::kNeighbour, "4032x4096x4096", gemm(4032, 4096, 4096), 930.0, "multiple of 64 below"),
              point(Role::kNeighbour, "4160x4096x4096", gemm(4160, 4096, 4096), 1020.0, "multiple of 64 above"),
              point(Role::kLaunchFloor, "empty kernel", gemm(1, 1, 1), 3.7)};
  r.points[1].noise = 0.012;
  for (size_t of : {1, 2}) {  // our fixed kernel at both sizes, paired at 4160 only
    ExplainPoint f = point(Role::kFixedKernel, r.points[of].label, r.points[of].candidate.problem, 1500.0 + of);
    f.of = of;
    r.points.push_back(f);
  }
  PairedRatio one;
  one.pairs = 9;
  r.points[0].paired = one;
  PairedRatio slower = one;
  slower.median = 1.0156, slower.low = 1.01, slower.high = 1.02;
  r.points[2].paired = slower;
  r.points[5].paired = slower;
  r.stored.resize(r.points.size());
  r.explanation = explain(r.points);
  r.paired = PairedOutcome{};
  r.paired->passes = 10;
  r.paired->warmup_passes = 1;
  r.paired->seconds = 1.4;
  r.pairing = PairingFacts{2, 2, 1.5, 4.2};
  std::ostringstream text;
  set_wide_tables(true);  // every column, as --wide
  write_explain_text(text, r);
  set_wide_tables(false);
  const std::string out = text.str();
  EXPECT_NE(out.find("paired: 2 points measured again with the target in 9 passes"), std::string::npos) << out;
  EXPECT_NE(out.find("2 more points keep their survey times ('survey' in the tables), compared with nothing "
                     "(--pair-seconds 5 would pair every point)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("nothing paired gains more than"), std::string::npos) << out;
  EXPECT_NE(out.find("2 surveyed points not paired"), std::string::npos) << out;
  // The survey's row: its noise where a paired row has its ratio, and no ratio to the target per FLOP.
  const std::regex ratio(R"(\d\.\d\dx\b)");
  std::istringstream lines(out);
  size_t rows = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  4032x4096x4096", 0) == 0) {
      ++rows;
      EXPECT_NE(line.find("survey, noise 1.2 %"), std::string::npos) << line;
      EXPECT_FALSE(std::regex_search(line, ratio)) << "a ratio to the target in " << line;
      EXPECT_NE(line.find("1501.00 (survey)"), std::string::npos) << line;
    } else if (line.rfind("  4160x4096x4096", 0) == 0) {
      ++rows;
      EXPECT_NE(line.find("1.016 (1.010-1.020)"), std::string::npos) << line;
      EXPECT_TRUE(std::regex_search(line, ratio)) << line;
      EXPECT_NE(line.find("1502.00  "), std::string::npos) << line;
    }
  }
  EXPECT_EQ(rows, 2u) << out;

  std::ostringstream json;
  write_explain_json(json, r);
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(json.str());
  EXPECT_NO_THROW(check_json(doc, "ExplainResult"));
  EXPECT_EQ(doc["points"][0]["pairing"], "reference");
  EXPECT_EQ(doc["points"][1]["pairing"], "survey");
  EXPECT_EQ(doc["points"][2]["pairing"], "paired");
  EXPECT_EQ(doc["points"][3]["pairing"], "own time");
  EXPECT_EQ(doc["paired"]["paired_points"], 2);
  EXPECT_EQ(doc["paired"]["survey_only_points"], 2);
  EXPECT_EQ(doc["points"][4]["pairing"], "survey");
  EXPECT_EQ(doc["points"][5]["pairing"], "paired");
  EXPECT_DOUBLE_EQ(doc["paired"]["pair_all_seconds"].get<double>(), 4.2);
}

}  // namespace
}  // namespace shapescope
