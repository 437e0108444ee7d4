// A traced step's fp8 casts: the kernels launched inside the cast range (on the thread that opened it,
// through the trace's links from kernels to ops), or, without a range, Transformer Engine's cast
// kernels by their cited names; per step; and profile's lines for them (the trace's casts, GEMMs +
// casts against the trace, shapescope's casts as a what-if), --cast-range and its refusals.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "common/error.hpp"
#include "core/backend_kind.hpp"
#include "device/device.hpp"
#include "model/fp8_steps.hpp"
#include "model/trace_casts.hpp"
#include "model/trace_import.hpp"
#include "store/store.hpp"
#include "stored_points.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// Two profiler steps; each: a cast range on the main thread (amax, div and a cast inside, each with its
// kernel, and one launch made directly inside the range), the fp8 GEMM after it, a layer norm outside,
// a cast range on autograd's thread with one op inside, its GEMM, an op on the main thread while that
// range is open (another thread: not inside), and the GPU's copy of the range (no CPU range).
const std::string kFixture = std::string(SHAPESCOPE_TEST_DATA) + "/traces/fp8-casts.json";

TEST(TraceCasts, TheKernelsInsideTheRangeOnItsThreadPerStep) {
  const Workload w = load_torch_trace(kFixture, "t");
  ASSERT_TRUE(w.casts);
  const TraceCasts& c = *w.casts;
  EXPECT_EQ(c.range, "shapescope_fp8_cast");
  EXPECT_EQ(c.found_by, CastsFoundBy::kRange);
  EXPECT_EQ(c.ranges, 4);    // 2 per step; the GPU's copies are not ranges
  EXPECT_EQ(c.kernels, 10);  // amax, div, cast, the direct launch; the backward's abs: 5 per step
  EXPECT_DOUBLE_EQ(c.kernel_us, 2 * (10 + 4 + 6 + 2 + 8));  // not the layer norm (9), the add (3), the GEMMs (50)
  EXPECT_TRUE(c.kernel_names.empty());
  EXPECT_EQ(w.steps, 2);
  ASSERT_EQ(w.gemms.size(), 1u);
  EXPECT_EQ(w.gemms[0].count, 4);
  EXPECT_DOUBLE_EQ(*w.gemms[0].kernel_us, 200);
}

TEST(TraceCasts, AnotherRangeNameFindsNothingInThisTrace) {
  const Workload w = load_torch_trace(kFixture, "t", {"my_casts"});
  ASSERT_TRUE(w.casts);
  EXPECT_EQ(w.casts->range, "my_casts");
  EXPECT_EQ(w.casts->found_by, CastsFoundBy::kNone);
  EXPECT_EQ(w.casts->ranges, 0);
  EXPECT_EQ(w.casts->kernels, 0);
}

TEST(TraceCasts, TransformerEngineNamesOnlyWhenCited) {
  EXPECT_EQ(known_cast_kernel("void transformer_engine::detail::(anonymous namespace)::cast_transpose_general_kernel<"
                              "8, 8, __nv_bfloat16, __nv_fp8_e4m3>(...)"),
            "cast_transpose_general_kernel");
  EXPECT_EQ(known_cast_kernel("cast_transpose_optimized_kernel"), "cast_transpose_optimized_kernel");  // NVRTC's
  EXPECT_EQ(known_cast_kernel("void transformer_engine::(anonymous namespace)::block_scaled_1d_cast_transpose_kernel<"
                              "true, float, __nv_bfloat16, __nv_fp8_e4m3>(...)"),
            "block_scaled_1d_cast_transpose_kernel");
  EXPECT_EQ(known_cast_kernel("void transformer_engine::(anonymous namespace)::amax_kernel<8, true, __nv_bfloat16>"
                              "(__nv_bfloat16 const*, float*, unsigned long, unsigned long, float const*)"),
            "amax_kernel");
  // A plain name without TE's namespace, a longer identifier, and kernels that fuse other work: no.
  EXPECT_FALSE(known_cast_kernel("void at::native::amax_kernel<float>(...)"));
  EXPECT_FALSE(known_cast_kernel("my_cast_transpose_general_kernel_v2"));
  EXPECT_FALSE(known_cast_kernel("void transformer_engine::(anonymous namespace)::dgated_act_cast_transpose_kernel<>"));
  EXPECT_FALSE(known_cast_kernel("triton_red_fused_abs_amax_0"));
}

Json kernel_event(const std::string& name, double dur, int64_t correlation) {
  return {{"ph", "X"}, {"cat", "kernel"}, {"name", name}, {"pid", 0}, {"tid", 7}, {"ts", 0}, {"dur", dur},
          {"args", {{"correlation", correlation}}}};
}

TEST(TraceCasts, WithoutARangeTheCitedKernelsByName) {
  Json ev = Json::array();
  ev.push_back(kernel_event("void transformer_engine::detail::(anonymous namespace)::cast_transpose_general_kernel<>()", 7, 1));
  ev.push_back(kernel_event("void transformer_engine::(anonymous namespace)::amax_kernel<8, true, float>()", 2, 2));
  ev.push_back(kernel_event("void transformer_engine::detail::(anonymous namespace)::cast_transpose_general_kernel<>()", 5, 3));
  ev.push_back(kernel_event("void at::native::vectorized_elementwise_kernel<4>()", 30, 4));
  const Workload w = parse_torch_trace(Json{{"traceEvents", ev}}.dump(), "t");
  ASSERT_TRUE(w.casts);
  EXPECT_EQ(w.casts->found_by, CastsFoundBy::kKernelNames);
  EXPECT_EQ(w.casts->kernels, 3);
  EXPECT_DOUBLE_EQ(w.casts->kernel_us, 14);
  EXPECT_EQ(w.casts->kernel_names, (std::vector<std::string>{"cast_transpose_general_kernel", "amax_kernel"}));
  // A range in the trace: the range decides, names are not read.
  ev.push_back({{"ph", "X"}, {"cat", "user_annotation"}, {"name", "shapescope_fp8_cast"}, {"pid", 7}, {"tid", 1},
                {"ts", 0}, {"dur", 5}});
  const Workload ranged = parse_torch_trace(Json{{"traceEvents", ev}}.dump(), "t");
  EXPECT_EQ(ranged.casts->found_by, CastsFoundBy::kRange);
  EXPECT_EQ(ranged.casts->kernels, 0);
}

TEST(TraceCasts, AGemmInsideTheRangeIsNoCast) {
  Json ev = Json::array();
  ev.push_back({{"ph", "X"}, {"cat", "user_annotation"}, {"name", "shapescope_fp8_cast"}, {"pid", 7}, {"tid", 1},
                {"ts", 0}, {"dur", 100}, {"args", {{"External id", 1}}}});
  ev.push_back({{"ph", "X"}, {"cat", "cpu_op"}, {"name", "aten::mm"}, {"pid", 7}, {"tid", 1}, {"ts", 10}, {"dur", 20},
                {"args", {{"External id", 2}, {"Input Dims", {{64, 64}, {64, 64}}}, {"Input Strides", {{64, 1}, {64, 1}}},
                          {"Input type", {"c10::BFloat16", "c10::BFloat16"}}}}});
  ev.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"pid", 7}, {"tid", 1}, {"ts", 12},
                {"dur", 1}, {"args", {{"External id", 2}, {"correlation", 9}}}});
  ev.push_back(kernel_event("nvjet_sm90_tst", 4, 9));
  const Workload w = parse_torch_trace(Json{{"traceEvents", ev}}.dump(), "t");
  ASSERT_EQ(w.gemms.size(), 1u);
  EXPECT_EQ(w.casts->found_by, CastsFoundBy::kRange);
  EXPECT_EQ(w.casts->kernels, 0);
}

TEST(TraceCasts, ALaunchInsideTheRangeOutsideAnyOpIsACast) {
  // A cast called through ctypes inside the range, the range inside an autograd function's op: its launch
  // carries the op's External id (1), not the range's (2); it is inside by its time on the range's thread.
  Json ev = Json::array();
  const auto on = [](int tid, const std::string& cat, const std::string& name, double ts, double dur, Json args) {
    return Json{{"ph", "X"}, {"cat", cat}, {"name", name}, {"pid", 7}, {"tid", tid}, {"ts", ts}, {"dur", dur}, {"args", args}};
  };
  ev.push_back(on(1, "cpu_op", "Fp8LinearFn", 0, 100, {{"External id", 1}}));
  ev.push_back(on(1, "user_annotation", "shapescope_fp8_cast", 10, 40, {{"External id", 2}}));
  ev.push_back(on(1, "cuda_runtime", "cudaLaunchKernel", 20, 2, {{"External id", 1}, {"correlation", 5}}));
  ev.push_back(on(1, "cuda_runtime", "cudaLaunchKernel", 60, 2, {{"External id", 1}, {"correlation", 6}}));
  ev.push_back(on(2, "cuda_runtime", "cudaLaunchKernel", 20, 2, {{"External id", 3}, {"correlation", 7}}));
  ev.push_back(kernel_event("cast_tile_kernel", 6, 5));
  ev.push_back(kernel_event("vectorized_elementwise_kernel", 9, 6));  // launched after the range
  ev.push_back(kernel_event("reduce_kernel", 4, 7));                  // launched on another thread
  const Workload w = parse_torch_trace(Json{{"traceEvents", ev}}.dump(), "t");
  ASSERT_TRUE(w.casts);
  EXPECT_EQ(w.casts->found_by, CastsFoundBy::kRange);
  EXPECT_EQ(w.casts->kernels, 1);
  EXPECT_DOUBLE_EQ(w.casts->kernel_us, 6);
}

class TraceCastsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/shapescope_trace_casts_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    db_ = (dir_ / "store.db").string();
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  // The fixture's fp8 GEMM stored at 51 us per call and, with `casts`, each of its casts at 2 us.
  void store(bool casts) {
    const Workload w = load_torch_trace(kFixture, "t");
    Store s(db_);
    const Problem& gemm = w.gemms.at(0).problems.at(0);
    save(s, gemm, BackendKind::kCublasLt, 51);
    if (!casts) return;
    for (const StepCast& c : step_fp8_casts({{gemm, 2.0}})) save(s, c.problem, BackendKind::kCast, 2);
  }
  fs::path dir_;
  std::string db_;
};

TEST_F(TraceCastsCli, TheStepsCastsBesideShapescopesAndTheWhatIf) {
  if (device_count() > 0) GTEST_SKIP() << "a GPU is present: profile would measure";
  store(true);
  const CliRun text = run("profile --trace " + kFixture + " --db " + db_ + " --no-verdict");
  ASSERT_EQ(text.code, 0) << text.err;
  // 2 x 2 casts (A and B of 2 calls per step) at 2 us: 8 us per step, against the trace's 30 us.
  EXPECT_NE(text.out.find("fp8 casts as the step ran them: 30.0 us per step, 5 kernels per step launched inside the "
                          "trace's 'shapescope_fp8_cast' ranges (2 per step)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("fp8 casts measured with shapescope's cast kernels (amax, scale and cast of both operands of "
                          "every fp8 GEMM call): 8.0 us per step"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("GEMMs + casts per step, the casts as the trace ran them: 132.0 us (the GEMMs measured here "
                          "102.0 us + the trace's casts 30.0 us) against the trace's 130.0 us (100.0 us + 30.0 us): "
                          "measured / trace = 1.015"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("what-if, the casts as fused kernels (measured with shapescope's cast kernels: amax, scale and "
                          "cast of each operand): 22.0 us less per step (the casts 30.0 us -> 8.0 us)"),
            std::string::npos)
      << text.out;
  const CliRun json = run("profile --trace " + kFixture + " --db " + db_ + " --no-verdict --json");
  ASSERT_EQ(json.code, 0) << json.err;
  const Json j = Json::parse(json.out);
  const Json& c = j["trace_casts"];
  EXPECT_EQ(c["found_by"], "range");
  EXPECT_EQ(c["range"], "shapescope_fp8_cast");
  EXPECT_DOUBLE_EQ(c["us_per_step"].get<double>(), 30);
  EXPECT_DOUBLE_EQ(c["kernels_per_step"].get<double>(), 5);
  EXPECT_DOUBLE_EQ(c["ranges_per_step"].get<double>(), 2);
  EXPECT_DOUBLE_EQ(c["gemms_and_casts_us"].get<double>(), 132);
  EXPECT_DOUBLE_EQ(c["trace_gemms_and_casts_us"].get<double>(), 130);
  EXPECT_DOUBLE_EQ(c["ours_us"].get<double>(), 8);
  EXPECT_DOUBLE_EQ(c["fused_saving_us"].get<double>(), 22);
  EXPECT_EQ(c["lines"].size(), 3u);
  EXPECT_DOUBLE_EQ(j["fp8_casts"]["us_per_step"].get<double>(), 8);
}

TEST_F(TraceCastsCli, NoCastsFoundIsOneLineAndNoWhatIf) {
  if (device_count() > 0) GTEST_SKIP() << "a GPU is present: profile would measure";
  store(false);
  const CliRun r = run("profile --trace " + kFixture + " --db " + db_ + " --no-verdict --cast-range my_casts");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(occurrences(r.out, "fp8 casts as the step ran them"), 1u) << r.out;
  EXPECT_NE(r.out.find("fp8 casts as the step ran them: not found: no 'my_casts' range in the trace (--cast-range "
                       "names another) and no kernel named as Transformer Engine's cast kernels; the step's casts "
                       "are in no total here"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("GEMMs + casts per step"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("what-if, the casts"), std::string::npos) << r.out;
  // shapescope's casts are not in the store: said, not priced.
  EXPECT_NE(r.out.find("(0 of 2 casts measured)"), std::string::npos) << r.out;
}

TEST(TraceCastsOptions, ABadCastRangeIsOneLineNamingTheOption) {
  const std::string list = ::testing::TempDir() + "trace_casts_list.csv";
  { std::ofstream(list) << "m,n,k,layout,dtype,batch,count\n64,64,64,nn,bf16,1,1\n"; }
  struct Case {
    std::string args, words;
  };
  const std::vector<Case> cases = {
      {"profile --trace " + kFixture + " --cast-range ''", "--cast-range: '' is no range name"},
      {"profile --gemms " + list + " --cast-range casts", "--cast-range: 'casts' names a range in a trace's events: it "
                                                          "goes with --trace FILE, not with --gemms"},
      {"profile --model gpt2 --tokens 64 --cast-range casts", "--cast-range: 'casts' names a range in a trace's events: "
                                                              "it goes with --trace FILE, not with --model"},
  };
  for (const Case& c : cases) {
    const CliRun r = run(c.args + " --db " + ::testing::TempDir() + "trace_casts_absent.db");
    EXPECT_EQ(r.code, int(ExitCode::kUsage)) << c.args << "\n" << r.err;
    EXPECT_EQ(occurrences(r.err, "\n"), 1u) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.words), std::string::npos) << c.args << "\n" << r.err;
  }
  EXPECT_FALSE(fs::exists(::testing::TempDir() + "trace_casts_absent.db"));
  std::remove(list.c_str());
}

}  // namespace
}  // namespace shapescope
