// The annotation model: golden numbers from DESIGN.md's background (He's A100 example, simplegemm's
// 36 waves), occupancy from real launch records, and the annotations of real points measured on an
// H200 (tests/data/h200-2026-11-21).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "model/annotate.hpp"
#include "views/annotated.hpp"
#include "store/store.hpp"

namespace shapescope {
namespace {

// cuBLASLt's tile names as sizes: read where a config comes in, so the model reads numbers.
TEST(LtTileSize, NamesThatGiveASize) {
  EXPECT_EQ(lt_tile_size("256x128"), std::make_pair(256, 128));
  EXPECT_EQ(lt_tile_size("8x384"), std::make_pair(8, 384));
  for (const char* none : {"undefined", "auto", "id99", "", "x8", "8x", "0x8", "64xauto"})
    EXPECT_FALSE(lt_tile_size(none)) << none;
}

TEST(Alignment, PowersOfTwoCappedAt256) {
  EXPECT_EQ(pow2_alignment(1793), 1);
  EXPECT_EQ(pow2_alignment(1792), 256);
  EXPECT_EQ(pow2_alignment(96), 32);
  EXPECT_EQ(pow2_alignment(50257), 1);
  EXPECT_EQ(pow2_alignment(50304), 128);
  EXPECT_EQ(pow2_alignment(0), 256);
}

TEST(Alignment, SixteenByteRule) {
  Problem p;
  p.m = p.n = p.k = 1793;
  p.lda = p.ldb = p.ldc = 1793;
  Alignment al = alignment_of(p);
  EXPECT_EQ(al.a.ld_elements, 1);
  EXPECT_EQ(al.a.ld_bytes, 2);  // 1793 x 2 B = 3586 B
  EXPECT_FALSE(al.a.ld_ok());
  EXPECT_TRUE(al.a.base_ok());
  EXPECT_FALSE(al.ok());
  EXPECT_EQ(al.violations(), "rows of A/B/C (lda/ldb/ldc 1793 x 2 B = 3586 B) are only 2-byte aligned");

  p.m = p.n = p.k = p.lda = p.ldb = p.ldc = 1800;  // 3600 B = 16 x 225
  al = alignment_of(p);
  EXPECT_EQ(al.a.ld_elements, 8);
  EXPECT_EQ(al.a.ld_bytes, 16);
  EXPECT_TRUE(al.ok());
  EXPECT_EQ(al.violations(), "");

  p.off_b = 4;  // 8 bytes past a 256-byte aligned allocation
  al = alignment_of(p);
  EXPECT_EQ(al.b.base_bytes, 8);
  EXPECT_FALSE(al.ok());

  p = Problem{};
  p.dtype = DType::kFp8;
  p.m = p.n = p.k = p.lda = p.ldb = 24;  // 24 B rows: 8-byte aligned only
  p.ldc = 24;                            // C is bf16: 48 B
  al = alignment_of(p);
  EXPECT_EQ(al.a.ld_bytes, 8);
  EXPECT_EQ(al.c.ld_bytes, 16);
}

// H. He's example: an A100 (108 SMs) with a 256x128 tile.
TEST(Waves, A100Golden1792And1793) {
  const GpuProfile* a100 = find_profile("a100");
  ASSERT_NE(a100, nullptr);
  ASSERT_EQ(a100->sm_count, 108);

  TileGrid g = tile_grid(1792, 1792, 1, 256, 128);
  EXPECT_EQ(g.tiles_m, 7);
  EXPECT_EQ(g.tiles_n, 14);
  EXPECT_EQ(g.tiles, 98);
  EXPECT_DOUBLE_EQ(g.efficiency, 1.0);
  Waves w = waves_of(g.tiles, a100->sm_count);
  EXPECT_EQ(w.rounds, 1);
  EXPECT_DOUBLE_EQ(w.efficiency, 98.0 / 108);

  g = tile_grid(1793, 1793, 1, 256, 128);
  EXPECT_EQ(g.tiles_m, 8);
  EXPECT_EQ(g.tiles_n, 15);
  EXPECT_EQ(g.tiles, 120);
  EXPECT_DOUBLE_EQ(g.efficiency, 1793.0 * 1793 / (2048.0 * 1920));
  w = waves_of(g.tiles, a100->sm_count);
  EXPECT_EQ(w.rounds, 2);
  EXPECT_DOUBLE_EQ(w.waves, 120.0 / 108);
  EXPECT_DOUBLE_EQ(w.efficiency, 120.0 / 216);
  EXPECT_EQ(w.idle_slots(), 96);
}

// simplegemm's choice: 8448x9216 with 128x128 tiles on 132 SMs is exactly 36 waves.
TEST(Waves, ThirtySixExactWavesOn132Sms) {
  const TileGrid g = tile_grid(8448, 9216, 1, 128, 128);
  EXPECT_EQ(g.tiles, 66 * 72);
  const Waves w = waves_of(g.tiles, find_profile("h100-sxm")->sm_count);
  EXPECT_DOUBLE_EQ(w.waves, 36.0);
  EXPECT_EQ(w.rounds, 36);
  EXPECT_DOUBLE_EQ(w.efficiency, 1.0);
}

TEST(Waves, SplitKAndBatchMultiplyTheWork) {
  const TileGrid g = tile_grid(61, 61, 3, 64, 64, 8);
  EXPECT_EQ(g.tiles, 1 * 1 * 3 * 8);
  EXPECT_EQ(tile_grid(0, 5, 1, 64, 64).tiles, 0);
  EXPECT_EQ(waves_of(0, 132).rounds, 0);
}

TEST(Occupancy, FromRealLaunchRecordsOnAnH200) {
  const SmLimits hopper = *sm_limits(9, 0);
  // nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT: 384 threads x 168 registers, 208 KiB shared.
  Occupancy o = occupancy(hopper, hopper.regs_per_sm, hopper.smem_per_sm, {384, 168, 213188, 2});
  EXPECT_EQ(o.ctas_per_sm, 1);
  EXPECT_EQ(o.limiter, "registers");  // 3 warps of 5376 registers per sub-partition: 12 warps
  // cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1: 256 threads x 229 registers, 48 KiB.
  o = occupancy(hopper, hopper.regs_per_sm, hopper.smem_per_sm, {256, 229, 49152, 1});
  EXPECT_EQ(o.ctas_per_sm, 1);
  EXPECT_EQ(o.limiter, "registers");
  // cutlass_75_tensorop_s1688gemm_bf16_64x64_nn_align1: 128 threads x 96 registers, 16 KiB.
  o = occupancy(hopper, hopper.regs_per_sm, hopper.smem_per_sm, {128, 96, 16384, 1});
  EXPECT_EQ(o.ctas_per_sm, 5);  // 16384 / (96 x 32) = 5 warps per sub-partition, 4 warps per CTA
  EXPECT_EQ(o.limiter, "registers");
  // Shared memory limits: 100 KiB per CTA fits twice in 228 KiB.
  o = occupancy(hopper, hopper.regs_per_sm, hopper.smem_per_sm, {128, 32, 100 * 1024, 1});
  EXPECT_EQ(o.ctas_per_sm, 2);
  EXPECT_EQ(o.limiter, "shared memory");
  // Threads limit: 1024-thread CTAs, 2 per SM.
  o = occupancy(hopper, hopper.regs_per_sm, hopper.smem_per_sm, {1024, 16, 0, 1});
  EXPECT_EQ(o.ctas_per_sm, 2);
  EXPECT_EQ(o.limiter, "threads");
  // Tiny CTAs hit the CTA limit.
  o = occupancy(hopper, hopper.regs_per_sm, hopper.smem_per_sm, {32, 16, 0, 1});
  EXPECT_EQ(o.ctas_per_sm, 32);
  EXPECT_EQ(o.limiter, "CTAs per SM");

  EXPECT_EQ(data_parallel_slots(132, {1, "registers"}, 4), 132);
  EXPECT_EQ(data_parallel_slots(108, {1, "registers"}, 8), 104);  // whole clusters only
}

TEST(DeviceProfile, LookupByKeyAndByReportedName) {
  EXPECT_EQ(find_profile("H100")->key, "h100-sxm");
  EXPECT_EQ(find_profile("a10")->sm_count, 72);
  EXPECT_EQ(find_profile("l4")->sm_count, 58);
  EXPECT_EQ(find_profile("b200")->sm_count, 148);
  EXPECT_EQ(find_profile("h200")->sm_count, 132);
  EXPECT_EQ(find_profile("rtx4090"), nullptr);
  EXPECT_EQ(profile_for_device_name("NVIDIA H100 80GB HBM3")->key, "h100-sxm");
  EXPECT_EQ(profile_for_device_name("NVIDIA H100 PCIe")->key, "h100-pcie");
  EXPECT_EQ(profile_for_device_name("NVIDIA A100-SXM4-40GB")->key, "a100");
  EXPECT_EQ(profile_for_device_name("NVIDIA A10")->key, "a10");
  EXPECT_EQ(profile_for_device_name("NVIDIA H200")->key, "h200");
  EXPECT_EQ(profile_for_device_name("NVIDIA GeForce RTX 4090"), nullptr);
  EXPECT_EQ(profile_keys(), "a100, a10, l4, h100-sxm, h100-pcie, h200, b200");
  for (const GpuProfile& p : gpu_profiles()) {
    EXPECT_TRUE(sm_limits(p.cc_major, p.cc_minor).has_value()) << p.key;
  }
  EXPECT_FALSE(sm_limits(6, 1).has_value());
}

TEST(Roofline, IntensityAndBound) {
  const ModelGpu h200 = model_gpu(*find_profile("h200"));
  Problem p;
  p.m = 4096, p.n = 1, p.k = 4096;
  p.lda = 4096, p.ldb = 1, p.ldc = 1;
  Roofline r = roofline_of(p, h200, 10.0);
  EXPECT_DOUBLE_EQ(r.flops, 2.0 * 4096 * 4096);
  EXPECT_DOUBLE_EQ(r.min_bytes, 2.0 * (4096.0 * 4096 + 4096 + 4096));
  EXPECT_NEAR(r.intensity, 1.0, 0.001);
  EXPECT_EQ(r.bound, RoofBound::kMemory);
  EXPECT_FALSE(r.peak_tflops.measured);
  EXPECT_NEAR(r.ridge, 989e3 / 4800, 1e-9);
  EXPECT_NEAR(*r.tflops, 2.0 * 4096 * 4096 / 10e6, 1e-9);
  EXPECT_NEAR(*r.pct_roof, *r.tflops / (r.intensity * 4.8), 1e-9);

  p.n = p.ldb = p.ldc = 4096;
  r = roofline_of(p, h200, std::nullopt);
  EXPECT_EQ(r.bound, RoofBound::kCompute);
  EXPECT_FALSE(r.tflops.has_value());

  ModelGpu calibrated = h200;
  calibrated.calibrations.push_back({"tflops:bf16", 700, "2026-11-21T05:35:04Z", ""});
  r = roofline_of(p, calibrated, 200.0);
  EXPECT_TRUE(r.peak_tflops.measured);
  EXPECT_EQ(r.peak_tflops.source, "measured 2026-11-21T05:35:04Z");
  EXPECT_NEAR(*r.pct_peak, p.flops() / 200e6 / 700, 1e-12);
}

// Real points from the committed H200 store (copied: opening a store may upgrade its schema).
class FixturePoints : public ::testing::Test {
 protected:
  void SetUp() override {
    // ctest runs each test in its own process, in parallel: one file per process, or one test's
    // TearDown removes the store another is reading (random_seed() is 0 for all of them).
    path_ = std::filesystem::temp_directory_path() / ("shapescope_model_" + std::to_string(getpid()) + "_" +
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name() +
                                                      ".db");
    std::filesystem::copy_file(std::string(SHAPESCOPE_TEST_DATA) + "/h200-2026-11-21/sweep_bf16_nn_1-4096.db",
                               path_, std::filesystem::copy_options::overwrite_existing);
    Store store(path_.string());
    for (StoredPoint& point : store.load_all()) {
      const int64_t n = point.key.problem.n;
      if (n == 61 || n == 1792 || n == 1793 || n == 4095 || n == 4096) by_n_[n] = point;
    }
    ASSERT_EQ(by_n_.size(), 5u);
    gpu_ = model_gpu(by_n_[4096].device, store.load_calibration(by_n_[4096].device));
  }
  void TearDown() override { std::filesystem::remove(path_); }

  std::filesystem::path path_;
  std::map<int64_t, StoredPoint> by_n_;
  ModelGpu gpu_;
};

TEST_F(FixturePoints, Unaligned1793RunsOneDataParallelWave) {
  const Annotation a = annotate(by_n_[1793], gpu_);
  EXPECT_FALSE(a.alignment.ok());
  EXPECT_EQ(a.parsed.family, "cutlass2");
  EXPECT_EQ(a.tile_source, "kernel name");
  // The name's 256x128 is in cuBLAS's column-major frame: 256 along the user's N.
  EXPECT_EQ(a.grid.tile_m, 128);
  EXPECT_EQ(a.grid.tile_n, 256);
  EXPECT_EQ(a.grid.tiles, 120);
  EXPECT_EQ(a.launched_ctas, 120);  // CUPTI's grid agrees with the model's tile grid
  EXPECT_FALSE(a.persistent);
  EXPECT_EQ(a.occupancy.ctas_per_sm, 1);
  EXPECT_EQ(a.data_parallel_slots, 132);
  EXPECT_EQ(a.waves.rounds, 1);
  EXPECT_DOUBLE_EQ(a.waves.efficiency, 120.0 / 132);
  EXPECT_EQ(a.roofline.bound, RoofBound::kCompute);
  EXPECT_TRUE(a.roofline.peak_tflops.measured);
  ASSERT_TRUE(a.roofline.pct_peak.has_value());
  EXPECT_LT(*a.roofline.pct_peak, 0.2);
}

TEST_F(FixturePoints, Aligned4096RunsAPersistentNvjetGrid) {
  const Annotation a = annotate(by_n_[4096], gpu_);
  EXPECT_TRUE(a.alignment.ok());
  EXPECT_EQ(a.parsed.family, "nvjet");
  EXPECT_EQ(a.grid.tiles, 16 * 32);
  EXPECT_EQ(a.launched_ctas, 132);
  EXPECT_EQ(a.cluster_size, 2);
  EXPECT_TRUE(a.persistent);
  EXPECT_EQ(a.waves.slots, 132);
  EXPECT_EQ(a.waves.rounds, 4);
  EXPECT_DOUBLE_EQ(a.waves.efficiency, 512.0 / 528);
  // The calibration ran power-capped at 1500 MHz, the point at 1980 MHz: the peak follows the clock.
  EXPECT_NEAR(a.roofline.peak_tflops.value, 687.572949129129 * 1980 / 1500, 1e-6);
  EXPECT_NEAR(*a.roofline.pct_peak, 4096.0 * 4096 * 4096 * 2 / 173.82400482893e6 / (687.572949129129 * 1980 / 1500),
              1e-9);
}

TEST_F(FixturePoints, SplitKFromTheGridAndTheReductionKernel) {
  const Annotation a = annotate(by_n_[61], gpu_);
  EXPECT_EQ(a.parsed.family, "cutlass2");
  EXPECT_EQ(a.main_kernel, 0);  // not the splitKreduce_kernel
  EXPECT_EQ(a.splits, 8);
  EXPECT_EQ(a.split_source, "launched grid (z)");
  EXPECT_EQ(a.grid.tiles, 8);
  EXPECT_EQ(a.launched_ctas, 8);
  EXPECT_EQ(a.roofline.bound, RoofBound::kMemory);
}

TEST(Regret, HeuristicPickAgainstTheBestTimed) {
  std::vector<StoredPoint> points(3);
  for (size_t i = 0; i < points.size(); ++i) {
    points[i].key.backend = BackendKind::kCublasLt;
    points[i].key.algo = "h" + std::to_string(i);
    points[i].key.problem.m = points[i].key.problem.n = points[i].key.problem.k = 4096;
    points[i].device.gpu_uuid = "GPU-1";
  }
  points[0].result.timing.median_us = 188.74;
  points[1].result.timing.median_us = 188.91;
  points[2].result.timing.median_us = 186.30;
  std::vector<Annotation> annotations(points.size());
  add_regret(points, annotations);
  ASSERT_TRUE(annotations[0].regret.has_value());
  EXPECT_NEAR(*annotations[0].regret, 188.74 / 186.30 - 1, 1e-12);
  EXPECT_EQ(annotations[0].best_algo, "h2");
  EXPECT_DOUBLE_EQ(*annotations[2].regret, 0.0);

  points[2].key.problem.k = 4095;  // a different problem: h0 and h1 alone
  std::vector<Annotation> again(points.size());
  add_regret(points, again);
  EXPECT_EQ(again[0].best_algo, "h0");
  EXPECT_FALSE(again[2].regret.has_value());
}

}  // namespace
}  // namespace shapescope

namespace shapescope {
namespace {

// Every point measured on the H200 (three stores, 5785 points): the model's tile grid agrees with
// the grid CUPTI recorded. CUTLASS 2 kernels pad one grid dimension for their rasterization (the
// extra CTAs return at once), so a data-parallel grid holds the tiles and less than as many again;
// a persistent grid fits in the slots. The other orientation of the tile fails this on 48 of them.
TEST(ModelOnH200Data, TileGridsAgreeWithTheLaunchedGrids) {
  const std::string data = std::string(SHAPESCOPE_TEST_DATA);
  size_t checked = 0, data_parallel = 0, persistent = 0;
  for (const char* file : {"/h200-2026-11-21/sweep_bf16_nn_1-4096.db", "/h200-2026-11-21-explain/explain.db",
                           "/h200-2026-11-21-explain/gallery.db"}) {
    Store store(data + file, Store::Access::kReadOnly);
    const std::vector<StoredPoint> points = store.load_all();
    const std::vector<Annotation> annotations = annotate_points(store, points);
    for (size_t i = 0; i < points.size(); ++i) {
      const Annotation& a = annotations[i];
      if (a.grid.tiles <= 0) continue;  // gemv kernels: no tile in the name
      ++checked;
      const std::string what = points[i].key.problem.shape_string() + " " + a.parsed.core;
      if (a.persistent) {
        ++persistent;
        EXPECT_LE(a.launched_ctas, a.data_parallel_slots) << what;
      } else {
        ++data_parallel;
        EXPECT_GE(a.launched_ctas, a.grid.tiles) << what;
        EXPECT_LT(a.launched_ctas, 2 * a.grid.tiles) << what;
      }
    }
  }
  EXPECT_GT(checked, 5700u);
  EXPECT_GT(data_parallel, 3700u);
  EXPECT_GT(persistent, 1900u);
}

}  // namespace
}  // namespace shapescope
