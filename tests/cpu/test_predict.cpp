// --predict (explain, pad, sweep --dry-run) and explain's prediction where nothing is stored: every
// time a performance model gives is marked predicted with its class's held-out error, a problem
// outside the measured range is flagged, a class without data gets no time, a model of another GPU
// is refused, and pad decides from the predictions as worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_util.hpp"
#include "model/input_file.hpp"
#include "model/perf_predict.hpp"
#include "report/json_schema.hpp"

namespace shapescope {
namespace {

using Json = nlohmann::json;

const std::string kGpus = SHAPESCOPE_GPUS_DIR;
// No GPU for the commands, whatever the host has: the tests are of the model, not of a measurement.
const std::string kNoGpu = "CUDA_VISIBLE_DEVICES= ";

PerfModel shipped(const std::string& key) {
  const std::string file = kGpus + "/" + key + ".json";
  return read_perf_model(read_text_file(file, file), file);
}

Problem packed(int64_t m, int64_t n, int64_t k, Layout layout = Layout::kNN) {
  Problem p;
  p.m = m, p.n = n, p.k = k, p.layout = layout;
  p.lda = layout == Layout::kTN || layout == Layout::kTT ? m : k;
  p.ldb = layout == Layout::kNT || layout == Layout::kTT ? k : n;
  p.ldc = n;
  return p;
}

PerfPrediction predicted(const PerfModel& m, const Problem& p) {
  std::string why;
  const std::optional<PerfPrediction> got = predict(m, p, why);
  EXPECT_TRUE(got) << why;
  return got.value_or(PerfPrediction{});
}

// A store path that does not exist: the commands then have nothing stored to read.
std::string no_store() {
  const std::string path = ::testing::TempDir() + "predict_no_store.db";
  std::remove(path.c_str());
  return path;
}

Json json_of(const CliRun& r, const char* record) {
  EXPECT_EQ(r.code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_NO_THROW(check_json(nlohmann::ordered_json::parse(r.out), record));
  return doc;
}

TEST(PerfPredict, AModelFitsOnlyTheGpuItWasMeasuredOn) {
  const PerfModel h100 = shipped("h100-sxm");
  EXPECT_TRUE(perf_model_fits(h100, find_profile("h100-sxm"), ""));
  EXPECT_FALSE(perf_model_fits(h100, find_profile("h200"), ""));
  EXPECT_FALSE(perf_model_fits(h100, find_profile("h100-pcie"), ""));
  // No --gpu: the GPU here decides; with none, the model's own GPU is the one predicted for.
  EXPECT_TRUE(perf_model_fits(h100, nullptr, "NVIDIA H100 80GB HBM3"));
  EXPECT_FALSE(perf_model_fits(h100, nullptr, "NVIDIA H200"));
  EXPECT_TRUE(perf_model_fits(h100, nullptr, ""));
  // A GPU the profiles lack: only the same name fits, and no --gpu key.
  PerfModel other = h100;
  other.gpu = "NVIDIA RTX 9090";
  EXPECT_TRUE(perf_model_fits(other, nullptr, "NVIDIA RTX 9090"));
  EXPECT_FALSE(perf_model_fits(other, nullptr, "NVIDIA H100 80GB HBM3"));
  EXPECT_FALSE(perf_model_fits(other, find_profile("h100-sxm"), ""));
}

TEST(PerfPredict, TheAnnotationIsTheAssumedKernels) {
  const PerfModel m = shipped("h100-sxm");
  const Problem p = packed(1793, 1793, 1793);
  const PerfPrediction got = predicted(m, p);
  const Annotation a = predicted_annotation(p, got, perf_model_gpu(m));
  EXPECT_EQ(a.grid.tile_m, got.config->tile_m);
  EXPECT_EQ(a.grid.tile_n, got.config->tile_n);
  EXPECT_EQ(a.grid.splits, got.config->splits);
  EXPECT_EQ(a.waves.slots, got.config->slots);
  EXPECT_EQ(a.waves.rounds, got.rounds);
  EXPECT_FALSE(a.roofline.tflops) << "nothing measured";
  const GemmTime t = predicted_gemm_time(got);
  EXPECT_DOUBLE_EQ(t.median_us, got.us);
  EXPECT_DOUBLE_EQ(t.noise, got.cls->accuracy.median);
}

TEST(ExplainPredict, TimesAreMarkedPredictedWithTheirClassError) {
  const PerfModel m = shipped("h100-sxm");
  const PerfPrediction target = predicted(m, packed(1793, 1793, 1793));
  const CliRun r = run_binary(kNoGpu + kShapescopeBin, "explain 1793 --gpu h100-sxm --predict --db " + no_store());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string first = r.out.substr(0, r.out.find('\n'));
  EXPECT_EQ(first.rfind(fmt::format("1793 predicted {:.1f} us", target.us), 0), 0u) << first;
  EXPECT_NE(first.find(fmt::format("({:.1f} % median, {:.1f} % p95 error)", target.cls->accuracy.median * 100,
                                   target.cls->accuracy.p95 * 100)),
            std::string::npos)
      << first;
  EXPECT_NE(r.out.find("predicted by the performance model of NVIDIA H100 80GB HBM3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(fmt::format("kernel assumed: tile {}x{}", target.config->tile_m, target.config->tile_n)),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("pred."), std::string::npos) << "each neighbour's time marked predicted";
  EXPECT_EQ(r.out.find("noise"), std::string::npos) << "no measured noise claimed";

  const Json doc = json_of(run_binary(kNoGpu + kShapescopeBin, "explain 1793 --gpu h100-sxm --predict --format json --db " +
                                                                   no_store()),
                           "ExplainResult");
  EXPECT_EQ(doc["mode"], "predicted");
  EXPECT_EQ(doc["prediction"]["gpu"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(doc["prediction"]["why"], "--predict");
  for (const Json& p : doc["points"]) {
    ASSERT_TRUE(p.contains("predicted")) << p["label"];
    EXPECT_GT(p["predicted"]["time_us"].get<double>(), 0);
    EXPECT_GT(p["predicted"]["error_p95"].get<double>(), 0);
  }
  const Json& t = doc["points"][0]["predicted"];
  EXPECT_DOUBLE_EQ(t["time_us"].get<double>(), target.us);
  EXPECT_DOUBLE_EQ(t["error_median"].get<double>(), target.cls->accuracy.median);
  EXPECT_EQ(t["class"], "bf16 nn rows 2-byte aligned");
  EXPECT_EQ(t["tile_m"], target.config->tile_m);
  EXPECT_TRUE(t["outside"].empty());
  // The fix is the predicted one: padding to 16-byte rows, with the predicted times it compares.
  ASSERT_FALSE(doc["fixes"].empty());
  EXPECT_NE(doc["fixes"][0]["text"].get<std::string>().find(fmt::format("{:.1f} us ->", target.us)), std::string::npos)
      << doc["fixes"][0]["text"];
}

TEST(ExplainPredict, NothingStoredAndAGpuNamedPredicts) {
  // No --predict: no GPU here, nothing stored, and a GPU with a shipped model named.
  const Json doc = json_of(run_binary(kNoGpu + kShapescopeBin, "explain 1793 --gpu h200 --format json --db " + no_store()),
                           "ExplainResult");
  EXPECT_EQ(doc["mode"], "predicted");
  EXPECT_EQ(doc["prediction"]["gpu"], "NVIDIA H200");
  EXPECT_NE(doc["prediction"]["why"].get<std::string>().find("no GPU here and no store"), std::string::npos);
  // --tile asks for the tile model, as before; a GPU without a shipped model keeps it too.
  const CliRun tile = run_binary(kNoGpu + kShapescopeBin, "explain 1793 --gpu h200 --tile 256x128 --db " + no_store());
  ASSERT_EQ(tile.code, 0) << tile.err;
  EXPECT_EQ(tile.out.rfind("model prediction for 1793", 0), 0u) << tile.out;
  const CliRun l4 = run_binary(kNoGpu + kShapescopeBin, "explain 1793 --gpu l4 --db " + no_store());
  EXPECT_EQ(l4.code, 2);
  EXPECT_NE(l4.err.find("--tile: needed for a model prediction on l4"), std::string::npos) << l4.err;
}

TEST(ExplainPredict, AStoreOfAnotherGpuIsNeverUsedForThePrediction) {
  // The store holds 1793 measured on an H200. Asked about an H100, explain predicts with the H100's
  // model (not the H200's point, not the H200's model); asked about the H200, it reads the point.
  const std::string h200 = std::string(SHAPESCOPE_TEST_DATA) + "/h200-2026-11-21/sweep_bf16_nn_1-4096.db";
  const std::string before = file_text(h200);
  const Json doc = json_of(run_binary(kNoGpu + kShapescopeBin, "explain 1793 --gpu h100-sxm --format json --db '" + h200 + "'"),
                           "ExplainResult");
  EXPECT_EQ(doc["mode"], "predicted");
  EXPECT_EQ(doc["prediction"]["gpu"], "NVIDIA H100 80GB HBM3");
  EXPECT_NE(doc["prediction"]["why"].get<std::string>().find("holds no measurement of"), std::string::npos);
  const Json stored = json_of(run_binary(kNoGpu + kShapescopeBin, "explain 1793 --gpu h200 --format json --db '" + h200 + "'"),
                              "ExplainResult");
  EXPECT_EQ(stored["mode"], "store");
  EXPECT_EQ(file_text(h200), before) << "the store is only read";
}

TEST(ExplainPredict, OutsideTheMeasuredRangeIsFlagged) {
  const PerfModel m = shipped("h100-sxm");
  const PerfPrediction far = predicted(m, packed(4096, 4096, 20000));
  ASSERT_FALSE(far.outside.empty());
  // A batch beyond the measured shapes' (the H200's bf16 nn: batches 1..128) is flagged too.
  Problem batched = packed(1024, 1024, 1024);
  batched.batch = 100000;
  const PerfPrediction many = predicted(shipped("h200"), batched);
  ASSERT_EQ(many.outside.size(), 1u);
  EXPECT_EQ(many.outside.front(), "batch 100000 outside the measured 1..128");
  EXPECT_TRUE(predicted(shipped("h200"), packed(1024, 1024, 1024)).outside.empty());
  const CliRun r = run_binary(kNoGpu + kShapescopeBin, "explain 4096x4096x20000 --gpu h100-sxm --predict --db " + no_store());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string first = r.out.substr(0, r.out.find('\n'));
  EXPECT_NE(first.find("outside the measured range"), std::string::npos) << first;
  // The evidence table wraps its cells: read it as one line.
  std::string flat;
  for (size_t i = 0; i < r.out.size(); ++i) {
    if (r.out[i] != '\n') flat += r.out[i];
    else {
      flat += ' ';
      while (i + 1 < r.out.size() && r.out[i + 1] == ' ') ++i;
    }
  }
  EXPECT_NE(flat.find("K 20000 outside the measured"), std::string::npos) << r.out;
  EXPECT_NE(flat.find("the held-out error does not cover it"), std::string::npos) << r.out;
  const Json doc = json_of(run_binary(kNoGpu + kShapescopeBin,
                                      "explain 4096x4096x20000 --gpu h100-sxm --predict --json --db " + no_store()),
                           "ExplainResult");
  EXPECT_FALSE(doc["points"][0]["predicted"]["outside"].empty());
}

TEST(ExplainPredict, AClassWithoutDataGetsNoTime) {
  // The shipped H100 model holds bf16 GEMMs of layouts nn, nt and tn, fp16 nt, fp32 nn and nt and fp8 nt
  // (the H200's: bf16 nn): tt and tf32 have no data, and no time is made up.
  for (const std::string args : {"explain 1793 --layout tt", "explain 1024 --dtype tf32"}) {
    const CliRun r = run_binary(kNoGpu + kShapescopeBin, args + " --gpu h100-sxm --predict --db " + no_store());
    EXPECT_EQ(r.code, 3) << args;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(occurrences(r.err, "\n"), 1u) << r.err;
    EXPECT_NE(r.err.find("none were measured; no time predicted"), std::string::npos) << r.err;
  }
}

TEST(PredictCli, AModelOfAnotherGpuIsRefused) {
  const std::string h200 = kGpus + "/h200.json";
  const std::string refused = fmt::format("--perf-model: '{}' is a model of NVIDIA H200 (h200), not of --gpu h100-sxm", h200);
  for (const std::string args : {"explain 1793", "sweep --n 1793 --dry-run", "pad --gemms x.csv"}) {
    const CliRun r = run_binary(kNoGpu + kShapescopeBin, args + " --gpu h100-sxm --perf-model '" + h200 + "' --db " + no_store());
    EXPECT_EQ(r.code, 2) << args << r.out;
    EXPECT_EQ(r.err.rfind("shapescope: " + refused, 0), 0u) << args << ": " << r.err;
    EXPECT_EQ(occurrences(r.err, "\n"), 1u) << r.err;
  }
  // The matching --gpu, or none (no GPU here), uses it.
  for (const std::string gpu : {" --gpu h200", ""}) {
    const CliRun r = run_binary(kNoGpu + kShapescopeBin, "explain 1793 --perf-model '" + h200 + "'" + gpu + " --db " + no_store());
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("performance model of NVIDIA H200"), std::string::npos) << r.out;
  }
}

TEST(PredictCli, AModelScaledToAnotherGpuSaysSoInEveryPrediction) {
  const std::string h100 = kGpus + "/h100-sxm.json";
  const PerfModel scaled = scale_perf_model(shipped("h100-sxm"), *find_profile("h200"), "--scale-to");
  const PerfPrediction p = predicted(scaled, packed(1793, 1793, 1793));
  ASSERT_TRUE(p.scaled);
  for (const std::string gpu : {" --gpu h200", ""}) {
    const Json doc = json_of(run_binary(kNoGpu + kShapescopeBin, "explain 1793 --perf-model '" + h100 +
                                                                     "' --scale-to h200 --format json --db " + no_store() + gpu),
                             "ExplainResult");
    EXPECT_EQ(doc["prediction"]["gpu"], "NVIDIA H200 SXM 141GB");
    EXPECT_EQ(doc["prediction"]["scaled"], scaled.scaled->terms());
    EXPECT_NE(doc["source"].get<std::string>().find("; scaled: " + scaled.scaled->terms()), std::string::npos);
    const Json& t = doc["points"][0]["predicted"];
    EXPECT_EQ(t["scaled"], "scaled from NVIDIA H100 80GB HBM3");
    EXPECT_NEAR(t["time_us"].get<double>(), p.us, 1e-9 * p.us);
  }
  const CliRun plan = run_binary(kNoGpu + kShapescopeBin, "sweep --n 1790..1800:2 --dry-run --perf-model '" + h100 +
                                                              "' --scale-to h200 --db " + no_store());
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_EQ(occurrences(plan.out, "scaled from h100-sxm"), 6u) << plan.out;
  EXPECT_NE(plan.out.find("scaled to NVIDIA H200 SXM 141GB (memory time at DRAM speed x 0.698"), std::string::npos) << plan.out;
  // An unscaled prediction says nothing of scaling.
  const Json plain = json_of(run_binary(kNoGpu + kShapescopeBin, "explain 1793 --gpu h100-sxm --predict --format json --db " + no_store()),
                             "ExplainResult");
  EXPECT_EQ(plain["prediction"]["scaled"], "");
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"explain 1793 --scale-to h200", "--scale-to: 'h200' scales the model --perf-model FILE names"},
      {"explain 1793 --scale-to h999 --perf-model '" + h100 + "'", "--scale-to: 'h999' is not a known GPU profile"},
      {"explain 1793 --scale-to h200 --gpu h100-sxm --perf-model '" + h100 + "'",
       "--scale-to: 'h200' is the GPU predicted for, --gpu names another (h100-sxm)"},
      {"explain 1793 --scale-to h100-sxm --perf-model '" + h100 + "'", "--scale-to: 'h100-sxm': the model is a model of that GPU"},
  };
  for (const auto& [args, words] : refused) {
    const CliRun r = run_binary(kNoGpu + kShapescopeBin, args + " --db " + no_store());
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_NE(r.err.find(words), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(occurrences(r.err, "\n"), 1u) << r.err;
    EXPECT_TRUE(r.out.empty()) << args;
  }
}

TEST(PredictCli, BadInputIsOneLine) {
  struct Case {
    std::string args, words;
  };
  const std::vector<Case> cases = {
      {"explain 1793 --predict", "--predict: no GPU here to predict for"},
      {"explain 1793 --gpu a100 --predict", "--gpu: 'a100' has no performance model shipped"},
      {"explain 1793 --gpu h100-sxm --predict --tile 256x128", "--tile: '256x128' is the tile model's"},
      {"explain 1793 --gpu h100-sxm --predict --backend cublaslt", "--backend: 'cublaslt': the performance model"},
      {"explain 1793 --perf-model /nonexistent/model.json", "--perf-model: '/nonexistent/model.json'"},
      {"explain 1793 --perf-model ''", "--perf-model: '' is empty"},
      {"sweep --n 1793 --gpu h100-sxm --predict", "--predict: predicts the plan's times with --dry-run"},
      {"sweep --n 1793 --dry-run --gpu h100-sxm", "--gpu: 'h100-sxm' names the GPU --dry-run --predict predicts for"},
      {"pad --gemms x.csv --gpu h100-sxm", "--gpu: 'h100-sxm' names the GPU --predict predicts for"},
      {"pad --model gpt2 --tokens 4096 --gpu h100-sxm --predict --dry-run", "--dry-run: lists the GEMMs and candidates"},
  };
  for (const Case& c : cases) {
    const CliRun r = run_binary(kNoGpu + kShapescopeBin, c.args + " --db " + no_store());
    EXPECT_EQ(r.code, 2) << c.args;
    EXPECT_NE(r.err.find(c.words), std::string::npos) << c.args << ": " << r.err;
    EXPECT_EQ(occurrences(r.err, "\n"), 1u) << c.args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.args;
  }
}

TEST(SweepPredict, ThePlanGetsEachPointsPredictionAndTheTotal) {
  const PerfModel m = shipped("h100-sxm");
  const CliRun r = run_binary(kNoGpu + kShapescopeBin, "sweep --n 1790..1800:2 --dry-run --gpu h100-sxm --predict --db " + no_store());
  ASSERT_EQ(r.code, 0) << r.err;
  double total = 0;
  for (int64_t n = 1790; n <= 1800; n += 2) {
    const PerfPrediction p = predicted(m, packed(n, n, n));
    total += p.us;
    EXPECT_NE(r.out.find(fmt::format("{:.2f}", p.us)), std::string::npos) << n << "\n" << r.out;
    EXPECT_NE(r.out.find(fmt::format("{:.1f} ({:.1f})", p.cls->accuracy.median * 100, p.cls->accuracy.p95 * 100)),
              std::string::npos)
        << r.out;
  }
  EXPECT_NE(r.out.find(fmt::format("6 of 6 points, {:.1f} us in all", total)), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("GPU memory needed"), std::string::npos) << "the plan's cost as without --predict";
}

// A model of the law worked out below: floor 6 us, one 128x256-tile kernel on 132 slots, 700 TFLOP/s
// with 16-byte rows and 175 without, for the nt GEMMs of GPT-2's forward step (and their neighbours).
constexpr double kFloorUs = 6;
double law_us(int64_t m, int64_t n, int64_t k, double tflops) {
  const int64_t tiles = ((m + 127) / 128) * ((n + 255) / 256);
  const int64_t rounds = (tiles + 131) / 132;
  return kFloorUs + double(rounds) * 2.0 * 128 * 256 * double(k) / (tflops * 1e6 / 132);
}

std::string synthetic_nt_model() {
  PerfSampleSet set;
  set.gpu = "NVIDIA H100 80GB HBM3";
  set.sm_count = 132;
  set.driver = "test", set.cublas = "test";
  for (int64_t k = 16; k <= 160; k += 16) set.samples.push_back({packed(16, 16, k), kFloorUs, 64, 64, 1, 132});
  for (int64_t m : {1024, 2048, 4096, 8192})
    for (int64_t k : {768, 3072})
      for (int64_t n : {768, 2304, 3072, 50304, 51200})
        for (int64_t odd : {0, 1})  // 767, 2305...: 2-byte rows of C (ldc = N)
          set.samples.push_back({packed(m, n - odd, k, Layout::kNT), law_us(m, n - odd, k, odd ? 175 : 700), 128, 256, 1, 132});
  const std::string file = ::testing::TempDir() + "predict_synthetic_nt.json";
  std::ofstream(file) << perf_model_json(fit_perf_model(set, "synthetic"));
  return file;
}

TEST(PadPredict, PadsTheVocabularyAsWorkedOutByHand) {
  const std::string model = synthetic_nt_model();
  const Json doc = json_of(run_binary(kNoGpu + kShapescopeBin, "pad --model gpt2 --tokens 4096 --gpu h100-sxm --perf-model '" +
                                                                   model + "' --format json --db " + no_store()),
                           "PadResult");
  EXPECT_EQ(doc["mode"], "predicted");
  const Json& step = doc["steps"][0];
  // By hand: the forward step is 12 x (c_attn 4096x2304x768, attn.c_proj 4096x768x768, c_fc
  // 4096x3072x768, mlp.c_proj 4096x768x3072), all 16-byte rows, and the LM head 4096x50257x768 with
  // 2-byte rows of C: 32 x 197 = 6304 tiles in 48 rounds at 175 TFLOP/s. 50264 keeps the 48 rounds at
  // 700 TFLOP/s: a quarter of the time.
  const double layers = 12 * (law_us(4096, 2304, 768, 700) + law_us(4096, 768, 768, 700) + law_us(4096, 3072, 768, 700) +
                              law_us(4096, 768, 3072, 700));
  const double before = layers + law_us(4096, 50257, 768, 175);
  const double after = layers + law_us(4096, 50264, 768, 700);
  // The layers' GEMMs were measured: their times as measured. 50257 and 50264 were not: the local fit
  // over their measured neighbours (N 50303/50304 and 51199/51200, whose wave rounds differ) is within
  // 5 % of the law's.
  EXPECT_NEAR(step["gemm_time_us"].get<double>(), before, before * 0.05);
  for (const Json& g : step["gemms"]) EXPECT_TRUE(g["predicted"].is_object()) << g["linear"];
  const Json* vocab = nullptr;
  for (const Json& d : step["dimensions"])
    if (d["name"] == "vocab_size") vocab = &d;
  ASSERT_NE(vocab, nullptr);
  ASSERT_FALSE((*vocab)["candidates"].empty());
  const Json& c = (*vocab)["candidates"][0];
  EXPECT_EQ(c["value"], 50264);
  EXPECT_NEAR(c["after_us"].get<double>(), after, after * 0.05);
  EXPECT_NEAR(c["saving_us"].get<double>(), before - after, 0.05 * after);
  // Every larger candidate runs the same 48 rounds: the least that pads wins.
  EXPECT_EQ((*vocab)["recommendation"]["action"], "pad");
  EXPECT_EQ((*vocab)["recommendation"]["value"], 50264);
  const CliRun text = run_binary(kNoGpu + kShapescopeBin,
                                 "pad --model gpt2 --tokens 4096 --gpu h100-sxm --perf-model '" + model + "' --db " + no_store());
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("predicted [us]  error [%]"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("vocab_size 50257: pad to 50264 (multiple of 8 above)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("above the model's held-out error"), std::string::npos) << text.out;
  std::remove(model.c_str());
}

TEST(PadPredict, TheShippedModelPadsAGemmList) {
  // One square GEMM: the size 1793 is its M, N and K. By the H100's model 1793 (2-byte rows) takes
  // about 4x what 1800 does, and every aligned candidate saves within the 16-byte class's error of
  // the best: the least that pads, 1800.
  const std::string list = ::testing::TempDir() + "predict_square.csv";
  std::ofstream(list) << "m,n,k,layout,dtype,batch,count\n1793,1793,1793,nn,bf16,1,4\n";
  const PerfModel m = shipped("h100-sxm");
  const PerfPrediction now = predicted(m, packed(1793, 1793, 1793)), padded = predicted(m, packed(1800, 1800, 1800));
  const Json doc = json_of(run_binary(kNoGpu + kShapescopeBin,
                                      "pad --gemms '" + list + "' --gpu h100-sxm --predict --json --db " + no_store()),
                           "PadSizesResult");
  EXPECT_EQ(doc["mode"], "predicted");
  EXPECT_NEAR(doc["gemm_time_us"].get<double>(), 4 * now.us, 1e-6);
  const Json& size = doc["sizes"][0];
  EXPECT_EQ(size["value"], 1793);
  EXPECT_EQ(size["candidates"][0]["value"], 1800);
  EXPECT_NEAR(size["candidates"][0]["after_us"].get<double>(), 4 * padded.us, 1e-6);
  EXPECT_NEAR(size["candidates"][0]["threshold_pct"].get<double>(), padded.cls->accuracy.median * 100, 1e-9);
  EXPECT_EQ(size["recommendation"]["value"], 1800);
  std::remove(list.c_str());
}

}  // namespace
}  // namespace shapescope
