// GPUs side by side: the committed H200 sweep and a "second GPU" made from a copy of it in a
// temporary folder (its identity, clock and times rewritten), through explain with two --db, the
// view on a merged store holding both, and plot compare with two stores.
#include "views/compare_gpus.hpp"

#include <gtest/gtest.h>
#include <fmt/format.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_util.hpp"
#include "common/error.hpp"
#include "store/merge.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;

const std::string kSquares = std::string(SHAPESCOPE_TEST_DATA) + "/h200-2026-11-21/sweep_bf16_nn_1-4096.db";

std::string bytes_of(const fs::path& path) { return file_text(path.string()); }

class CompareGpus : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/shapescope_gpus_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    h200_ = (dir_ / "h200.db").string();
    h100_ = (dir_ / "h100.db").string();
    fs::copy_file(kSquares, h200_);
    fs::copy_file(kSquares, h100_);
    // Another GPU: its own name and UUID, 1.3x the times, a lower clock, and without size 1000.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(h100_.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "UPDATE points SET gpu_name = 'NVIDIA H100 80GB HBM3', gpu_uuid = 'GPU-11111111-2222', "
                           "median_us = median_us * 1.3, sm_clock_mhz = 1755; "
                           "UPDATE calibration SET gpu_name = 'NVIDIA H100 80GB HBM3', gpu_uuid = 'GPU-11111111-2222'; "
                           "DELETE FROM kernels WHERE point_id IN (SELECT id FROM points WHERE n = 1000); "
                           "DELETE FROM points WHERE n = 1000",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
    h200_bytes_ = bytes_of(h200_);
    h100_bytes_ = bytes_of(h100_);
  }
  void TearDown() override {
    // The stores were only read.
    EXPECT_EQ(bytes_of(h200_), h200_bytes_);
    EXPECT_EQ(bytes_of(h100_), h100_bytes_);
    fs::remove_all(dir_);
  }
  fs::path dir_;
  std::string h200_, h100_, h200_bytes_, h100_bytes_;
};

TEST_F(CompareGpus, ExplainPrintsARowPerGpu) {
  const CliRun r = run(fmt::format("explain 1793 --wide --db '{}' --db '{}'", h200_, h100_));  // every column
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("1793x1793x1793 bf16 nn (cublas default) on 2 GPUs"), std::string::npos) << r.out;
  const size_t h200 = r.out.find("NVIDIA H200 "), h100 = r.out.find("NVIDIA H100 80GB HBM3");
  ASSERT_NE(h200, std::string::npos) << r.out;
  ASSERT_NE(h100, std::string::npos) << r.out;
  EXPECT_LT(h200, h100) << "rows in store order";
  const std::string h100_row = r.out.substr(h100, r.out.find('\n', h100) - h100);
  for (const char* cell : {"145.81", "1.30x", "cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1", "128x256",
                           "15x8", "0.91", "1755"})
    EXPECT_NE(h100_row.find(cell), std::string::npos) << cell << " missing from: " << h100_row;
  EXPECT_NE(r.out.find("1980"), std::string::npos);

  const CliRun json = run(fmt::format("explain 1793 --json --db '{}' --db '{}'", h200_, h100_));
  ASSERT_EQ(json.code, 0) << json.err;
  EXPECT_NE(json.out.find("\"gpu\": \"NVIDIA H100 80GB HBM3\""), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"sm_clock_mhz\": 1755"), std::string::npos) << json.out;
}

TEST_F(CompareGpus, StoresWithoutTheShapeAreNamed) {
  const CliRun r = run(fmt::format("explain 1000 --db '{}' --db '{}'", h200_, h100_));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("on 1 GPU,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not in " + h100_), std::string::npos) << r.out;
  const CliRun none = run(fmt::format("explain 5000 --db '{}' --db '{}'", h200_, h100_));
  EXPECT_EQ(none.code, 3) << none.err;
  EXPECT_NE(none.err.find("no store holds 5000x5000x5000"), std::string::npos) << none.err;
  const CliRun gpu = run(fmt::format("explain 1793 --gpu a100 --db '{}' --db '{}'", h200_, h100_));
  EXPECT_EQ(gpu.code, 2) << gpu.err;
}

// A merged store holds both GPUs apart by their identity.
TEST_F(CompareGpus, AMergedStoreKeepsTheGpusApart) {
  const std::string merged = (dir_ / "merged.db").string();
  const MergeResult m = merge_stores(merged, {h200_, h100_});
  EXPECT_EQ(m.points, 4096u + 4095u);
  Problem target;
  target.m = target.n = target.k = 1793;
  target.lda = target.ldb = target.ldc = 1793;
  const GpuComparison c = compare_gpus({merged}, target, BackendSpec(BackendKind::kCublas));
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[0].gpu, "NVIDIA H200");
  EXPECT_EQ(c.rows[1].gpu, "NVIDIA H100 80GB HBM3");
  EXPECT_NEAR(c.rows[1].point.result.timing.median_us / c.rows[0].point.result.timing.median_us, 1.3, 1e-6);
}

TEST_F(CompareGpus, PlotCompareDrawsALinePerGpu) {
  const std::string out = (dir_ / "fig").string() + "/";
  const CliRun r = run(fmt::format("plot compare --db '{}' --db '{}' --n 1..4096 --out '{}'", h200_, h100_, out));
  if (r.code == int(ExitCode::kNoGnuplot)) GTEST_SKIP() << "no gnuplot: " << r.err;
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* extension : {"svg", "png", "gp", "dat"})
    EXPECT_TRUE(fs::exists(dir_ / "fig" / (std::string("compare-gpus.") + extension))) << extension;
  const std::string gp = bytes_of(dir_ / "fig" / "compare-gpus.gp");
  EXPECT_NE(gp.find("NVIDIA H200, 1980 MHz"), std::string::npos);
  EXPECT_NE(gp.find("NVIDIA H100 80GB HBM3, 1755 MHz"), std::string::npos);
  EXPECT_NE(r.out.find("4095 sizes on every GPU: NVIDIA H100 80GB HBM3 runs at 0.77x the TFLOP/s of NVIDIA H200"),
            std::string::npos)
      << r.out;
  const std::string svg = bytes_of(dir_ / "fig" / "compare-gpus.svg");
  EXPECT_NE(svg.find("NVIDIA H100 80GB HBM3 ("), std::string::npos) << "hover text names the GPU";

  const CliRun flops = run(fmt::format("plot flops --db '{}' --db '{}' --out '{}'", h200_, h100_, out));
  EXPECT_EQ(flops.code, 2);
  EXPECT_NE(flops.err.find("several stores are for plot compare"), std::string::npos) << flops.err;
  const CliRun one_gpu = run(fmt::format("plot compare --db '{}' --db '{}' --gpu h200 --out '{}'", h200_, h100_, out));
  EXPECT_EQ(one_gpu.code, 2) << one_gpu.err;
}

}  // namespace
}  // namespace shapescope
