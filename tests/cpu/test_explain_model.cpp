// explain's model prediction (`explain SHAPE --gpu KEY --tile BMxBN`, nothing measured) checked against
// its own arithmetic: for a grid of shapes up to 65,536 on every GPU profile and several tiles, every
// point's tile grid and waves, the effects and what they name, the fix (no time, no rate: nothing was
// measured) and the text and JSON written from them. The CLI's reproducers run the binary.
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "cli_util.hpp"
#include "model/device_profile.hpp"
#include "report/explain_report.hpp"
#include "report/table.hpp"
#include "views/explain.hpp"

namespace shapescope {
namespace {

struct Shape {
  int64_t m, n, k;
  bool square;
};

// Squares around the powers of two and the issue's sizes, and MxNxK shapes with a dimension of
// 10,000 or more (the reads past an effect's evidence crashed there), up to 65,536.
std::vector<Shape> grid() {
  std::vector<Shape> shapes;
  for (int64_t n : {1, 2, 7, 127, 129, 255, 1023, 1792, 1793, 4095, 4096, 9999, 10000, 12289, 32767, 65535, 65536})
    shapes.push_back({n, n, n, true});
  for (Shape s : std::vector<Shape>{{10000, 9999, 9999, false},  {4096, 1, 4096, false},    {1, 65536, 7, false},
                                    {65536, 65535, 3, false},    {50257, 768, 1024, false}, {7, 13, 65521, false},
                                    {12345, 678, 10001, false},  {65536, 1, 1, false},      {8192, 28672, 8192, false},
                                    {1, 1, 65536, false},        {33000, 129, 4097, false}, {2047, 65536, 64, false}})
    shapes.push_back(s);
  return shapes;
}

const std::vector<std::pair<int, int>> kTiles = {{64, 64}, {128, 128}, {128, 256}, {256, 128}, {256, 64}};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// What the model must compute for a problem, from DESIGN.md's definitions.
struct Expected {
  int64_t tiles_m, tiles_n, tiles, slots, rounds;
  double tile_efficiency, waves, wave_efficiency;
};
Expected expected(const Problem& p, std::pair<int, int> tile, int sm_count) {
  Expected e{};
  e.tiles_m = ceil_div(p.m, tile.first);
  e.tiles_n = ceil_div(p.n, tile.second);
  e.tiles = e.tiles_m * e.tiles_n * p.batch;
  e.tile_efficiency = double(p.m) * double(p.n) / (double(e.tiles_m * tile.first) * double(e.tiles_n * tile.second));
  e.slots = sm_count;
  e.waves = double(e.tiles) / double(e.slots);
  e.rounds = ceil_div(e.tiles, e.slots);
  e.wave_efficiency = double(e.tiles) / double(e.rounds * e.slots);
  return e;
}

std::string pct(double fraction) { return fmt::format("{:.0f} %", fraction * 100); }

// A time in the text ("12.5 us"): a prediction has none.
bool names_a_time(const std::string& text) { return std::regex_search(text, std::regex(R"(\d us\b)")); }

// The model's time of a point, relative: rounds of tiles x K, 4x with rows off the 16-byte rule.
double model_cost(const ExplainPoint& p) {
  return double(p.annotation.waves.rounds) * double(p.candidate.problem.k) * (p.annotation.alignment.ok() ? 1 : 4);
}

ExplainReport predict_report(const Shape& s, const GpuProfile& profile, std::pair<int, int> tile) {
  ExplainRequest o;
  o.shape = ShapeArg{s.m, s.n, s.k, s.square};
  o.shape_text = s.square ? std::to_string(s.n) : fmt::format("{}x{}x{}", s.m, s.n, s.k);
  o.tile = tile;
  return explain_model(o, profile, form_problem(o.form, s.m, s.n, s.k), "no store 'x.db'");
}

// Every point's tile grid and waves, in the model and in the neighbours table's row.
void check_points(const ExplainReport& r, const GpuProfile& profile, std::pair<int, int> tile, const std::string& text) {
  for (const ExplainPoint& p : r.points) {
    const Expected e = expected(p.candidate.problem, tile, profile.sm_count);
    const Annotation& a = p.annotation;
    SCOPED_TRACE(p.label);
    EXPECT_EQ(a.grid.tiles_m, e.tiles_m);
    EXPECT_EQ(a.grid.tiles_n, e.tiles_n);
    EXPECT_EQ(a.grid.tiles, e.tiles);
    EXPECT_NEAR(a.grid.efficiency, e.tile_efficiency, 1e-12);
    EXPECT_EQ(a.waves.work, e.tiles);
    EXPECT_EQ(a.waves.slots, e.slots);
    EXPECT_NEAR(a.waves.waves, e.waves, 1e-9 * e.waves);
    EXPECT_EQ(a.waves.rounds, e.rounds);
    EXPECT_NEAR(a.waves.efficiency, e.wave_efficiency, 1e-12);
    EXPECT_FALSE(p.time_us);
    // The row: "  LABEL  WHY  -  -  -  ok|no  BMxBN  TMxTN  W.WW (EE %)  -"
    const std::string cells = fmt::format("{}x{}  {}x{}", tile.first, tile.second, e.tiles_m, e.tiles_n);
    const std::string waves = fmt::format("{:.2f} ({:.0f} %)", e.waves, e.wave_efficiency * 100);
    bool found = false;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
      if (line.rfind("  " + p.label + "  ", 0) == 0 && line.find(cells) != std::string::npos &&
          line.find(waves) != std::string::npos)
        found = true;
    EXPECT_TRUE(found) << "no row '" << p.label << " ... " << cells << " ... " << waves << "' in\n" << text;
  }
}

// The effects: one per term the target loses (over 1 %), each naming only its own points, with the
// target's figure and, where one is named, the neighbour's figure, which is better.
void check_effects(const ExplainReport& r) {
  const Explanation& e = r.explanation;
  const ExplainPoint& t = r.points.front();
  const Annotation& a = t.annotation;
  EXPECT_EQ(e.verdict.kind, VerdictKind::kPrediction);
  const auto has = [&](EffectKind kind) {
    return std::any_of(e.effects.begin(), e.effects.end(), [&](const Effect& x) { return x.kind == kind; });
  };
  EXPECT_EQ(has(EffectKind::kWaveQuantization), a.waves.efficiency < 0.99);
  EXPECT_EQ(has(EffectKind::kTileQuantization), a.grid.efficiency < 0.99);
  EXPECT_EQ(has(EffectKind::kAlignment16), !a.alignment.ok());
  for (const Effect& x : e.effects) {
    EXPECT_FALSE(x.measured);
    EXPECT_EQ(x.cost_us, 0);
    EXPECT_EQ(x.evidence.state, 0u);
    EXPECT_FALSE(x.evidence.fixed_state || x.evidence.fixed_against || !x.evidence.also.empty());
    for (size_t i : x.evidence.indices()) EXPECT_LT(i, r.points.size());
    const std::string detail = explain_effect_detail(r, x);
    EXPECT_FALSE(names_a_time(detail)) << detail;
    const ExplainPoint* n = x.evidence.against ? &r.points.at(*x.evidence.against) : nullptr;
    if (x.kind == EffectKind::kWaveQuantization) {
      EXPECT_NE(detail.find(fmt::format("last wave {} full at {}", pct(a.waves.efficiency), t.label)), std::string::npos)
          << detail;
      if (n) {
        EXPECT_GT(n->annotation.waves.efficiency, a.waves.efficiency);
        EXPECT_NE(detail.find(fmt::format("against {} at {}", pct(n->annotation.waves.efficiency), n->label)),
                  std::string::npos)
            << detail;
      }
    } else if (x.kind == EffectKind::kTileQuantization) {
      EXPECT_NE(detail.find(fmt::format("{} of the tiles' area useful at {}", pct(a.grid.efficiency), t.label)),
                std::string::npos)
          << detail;
      if (n) {
        EXPECT_GT(n->annotation.grid.efficiency, a.grid.efficiency);
        EXPECT_NE(detail.find(fmt::format("against {} at {}", pct(n->annotation.grid.efficiency), n->label)),
                  std::string::npos)
            << detail;
      }
    } else {
      EXPECT_EQ(x.kind, EffectKind::kAlignment16);
      if (n) EXPECT_TRUE(n->annotation.alignment.ok());
    }
    // A neighbour is named only as a fix's point.
    if (n)
      EXPECT_TRUE(std::any_of(e.fixes.begin(), e.fixes.end(), [&](const Fix& f) { return f.point == x.evidence.against; }));
  }
}

// The fixes: sizes the model's time (rounds of tiles x K, 4x unaligned) prefers, with no time and no
// rate, their speedups and FLOPs from the shapes themselves; in the text as the fix lines.
void check_fixes(const ExplainReport& r, const std::string& text) {
  const Explanation& e = r.explanation;
  ASSERT_LE(e.fixes.size(), 2u);
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("fix: ", 0) == 0 || line.rfind("or:  ", 0) == 0) lines.push_back(line.substr(5));
  ASSERT_EQ(lines.size(), std::max<size_t>(e.fixes.size(), 1)) << text;
  for (const std::string& line : lines) {
    EXPECT_EQ(line.find("TFLOP/s"), std::string::npos) << line;
    EXPECT_FALSE(names_a_time(line)) << line;
  }
  if (e.fixes.empty()) {
    EXPECT_EQ(lines.front(), "leave it");
    return;
  }
  const ExplainPoint& t = r.points.front();
  const Problem& tp = t.candidate.problem;
  for (size_t i = 0; i < e.fixes.size(); ++i) {
    const Fix& f = e.fixes[i];
    const std::string& line = lines[i];
    EXPECT_FALSE(f.time_us);
    ASSERT_TRUE(f.point && *f.point > 0 && *f.point < r.points.size());
    const ExplainPoint& p = r.points[*f.point];
    const Problem& pp = p.candidate.problem;
    const double flops = double(pp.m) * double(pp.n) * double(pp.k) / (double(tp.m) * double(tp.n) * double(tp.k));
    EXPECT_NEAR(f.extra_flops, flops - 1, 1e-12);
    const double faster = model_cost(t) / model_cost(p);
    if (flops > 1) {
      EXPECT_EQ(f.kind, FixKind::kPadUp);
      EXPECT_NEAR(f.speedup, faster, 1e-9 * faster);
      EXPECT_GT(f.speedup, 1 / 0.95);
      EXPECT_EQ(line.rfind(fmt::format("pad to {} ", p.label), 0), 0u) << line;
      EXPECT_NE(line.find(fmt::format("predicted {} faster", f.speedup >= 10 ? fmt::format("{:.0f}x", f.speedup)
                                                                              : fmt::format("{:.1f}x", f.speedup))),
                std::string::npos)
          << line;
      EXPECT_NE(line.find(fmt::format("{:+.1f} % FLOPs", (flops - 1) * 100)), std::string::npos) << line;
    } else {
      EXPECT_EQ(f.kind, FixKind::kShrink);
      EXPECT_NEAR(f.speedup, flops * faster, 1e-9 * flops * faster);
      EXPECT_GT(f.speedup, 1.05);
      EXPECT_EQ(line.rfind(fmt::format("choose {} ", p.label), 0), 0u) << line;
      EXPECT_NE(line.find(fmt::format("{:.1f} % fewer FLOPs", (1 - flops) * 100)), std::string::npos) << line;
    }
    if (p.annotation.waves.rounds != t.annotation.waves.rounds)
      EXPECT_NE(line.find(fmt::format("{} -> {} rounds of tiles", t.annotation.waves.rounds, p.annotation.waves.rounds)),
                std::string::npos)
          << line;
    if (pct(p.annotation.waves.efficiency) != pct(t.annotation.waves.efficiency))
      EXPECT_NE(line.find(fmt::format("last wave {} -> {} full", pct(t.annotation.waves.efficiency),
                                      pct(p.annotation.waves.efficiency))),
                std::string::npos)
          << line;
  }
  // Of the larger sizes, none the model times clearly faster than the one proposed.
  if (e.fixes.front().kind == FixKind::kPadUp) {
    const double proposed = model_cost(r.points[*e.fixes.front().point]);
    for (const ExplainPoint& p : r.points)
      if (p.candidate.problem.flops() > tp.flops()) EXPECT_GE(model_cost(p) * 1.05, proposed) << p.label;
  }
}

void check_json(const ExplainReport& r) {
  std::ostringstream out;
  write_explain_json(out, r);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc["mode"], "model");
  EXPECT_EQ(doc["points"].size(), r.points.size());
  for (const auto& effect : doc["effects"])
    for (const auto& i : effect["evidence"]) EXPECT_LT(i.get<size_t>(), r.points.size());
  for (const auto& fix : doc["fixes"]) {
    EXPECT_TRUE(fix["time_us"].is_null());
    EXPECT_EQ(fix["text"].get<std::string>().find("TFLOP/s"), std::string::npos);
  }
}

TEST(ExplainModel, EveryProfileTileAndShapeMatchesItsArithmetic) {
  // Every column of the neighbours table (a table too wide for the terminal leaves out its tiles).
  set_wide_tables(true);
  struct Narrow {
    ~Narrow() { set_wide_tables(false); }
  } narrow;
  size_t reports = 0, fixes = 0, named = 0;
  for (const GpuProfile& profile : gpu_profiles())
    for (const auto& tile : kTiles)
      for (const Shape& s : grid()) {
        SCOPED_TRACE(fmt::format("{} --tile {}x{} {}x{}x{}", profile.key, tile.first, tile.second, s.m, s.n, s.k));
        const ExplainReport r = predict_report(s, profile, tile);
        std::ostringstream text;
        write_explain_text(text, r);
        check_points(r, profile, tile, text.str());
        check_effects(r);
        check_fixes(r, text.str());
        check_json(r);
        ++reports;
        fixes += r.explanation.fixes.size();
        for (const Effect& x : r.explanation.effects) named += x.evidence.against.has_value();
        if (HasFailure()) return;  // one shape's failures are enough to read
      }
  // The grid holds fixes and effects that name a neighbour, not only targets with nothing to say.
  EXPECT_EQ(reports, gpu_profiles().size() * kTiles.size() * grid().size());
  EXPECT_GT(fixes, reports / 4);
  EXPECT_GT(named, reports / 4);
}

// The issue's example: the A100's 108 SMs and a 256x128 tile, 1793 against 1792.
TEST(ExplainModel, DocumentedExampleComparesWithTheNeighbour) {
  const CliRun r = run("explain 1793 --gpu a100 --tile 256x128 --db /nonexistent/x.db");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("last wave 56 % full at 1793 against 91 % at 1792"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("82 % of the tiles' area useful at 1793 against 100 % at 1792"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("at 1793 against 56 % at 1793"), std::string::npos) << r.out;
  // Padding to 1800 keeps the two rounds but aligns the rows; 1792 needs one round.
  EXPECT_NE(r.out.find("fix: pad to 1800 (multiple of 8 above): predicted 4.0x faster (K 1793 -> 1800, 16-byte rows"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("or:  choose 1792 (multiple of 256 below, n-1, one wave less) if the model allows it: predicted "
                       "8.0x the FLOPs per unit of time (2 -> 1 rounds of tiles, last wave 56 % -> 91 % full, 82 % -> "
                       "100 % of the tiles' area useful"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("; 0.2 % fewer FLOPs"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("0.0 TFLOP/s"), std::string::npos) << r.out;
}

// A non-square shape with a dimension of 10,000 or more read past its effects' evidence (SIGSEGV).
TEST(ExplainModel, LargeNonSquareShapesAnswer) {
  for (const std::string args : {"10000x9999x9999 --gpu h100 --tile 256x128", "10000x9999x9999 --gpu h100 --tile 256x128 --json",
                                 "65536x10000x3 --gpu b200 --tile 128x256 --json", "9999x65535x10000 --gpu l4 --tile 64x64"}) {
    const CliRun r = run("explain " + args + " --db /nonexistent/x.db");
    EXPECT_EQ(r.code, 0) << args << ": " << r.err;
    EXPECT_NE(r.out.find("model prediction for"), std::string::npos) << args << ": " << r.out;
    if (args.find("--json") != std::string::npos) EXPECT_NO_THROW((void)nlohmann::json::parse(r.out)) << r.out;
  }
}

}  // namespace
}  // namespace shapescope
