// model/perf_model: the fit recovers a model it was given, states the error it measured on points it
// did not see, flags what it cannot answer, and the shipped model is what its samples fit to.
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>
#include <string>
#include <tuple>

#include "common/error.hpp"
#include "model/input_file.hpp"
#include "cli_util.hpp"
#include "model/perf_model.hpp"
#include "model/perf_neighbours.hpp"
#include "model/perf_predict.hpp"


namespace shapescope {
namespace {

constexpr const char* kH100 = "NVIDIA H100 80GB HBM3";

Problem square(int64_t m, int64_t n, int64_t k, DType dtype = DType::kBf16) {
  Problem p;
  p.m = m, p.n = n, p.k = k, p.dtype = dtype, p.layout = Layout::kNN;
  p.lda = k, p.ldb = n, p.ldc = n;
  return p;
}

// Times from a known model: floor 6 us, a 128x256 tile on 132 slots at 700 TFLOP/s when all are
// busy, 3000 GB/s; the samples carry the tile and slots as a store's annotations would.
PerfSampleSet synthetic(double noise = 0) {
  PerfSampleSet set;
  set.gpu = kH100;
  set.sm_count = 132;
  // Tiny GEMMs at the launch floor, which the fit reads the floor from.
  for (int64_t k = 16; k <= 160; k += 16) set.samples.push_back({square(16, 16, k), 6.0, 64, 64, 1, 132});
  int i = 0;
  for (int64_t m = 256; m <= 8192; m += 256)
    for (int64_t n : {1024, 4096}) {
      const Problem p = square(m, n, 4096);
      const int64_t tiles = ((m + 127) / 128) * ((n + 255) / 256);
      const int64_t rounds = (tiles + 131) / 132;
      const double compute = double(rounds) * 2.0 * 128 * 256 * 4096 / (700e6 / 132);
      const double memory = 2.0 * double(m * 4096 + 4096 * n + m * n) / 3000e3;
      const double wobble = 1 + noise * ((i++ % 3) - 1);
      set.samples.push_back({p, (6 + std::max(compute, memory)) * wobble, 128, 256, 1, 132});
    }
  return set;
}

TEST(PerfModel, TheFitReadsTheFloorKernelsAndWaveStepsItCannotFollow) {
  const PerfModel m = fit_perf_model(synthetic(), "synthetic");
  ASSERT_EQ(m.classes.size(), 1u);
  const PerfClass& c = m.classes.front();
  EXPECT_EQ(c.align_bytes, 16);
  EXPECT_NEAR(m.floor_us, 6.0, 1e-9);
  ASSERT_EQ(c.configs.size(), 2u);
  EXPECT_NEAR(c.configs.back().rate_tflops, 700, 7);
  // Held out: every 4th of the 74 shapes, each predicted from the others. The law's time steps where
  // a wave round is added (M 4352 with N 1024: 136 tiles on 132 slots); a local fit, smooth in log M, N, K,
  // rounds those steps off: most shapes within a few percent, the ones at a step up to a third off,
  // and the stated error says so.
  EXPECT_EQ(c.accuracy.points, 18);
  EXPECT_LT(c.accuracy.median, 0.08);
  EXPECT_GT(c.accuracy.p95, 0.1);
  EXPECT_LT(c.accuracy.p95, 0.35);
  EXPECT_EQ(m.points, 74);
  EXPECT_EQ(m.gpu, kH100);
}

TEST(PerfModel, NoiseShowsInTheStatedError) {
  // A fit cannot beat the noise of what it was fitted on: +-5 % wobble reads as about 5 %.
  const PerfModel m = fit_perf_model(synthetic(0.05), "synthetic");
  EXPECT_GT(m.classes.front().accuracy.p95, 0.03);
  EXPECT_LT(m.classes.front().accuracy.median, 0.08);
}

TEST(PerfModel, WhatItWasNotFittedOnIsSaid) {
  const PerfModel m = fit_perf_model(synthetic(), "synthetic");
  std::string why;
  const auto inside = predict(m, square(2048, 1024, 4096), why);
  ASSERT_TRUE(inside);
  EXPECT_TRUE(inside->outside.empty());
  const auto big = predict(m, square(20000, 1024, 4096), why);
  ASSERT_TRUE(big);
  ASSERT_EQ(big->outside.size(), 1u);
  EXPECT_NE(big->outside.front().find("M 20000 outside the measured 16..8192"), std::string::npos);
  // Another alignment class (rows of 2-byte alignment): none measured, no number.
  EXPECT_FALSE(predict(m, square(2048, 1023, 4095), why));
  EXPECT_NE(why.find("2-byte aligned rows: none were measured"), std::string::npos) << why;
  Problem nt = square(2048, 1024, 4096);
  nt.layout = Layout::kNT;
  nt.ldb = 4096;
  EXPECT_FALSE(predict(m, nt, why));
  EXPECT_NE(why.find("bf16 nt"), std::string::npos) << why;
}

// Times from a law the local fit holds exactly: above a 6 us floor, the work (K in blocks of 64) at a
// rate that is a power of M, N and K; unaligned rows (N odd, so ldb and ldc are) take `unaligned` x
// the aligned time above the floor. Tiny nt GEMMs at the floor set the floor apart from the nn class.
double law_rate(int64_t m, int64_t n, int64_t k) {
  return 500e6 * std::pow(double(m) / 4096, 0.1) * std::pow(double(n) / 4096, 0.05) * std::pow(double(k) / 4096, 0.08);
}
double law_us(const Problem& p, double unaligned = 1) { return 6 + unaligned * perf_work(p) / law_rate(p.m, p.n, p.k); }

PerfSampleSet power_law(double unaligned) {
  PerfSampleSet set;
  set.gpu = kH100;
  set.sm_count = 132;
  for (int64_t k = 16; k <= 160; k += 16) {
    Problem tiny = square(16, 16, k);
    tiny.layout = Layout::kNT;
    set.samples.push_back({tiny, 6.0, 64, 64, 1, 132});
  }
  for (int64_t m : {256, 512, 1024, 2048, 4096, 8192})
    for (int64_t n : {256, 512, 1024, 2048, 4096, 8192})
      for (int64_t k : {512, 1024, 2048, 4096}) {
        set.samples.push_back({square(m, n, k), law_us(square(m, n, k)), 128, 256, 1, 132});
        // The unaligned class, sparser: N odd, every other K.
        if (unaligned > 0 && (k == 1024 || k == 4096))
          set.samples.push_back({square(m, n - 1, k), law_us(square(m, n - 1, k), unaligned), 64, 128, 1, 264});
      }
  return set;
}

TEST(PerfModel, ALocalPowerLawIsRecoveredBetweenAndOnItsLines) {
  const PerfModel m = fit_perf_model(power_law(0), "law");
  ASSERT_EQ(m.classes.size(), 2u);  // nn 16-byte rows, and the tiny nt GEMMs
  EXPECT_NEAR(m.floor_us, 6.0, 1e-9);
  const PerfClass& nn = m.classes.front();
  ASSERT_EQ(nn.layout, Layout::kNN);
  // Held out with their grid lines: every 4th of the 144 shapes, each predicted from shapes that differ
  // from it in M, N and K alike (or extrapolated to the grid's edge): the law is linear in the logs.
  EXPECT_EQ(nn.accuracy.points, 36);
  EXPECT_LT(nn.accuracy.p95, 0.005);
  for (const Problem& p : {square(3000, 3000, 3000), square(300, 6000, 704), square(8192, 256, 1536)}) {
    std::string why;
    const auto got = predict(m, p, why);
    ASSERT_TRUE(got) << why;
    EXPECT_NEAR(got->us, law_us(p), 0.005 * law_us(p)) << p.shape_string();
    EXPECT_EQ(got->config->tile_m, 128);
  }
}

// Strided batched GEMMs in the class of their dtype, layout and rows: the law's rate grows with the
// batch too (batch^0.3: more tiles fill the GPU), and a batch between the measured ones is read off
// the neighbours' trend in the batch as in M, N and K.
TEST(PerfModel, ABatchBetweenTheMeasuredOnesFollowsTheirTrend) {
  PerfSampleSet set = power_law(0);
  const auto batched = [](int64_t m, int64_t n, int64_t k, int64_t batch) {
    Problem p = square(m, n, k);
    p.batch = batch;
    return p;
  };
  const auto batched_us = [](const Problem& p) {
    return 6 + perf_work(p) / (law_rate(p.m, p.n, p.k) * std::pow(double(p.batch), 0.3));
  };
  for (int64_t b : {4, 16, 64})
    for (int64_t m : {256, 1024, 4096})
      for (int64_t n : {256, 1024, 4096})
        for (int64_t k : {512, 2048}) set.samples.push_back({batched(m, n, k, b), batched_us(batched(m, n, k, b)), 128, 256, 1, 132});
  const PerfModel model = fit_perf_model(set, "law");
  for (const Problem& p : {batched(2000, 2000, 1024, 5), batched(700, 3000, 1024, 40)}) {
    std::string why;
    const auto got = predict(model, p, why);
    ASSERT_TRUE(got) << why;
    EXPECT_NEAR(got->us, batched_us(p), 0.01 * batched_us(p)) << p.shape_string();
  }
}

TEST(PerfModel, AKThatStopsInsideABlockCostsTheBlock) {
  EXPECT_EQ(perf_work(square(100, 100, 200)), perf_work(square(100, 100, 256)));
  EXPECT_EQ(perf_work(square(100, 100, 256)), 2.0 * 100 * 100 * 256);
  EXPECT_LT(perf_work(square(100, 100, 256)), perf_work(square(100, 100, 257)));
  // 128 bytes of a row: 32 fp32 elements.
  EXPECT_EQ(perf_work(square(100, 100, 200, DType::kFp32)), perf_work(square(100, 100, 224, DType::kFp32)));
}

TEST(PerfModel, AnUnalignedClassFollowsItsAlignedClassTimesItsOwnRatio) {
  const PerfModel m = fit_perf_model(power_law(2.5), "law");
  const auto unaligned = std::find_if(m.classes.begin(), m.classes.end(),
                                      [](const PerfClass& c) { return c.layout == Layout::kNN && c.align_bytes == 2; });
  ASSERT_NE(unaligned, m.classes.end());
  EXPECT_TRUE(unaligned->from_aligned);
  EXPECT_LT(unaligned->accuracy.p95, 0.01);
  // K 2000 lies between the unaligned class's K 1024 and 4096: its shape comes from the aligned class.
  std::string why;
  const Problem p = square(3000, 2999, 2000);
  const auto got = predict(m, p, why);
  ASSERT_TRUE(got) << why;
  EXPECT_NEAR(got->us, law_us(p, 2.5), 0.01 * law_us(p, 2.5));
  EXPECT_EQ(got->config->slots, 264) << "the kernel of its own class's nearest shape";
}

TEST(PerfModel, ScaledToAnotherGpuTheMemoryShareFollowsTheBandwidth) {
  const PerfModel h100 = fit_perf_model(power_law(0), "law");
  const PerfModel h200 = scale_perf_model(h100, *find_profile("h200"), "--scale-to");
  ASSERT_TRUE(h200.scaled);
  EXPECT_EQ(h200.scaled->from_gpu, kH100);
  EXPECT_NE(h200.scaled->terms().find("memory time at DRAM speed x 0.698 (DRAM 3350 -> 4800 GB/s)"), std::string::npos)
      << h200.scaled->terms();
  EXPECT_TRUE(perf_model_fits(h200, find_profile("h200"), ""));
  EXPECT_FALSE(perf_model_fits(h200, find_profile("h100-sxm"), ""));
  for (const Problem& p : {square(8192, 8192, 4096), square(8192, 8192, 512), square(256, 8192, 512)}) {
    std::string why;
    const auto before = predict(h100, p, why), after = predict(h200, p, why);
    ASSERT_TRUE(before && after) << why;
    EXPECT_EQ(after->scaled, &*h200.scaled);
    const double above = before->us - 6;
    const double bytes = 2.0 * double(p.m * p.k + p.k * p.n + p.m * p.n);
    const double memory = std::min(above, bytes / (before->cls->bandwidth_gbs * 1e3));
    const double dram = std::min(memory, bytes / 3350e3);
    // Both GPUs' SM clock is 1980 MHz: the compute share stays, and what of the memory share is slower
    // than the H100's DRAM.
    EXPECT_NEAR(after->us, 6 + dram * 3350 / 4800 + (above - dram), 1e-9 * after->us) << p.shape_string();
  }
  // A class that moves its bytes at a third of the DRAM's bandwidth (narrow loads) is held by its loads
  // for two thirds of its memory time: a memory-bound shape gains a third of what DRAM alone would give.
  PerfModel slow = h100;
  for (PerfClass& c : slow.classes) c.bandwidth_gbs = 3350.0 / 3;
  const PerfModel slow_h200 = scale_perf_model(slow, *find_profile("h200"), "--scale-to");
  const Problem flat = square(4096, 4096, 512);  // memory-bound at the slow class's bandwidth
  std::string why;
  const auto before = predict(slow, flat, why), after = predict(slow_h200, flat, why);
  ASSERT_TRUE(before && after) << why;
  const double bytes = 2.0 * double(flat.m * flat.k + flat.k * flat.n + flat.m * flat.n);
  const double memory = std::min(before->us - 6, bytes / (3350.0 / 3 * 1e3)), dram = std::min(memory, bytes / 3350e3);
  EXPECT_NEAR(after->us, before->us - dram * (1 - 3350.0 / 4800), 1e-9 * after->us);
  ASSERT_LT(dram, memory);
  EXPECT_GT(after->us, 6 + memory * 3350 / 4800 + (before->us - 6 - memory)) << "not all of it follows the DRAM";
  EXPECT_THROW(scale_perf_model(h100, *find_profile("h100-sxm"), "--scale-to"), Error);
  EXPECT_THROW(scale_perf_model(h200, *find_profile("a100"), "--scale-to"), Error);
}

TEST(PerfModel, TooFewPointsAreRefused) {
  PerfSampleSet set = synthetic();
  set.samples.resize(7);  // a class needs 8
  EXPECT_THROW(fit_perf_model(set, "few"), Error);
  set = synthetic();
  set.samples.front().median_us = 0;
  EXPECT_THROW(fit_perf_model(set, "zero"), Error);
}

TEST(PerfModel, JsonAndSamplesReadBackAsWritten) {
  const PerfSampleSet set = synthetic(0.02);
  const PerfSampleSet again = read_perf_samples_csv(perf_samples_csv(set), "test");
  EXPECT_EQ(again.gpu, set.gpu);
  ASSERT_EQ(again.samples.size(), set.samples.size());
  const PerfModel m = fit_perf_model(set, "a");
  const PerfModel read = read_perf_model(perf_model_json(m), "test");
  EXPECT_EQ(perf_model_json(read), perf_model_json(m));
  EXPECT_THROW(read_perf_model("{\"format\": 1}", "test"), Error);
  EXPECT_THROW(read_perf_samples_csv("m,n,k\n1,2,3\n", "test"), Error);
}

// What no measurement gives is refused where it is read, naming what, instead of fitting or
// predicting from it (a sample of 1e-300 us gave a model that printed inf TFLOP/s).
TEST(PerfModel, ValuesNoMeasurementGivesAreRefused) {
  const std::string csv = perf_samples_csv(synthetic(0.02));
  const size_t second = csv.find('\n', csv.find('\n') + 1) + 1;  // the first sample's line
  const std::string first = csv.substr(second, csv.find('\n', second) - second);
  const auto with_first = [&](const std::string& line) {
    return csv.substr(0, second) + line + csv.substr(second + first.size());
  };
  const auto field = [&](size_t f, const std::string& value) {
    std::vector<std::string> parts;
    for (size_t at = 0; at <= first.size();) {
      const size_t comma = std::min(first.find(',', at), first.size());
      parts.push_back(first.substr(at, comma - at));
      at = comma + 1;
    }
    parts[f] = value;
    return with_first(fmt::format("{}", fmt::join(parts, ",")));
  };
  for (const auto& [text, words] : std::vector<std::pair<std::string, std::string>>{
           {field(12, "1e-300"), "line 3: median_us 1e-300 is not a measured GEMM's time"},
           {field(12, "inf"), "line 3: median_us inf"},
           {field(0, "99999999999"), "line 3: m 99999999999 is outside 1..2147483647"},
           {field(6, "0"), "line 3: lda 0 is outside"},
           {field(9, "-4"), "line 3: off_a -4 is negative"},
           {std::regex_replace(csv, std::regex("sm_count=[0-9]+"), "sm_count=0"), "line 1: sm_count 0"},
           {std::regex_replace(csv, std::regex("clock_mhz=[0-9]+"), "clock_mhz=-1"), "line 1: clock_mhz -1"}}) {
    try {
      read_perf_samples_csv(text, "s.csv");
      ADD_FAILURE() << words;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("s.csv: " + words), std::string::npos) << e.what();
    }
  }
  const std::string model = perf_model_json(fit_perf_model(synthetic(0.02), "a"));
  for (const auto& [from, to, words] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"\"floor_us\": ", "\"floor_us\": 1e308, \"x\": ", "floor_us not a launch floor"},
           {"\"sm_count\": ", "\"sm_count\": 0, \"x\": ", "sm_count below 1"},
           {"\"rate_tflops\": ", "\"rate_tflops\": -3, \"x\": ", "without a tile, slots or rate"},
           {"\"median\": ", "\"median\": -1, \"x\": ", "error is not a non-negative number"}}) {
    std::string text = model;
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    try {
      read_perf_model(text, "m.json");
      ADD_FAILURE() << words;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  }
}

// Each shipped model is what its committed samples fit to, held-out errors included: a model file
// cannot claim an accuracy its data does not give.
TEST(PerfModel, TheShippedModelsAreWhatTheirSamplesFitTo) {
  const std::filesystem::path dir = SHAPESCOPE_GPUS_DIR;
  for (const auto& [name, gpu] : {std::pair{"h100-sxm", "NVIDIA H100 80GB HBM3"}, std::pair{"h200", "NVIDIA H200"}}) {
    const std::string samples = (dir / (std::string(name) + ".samples.csv")).string();
    const std::string file = (dir / (std::string(name) + ".json")).string();
    const PerfModel shipped = read_perf_model(read_text_file(file, "model"), file);
    const PerfModel fitted =
        fit_perf_model(read_perf_samples_csv(read_text_file(samples, "samples"), "samples"), shipped.source);
    EXPECT_EQ(perf_model_json(fitted), perf_model_json(shipped)) << name;
    EXPECT_EQ(shipped.gpu, gpu);
  }
}

}  // namespace
}  // namespace shapescope

namespace shapescope {
namespace {

// The command: a store of one GPU fits, a store of two is refused, the store is only read, and
// info --model prints what ships.
TEST(CalibrateModelCli, FitsOneGpusStoreAndRefusesTwo) {
  const std::string squares = std::string(SHAPESCOPE_TEST_DATA) + "/h200-2026-11-21/sweep_bf16_nn_1-4096.db";
  const std::string before = file_text(squares);
  const std::string out = ::testing::TempDir() + "calibrate_model_test.json";
  std::remove(out.c_str());
  const CliRun fit = run("calibrate-model --db '" + squares + "' --out '" + out + "'");
  EXPECT_EQ(fit.code, 0) << fit.err;
  EXPECT_NE(fit.out.find("performance model of NVIDIA H200 (132 SMs): fitted on 4087 points"), std::string::npos) << fit.out;
  EXPECT_NE(fit.out.find("bf16 nn rows 16-byte aligned"), std::string::npos);
  EXPECT_EQ(file_text(squares), before);
  const CliRun shown = run("info --model '" + out + "'");
  EXPECT_EQ(shown.code, 0) << shown.err;
  EXPECT_NE(shown.out.find("1021 held out"), std::string::npos);
  std::remove(out.c_str());

  const std::string two = ::testing::TempDir() + "calibrate_model_two.db";
  std::remove(two.c_str());
  ASSERT_EQ(run("merge '" + two + "' '" + squares + "' '" + std::string(SHAPESCOPE_TEST_DATA) +
                "/h100-2026-11-25-explain/explain.db'").code, 0);
  const CliRun refused = run("calibrate-model --db '" + two + "'");
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("holds points of 2 GPUs"), std::string::npos) << refused.err;
  std::remove(two.c_str());
  const CliRun both = run("calibrate-model --db '" + squares + "' --samples x.csv");
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.err.find("--samples"), std::string::npos) << both.err;
}

TEST(CalibrateModelCli, InfoModelPrintsTheShippedModels) {
  const CliRun r = run("info --model");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("performance model of NVIDIA H100 80GB HBM3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("performance model of NVIDIA H200"), std::string::npos);
}

}  // namespace
}  // namespace shapescope
