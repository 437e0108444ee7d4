// explain: its neighbours, its verdicts on synthetic points (each effect blamed only when the
// measurements show it), and the command on a store measured on an H200, without a GPU.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/error.hpp"
#include "device/device.hpp"
#include "model/explain.hpp"
#include "cli_util.hpp"

namespace shapescope {
namespace {

Problem square(int64_t n) {
  Problem p;
  p.m = p.n = p.k = p.lda = p.ldb = p.ldc = n;
  return p;
}

TEST(ExplainArgs, Shapes) {
  auto s = parse_shape("1793");
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->square);
  EXPECT_EQ(s->m, 1793);
  s = parse_shape("4096x1x4096");
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->square);
  EXPECT_EQ(s->n, 1);
  for (const char* bad : {"", "x", "0", "12x", "1x2", "1x2x3x4", "-5", "4096x0x4096", "1e3", "99999999999999999"})
    EXPECT_FALSE(parse_shape(bad)) << bad;
  EXPECT_EQ(parse_tile("256x128"), std::make_pair(256, 128));
  for (const char* bad : {"256", "256x", "256x128x64", "0x128", "4096x128", "axb"}) EXPECT_FALSE(parse_tile(bad)) << bad;
}

std::vector<int64_t> values(const std::vector<Candidate>& candidates) {
  std::vector<int64_t> out;
  for (const Candidate& c : candidates) out.push_back(c.value);
  return out;
}

TEST(ExplainNeighbours, SquareMovesAllDimensions) {
  const std::vector<Candidate> c = neighbours(square(1793), true, Annotation{});
  // Every multiple of 8..256 below 1793 is 1792.
  EXPECT_EQ(values(c), (std::vector<int64_t>{1792, 1794, 1800, 1808, 1824, 1856, 1920, 2048}));
  EXPECT_EQ(c[0].why, "multiple of 256 below, n-1");  // the largest multiple says the rest
  EXPECT_EQ(c[0].problem.m, 1792);
  EXPECT_EQ(c[0].problem.k, 1792);
  EXPECT_EQ(c[2].why, "multiple of 8 above");
}

TEST(ExplainNeighbours, DecodeShapeMovesOnlyTheUnalignedDimension) {
  Problem p = square(4096);
  p.n = p.ldb = p.ldc = 1;
  const std::vector<Candidate> c = neighbours(p, false, Annotation{});
  EXPECT_EQ(values(c), (std::vector<int64_t>{2, 8, 16, 32, 64, 128, 256}));
  for (const Candidate& x : c) {
    EXPECT_EQ(x.dim, Dim::kN);
    EXPECT_EQ(x.problem.m, 4096);
  }
}

TEST(ExplainNeighbours, WaveSizesFromTheTargetsTileAndSlots) {
  // He's A100 example: 1793 with 256x128 tiles on 108 SMs has 120 tiles, 2 rounds; 1792 needs one.
  const ModelGpu a100 = model_gpu(*find_profile("a100"));
  Annotation target = predict(square(1793), a100, 256, 128);
  ASSERT_EQ(target.waves.rounds, 2);
  std::vector<Candidate> c = neighbours(square(1793), true, target);
  auto find = [](const std::vector<Candidate>& list, const char* why) -> const Candidate* {
    for (const Candidate& x : list)
      if (x.why.find(why) != std::string::npos) return &x;
    return nullptr;
  };
  ASSERT_NE(find(c, "one wave less"), nullptr);
  EXPECT_EQ(find(c, "one wave less")->value, 1792);  // 7 x 14 = 98 tiles
  // No size within +25 % fills its last wave of 108 to 95 %: none is offered.
  EXPECT_EQ(find(c, "fills its last wave"), nullptr);

  // 1600 with 128x128 tiles on 132 SMs: 169 tiles fill 64 % of 2 rounds; 1921 gives 16 x 16 = 256
  // tiles, 97 % of 2 rounds.
  const ModelGpu h100 = model_gpu(*find_profile("h100-sxm"));
  target = predict(square(1600), h100, 128, 128);
  c = neighbours(square(1600), true, target);
  ASSERT_NE(find(c, "fills its last wave"), nullptr);
  EXPECT_EQ(find(c, "fills its last wave")->value, 1921);
}

// A measured point built by hand: time, kernel and the annotation fields explain reads.
ExplainPoint point(int64_t n, double time_us, const std::string& kernel, double wave_eff, bool aligned,
                   const std::string& why = "", Role role = Role::kNeighbour) {
  ExplainPoint p;
  p.role = why.empty() && role == Role::kNeighbour ? Role::kTarget : role;
  p.label = std::to_string(n);
  p.candidate.value = n;
  p.candidate.why = why;
  p.candidate.problem = square(n);
  p.time_us = time_us;
  p.kernel = kernel;
  Annotation& a = p.annotation;
  a.alignment = alignment_of(square(aligned ? 1792 : 1793));
  a.roofline = roofline_of(square(n), model_gpu(*find_profile("h200")), time_us);
  a.waves = waves_of(int64_t(wave_eff * 100), 100);
  a.grid = tile_grid(n, n, 1, 128, 128);
  a.grid.efficiency = 1;
  a.main_kernel = 0;
  return p;
}

// A control of the target: the same work with one thing changed.
ExplainPoint control(const ExplainPoint& target, Role role, double time_us, const std::string& kernel,
                     const std::string& algo = "default") {
  ExplainPoint p = target;
  p.role = role;
  p.label = std::string(role_name(role));
  p.time_us = time_us;
  p.kernel = kernel;
  p.algo = algo;
  p.annotation.roofline = roofline_of(target.candidate.problem, model_gpu(*find_profile("h200")), time_us);
  p.annotation.alignment = alignment_of(square(1792));
  return p;
}

// Our fixed kernel at library point `of`.
ExplainPoint fixed(const std::vector<ExplainPoint>& points, size_t of, double time_us, double wave_eff) {
  ExplainPoint p = points[of];
  p.role = Role::kFixedKernel;
  p.of = of;
  p.time_us = time_us;
  p.kernel = "05_wgmma_tma:128x256:dp";
  p.annotation.waves = waves_of(int64_t(wave_eff * 100), 100);
  p.annotation.roofline = roofline_of(p.candidate.problem, model_gpu(*find_profile("h200")), time_us);
  return p;
}

double sum_of_effects(const Explanation& e) {
  double sum = 0;
  for (const Effect& x : e.effects) sum += x.cost_us;
  return sum;
}

TEST(ExplainVerdict, AlignmentMeasuredByTheAlignedControl) {
  std::vector<ExplainPoint> points = {point(1793, 112.0, "cutlass_75_x_align1", 0.91, false),
                                      point(1792, 24.8, "nvjet_x", 0.91, true, "n-1"),
                                      point(1800, 26.9, "nvjet_y", 0.91, true, "multiple of 8 above")};
  points.push_back(control(points[0], Role::kAligned16, 25.5, "nvjet_x"));
  const Explanation e = explain(points);
  EXPECT_EQ(e.verdict.kind, VerdictKind::kSlower);
  ASSERT_EQ(e.verdict.against, 1u);
  ASSERT_FALSE(e.effects.empty());
  EXPECT_EQ(e.effects.front().kind, EffectKind::kAlignment16);
  EXPECT_TRUE(e.effects.front().measured);
  EXPECT_NEAR(e.effects.front().cost_us, 112.0 - 25.5, 1e-9);
  // Same wave efficiency on both sides: waves are not blamed.
  for (const Effect& effect : e.effects) EXPECT_NE(effect.kind, EffectKind::kWaveQuantization);
  // The effects add up to the gap to 1792 at 1793's work.
  const double gap = 112.0 - 24.8 * (1793.0 * 1793 * 1793) / (1792.0 * 1792 * 1792);
  EXPECT_NEAR(e.verdict.gap_us, gap, 1e-9);
  EXPECT_NEAR(sum_of_effects(e) + (e.verdict.unexplained_us < 112.0 * 0.01 ? e.verdict.unexplained_us : 0), gap, 1e-9);
  // Fastest first: rows padded to 16 bytes (25.5 us) before the size padded to 1800 (26.9 us); then
  // 1792, smaller and faster per FLOP.
  ASSERT_EQ(e.fixes.size(), 3u);
  EXPECT_EQ(e.fixes[2].kind, FixKind::kShrink);
  EXPECT_EQ(e.fixes[0].kind, FixKind::kAlignLayout);
  EXPECT_EQ(e.fixes[1].kind, FixKind::kPadUp);
  EXPECT_EQ(points[*e.fixes[1].point].candidate.value, 1800);
  EXPECT_NEAR(e.fixes[1].speedup, 112.0 / 26.9, 1e-9);
}

TEST(ExplainVerdict, WithoutAControlAlignmentIsComputedNotMeasured) {
  const std::vector<ExplainPoint> points = {point(1793, 112.0, "cutlass_75_x_align1", 0.91, false),
                                            point(1792, 24.8, "nvjet_x", 0.91, true, "n-1")};
  const Explanation e = explain(points);
  ASSERT_FALSE(e.effects.empty());
  EXPECT_EQ(e.effects.front().kind, EffectKind::kAlignment16);
  EXPECT_FALSE(e.effects.front().measured);
}

TEST(ExplainVerdict, TheFixedKernelSplitsShapeFromLibrary) {
  // 3080 = 8 (mod 16): the library loses 30 %; our fixed kernel loses 20 % at the same work, with no
  // wave or tile difference: the 32-byte control recovers 20 % of it; the rest is the library's.
  std::vector<ExplainPoint> points = {point(3080, 130.0, "nvjet_a", 0.97, true),
                                      point(3072, 100.0 * 3072.0 * 3072 * 3072 / (3080.0 * 3080 * 3080), "nvjet_b", 0.97,
                                            true, "multiple of 256 below")};
  points.push_back(control(points[0], Role::kAligned32, 112.0, "nvjet_a"));
  points.push_back(fixed(points, 0, 125.0, 0.97));
  points.push_back(fixed(points, 1, 100.0 * 3072.0 * 3072 * 3072 / (3080.0 * 3080 * 3080), 0.97));
  points.push_back(fixed(points, 2, 104.0, 0.97));
  const Explanation e = explain(points);
  ASSERT_EQ(e.verdict.kind, VerdictKind::kSlower);
  EXPECT_NEAR(e.verdict.gap_us, 30.0, 1e-6);
  ASSERT_GE(e.effects.size(), 2u);
  EXPECT_EQ(e.effects[0].kind, EffectKind::kSector32);
  EXPECT_NEAR(e.effects[0].cost_us, 18.0, 1e-6);
  // From 112 us (32-byte rows) to 100: the fixed kernel loses 4 % there (104 vs 100), the shape's
  // share: unexplained by waves and tiles; the library's choice takes the other 8 us.
  bool choice = false;
  for (const Effect& x : e.effects) {
    if (x.kind == EffectKind::kKernelChoice) {
      choice = true;
      EXPECT_NEAR(x.cost_us, 8.0, 1e-6);
    }
    if (x.kind == EffectKind::kUnexplained) {
      EXPECT_TRUE(x.in_fixed_kernel);
      EXPECT_NEAR(x.cost_us, 4.0, 1e-6);
    }
  }
  EXPECT_TRUE(choice);
  EXPECT_NEAR(sum_of_effects(e), e.verdict.gap_us, 1e-6);
  ASSERT_TRUE(e.reference.fixed_loss);
  EXPECT_NEAR(*e.reference.fixed_loss, 0.04, 1e-9);
}

TEST(ExplainVerdict, WavesFromTheFixedKernelAndTheModel) {
  // Same kernel, worse last wave in both curves: the wave share is measured by the fixed kernel.
  std::vector<ExplainPoint> points = {point(1000, 120.0, "k", 0.5, true),
                                      point(992, 60.0, "k", 1.0, true, "multiple of 32 below")};
  const double gap = 120.0 - 60.0 * (1000.0 * 1000 * 1000) / (992.0 * 992 * 992);
  points.push_back(fixed(points, 0, 130.0, 0.5));
  points.push_back(fixed(points, 1, 65.0, 1.0));
  const Explanation e = explain(points);
  ASSERT_FALSE(e.effects.empty());
  EXPECT_EQ(e.effects.front().kind, EffectKind::kWaveQuantization);
  EXPECT_TRUE(e.effects.front().measured);
  EXPECT_NEAR(sum_of_effects(e), gap, 1e-6);
}

TEST(ExplainVerdict, KernelChoiceWithoutAlignment) {
  const std::vector<ExplainPoint> points = {point(3000, 100.0, "k1", 1.0, true),
                                            point(3008, 80.0, "k2", 1.0, true, "multiple of 64 above")};
  const Explanation e = explain(points);
  ASSERT_FALSE(e.effects.empty());
  EXPECT_EQ(e.effects.front().kind, EffectKind::kKernelChoice);
  EXPECT_FALSE(e.effects.front().measured);
}

TEST(ExplainVerdict, HeuristicRegretFromTheAlternatives) {
  std::vector<ExplainPoint> points = {point(4096, 174.0, "nvjet_a", 0.97, true),
                                      point(4095, 900.0, "c", 0.97, false, "n-1")};
  points.push_back(control(points[0], Role::kAlternative, 176.0, "nvjet_a", "h0"));
  points.push_back(control(points[0], Role::kAlternative, 140.0, "nvjet_b", "h5"));
  const Explanation e = explain(points);
  ASSERT_TRUE(e.reference.regret);
  EXPECT_NEAR(*e.reference.regret, 176.0 / 140.0 - 1, 1e-9);
  ASSERT_FALSE(e.effects.empty());
  EXPECT_EQ(e.effects.front().kind, EffectKind::kHeuristicRegret);
  EXPECT_NEAR(e.effects.front().cost_us, 34.0, 1e-9);
  EXPECT_EQ(e.verdict.kind, VerdictKind::kSlower);
  ASSERT_FALSE(e.fixes.empty());
  EXPECT_EQ(e.fixes.front().kind, FixKind::kAlgorithm);
}

TEST(ExplainVerdict, FastShapeIsLeftAlone) {
  std::vector<ExplainPoint> points = {point(4096, 174.0, "k", 0.97, true),
                                      point(4095, 900.0, "c", 0.97, false, "n-1")};
  points.push_back(control(points[0], Role::kAlternative, 173.0, "k", "h1"));  // within the noise
  const Explanation e = explain(points);
  EXPECT_EQ(e.verdict.kind, VerdictKind::kFast);
  EXPECT_TRUE(e.effects.empty());
  EXPECT_TRUE(e.fixes.empty());
}

// Measured alone, with no neighbour or control timed: no verdict of "fast" and no "leave it".
TEST(ExplainVerdict, NothingToCompareIsNotJudged) {
  const Explanation e = explain({point(1793, 112.0, "k", 0.1, false)});
  EXPECT_EQ(e.verdict.kind, VerdictKind::kUnjudged);
  EXPECT_TRUE(e.fixes.empty());
}

TEST(ExplainVerdict, LaunchBoundNearTheEmptyKernel) {
  // 61^3: 0.45 MFLOP in 5 us, an empty kernel takes 2 us: neither roof sets the time.
  std::vector<ExplainPoint> points = {point(61, 5.0, "k", 0.1, false), point(64, 5.1, "k", 0.1, true, "multiple of 64 above")};
  ExplainPoint floor = control(points[0], Role::kLaunchFloor, 2.0, "empty_kernel");
  points.push_back(floor);
  const Explanation e = explain(points);
  EXPECT_EQ(e.verdict.bound, Bound::kLaunch);
  EXPECT_EQ(e.verdict.kind, VerdictKind::kLaunchBound);
  ASSERT_TRUE(e.verdict.floor);
  EXPECT_EQ(*e.verdict.floor, 2u);
  ASSERT_FALSE(e.fixes.empty());
  EXPECT_EQ(e.fixes.front().kind, FixKind::kBatchMore);
}

TEST(ExplainVerdict, SmallerSizeIsJudgedByThroughputNotTime) {
  // 2240 is faster only because it is smaller: not a fix. 3072 runs 10 % more TFLOP/s: a choice.
  const std::vector<ExplainPoint> points = {point(3200, 96.0, "k", 0.95, true),
                                            point(2240, 35.6, "k", 1.0, true, "one wave less"),
                                            point(3072, 77.0 * 682.2 / 753.7 * 96.0 / 89.0, "k2", 0.97, true,
                                                  "multiple of 256 below")};
  const Explanation e = explain(points);
  ASSERT_FALSE(e.fixes.empty());
  EXPECT_EQ(e.fixes.front().kind, FixKind::kShrink);
  EXPECT_EQ(points[*e.fixes.front().point].candidate.value, 3072);
}

// --- the command, on the committed H200 store, as a user without a GPU runs it ---

class ExplainCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() > 0) GTEST_SKIP() << "a GPU is present: explain would measure instead of reading the store";
    // A copy of the committed store: explain must not write to a store it only reads.
    db_ = ::testing::TempDir() + "shapescope_explain_" + std::to_string(getpid()) + ".db";
    std::filesystem::copy_file(std::string(SHAPESCOPE_TEST_DATA) + "/h200-2026-11-21/sweep_bf16_nn_1-4096.db", db_,
                               std::filesystem::copy_options::overwrite_existing);
  }
  // Root (CI) ignores permissions: what proves that explain only reads is the bytes, unchanged.
  void TearDown() override {
    if (!db_.empty()) {
      EXPECT_TRUE(same_bytes(db_, std::string(SHAPESCOPE_TEST_DATA) + "/h200-2026-11-21/sweep_bf16_nn_1-4096.db"));
      for (const char* suffix : {"-wal", "-shm", "-journal"}) EXPECT_FALSE(std::filesystem::exists(db_ + suffix));
    }
    std::filesystem::remove(db_);
  }
  static bool same_bytes(const std::string& a, const std::string& b) {
    std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(fa), {}) == std::string(std::istreambuf_iterator<char>(fb), {});
  }
  std::string db_;
};

TEST_F(ExplainCommand, FromAStoreMeasuredOnAnH200) {
  const CliRun r = run("explain 1793 --db " + db_);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("1792 does 0.2 % less work in 4.5x less time than 1793: 16-byte alignment", 0), 0u) << r.out;
  EXPECT_LE(r.out.find('\n'), 100u) << r.out;
  EXPECT_NE(r.out.find("from the store"), std::string::npos);
  EXPECT_NE(r.out.find("NVIDIA H200"), std::string::npos);
  EXPECT_NE(r.out.find("2026-11-21"), std::string::npos);
  EXPECT_NE(r.out.find("15x8 = 120 tiles"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fix: pad to 1808"), std::string::npos) << r.out;

  const CliRun json = run("explain 1793 --json --db " + db_);
  ASSERT_EQ(json.code, 0) << json.err;
  for (const char* key : {"\"text\": \"1792 does 0.2 % less work", "\"mode\": \"store\"", "\"effects\": [",
                          "\"text\": \"pad to 1808", "\"tiles\": 120", "\"waves\": ", "\"kernel\": \"cutlass_75"})
    EXPECT_NE(json.out.find(key), std::string::npos) << key;
}

// The kernel line and the tile grid line name their frames, and what is not measured is one line per
// reason that says it once.
TEST_F(ExplainCommand, SaysEachTilesFrameAndListsWhatIsNotMeasuredOncePerReason) {
  const CliRun r = run("explain 1793 --wide --db " + db_);  // each line whole
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("_256x128_nn_align1: tile 256x128 as named, in the kernel's own frame (128x256 along M x N),"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tile 128x256 along M x N (from the kernel name) in the user's row-major frame"),
            std::string::npos) << r.out;
  // The layout controls and the fp8 controls (with their casts) this store lacks, one reason, one line.
  EXPECT_NE(r.out.find("\n  not measured (the store has no point of it): 8 problems: lda 1800 ldb 1800 ldc 1800, lda "
                       "1808 ldb 1808 ldc 1808, ..., cast B (fp8 row, per step, transposed)\n"),
            std::string::npos) << r.out;
  EXPECT_EQ(occurrences(r.out, "not measured"), 1u) << r.out;
  // An --lda too small for the larger neighbours: the planner's reason on its own line.
  const CliRun lda = run("explain 4095 --lda 4095 --db " + db_);
  ASSERT_EQ(lda.code, 0) << lda.err;
  EXPECT_NE(lda.out.find("\n  not measured (--lda: 4095 is smaller than A's row length 4096 at 4096x4096x4096): 4096 "),
            std::string::npos) << lda.out;
  EXPECT_EQ(occurrences(lda.out, "not measured"), 2u) << lda.out;
}

// The store holds squares only: 1793x1793x1793's neighbours (one dimension moved) are not in it.
TEST_F(ExplainCommand, NoMeasuredNeighbourSaysItCannotJudge) {
  const CliRun r = run("explain 1793x1793x1793 --db " + db_);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("1793x1793x1793 cannot be judged", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("measure them"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("is fast"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("fix: leave it"), std::string::npos) << r.out;
}

TEST_F(ExplainCommand, ModelPredictionForAGpuNotHere) {
  const CliRun r = run("explain 1793 --gpu a100 --tile 256x128 --db " + db_);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("model prediction", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("NVIDIA A100"), std::string::npos);
  EXPECT_NE(r.out.find("8x15 = 120 tiles"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 rounds, last wave 55.6 % full"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1792"), std::string::npos);
}

TEST_F(ExplainCommand, NamedGpuUsesItsStoredPoints) {
  const CliRun r = run("explain 4095 --gpu h200 --db " + db_);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("4096 does 0.1 % more work in 5.2x less time than 4095: 16-byte alignment", 0), 0u) << r.out;
}

TEST_F(ExplainCommand, BadInputIsOneLine) {
  struct Case {
    std::string args;
    ExitCode code;
    std::string words;
  };
  const std::vector<Case> cases = {
      {"explain 17x93", ExitCode::kUsage, "SHAPE: '17x93'"},
      {"explain abc", ExitCode::kUsage, "SHAPE: 'abc'"},
      {"explain 1793 --gpu rtx9090", ExitCode::kUsage, "--gpu: 'rtx9090' is not a known GPU profile"},
      {"explain 1793 --tile 256x128", ExitCode::kUsage, "--tile: '256x128' needs --gpu"},
      {"explain 1793 --gpu a100 --tile 256", ExitCode::kUsage, "--tile: '256'"},
      {"explain 1793 --backend cutlass", ExitCode::kUsage, "--backend: 'cutlass'"},
      {"explain 1793 --backend custom:03_register_blocked", ExitCode::kUsage, "selects 2 variants; explain needs one"},
      {"explain 1793 --backend custom:nope", ExitCode::kUsage, "no kernel 'nope'"},
      {"explain 1793 --dtype int4", ExitCode::kUsage, "--dtype"},
      {"explain 1793 --gpu l4 --db " + db_, ExitCode::kUsage, "--tile: needed for a model prediction on l4"},
      {"explain 5000 --db " + db_, ExitCode::kNoGpu, "holds no measurement of 5000x5000x5000"},
      {"explain 1793 --db /nonexistent/x.db", ExitCode::kNoGpu, "no store '/nonexistent/x.db'"},
  };
  for (const Case& c : cases) {
    const CliRun r = run(c.args);
    EXPECT_EQ(r.code, int(c.code)) << c.args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.words), std::string::npos) << c.args << "\n" << r.err;
  }
}

}  // namespace
}  // namespace shapescope
