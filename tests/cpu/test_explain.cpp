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
                   const std::string& why = "") {
  ExplainPoint p;
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

TEST(ExplainVerdict, AlignmentWhenTheKernelChangesAndTheRuleBreaks) {
  const std::vector<ExplainPoint> points = {point(1793, 112.0, "cutlass_75_x_align1", 0.91, false),
                                            point(1792, 24.8, "nvjet_x", 0.91, true, "n-1"),
                                            point(1800, 26.9, "nvjet_y", 0.91, true, "multiple of 8 above")};
  const Explanation e = explain(points);
  EXPECT_EQ(e.verdict.rfind("1793 is 4.5x slower than 1792: alignment", 0), 0u) << e.verdict;
  ASSERT_FALSE(e.effects.empty());
  EXPECT_EQ(e.effects.front().name, "alignment");
  // Same wave efficiency on both sides: waves are not blamed.
  for (const Effect& effect : e.effects) EXPECT_NE(effect.name, "wave quantization");
  ASSERT_TRUE(e.fix);
  EXPECT_EQ(e.fix->point.candidate.value, 1800);
  EXPECT_NEAR(e.fix->speedup, 112.0 / 26.9, 1e-9);
  EXPECT_NE(e.fix_text.find("pad to 1800"), std::string::npos) << e.fix_text;
}

TEST(ExplainVerdict, WavesOnlyWhenTheyDiffer) {
  // Same kernel, worse last wave: the wave share is the cost, the rest is unexplained.
  const std::vector<ExplainPoint> points = {point(1000, 120.0, "k", 0.5, true),
                                            point(992, 60.0, "k", 1.0, true, "multiple of 32 below")};
  const Explanation e = explain(points);
  ASSERT_FALSE(e.effects.empty());
  EXPECT_EQ(e.effects.front().name, "wave quantization");
  // The gap at 992's throughput is 120 x (1 - (1000^3/120) / (992^3/60)); the half-empty wave would
  // explain 60 us of it, so it explains all of it.
  const double gap = 120.0 * (1 - (1000.0 * 1000 * 1000 / 120) / (992.0 * 992 * 992 / 60));
  EXPECT_NEAR(e.effects.front().cost_us, gap, 1e-6);
  EXPECT_EQ(e.effects.size(), 1u);
  EXPECT_NE(e.verdict.find("wave quantization"), std::string::npos);
}

TEST(ExplainVerdict, KernelSwitchWithoutAlignment) {
  const std::vector<ExplainPoint> points = {point(3000, 100.0, "k1", 1.0, true),
                                            point(3008, 80.0, "k2", 1.0, true, "multiple of 64 above")};
  const Explanation e = explain(points);
  ASSERT_FALSE(e.effects.empty());
  EXPECT_EQ(e.effects.front().name, "kernel switch");
}

TEST(ExplainVerdict, FastShapeIsLeftAlone) {
  const std::vector<ExplainPoint> points = {point(4096, 174.0, "k", 0.97, true),
                                            point(4095, 900.0, "c", 0.97, false, "n-1")};
  const Explanation e = explain(points);
  EXPECT_EQ(e.verdict.rfind("4096 is fast", 0), 0u) << e.verdict;
  EXPECT_TRUE(e.effects.empty());
  EXPECT_FALSE(e.fix);
  EXPECT_EQ(e.fix_text.rfind("leave it", 0), 0u);
}

TEST(ExplainVerdict, SmallerSizeIsJudgedByThroughputNotTime) {
  // 2240 is faster only because it is smaller: not a fix. 3072 runs 10 % more TFLOP/s: a choice.
  const std::vector<ExplainPoint> points = {point(3200, 96.0, "k", 0.95, true),
                                            point(2240, 35.6, "k", 1.0, true, "one wave less"),
                                            point(3072, 77.0 * 682.2 / 753.7 * 96.0 / 89.0, "k2", 0.97, true,
                                                  "multiple of 256 below")};
  const Explanation e = explain(points);
  ASSERT_TRUE(e.fix);
  EXPECT_EQ(e.fix->point.candidate.value, 3072);
  EXPECT_NE(e.fix_text.find("if the model allows it"), std::string::npos);
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
  EXPECT_EQ(r.out.rfind("1793 is 4.5x slower than 1792: alignment", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("from the store"), std::string::npos);
  EXPECT_NE(r.out.find("NVIDIA H200"), std::string::npos);
  EXPECT_NE(r.out.find("2026-11-21"), std::string::npos);
  EXPECT_NE(r.out.find("15x8 = 120 tiles"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fix: pad to 1808"), std::string::npos) << r.out;

  const CliRun json = run("explain 1793 --json --db " + db_);
  ASSERT_EQ(json.code, 0) << json.err;
  for (const char* key : {"\"verdict\": \"1793 is 4.5x slower", "\"mode\": \"store\"", "\"effects\": [",
                          "\"fix\": {\"size\": 1808", "\"tiles\": 120", "\"waves\": ", "\"kernel\": \"cutlass_75"})
    EXPECT_NE(json.out.find(key), std::string::npos) << key;
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
  EXPECT_EQ(r.out.rfind("4095 is 5.2x slower than 4096: alignment", 0), 0u) << r.out;
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
