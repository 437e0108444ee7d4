// profile --predict: a step's GEMMs, totals and what-ifs from a GPU's performance model, no GPU. Every
// time is the model's prediction of its GEMM, marked predicted with its class's error; the total's
// error is the GEMMs' weighted by their time; a GEMM outside the measured range is flagged, one of a
// class the model lacks is listed without a time; the what-ifs the model prices are its predictions,
// the others listed with why; bad combinations are one line, and leave every file as it was.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_util.hpp"
#include "common/error.hpp"
#include "model/gemm_list.hpp"
#include "model/input_file.hpp"
#include "model/perf_predict.hpp"
#include "model/profile.hpp"
#include "model/trace_import.hpp"
#include "report/json_schema.hpp"
#include "views/profile.hpp"

namespace shapescope {
namespace {

using Json = nlohmann::json;

const std::string kGpus = SHAPESCOPE_GPUS_DIR;
const std::string kTrace = std::string(SHAPESCOPE_TEST_DATA) + "/traces/gpt2.json";
const std::string kMixtral = std::string(SHAPESCOPE_TEST_DATA) + "/traces/mixtral-2l.json";
// No GPU for the commands, whatever the host has.
const std::string kNoGpu = "CUDA_VISIBLE_DEVICES= ";

PerfModel shipped(const std::string& key) {
  const std::string file = kGpus + "/" + key + ".json";
  return read_perf_model(read_text_file(file, file), file);
}

std::optional<PerfPrediction> predicted(const PerfModel& m, const Problem& p) {
  std::string why;
  return predict(m, p, why);
}

// A store path that does not exist: nothing stored to read.
std::string no_store() {
  const std::string path = ::testing::TempDir() + "profile_predict_no_store.db";
  std::remove(path.c_str());
  return path;
}

CliRun profile(const std::string& args) {
  return run_binary(kNoGpu + kShapescopeBin, "profile " + args + " --db " + no_store());
}

Json json_of(const CliRun& r) {
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NO_THROW(check_json(nlohmann::ordered_json::parse(r.out), "ProfileResult"));
  return Json::parse(r.out);
}

// The trace's rows (their problems, in workload order) as profile makes them.
std::vector<ProfileRow> trace_rows(const std::string& path) {
  return profile_rows(load_torch_trace(path, path), BackendKind::kCublas, false);
}

// The GEMMs of a document by "shape dtype", for matching rows to problems.
std::map<std::string, Json> by_shape(const Json& doc) {
  std::map<std::string, Json> out;
  for (const Json& g : doc["gemms"]) out[g["shape"].get<std::string>() + " " + g["dtype"].get<std::string>()] = g;
  return out;
}

std::string key_of(const Problem& p) {
  return fmt::format("{} {} {}", p.shape_string(), to_string(p.layout), to_string(p.dtype));
}

TEST(ProfilePredict, EveryGemmOfATraceIsTheModelsPredictionWithItsError) {
  const PerfModel m = shipped("h100-sxm");
  const Json doc = json_of(profile("--trace '" + kTrace + "' --gpu h100-sxm --predict --json"));
  EXPECT_EQ(doc["mode"], "predicted");
  EXPECT_EQ(doc["prediction"]["gpu"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(doc["gpu_match"], "same");
  const std::map<std::string, Json> gemms = by_shape(doc);
  double total = 0, weighted_median = 0, weighted_p95 = 0;
  int64_t outside = 0;
  const std::vector<ProfileRow> rows = trace_rows(kTrace);
  ASSERT_EQ(rows.size(), gemms.size());
  for (const ProfileRow& row : rows) {
    const std::optional<PerfPrediction> p = predicted(m, row.problem);
    ASSERT_TRUE(p) << key_of(row.problem);
    const Json& g = gemms.at(key_of(row.problem));
    EXPECT_TRUE(g["predicted"].get<bool>());
    EXPECT_DOUBLE_EQ(g["median_us"].get<double>(), p->us);
    EXPECT_DOUBLE_EQ(g["error_median"].get<double>(), p->cls->accuracy.median);
    EXPECT_DOUBLE_EQ(g["error_p95"].get<double>(), p->cls->accuracy.p95);
    EXPECT_DOUBLE_EQ(g["noise"].get<double>(), p->cls->accuracy.median) << "the error in place of a noise";
    EXPECT_EQ(g["prediction"]["outside"].size(), p->outside.size());
    const double step = row.calls_per_step * p->us;
    total += step;
    weighted_median += step * p->cls->accuracy.median;
    weighted_p95 += step * p->cls->accuracy.p95;
    outside += p->outside.empty() ? 0 : 1;
  }
  ASSERT_GT(outside, 0) << "the LM head's N 50257 lies outside every class's measured range";
  const Json& t = doc["totals"];
  EXPECT_TRUE(t["predicted"].get<bool>());
  EXPECT_NEAR(t["measured_us"].get<double>(), total, 1e-9 * total);
  EXPECT_NEAR(t["error_median"].get<double>(), weighted_median / total, 1e-12);
  EXPECT_NEAR(t["error_p95"].get<double>(), weighted_p95 / total, 1e-12);
  EXPECT_EQ(t["outside_range_gemms"], outside);
  ASSERT_TRUE(t["ratio"].is_number()) << "the trace's own kernel times are the measurement compared";
  EXPECT_NEAR(t["ratio"].get<double>(), total / t["compared_trace_us"].get<double>(), 1e-9);
  const std::string text = doc["total_text"];
  EXPECT_NE(text.find(fmt::format("predicted (15 of 15 GEMMs), expected error {:.1f} % median, {:.1f} % p95",
                                  100 * weighted_median / total, 100 * weighted_p95 / total)),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(fmt::format("{} GEMMs (", outside) ), std::string::npos) << text;
  EXPECT_NE(text.find("outside the measured range"), std::string::npos) << text;
  EXPECT_NE(text.find("predicted / trace = "), std::string::npos) << text;
  EXPECT_NE(doc["clocks_note"].get<std::string>().find("the predicted times are at the clock the model was fitted at, "
                                                      "SM clock 1980 MHz"),
            std::string::npos)
      << doc["clocks_note"];
}

TEST(ProfilePredict, TheTextMarksEveryTimePredicted) {
  const CliRun r = profile("--trace '" + kTrace + "' --gpu h100-sxm --predict --wide");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("predicted by the performance model of NVIDIA H100 80GB HBM3"), std::string::npos) << r.out;
  const size_t at = r.out.find(" #  GEMM");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string header = r.out.substr(at, r.out.find('\n', at) - at);
  EXPECT_NE(header.find("predicted [us]"), std::string::npos) << header;
  EXPECT_NE(header.find("error [%] (p95)"), std::string::npos) << header;
  EXPECT_EQ(header.find("noise"), std::string::npos) << "no measured noise claimed: " << header;
  EXPECT_EQ(header.find("per call [us]"), std::string::npos) << header;
  EXPECT_NE(r.out.find(", outside "), std::string::npos) << "an error cell flags the GEMMs outside the range";
  EXPECT_NE(r.out.find("outside the measured range (extrapolated: the held-out error does not cover it): #1 "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("clocks: not replayed"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(ProfilePredict, AModelsStepGetsPredictedWhatIfsAndListsTheOthers) {
  const PerfModel m = shipped("h100-sxm");
  const Json doc = json_of(profile("--model gpt2 --tokens 12288 --train --gpu h100-sxm --predict --json"));
  EXPECT_EQ(doc["mode"], "predicted");
  for (const Json& g : doc["gemms"]) {
    EXPECT_TRUE(g["predicted"].get<bool>()) << g["shape"];
    EXPECT_GT(g["error_p95"].get<double>(), 0) << g["shape"];
  }
  const Json& w = doc["what_ifs"];
  ASSERT_FALSE(w["ranked"].empty());
  for (const Json& x : w["ranked"]) {
    EXPECT_TRUE(x["predicted"].get<bool>());
    EXPECT_FALSE(x["paired"].get<bool>());
    const double now = x["now_us"], after = x["after_us"], error = x["error"];
    EXPECT_NEAR(x["saving_us"].get<double>(), x["calls_per_step"].get<double>() * (now - after), 1e-9 * now);
    EXPECT_GT(1 - after / now, std::max(0.02, error)) << "a saving counts above the predictions' error";
  }
  // Each list's changes at once: the model's sum, said to be one.
  ASSERT_FALSE(w["changed_steps"].empty());
  for (const Json& s : w["changed_steps"]) {
    EXPECT_TRUE(s["predicted"].get<bool>());
    EXPECT_NE(s["text"].get<std::string>().find("the model's sum"), std::string::npos) << s["text"];
  }
  // What it cannot price is listed, with why: fp8 (no class), the algorithms.
  std::map<std::string, std::string> why;
  for (const Json& n : w["not_predicted"])
    why[n["kind"].get<std::string>() + " " + n["what"].get<std::string>()] = n["why"];
  // fp8 has no class in the shipped model; with one, its casts would still be no GEMMs it predicts.
  EXPECT_TRUE(why["precision fp8"] == "the model of NVIDIA H100 80GB HBM3 has no fp8 GEMMs: none were measured" ||
              why["precision fp8"].find("its casts") == 0)
      << why["precision fp8"];
  EXPECT_NE(why["algorithm cuBLASLt's other algorithms, our fixed kernel, batching"].find("the model predicts"),
            std::string::npos);
  bool listed = false;
  for (const Json& line : w["lines"])
    listed = listed || line.get<std::string>().rfind("what-if not predicted: precision (fp8)", 0) == 0;
  EXPECT_TRUE(listed) << w["lines"];
}

TEST(ProfilePredict, ALayoutWhatIfIsTheAlignedClasssPrediction) {
  // 4096x4096x4096 nn with A's rows 4100 elements long (8-byte rows): 16-byte rows are predicted from
  // the aligned class, the saving counted above both classes' errors.
  const std::string list = ::testing::TempDir() + "profile_predict_layout.csv";
  std::ofstream(list) << "m,n,k,layout,dtype,batch,count,lda\n4096,4096,4096,nn,bf16,1,2,4100\n";
  const PerfModel m = shipped("h100-sxm");
  Problem p;
  p.m = p.n = p.k = 4096;
  p.lda = 4100, p.ldb = p.ldc = 4096;
  const Problem aligned = aligned_layout(p, 16);
  const PerfPrediction now = *predicted(m, p), after = *predicted(m, aligned);
  ASSERT_LT(now.cls->align_bytes, 16);
  const Json doc = json_of(profile("--gemms '" + list + "' --gpu h100-sxm --predict --json"));
  const Json* layout = nullptr;
  for (const Json& x : doc["what_ifs"]["ranked"])
    if (x["kind"] == "layout") layout = &x;
  ASSERT_NE(layout, nullptr) << doc["what_ifs"];
  EXPECT_DOUBLE_EQ((*layout)["now_us"].get<double>(), now.us);
  EXPECT_NEAR((*layout)["after_us"].get<double>(), after.us, 1e-9 * after.us);
  EXPECT_NEAR((*layout)["saving_us"].get<double>(), 2 * (now.us - after.us), 1e-9 * now.us);
  EXPECT_DOUBLE_EQ((*layout)["error"].get<double>(), std::max(now.cls->accuracy.median, after.cls->accuracy.median));
  EXPECT_NE((*layout)["change"].get<std::string>().find("a copy into such rows at run time is not priced"),
            std::string::npos);
  std::remove(list.c_str());
}

// A model of two classes worked out by hand: fp32 nn at 50 TFLOP/s, bf16 nn at 700 (one 128x256 tile
// on 132 slots, a 6 us floor).
double law_us(int64_t m, int64_t n, int64_t k, double tflops) {
  const int64_t rounds = (((m + 127) / 128) * ((n + 255) / 256) + 131) / 132;
  return 6 + double(rounds) * 2.0 * 128 * 256 * double(k) / (tflops * 1e6 / 132);
}

Problem square(int64_t n, DType dtype) {
  Problem p;
  p.m = p.n = p.k = p.lda = p.ldb = p.ldc = n;
  p.dtype = dtype;
  return p;
}

TEST(ProfilePredict, PrecisionIsPredictedOnlyToADtypeTheModelHas) {
  PerfSampleSet set;
  set.gpu = "NVIDIA H100 80GB HBM3";
  set.sm_count = 132;
  set.driver = set.cublas = "test";
  for (int64_t k = 16; k <= 160; k += 16) {
    Problem floor = square(16, DType::kBf16);
    floor.k = floor.lda = k;
    set.samples.push_back({floor, 6, 64, 64, 1, 132});
  }
  for (const auto& [dtype, tflops] : {std::pair{DType::kFp32, 50.0}, std::pair{DType::kBf16, 700.0}})
    for (int64_t n : {1024, 1536, 2048, 3072, 4096, 5120, 6144, 7168, 8192})
      set.samples.push_back({square(n, dtype), law_us(n, n, n, tflops), 128, 256, 1, 132});
  const std::string model = ::testing::TempDir() + "profile_predict_two_dtypes.json";
  std::ofstream(model) << perf_model_json(fit_perf_model(set, "synthetic"));
  const std::string list = ::testing::TempDir() + "profile_predict_fp32.csv";
  std::ofstream(list) << "m,n,k,layout,dtype,batch,count\n4096,4096,4096,nn,fp32,1,3\n";
  const Json doc = json_of(profile("--gemms '" + list + "' --gpu h100-sxm --perf-model '" + model + "' --json"));
  // A measured shape predicts its measured time: fp32 at 50, bf16 at 700 TFLOP/s.
  const double now = law_us(4096, 4096, 4096, 50), after = law_us(4096, 4096, 4096, 700);
  EXPECT_NEAR(doc["gemms"][0]["median_us"].get<double>(), now, 1e-9 * now);
  const Json* bf16 = nullptr;
  for (const Json& x : doc["what_ifs"]["precision"]["ranked"])
    if (x["change"].get<std::string>().find("run it in bf16") != std::string::npos) bf16 = &x;
  ASSERT_NE(bf16, nullptr) << doc["what_ifs"];
  EXPECT_TRUE((*bf16)["changes_dtype"].get<bool>());
  EXPECT_NEAR((*bf16)["after_us"].get<double>(), after, 1e-9 * after);
  EXPECT_NEAR((*bf16)["saving_us"].get<double>(), 3 * (now - after), 1e-9 * now);
  EXPECT_NE((*bf16)["change"].get<std::string>().find("its numerical error is measured on a GPU: not here"),
            std::string::npos);
  // tf32 and fp16 have no class: listed, not guessed.
  std::vector<std::string> unpriced;
  for (const Json& n : doc["what_ifs"]["not_predicted"])
    if (n["kind"] == "precision") {
      unpriced.push_back(n["what"]);
      EXPECT_EQ(n["gemms"], Json::array({1}));
      EXPECT_NE(n["why"].get<std::string>().find("none were measured"), std::string::npos) << n["why"];
    }
  std::sort(unpriced.begin(), unpriced.end());
  EXPECT_EQ(unpriced, (std::vector<std::string>{"fp16", "tf32"}));
  std::remove(model.c_str());
  std::remove(list.c_str());
}

TEST(ProfilePredict, AClassTheModelLacksGetsNoTime) {
  // The H100's model with its nn classes only: the trace's nt and tn GEMMs are listed without a time,
  // and the total is of the others.
  PerfModel nn = shipped("h100-sxm");
  nn.classes.erase(std::remove_if(nn.classes.begin(), nn.classes.end(),
                                  [](const PerfClass& c) { return c.layout != Layout::kNN; }),
                   nn.classes.end());
  const std::string model = ::testing::TempDir() + "profile_predict_nn_only.json";
  std::ofstream(model) << perf_model_json(nn);
  const std::string args = "--trace '" + kTrace + "' --gpu h100-sxm --perf-model '" + model + "' --no-verdict";
  const Json doc = json_of(profile(args + " --json"));
  int64_t missing = 0;
  double total = 0;
  for (const Json& g : doc["gemms"]) {
    if (g["predicted"].get<bool>()) {
      total += g["step_us"].get<double>();
      continue;
    }
    ++missing;
    EXPECT_TRUE(g["median_us"].is_null()) << g["shape"];
    EXPECT_NE(g["not_predicted"].get<std::string>().find("none were measured"), std::string::npos) << g["not_predicted"];
  }
  EXPECT_GT(missing, 0);
  EXPECT_EQ(doc["totals"]["missing_gemms"], missing);
  EXPECT_NEAR(doc["totals"]["measured_us"].get<double>(), total, 1e-9 * total);
  const CliRun text = profile(args + " --wide");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("not predicted: 12288x50257x768 nt bf16 (the model of NVIDIA H100 80GB HBM3 has no bf16 nt "
                          "GEMMs"),
            std::string::npos)
      << text.out;
  std::remove(model.c_str());
  // The trace ran on an H100; predicted for an H200, the comparison of two GPUs is said first.
  const Json h200 = json_of(profile("--trace '" + kTrace + "' --gpu h200 --predict --no-verdict --json"));
  EXPECT_EQ(h200["gpu_match"], "other");
  EXPECT_NE(h200["other_gpu"].get<std::string>().find("the times here were predicted for NVIDIA H200"),
            std::string::npos);
}

TEST(ProfilePredict, GroupedCallsAreListedWithTheirPredictedLoop) {
  const PerfModel m = shipped("h100-sxm");
  const Json doc = json_of(profile("--trace '" + kMixtral + "' --gpu h100-sxm --predict --json"));
  int64_t grouped = 0;
  for (const Json& g : doc["gemms"]) {
    if (!g["grouped"].get<bool>()) continue;
    ++grouped;
    EXPECT_FALSE(g["predicted"].get<bool>());
    EXPECT_TRUE(g["median_us"].is_null()) << "a grouped call's time is not a loop's";
    EXPECT_TRUE(g["per_group_loop_us"].is_number()) << g["shape"];
  }
  ASSERT_GT(grouped, 0);
  const Json* grouping = nullptr;
  for (const Json& n : doc["what_ifs"]["not_predicted"])
    if (n["kind"] == "grouping") grouping = &n;
  ASSERT_NE(grouping, nullptr);
  EXPECT_EQ(int64_t((*grouping)["gemms"].size()), grouped);
}

TEST(ProfilePredict, AScaledModelAndAModelOfAnotherGpu) {
  const std::string h100 = kGpus + "/h100-sxm.json";
  const Json doc =
      json_of(profile("--trace '" + kTrace + "' --perf-model '" + h100 + "' --scale-to h200 --no-verdict --json"));
  EXPECT_NE(doc["prediction"]["scaled"].get<std::string>().find("memory time at DRAM speed x"), std::string::npos);
  EXPECT_EQ(doc["gpu_match"], "other") << "recorded on an H100, predicted for an H200";
  for (const Json& g : doc["gemms"]) EXPECT_EQ(g["prediction"]["scaled"], "scaled from NVIDIA H100 80GB HBM3");
  const CliRun refused = profile("--trace '" + kTrace + "' --gpu h100-sxm --perf-model '" + kGpus + "/h200.json'");
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("is a model of NVIDIA H200 (h200), not of --gpu h100-sxm"), std::string::npos) << refused.err;
}

TEST(ProfilePredict, BadCombinationsAreOneLineAndChangeNoFile) {
  // Every input and an earlier output in one folder, checksummed before and after.
  const std::string dir = ::testing::TempDir() + "profile_predict_files/";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string trace = dir + "gpt2.json", page = dir + "page.html", store = dir + "store.db";
  std::ofstream(trace) << file_text(kTrace);
  std::ofstream(page) << "an earlier page";
  std::ofstream(store) << "not a store";
  const auto sums = [&] { return file_text(trace) + "|" + file_text(page) + "|" + file_text(store); };
  const std::string before = sums();
  const std::string base = "profile --trace '" + trace + "' --html '" + page + "' --db '" + store + "'";
  struct Case {
    std::string args, words;
    int code;
  };
  const std::vector<Case> cases = {
      {" --gpu h100-sxm --predict --clocks burst", "--clocks: 'burst' is the clock state the GEMMs are measured in", 2},
      {" --gpu h100-sxm --predict --what-if 1,3", "--what-if: '1,3' measures those what-ifs applied at once", 2},
      {" --gpu h100-sxm --predict --samples 5", "--samples: '5' is how often each GEMM is measured", 2},
      {" --gpu h100-sxm --predict --pair-seconds 2", "--pair-seconds: '2' is how long the what-ifs", 2},
      {" --gpu h100-sxm --predict --what-if-seconds 20", "--what-if-seconds: '20' is how long the --what-if step", 2},
      {" --gpu h100-sxm --predict --burst-idle 2", "--burst-idle: '2' paces GEMMs", 2},
      {" --gpu h100-sxm --predict --max-error 0.01", "--max-error: '0.01' keeps precision what-ifs", 2},
      {" --gpu h100-sxm --predict --micro-batches 4", "--micro-batches: '4' prices an fp8 what-if's weight casts", 2},
      {" --gpu h100-sxm --predict --backend cublaslt", "--backend: 'cublaslt': the performance model", 2},
      {" --gpu h100-sxm", "--gpu: 'h100-sxm' names the GPU --predict predicts for; add --predict", 2},
      {" --predict", "--predict: no GPU here to predict for: name one with --gpu KEY", 2},
      {" --gpu a100 --predict", "--gpu: 'a100' has no performance model shipped", 2},
      {" --gpu h100-sxm --perf-model '" + kGpus + "/h200.json'", "--perf-model: '" + kGpus + "/h200.json' is a model of", 2},
  };
  for (const Case& c : cases) {
    const CliRun r = run_binary(kNoGpu + kShapescopeBin, base + c.args);
    EXPECT_EQ(r.code, c.code) << c.args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("shapescope: " + c.words, 0), 0u) << c.args << ": " << r.err;
    EXPECT_EQ(occurrences(r.err, "\n"), 1u) << c.args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.args;
    EXPECT_EQ(sums(), before) << c.args;
  }
  // No GPU and no --predict: the store is read as before (this one is no store: refused, unchanged).
  const CliRun plain = run_binary(kNoGpu + kShapescopeBin, "profile --trace '" + trace + "' --db '" + dir + "none.db'");
  EXPECT_EQ(plain.code, 3) << plain.err;
  EXPECT_NE(plain.err.find("profile: no GPU here and no store"), std::string::npos) << plain.err;
  EXPECT_EQ(sums(), before);
  // The page of a prediction replaces the old one, with --force only over a store; the inputs stay.
  const CliRun ok = run_binary(kNoGpu + kShapescopeBin, "profile --trace '" + trace + "' --html '" + page +
                                                            "' --gpu h100-sxm --predict --no-verdict --db '" + dir +
                                                            "none.db'");
  ASSERT_EQ(ok.code, 0) << ok.err;
  const std::string html = file_text(page);
  EXPECT_NE(html.find("Times are a performance model's predictions"), std::string::npos);
  EXPECT_NE(html.find("predicted [us]"), std::string::npos);
  EXPECT_EQ(file_text(trace), file_text(kTrace));
  std::filesystem::remove_all(dir);
}

// A step none of whose GEMMs the model has a class for (the H200's model cut to its nn classes; GPT-2's
// forward GEMMs are nt): its time is unknown, in the text and as JSON's null, not 0.0 us.
TEST(ProfilePredict, AStepWithNothingPredictedHasNoTime) {
  const std::string dir = ::testing::TempDir() + "profile_predict_nothing_predicted/";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Json model = Json::parse(file_text(kGpus + "/h200.json"));
  Json nn = Json::array();
  for (const Json& c : model.at("classes"))
    if (c.at("layout") == "nn") nn.push_back(c);
  model["classes"] = nn;
  std::ofstream(dir + "h200-nn.json") << model.dump();
  const std::string args = "profile --model gpt2 --tokens 4096 --predict --gpu h200 --perf-model '" + dir +
                           "h200-nn.json' --db '" + no_store() + "'";
  const CliRun text = run_binary(kNoGpu + kShapescopeBin, args);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("GEMM time per step: unknown (none of its 5 GEMMs predicted)"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("0.0 us predicted"), std::string::npos) << text.out;
  const CliRun json = run_binary(kNoGpu + kShapescopeBin, args + " --json");
  ASSERT_EQ(json.code, 0) << json.err;
  const Json totals = Json::parse(json.out).at("totals");
  EXPECT_TRUE(totals.at("measured_us").is_null()) << totals;
  EXPECT_TRUE(totals.at("error_median").is_null()) << totals;
  EXPECT_EQ(totals.at("measured_gemms"), 0);
  std::filesystem::remove_all(dir);
}

// ^C during a prediction (a list of thousands of GEMMs takes seconds): it ends at once, exit 130;
// nothing was measured, so nothing is lost.
TEST(ProfilePredict, AnInterruptEndsItAtOnce) {
  const std::string list = ::testing::TempDir() + "profile_predict_interrupt_" + std::to_string(getpid()) + ".csv";
  std::ofstream(list) << "m,n,k,layout,dtype,batch,count\n1000,1000,1000,nn,bf16,1,1\n";
  const Workload w = load_gemm_list(list, "--gemms");
  std::remove(list.c_str());
  auto model = std::make_shared<GpuPerfModel>();
  model->model = shipped("h100-sxm");
  const std::atomic<bool> interrupted{true};
  try {
    profile_predict(w, ProfileRequest{}, model, &interrupted);
    ADD_FAILURE() << "not interrupted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInterrupted) << e.what();
  }
  const std::atomic<bool> running{false};
  EXPECT_EQ(profile_predict(w, ProfileRequest{}, model, &running).entries.size(), 1u);
}

// The page never replaces a file the command reads besides its inputs: the performance model
// (--perf-model's, or the one shipped for --gpu) and a preset (--model NAME's file in the data folder).
TEST(ProfilePredict, ThePageNeverReplacesTheModelOrThePreset) {
  const std::string dir = ::testing::TempDir() + "profile_predict_page_over_inputs/";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "models");
  std::filesystem::create_directories(dir + "gpus");
  const std::string model = dir + "gpus/h200.json", preset = dir + "models/gpt2.json";
  std::filesystem::copy_file(kGpus + "/h200.json", model);
  std::filesystem::copy_file(std::string(SHAPESCOPE_MODELS_DIR) + "/gpt2.json", preset);
  const std::string before = file_text(model) + "|" + file_text(preset);
  const std::string in_data = kNoGpu + "SHAPESCOPE_DATA='" + dir + "' " + kShapescopeBin;
  for (const auto& [args, file] : std::vector<std::pair<std::string, std::string>>{
           {"profile --model gpt2 --tokens 64 --perf-model '" + model + "' --predict", model},
           {"profile --model gpt2 --tokens 64 --gpu h200 --predict", model},
           {"profile --model gpt2 --tokens 64 --perf-model '" + model + "' --predict", preset}}) {
    const CliRun r = run_binary(in_data, args + " --html '" + file + "'");
    EXPECT_EQ(r.code, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find("which this command reads; it would be overwritten"), std::string::npos) << r.err;
    EXPECT_EQ(occurrences(r.err, "\n"), 1u) << r.err;
    EXPECT_EQ(file_text(model) + "|" + file_text(preset), before) << args;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace shapescope
