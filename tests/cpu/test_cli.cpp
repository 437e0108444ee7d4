// The CLI as users meet it: every bad input is one line on stderr naming the option and value,
// with its documented exit code (main.cpp), and nothing crashes. Runs the real binary.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

#if SHAPESCOPE_GPU_BUILD
#include "backends/cuda_types.hpp"  // dtype_unsupported (the GPU side)
#endif
#include "common/error.hpp"
#include "device/device.hpp"
#include "measure/measure.hpp"
#include "backends/variants.hpp"
#include "cli_util.hpp"

namespace shapescope {
namespace {

int lines(const std::string& text) { return int(std::count(text.begin(), text.end(), '\n')); }

// One line, the exit code, and the words that must be in it.
void expect_refused(const std::string& args, ExitCode code, const std::vector<std::string>& words) {
  const CliRun r = run(args);
  EXPECT_EQ(r.code, int(code)) << args << "\n" << r.err;
  EXPECT_EQ(lines(r.err), 1) << args << "\n" << r.err;
  for (const auto& w : words) EXPECT_NE(r.err.find(w), std::string::npos) << args << ": " << r.err;
}

TEST(Cli, HelpAndUsage) {
  const CliRun help = run("--help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("\nUsage: shapescope [OPTIONS] SUBCOMMAND\n"), std::string::npos) << help.out;
  const CliRun sweep_help = run("sweep --help");
  EXPECT_EQ(sweep_help.code, 0);
  EXPECT_NE(sweep_help.out.find("\nUsage: shapescope sweep [OPTIONS]\n"), std::string::npos) << sweep_help.out;
  EXPECT_NE(sweep_help.out.find("Examples:"), std::string::npos);
  expect_refused("", ExitCode::kUsage, {"no command given"});
  expect_refused("sweep --n 64 --bogus", ExitCode::kUsage, {"--bogus"});
}

TEST(Cli, BadRangesNameTheOptionAndValue) {
  expect_refused("sweep --n 4096..1", ExitCode::kUsage, {"--n", "4096..1", "reversed"});
  expect_refused("sweep --m ''", ExitCode::kUsage, {"--m", "empty"});
  expect_refused("sweep --k 0", ExitCode::kUsage, {"--k", "'0'"});
  expect_refused("sweep --n=-5", ExitCode::kUsage, {"--n", "-5"});
  expect_refused("sweep --n 1..x", ExitCode::kUsage, {"--n", "1..x"});
  expect_refused("sweep --n 1..64:0", ExitCode::kUsage, {"--n", "1..64:0"});
  expect_refused("sweep --n 1..8192 --m 1..8192", ExitCode::kUsage, {"points"});
}

TEST(Cli, BadOptionValues) {
  expect_refused("sweep --n 64 --dtype bf8", ExitCode::kUsage, {"--dtype", "bf8"});
  expect_refused("sweep --n 64 --layout xy", ExitCode::kUsage, {"--layout", "xy"});
  expect_refused("sweep --n 64 --dtype fp8", ExitCode::kUsage, {"--layout", "nt"});
  expect_refused("sweep --n 64 --dtype fp8 --layout nt", ExitCode::kUsage, {"--backend", "cublaslt"});
  expect_refused("sweep --n 64 --backend cublas,cutlass", ExitCode::kUsage, {"--backend", "cutlass"});
  expect_refused("sweep --n 64 --backend cublas,cublas", ExitCode::kUsage, {"--backend", "twice"});
  expect_refused("sweep --n 64 --lt-algos 4", ExitCode::kUsage, {"--lt-algos", "cublaslt"});
  expect_refused("sweep --n 64 --format xml", ExitCode::kUsage, {"--format", "xml"});
  expect_refused("sweep --n 64 --shard 3/2", ExitCode::kUsage, {"--shard", "3/2"});
  expect_refused("sweep --n 1..3 --shard 5/8", ExitCode::kUsage, {"--shard", "5/8", "no points"});
  expect_refused("sweep --n 64 --samples 0", ExitCode::kUsage, {"--samples", "0"});
  expect_refused("sweep --n 64 --max-noise 0", ExitCode::kUsage, {"--max-noise"});
  expect_refused("sweep --n 64 --samples 10 --min-samples 5", ExitCode::kUsage, {"--min-samples", "--samples 10"});
  expect_refused("sweep --n 64 --samples 10 --target-noise 1", ExitCode::kUsage, {"--target-noise", "--samples"});
  expect_refused("sweep --n 64 --min-samples 2", ExitCode::kUsage, {"--min-samples", "2"});
  expect_refused("sweep --n 64 --min-samples 8 --max-samples 6", ExitCode::kUsage, {"--max-samples", "6", "8"});
  expect_refused("sweep --n 64 --target-noise 0", ExitCode::kUsage, {"--target-noise", "0"});
  expect_refused("sweep --n 64 --target-noise 101", ExitCode::kUsage, {"--target-noise", "101"});
  expect_refused("sweep --n 64 --clocks fast", ExitCode::kUsage, {"--clocks", "fast", "sustained"});
  expect_refused("sweep --n 64 --clocks unrecorded", ExitCode::kUsage, {"--clocks", "unrecorded"});
  expect_refused("sweep --n 64 --max-rounds 2", ExitCode::kUsage, {"--max-rounds"});
  expect_refused("sweep --n 64 --lda 10", ExitCode::kUsage, {"--lda", "10"});
  expect_refused("sweep --n 64 --ld-pad -1", ExitCode::kUsage, {"--ld-pad", "-1"});
  expect_refused("sweep --n 64 --offset -3", ExitCode::kUsage, {"--offset", "-3"});
  expect_refused("sweep --n 64 --out /nonexistent-dir/x.csv", ExitCode::kUsage, {"--out", "/nonexistent-dir/x.csv"});
}

TEST(Cli, BadStore) {
  expect_refused("sweep --n 64 --db /nonexistent-dir/s.db", ExitCode::kStore, {"/nonexistent-dir/s.db"});
  const std::string corrupt =
      ::testing::TempDir() + "shapescope_corrupt_" + std::to_string(getpid()) + ".db";
  std::ofstream(corrupt) << std::string(8192, 'x');
  expect_refused("sweep --n 64 --db " + corrupt, ExitCode::kStore, {corrupt, "corrupt"});
  expect_refused("info --db " + corrupt, ExitCode::kStore, {corrupt});
  std::remove(corrupt.c_str());
}

TEST(Cli, NoGpuIsOneLineAndExitThree) {
  if (device_count() > 0) GTEST_SKIP() << "a GPU is present";
  const std::string db =
      " --db " + ::testing::TempDir() + "shapescope_nogpu_" + std::to_string(getpid()) + ".db";
  expect_refused("sweep --n 64" + db, ExitCode::kNoGpu, {"GPU"});
  expect_refused("info" + db, ExitCode::kNoGpu, {"GPU"});
}

TEST(Cli, ClockStatesAreRefusedByEveryCommandThatTakesThem) {
  // Measuring commands take sustained or burst; selections also the states of older stores.
  for (const std::string measuring : {"sweep --n 64 --dry-run", "explain 1793", "pad --model gpt2 --tokens 64 --dry-run",
                                      "profile --model gpt2 --tokens 64"}) {
    // profile also takes `step`, its default: a trace's step replayed at its own clock; and `replay`.
    const std::string states =
        measuring.rfind("profile", 0) == 0 ? "(step, replay, sustained, burst)" : "(sustained, burst)";
    expect_refused(measuring + " --clocks warm", ExitCode::kUsage, {"--clocks: 'warm' is not a clock state " + states});
    expect_refused(measuring + " --clocks unrecorded", ExitCode::kUsage, {"--clocks: 'unrecorded'"});
  }
  // `replay` replays a trace's step: a model's GEMMs have none, and without a GPU nothing replays.
  expect_refused("profile --model gpt2 --tokens 64 --clocks replay", ExitCode::kUsage,
                 {"--clocks: 'replay' replays a trace's step in its order; gpt2 at 64 tokens has no step to replay"});
  if (device_count() == 0)
    expect_refused("profile --trace " + std::string(SHAPESCOPE_TEST_DATA) + "/traces/gpt2.json --clocks replay --db /nonexistent/x.db",
                   ExitCode::kNoGpu, {"--clocks: 'replay' replays the step on a GPU, and there is none here"});
  const std::string store = std::string(SHAPESCOPE_TEST_DATA) + "/h200-2026-11-21/sweep_bf16_nn_1-4096.db";
  for (const std::string& selecting : {"export --db " + store, "plot flops --db " + store, "report --db " + store})
    expect_refused(selecting + " --clocks hot", ExitCode::kUsage,
                   {"--clocks: 'hot' is not a clock state (sustained, burst, unrecorded)"});
}

// --what-if-seconds bounds the replay of the --what-if step: without --what-if, without a trace's step
// or at a clock state that pairs it has nothing to bound, and a time outside 4 to 600 s (below 4, the step's own replay limit) is refused,
// each before a store is opened or a GPU looked for.
TEST(Cli, WhatIfSecondsNeedsAWhatIfAndATimeInRange) {
  expect_refused("profile --model gpt2 --tokens 64 --what-if-seconds 20", ExitCode::kUsage,
                 {"--what-if-seconds: '20' needs --what-if (the changed step whose saving it measures)"});
  // Nothing is replayed for a model's GEMMs, nor at --clocks sustained or burst: nothing it bounds.
  expect_refused("profile --model gpt2 --tokens 64 --what-if 1 --what-if-seconds 20", ExitCode::kUsage,
                 {"--what-if-seconds: '20' bounds the replay of a trace's step; gpt2 at 64 tokens has no step to replay"});
  expect_refused("profile --trace " + std::string(SHAPESCOPE_TEST_DATA) +
                     "/traces/gpt2.json --what-if 1 --what-if-seconds 20 --clocks burst --db /nonexistent/x.db",
                 ExitCode::kUsage,
                 {"--what-if-seconds: '20' bounds the replay of the step; --clocks sustained and burst pair its GEMMs "
                  "instead"});
  expect_refused("profile --model gpt2 --tokens 64 --what-if 1 --what-if-seconds 2", ExitCode::kUsage,
                 {"--what-if-seconds: 2 must be between 4 and 600"});
  expect_refused("profile --model gpt2 --tokens 64 --what-if 1 --what-if-seconds nan", ExitCode::kUsage,
                 {"--what-if-seconds"});
}

// The options several commands share are registered once: each command refuses the same bad value in
// the same words, before it opens a store or looks for a GPU.
TEST(Cli, SharedOptionsAreRefusedAlikeByEveryCommand) {
  for (const std::string command : {"info", "sweep --n 64", "explain 1793", "pad --model gpt2 --tokens 64", "profile --gemms x.csv",
                                    "plot flops", "export", "report"})
    expect_refused(command + " --db ''", ExitCode::kUsage, {"--db: '' is empty"});
  for (const std::string command : {"sweep --n 64 --dry-run", "explain 1793", "pad --model gpt2 --tokens 64 --dry-run",
                                    "profile --model gpt2 --tokens 64"})
    expect_refused(command + " --samples 0", ExitCode::kUsage, {"--samples: 0 must be between 1 and 100000"});
  for (const std::string command : {"sweep --n 64 --dry-run", "explain 1793"})
    expect_refused(command + " --lt-algos 65", ExitCode::kUsage, {"--lt-algos: 65 must be between 1 and 64"});
  for (const std::string command : {"explain 1793 --gpu a100", "plot tilegrid 1793 --gpu a100"})
    expect_refused(command + " --tile 256", ExitCode::kUsage, {"--tile: '256' is not BMxBN"});
  for (const std::string command : {"sweep --n 64", "export"})
    expect_refused(command + " --format xml", ExitCode::kUsage, {"--format: 'xml' is not a format (table, csv, json)"});
  // A selection's values are checked before the store is opened (this one does not exist: exit 5 otherwise).
  const std::string missing = " --db /nonexistent-dir/s.db";
  for (const std::string command : {"plot flops", "export", "report"}) {
    expect_refused(command + missing + " --dtype bf8", ExitCode::kUsage, {"--dtype: 'bf8' is not a dtype"});
    expect_refused(command + missing + " --layout xy", ExitCode::kUsage, {"--layout: 'xy' is not a layout"});
    expect_refused(command + missing + " --ld-pad -1", ExitCode::kUsage, {"--ld-pad: -1 must be >= 0"});
    expect_refused(command + missing + " --offset -2", ExitCode::kUsage, {"--offset: -2 must be >= 0"});
  }
  const std::string store = std::string(SHAPESCOPE_TEST_DATA) + "/h200-2026-11-21/sweep_bf16_nn_1-4096.db";
  for (const std::string command : {"explain 1793", "plot compare"})
    expect_refused(command + " --db " + store + " --db " + store, ExitCode::kUsage, {"--db", "given twice"});
}

TEST(Cli, DryRunSaysWhatTheStoppingRuleAssumes) {
  const CliRun adaptive = run("sweep --n 1..64 --dry-run");
  EXPECT_EQ(adaptive.code, 0) << adaptive.err;
  EXPECT_NE(adaptive.err.find("for 4 samples per point, the stopping rule's minimum"), std::string::npos) << adaptive.err;
  const CliRun fixed = run("sweep --n 1..64 --samples 10 --dry-run");
  EXPECT_EQ(fixed.code, 0) << fixed.err;
  EXPECT_NE(fixed.err.find("for 10 samples per point (a rough"), std::string::npos) << fixed.err;
}

TEST(Cli, DryRunNeedsNoGpu) {
  const CliRun r = run("sweep --n 1..64 --backend cublas,cublaslt --lt-algos 2 --dry-run");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines(r.out), 65);  // header + 64 problems
  EXPECT_NE(r.err.find("64 problems x 2 backend(s) = 192 points"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("GPU memory needed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("estimated GPU time"), std::string::npos) << r.err;
}

#if SHAPESCOPE_GPU_BUILD
TEST(Refusals, DtypeTheGpuCannotRun) {
  DeviceContext t4;
  t4.gpu_name = "Tesla T4";
  t4.cc_major = 7; t4.cc_minor = 5;
  DeviceContext a100 = t4;
  a100.gpu_name = "A100";
  a100.cc_major = 8; a100.cc_minor = 0;
  DeviceContext h100 = a100;
  h100.cc_major = 9;
  ASSERT_TRUE(dtype_unsupported(DType::kBf16, t4));
  EXPECT_NE(dtype_unsupported(DType::kBf16, t4)->find("--dtype: bf16 needs compute capability 8.0"), std::string::npos);
  EXPECT_FALSE(dtype_unsupported(DType::kFp16, t4));
  EXPECT_FALSE(dtype_unsupported(DType::kBf16, a100));
  ASSERT_TRUE(dtype_unsupported(DType::kFp8, a100));
  EXPECT_NE(dtype_unsupported(DType::kFp8, a100)->find("8.9"), std::string::npos);
  EXPECT_FALSE(dtype_unsupported(DType::kFp8, h100));
}
#endif

TEST(Refusals, SweepThatDoesNotFitShowsBytesNeededAndFree) {
  MemoryPlan plan;
  plan.a = plan.b = plan.c = 40ll << 30;
  plan.flush = 50ll << 20;
  plan.workspace = 32ll << 20;
  try {
    check_fits(plan, 80ll << 30, 80ll << 30);
    FAIL() << "120 GiB fitted into 80";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kOutOfMemory);
    EXPECT_NE(std::string(e.what()).find("120.08 GiB"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("80.00 GiB of 80.00 GiB is free"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(check_fits(plan, 200ll << 30, 200ll << 30));
}

}  // namespace
}  // namespace shapescope

namespace shapescope {
namespace {

TEST(Cli, CustomBackendSelections) {
  expect_refused("sweep --n 64 --backend custom:nope --dry-run", ExitCode::kUsage,
                 {"--backend: 'custom:nope': no kernel 'nope'", "01_naive"});
  expect_refused("sweep --n 64 --backend custom:01_naive:99x99 --dry-run", ExitCode::kUsage,
                 {"01_naive has no tile 99x99", "16x16"});
  expect_refused("sweep --n 64 --backend custom:01_naive:16x16:zigzag --dry-run", ExitCode::kUsage,
                 {"has no schedule 'zigzag'", "dp"});
  expect_refused("sweep --n 64 --backend custom:a:b:c:d --dry-run", ExitCode::kUsage, {"custom[:<kernel>"});
  expect_refused("sweep --n 64 --backend cutlass --dry-run", ExitCode::kUsage, {"'cutlass' is not a backend"});
  const CliRun ok = run("sweep --n 64 --backend cublas,custom --dry-run");
  EXPECT_EQ(ok.code, 0) << ok.err;
  // One point per registered variant plus cuBLAS's one.
  EXPECT_NE(ok.err.find(std::to_string(1 + select_variants(BackendSpec(BackendKind::kCustom)).size()) + " points"), std::string::npos)
      << ok.err;
}

}  // namespace
}  // namespace shapescope
