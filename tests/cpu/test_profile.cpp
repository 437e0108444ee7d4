// `shapescope profile`: the rows, ranking and totals of the model; the command on a fixture store
// built here (no GPU: the store is read, what it lacks is listed, not a byte of it changes), a real
// GPT-2 trace against its own kernel times, --attention for a config, and every bad input as one line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_util.hpp"
#include "common/error.hpp"
#include "core/backend_kind.hpp"
#include "device/device.hpp"
#include "model/config_workload.hpp"
#include "model/profile.hpp"
#include "model/trace_import.hpp"
#include "report/profile_report.hpp"
#include "views/profile.hpp"
#include "model_util.hpp"
#include "store/store.hpp"
#include "stored_points.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

WorkloadGemm call(const Problem& p, int64_t count, const std::string& origin, std::optional<double> us = {}) {
  WorkloadGemm g;
  g.problems = {p};
  g.count = count;
  g.origin = origin;
  g.kernel_us = us;
  g.kernels = us ? count : 0;
  return g;
}

Problem nt(int64_t m, int64_t n, int64_t k) { return packed_problem(m, n, k, Layout::kNT, DType::kBf16); }

// Two profiler steps: counts and kernel times are those of both.
Workload two_steps() {
  Workload w;
  w.source = "t";
  w.steps = 2;
  w.add(call(nt(4096, 4096, 4096), 4, "a", 800.0));   // 2 calls per step, 400 us of kernels per step
  w.add(call(nt(1024, 1024, 1024), 20, "b", 420.0));  // 10 per step, 210 us
  w.add(call(nt(512, 512, 512), 6, "c", 30.0));       // not measured
  WorkloadGemm fused = call(packed_problem(1024, 1024, 64, Layout::kNT, DType::kBf16, 96), 2, "qk");
  fused.usually_fused = true;
  w.add(fused);
  w.add_unmapped("aten::mm", "input type 'double'", 12.0);
  return w;
}

std::optional<GemmTime> times(const ProfileRow& r) {
  if (r.problem.m == 4096) return GemmTime{210, 0.01};
  if (r.problem.m == 1024 && r.problem.batch == 1) return GemmTime{20, 0.02};
  if (r.problem.batch == 96) return GemmTime{50, 0.01};
  return std::nullopt;
}

TEST(ProfileModel, RankedByTimePerStepWithSharesAndTheTraceRatio) {
  const Workload w = two_steps();
  std::vector<ProfileRow> rows = profile_rows(w, BackendKind::kCublas, false);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_FALSE(rows[3].in_total);
  rank_rows(rows, times);
  EXPECT_EQ(rows[0].gemm, 0u);  // 2 x 210 = 420 us per step
  EXPECT_EQ(rows[1].gemm, 1u);  // 10 x 20 = 200 us
  EXPECT_EQ(rows[2].gemm, 3u);  // outside the total, measured
  EXPECT_EQ(rows[3].gemm, 2u);  // not measured
  EXPECT_DOUBLE_EQ(*rows[0].step_us, 420);
  EXPECT_DOUBLE_EQ(*rows[0].share, 420.0 / 620);
  EXPECT_DOUBLE_EQ(*rows[1].share, 200.0 / 620);
  EXPECT_FALSE(rows[2].share);
  EXPECT_DOUBLE_EQ(*rows[0].trace_step_us, 400);
  const ProfileTotals t = profile_totals(w, rows);
  EXPECT_EQ(t.calls, (4 + 20 + 6) / 2);
  EXPECT_DOUBLE_EQ(t.measured_us, 620);
  EXPECT_EQ(t.measured_rows, 2u);
  EXPECT_EQ(t.missing_rows, 1u);
  EXPECT_EQ(t.outside_rows, 1u);
  EXPECT_DOUBLE_EQ(*t.trace_us, 400 + 210 + 15);
  EXPECT_EQ(t.compared_rows, 2u);  // like with like: the unmeasured GEMM's kernels are not compared
  EXPECT_DOUBLE_EQ(*t.ratio, 620.0 / 610);
  EXPECT_EQ(t.unmapped_ops, 1);
  EXPECT_DOUBLE_EQ(*t.unmapped_trace_us, 6);
  // Asked to count attention's GEMMs: in the total, with a share.
  rows = profile_rows(w, BackendKind::kCublas, true);
  rank_rows(rows, times);
  EXPECT_EQ(rows[2].gemm, 3u);  // 1 call per step x 50 us: after a (420) and b (200), with a share now
  EXPECT_DOUBLE_EQ(*rows[2].share, 50.0 / 670);
  EXPECT_DOUBLE_EQ(profile_totals(w, rows).measured_us, 670);
}

TEST(ProfileModel, BackendsPerCall) {
  const Problem grouped = grouped_problem({nt(100, 64, 64), nt(28, 64, 64)});
  EXPECT_EQ(profile_backend(grouped, BackendKind::kCublas), BackendKind::kCublasGrouped);
  EXPECT_EQ(profile_backend(packed_problem(8, 8, 8, Layout::kNT, DType::kFp8), BackendKind::kCublas), BackendKind::kCublasLt);
  EXPECT_EQ(profile_backend(nt(8, 8, 8), BackendKind::kCublasLt), BackendKind::kCublasLt);
}

TEST(ProfileModel, AttentionOfAConfigIsListedOutsideTheTotal) {
  WorkloadRequest r;
  r.tokens = 8192;
  r.sequence = 4096;
  r.attention = true;
  const Workload w = config_workload(preset("llama3-8b"), r);
  const std::vector<ProfileRow> rows = profile_rows(w, BackendKind::kCublas, false);
  size_t outside = 0;
  for (const ProfileRow& row : rows) {
    EXPECT_EQ(row.in_total, !w.gemms[row.gemm].usually_fused);
    if (!row.in_total) {
      ++outside;
      EXPECT_EQ(row.problem.batch, 2 * 32);  // 2 sequences x 32 heads
    }
  }
  EXPECT_EQ(outside, 2u);  // QK^T and PV of the forward
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ProfileCli : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/shapescope_profile_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string file(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  // The command with no GPU: a profile read from the store, which must not change.
  CliRun read_only(const std::string& args) {
    const std::string before = read_bytes(dir_ / "store.db");
    const CliRun r = run(args);
    EXPECT_EQ(read_bytes(dir_ / "store.db"), before) << args;
    EXPECT_FALSE(fs::exists(dir_ / "store.db-wal")) << args;
    return r;
  }
  // The committed GPT-2 trace (recorded on an H100) with every GEMM stored on an H200 at 1.02x its
  // trace time per call: the store a user measured elsewhere.
  std::string gpt2_on_an_h200() {
    const std::string trace = std::string(SHAPESCOPE_TEST_DATA) + "/traces/gpt2.json";
    const Workload w = load_torch_trace(trace, "t");
    DeviceContext h200 = h100();
    h200.gpu_name = "NVIDIA H200";
    h200.gpu_uuid = "GPU-h200-fixture";
    Store store((dir_ / "store.db").string());
    for (const WorkloadGemm& g : w.gemms) save(store, g.problems[0], BackendKind::kCublas, 1.02 * *g.kernel_us / double(g.count), h200);
    return trace;
  }
  fs::path dir_;
};

TEST_F(ProfileCli, RanksTheStoredGemmsAndListsTheMissingOnes) {
  if (device_count() > 0) GTEST_SKIP() << "a GPU is present: profile would measure";
  const std::string list = file("list.csv",
                                "m,n,k,layout,dtype,batch,count,name,group\n"
                                "4096,4096,4096,nt,bf16,1,2,big,\n"
                                "1024,1024,1024,nn,bf16,1,10,small,\n"
                                "512,512,512,nn,bf16,1,3,missing,\n"
                                "300,1024,512,nt,bf16,1,4,expert0,moe\n"
                                "212,1024,512,nt,bf16,1,4,expert1,moe\n");
  {
    Store store((dir_ / "store.db").string());
    save(store, nt(4096, 4096, 4096), BackendKind::kCublas, 200);
    save(store, packed_problem(1024, 1024, 1024, Layout::kNN, DType::kBf16), BackendKind::kCublas, 20);
    save(store, grouped_problem({nt(300, 1024, 512), nt(212, 1024, 512)}), BackendKind::kCublasGrouped, 30);
    save(store, nt(300, 1024, 512), BackendKind::kCublas, 99);  // not the grouped call: not used for it
  }
  const CliRun r = read_only("profile --gemms " + list + " --db " + (dir_ / "store.db").string() + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["mode"], "store");
  ASSERT_EQ(j["gemms"].size(), 4u);
  EXPECT_EQ(j["gemms"][0]["origin"], "big");
  EXPECT_DOUBLE_EQ(j["gemms"][0]["step_us"].get<double>(), 400);
  EXPECT_DOUBLE_EQ(j["gemms"][0]["share"].get<double>(), 400.0 / 720);
  EXPECT_EQ(j["gemms"][1]["origin"], "small");
  EXPECT_EQ(j["gemms"][2]["origin"], "expert0+expert1");
  EXPECT_EQ(j["gemms"][2]["backend"], "cublas_grouped");
  EXPECT_DOUBLE_EQ(j["gemms"][2]["step_us"].get<double>(), 120);
  EXPECT_EQ(j["gemms"][3]["origin"], "missing");
  EXPECT_TRUE(j["gemms"][3]["median_us"].is_null());
  EXPECT_DOUBLE_EQ(j["totals"]["measured_us"].get<double>(), 720);
  EXPECT_EQ(j["totals"]["missing_gemms"], 1);
  EXPECT_TRUE(j["totals"]["ratio"].is_null());  // a GEMM list has no kernel times
  // The text: the same ranking, the missing GEMM listed, a verdict where explain could give one.
  const CliRun text = read_only("profile --gemms " + list + " --db " + (dir_ / "store.db").string());
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("not measured: 512x512x512 nn bf16 (cublas)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("GEMM time per step: 720.0 us measured (3 of 4 GEMMs)"), std::string::npos) << text.out;
  EXPECT_LT(text.out.find("4096x4096x4096 nt"), text.out.find("1024x1024x1024 nn"));
}

// From a store without a GPU, a grouped call's three times as they were measured: our grouped kernel,
// one cublasGemmGroupedBatchedEx call, its groups as a loop of cuBLAS GEMMs; the table takes the fastest.
TEST_F(ProfileCli, AGroupedCallFromTheStoreShowsItsThreeTimes) {
  if (device_count() > 0) GTEST_SKIP() << "a GPU is present: profile would measure";
  const std::string list = file("moe.csv",
                                "m,n,k,layout,dtype,batch,count,name,group\n"
                                "300,1024,512,nt,bf16,1,4,expert0,moe\n"
                                "212,1024,512,nt,bf16,1,4,expert1,moe\n");
  const Problem call = grouped_problem({nt(300, 1024, 512), nt(212, 1024, 512)});
  {
    Store store((dir_ / "store.db").string());
    save(store, call, BackendKind::kCublasGrouped, 30);
    save(store, nt(300, 1024, 512), BackendKind::kCublas, 12);
    save(store, nt(212, 1024, 512), BackendKind::kCublas, 10);
    PointResult ours;
    ours.timing.median_us = ours.timing.min_us = ours.timing.max_us = ours.timing.q1_us = ours.timing.q3_us = 15;
    ours.timing.samples = 10;
    ours.measured_at = "2026-11-25T00:00:00Z";
    ours.command = "fixture";
    store.save_point(h100(), PointKey{BackendKind::kCustom, "05_wgmma_tma:128x256:grouped", call, false}, ours);
  }
  const CliRun r = read_only("profile --gemms " + list + " --db " + (dir_ / "store.db").string() + " --no-verdict");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\ngrouped 2 x "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(": our grouped kernel (05, persistent over the groups) 15.0 us, one cublasGemmGroupedBatchedEx "
                       "call 30.0 us, its groups as a loop of GEMMs 22.0 us; the table takes the fastest"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("grouped grouped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GEMM time per step: 60.0 us measured"), std::string::npos) << r.out;  // 4 calls x 15 us
}

TEST_F(ProfileCli, Gpt2TraceAgainstItsOwnKernelTimes) {
  if (device_count() > 0) GTEST_SKIP() << "a GPU is present: profile would measure";
  const std::string trace = std::string(SHAPESCOPE_TEST_DATA) + "/traces/gpt2.json";
  const Workload w = load_torch_trace(trace, "t");
  {
    // Every GEMM stored at 1.05 x its trace time per call: the ratio must come out 1.05.
    Store store((dir_ / "store.db").string());
    for (const WorkloadGemm& g : w.gemms) save(store, g.problems[0], BackendKind::kCublas, 1.05 * *g.kernel_us / double(g.count));
  }
  const CliRun r = read_only("profile --trace " + trace + " --db " + (dir_ / "store.db").string() + " --json --no-verdict");
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_NEAR(j["totals"]["ratio"].get<double>(), 1.05, 1e-9);
  EXPECT_NEAR(j["totals"]["trace_us"].get<double>(), 31760.8, 0.5);
  EXPECT_EQ(j["totals"]["calls_per_step"], 147);
  EXPECT_EQ(j["recorded_on"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(j["recorded_on_sms"], 132);
  EXPECT_EQ(j["gpu_match"], "same");
  EXPECT_TRUE(j["other_gpu"].is_null());
  // The committed trace holds its GEMMs' kernels only: nothing of other ops to leave out.
  EXPECT_NEAR(j["totals"]["trace_other_kernels_us"].get<double>(), 0.0, 1e-6);
  // Ranked: the LM head's unaligned 50257 GEMMs (cutlass_75 align1 in the trace) first.
  EXPECT_NE(j["gemms"][0]["shape"].get<std::string>().find("50257"), std::string::npos);
  // Each call launched its GEMM kernel, and a split-K GEMM its reduction too.
  for (const Json& g : j["gemms"]) {
    EXPECT_GE(g["trace_kernels"], g["count"]) << g["shape"];
    EXPECT_LE(g["trace_kernels"], 2 * g["count"].get<int>()) << g["shape"];
  }
}

// Measured at sustained clocks and more than 5 % above the trace: one line says a step below the
// power cap runs at boost clocks, which --clocks burst measures; within 5 % nothing is said.
TEST_F(ProfileCli, WellAboveTheTraceAtSustainedClocksPointsToTheReplay) {
  if (device_count() > 0) GTEST_SKIP() << "a GPU is present: profile would measure";
  const std::string trace = std::string(SHAPESCOPE_TEST_DATA) + "/traces/gpt2.json";
  const Workload w = load_torch_trace(trace, "t");
  for (const double factor : {1.2, 1.02}) {
    const std::string db = (dir_ / ("store-" + std::to_string(int(factor * 100)) + ".db")).string();
    {
      Store store(db);
      for (const WorkloadGemm& g : w.gemms)
        save(store, g.problems[0], BackendKind::kCublas, factor * *g.kernel_us / double(g.count));
    }
    const CliRun r = read_only("profile --trace " + trace + " --db " + db + " --no-verdict");
    ASSERT_EQ(r.code, 0) << r.err;
    const bool said = r.out.find("clocks: measured at sustained clocks (held at the power limit), 20.0 % above the "
                                 "trace;") != std::string::npos;
    EXPECT_EQ(said, factor > 1.1) << r.out;
    EXPECT_EQ(r.out.find("--clocks step (the default for a trace) replays the step at its own") != std::string::npos,
              factor > 1.1)
        << r.out;
  }
}

// The issue a user hit: an H100 trace against a store measured on an H200 read "measured / trace =
// 1.026" with no word that the GPUs differ. The first lines say so now, and the total names both.
TEST_F(ProfileCli, ATraceFromAnotherGpuIsNamedFirst) {
  if (device_count() > 0) GTEST_SKIP() << "a GPU is present: profile would measure";
  const std::string trace = gpt2_on_an_h200();
  const CliRun r = read_only("profile --trace " + trace + " --db " + (dir_ / "store.db").string() + " --no-verdict");
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream text(r.out);
  std::string first, second, third, fourth;
  std::getline(text, first);
  std::getline(text, second);
  std::getline(text, third);
  std::getline(text, fourth);
  EXPECT_NE(second.find("NVIDIA H200"), std::string::npos) << r.out;
  EXPECT_EQ(third.rfind("another GPU: the trace was recorded on NVIDIA H100 80GB HBM3 (132 SMs), the times here were "
                        "measured on NVIDIA H200 (132 SMs)",
                        0),
            0u)
      << r.out;
  EXPECT_EQ(fourth.rfind("outside every total: ops that are not GEMMs", 0), 0u) << r.out;
  EXPECT_EQ(occurrences(r.out, "outside every total"), 1u) << r.out;
  EXPECT_NE(r.out.find("measured on NVIDIA H200 / trace on NVIDIA H100 80GB HBM3 = 1.020"), std::string::npos) << r.out;
  const CliRun json = read_only("profile --trace " + trace + " --db " + (dir_ / "store.db").string() + " --json --no-verdict");
  ASSERT_EQ(json.code, 0) << json.err;
  const Json j = Json::parse(json.out);
  EXPECT_EQ(j["gpu_match"], "other");
  EXPECT_EQ(j["measured_on"], "NVIDIA H200");
  EXPECT_NE(j["other_gpu"].get<std::string>().find("another GPU"), std::string::npos);
}

int lines(const std::string& text) { return int(std::count(text.begin(), text.end(), '\n')); }

// `--html FILE`: the same profile as one page that fetches nothing, beside the table; FILE is never
// one of the inputs and is replaced only when the page is complete (a full disk: exit 6, the old page
// kept).
TEST_F(ProfileCli, ThePageOfAProfileFollowsTheOutputRules) {
  if (device_count() > 0) GTEST_SKIP() << "a GPU is present: profile would measure";
  const std::string trace = gpt2_on_an_h200();
  const std::string base = "profile --trace " + trace + " --db " + (dir_ / "store.db").string() + " --no-verdict";
  const std::string page = (dir_ / "page.html").string();
  const CliRun r = read_only(base + " --html " + page);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("GEMM time per step"), std::string::npos) << "the table still goes to standard output";
  EXPECT_NE(r.err.find("the page of 15 GEMMs to '" + page + "'"), std::string::npos) << r.err;
  const std::string html = file_text(page);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("another GPU: the trace was recorded on NVIDIA H100 80GB HBM3"), std::string::npos);
  EXPECT_NE(html.find("12288x50257x768 nt bf16"), std::string::npos);
  EXPECT_EQ(occurrences(html, "<tr><td class=\"num\">"), 15u);
  // The page alone on standard output.
  const CliRun alone = read_only(base + " --html -");
  ASSERT_EQ(alone.code, 0) << alone.err;
  EXPECT_EQ(alone.out.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(alone.out.find("per call [us]  noise [%]"), std::string::npos) << "the page alone, no table";
  // Refused before anything runs: an input as the page, an empty name, the page and JSON both on stdout.
  const std::string store_path = (dir_ / "store.db").string();
  for (const auto& [args, words] : std::vector<std::pair<std::string, std::string>>{
           {base + " --html " + store_path, "--html"},
           {base + " --html " + trace, "--html"},
           {base + " --html ''", "--html: '' is empty"},
           {base + " --html - --json", "--html: '-' puts the page on standard output"}}) {
    const CliRun bad = read_only(args);
    EXPECT_EQ(bad.code, int(ExitCode::kUsage)) << args << "\n" << bad.err;
    EXPECT_EQ(lines(bad.err), 1) << bad.err;
    EXPECT_NE(bad.err.find(words), std::string::npos) << bad.err;
    EXPECT_EQ(bad.out, "") << args;
  }
  // A full disk (no file may pass 8 KiB): exit 6, naming the page; the old page is kept whole.
  const CliRun full =
      run_binary("trap '' XFSZ; ulimit -f 8; " + std::string(kShapescopeBin), base + " --html " + page, dir_.string());
  EXPECT_EQ(full.code, int(ExitCode::kWrite)) << full.err;
  EXPECT_NE(full.err.find("'" + page + "'"), std::string::npos) << full.err;
  EXPECT_EQ(file_text(page), html);
}

TEST_F(ProfileCli, BadInputIsOneLineAndNothingIsWritten) {
  const std::string truncated = file("truncated.json", "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"aten::mm\"");
  const std::string no_shapes = file("no_shapes.json", R"({"traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2, "args": {"External id": 1}}]})");
  const std::string unknown_ops = file("unknown.json", R"({"traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2, "args": {"External id": 1,
       "Input Dims": [[4, 4], [4, 4]], "Input Strides": [[4, 1], [4, 1]], "Input type": ["double", "double"]}}]})");
  const std::string absurd = file("absurd.csv", "m,n,k,layout,dtype,batch,count\n4096,4096,99999999999,nn,bf16,1,1\n");
  const std::string missing = file("missing.csv", "m,n,k,layout,dtype,batch,count\n4096,,4096,nn,bf16,1,1\n");
  const std::string moe = file("moe.json", R"({"model_type": "mixtral", "vocab_size": 32000, "hidden_size": 4096,
      "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 2})");
  const std::string list = file("ok.csv", "m,n,k,layout,dtype,batch,count\n64,64,64,nn,bf16,1,1\n");
  const std::string db = " --db " + (dir_ / "absent.db").string();
  struct Case {
    std::string args, words;
    ExitCode code = ExitCode::kUsage;
  };
  const std::vector<Case> cases = {
      {"profile", "--model: give a preset"},
      {"profile --trace " + truncated, "is not valid JSON"},
      {"profile --trace " + no_shapes, "was recorded without shapes: its 1 GEMM ops have no \"Input Dims\"; record one "
                                       "with torch.profiler.profile("},
      {"profile --trace " + unknown_ops, "nothing to profile: none of its 1 GEMM ops could be mapped (the first: "
                                         "aten::mm: input type 'double'"},
      {"profile --gemms " + absurd, "column 'k': 99999999999 is out of range"},
      {"profile --gemms " + missing, "column 'n': no value (it is required)"},
      {"profile --config " + moe + " --tokens 64", "needs its expert counts: num_local_experts and num_experts_per_tok"},
      {"profile --trace " + list + " --gemms " + list, "--trace: '" + list + "' and --gemms '" + list + "' both given; give one workload"},
      {"profile --gemms " + list + " --tokens 8", "--tokens: '8' goes with --model or --config; --gemms records"},
      {"profile --gemms " + list + " --attention", "--attention: goes with --model or --config"},
      {"profile --model gpt2", "--tokens: give the tokens per step"},
      {"profile --model gpt2 --tokens 1..8", "--tokens: '1..8' has 8 values; profile takes one"},
      {"profile --model gpt2 --tokens 12288 --attention", "--sequence: give the sequence length with --attention"},
      {"profile --model gpt2 --tokens 12288 --attention-in-total", "--attention-in-total: needs --attention"},
      {"profile --model gpt2 --tokens 12288 --sequence 1024", "--sequence: 1024 is read only with --attention"},
      {"profile --model gpt2 --tokens 12288 --attention --sequence -1", "--sequence: -1 is not a sequence length"},
      {"profile --model gpt2 --tokens 12288 --attention --sequence 1000", "divides the tokens (12288); got 1000"},
      {"profile --model gpt2 --tokens 64 --expert-tokens 1,2", "--expert-tokens: '1,2': expert token counts given, "
                                                               "but gpt2 has no experts"},
      {"profile --model mixtral-8x7b --tokens 64 --expert-tokens 1,2", "--expert-tokens: '1,2': 2 expert token counts for 8"},
      {"profile --model mixtral-8x7b --tokens 64 --expert-tokens 1,x", "--expert-tokens: 'x' in '1,x' is not a token count"},
      {"profile --model mixtral-8x7b --tokens 4 --expert-tokens 9,0,0,0,0,0,0,0",
       "add up to 9, more than tokens x top-k = 4 x 2 = 8"},
      {"profile --gemms " + list + " --backend cublas_grouped", "--backend: 'cublas_grouped' is not a backend profile can use"},
      {"profile --gemms " + list + " --samples 0", "--samples: 0"},
      {"profile --gemms " + list + " --db ''", "--db: '' is empty"},
  };
  for (const Case& c : cases) {
    const CliRun r = run(c.args + (c.args.find("--db") == std::string::npos ? db : ""));
    EXPECT_EQ(r.code, int(c.code)) << c.args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.words), std::string::npos) << c.args << "\n" << r.err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "absent.db"));
  if (device_count() > 0) return;
  // No GPU: no store to read, or a store without these GEMMs, is one line and exit 3.
  CliRun r = run("profile --gemms " + list + db);
  EXPECT_EQ(r.code, int(ExitCode::kNoGpu)) << r.err;
  EXPECT_NE(r.err.find("no GPU here and no store"), std::string::npos) << r.err;
  { Store((dir_ / "store.db").string()).open_for_writing(); }
  r = read_only("profile --gemms " + list + " --db " + (dir_ / "store.db").string());
  EXPECT_EQ(r.code, int(ExitCode::kNoGpu)) << r.err;
  EXPECT_NE(r.err.find("holds none of the 1 GEMMs"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
}

TEST_F(ProfileCli, PadOfATraceProposesWhatPadOfItsModelDoes) {
  const std::string trace = std::string(SHAPESCOPE_TEST_DATA) + "/traces/gpt2.json";
  const CliRun r = run("pad --trace " + trace + " --dry-run --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  std::vector<int64_t> from_trace;
  for (const Json& s : j["sizes"])
    if (s["value"] == 50257)
      for (const Json& c : s["candidates"]) from_trace.push_back(c["value"]);
  const Json model = Json::parse(run("pad --model gpt2 --tokens 12288 --train --dry-run --json").out);
  std::vector<int64_t> from_model;
  for (const Json& d : model["steps"][0]["dimensions"])
    if (d["name"] == "vocab_size")
      for (const Json& c : d["candidates"]) from_model.push_back(c["value"]);
  EXPECT_EQ(from_trace, (std::vector<int64_t>{50264, 50272, 50304, 50432}));
  EXPECT_EQ(from_trace, from_model);
  const CliRun bad = run("pad --trace " + trace + " --tokens 12288 --dry-run");
  EXPECT_EQ(bad.code, int(ExitCode::kUsage));
  EXPECT_NE(bad.err.find("--tokens: '12288' goes with --model or --config; --trace records its own shapes"),
            std::string::npos)
      << bad.err;
}

// The clock line of a replayed step says why it was replayed (model/profile.hpp: step_clock_call),
// beside the replay's own clock and the one recorded with the trace.
TEST(ProfileReport, AReplayedStepSaysWhyInItsClockLine) {
  ProfileResult r;
  r.workload.source = "step.json";
  r.measured.emplace();  // a replay runs where the GEMMs were measured
  r.measured->device.gpu_name = "NVIDIA H100 80GB HBM3";
  StepReplayFacts f;
  f.replays = 28, f.warmup_replays = 4;
  f.clock_low_mhz = 1620, f.clock_median_mhz = 1642, f.clock_high_mhz = 1665;
  f.power_w = 680;
  r.replay = f;
  r.replay_why = "the step recorded at 1710 MHz and 667 W (NVML, medians; power limit 700 W), below the boost clock "
                 "(1980 MHz)";
  std::ostringstream out;
  write_profile_json(out, r);
  const std::string note = nlohmann::json::parse(out.str())["clocks_note"];
  EXPECT_NE(note.find("clocks: the step replayed (the step recorded at 1710 MHz and 667 W (NVML, medians; power "
                      "limit 700 W), below the boost clock (1980 MHz)) on this GPU"),
            std::string::npos)
      << note;
  EXPECT_NE(note.find("SM clock 1642 MHz (1620-1665), 680 W"), std::string::npos) << note;
}

}  // namespace
}  // namespace shapescope
