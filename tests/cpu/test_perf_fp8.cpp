// The performance model's fp8 classes: a store's fp8 points as cuBLASLt ran them (its heuristic's first
// choice, the tensor recipe) are samples of the fit, another recipe's are left out and never
// predicted, and a sweep's fp8 plan is predicted on the backend it was measured on.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "cli_util.hpp"
#include "common/error.hpp"
#include "core/fp8_recipe.hpp"
#include "model/perf_model.hpp"
#include "shape/plan.hpp"
#include "stored_points.hpp"
#include "views/perf_samples.hpp"

namespace shapescope {
namespace {

class PerfFp8Test : public testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // 12 tensor-recipe fp8 nt GEMMs on cuBLASLt at 1000 TFLOP/s above a 6 us floor, and 5 tiny ones at
  // the floor, each with the nvjet kernel of 128x128 tiles the annotations read; one of the row recipe,
  // and a bf16 one on cuBLASLt.
  std::string store_with_fp8() const {
    const std::string db = path("fp8.db");
    Store store(db);
    for (int64_t k = 16; k <= 80; k += 16) save(store, fp8(16, 16, k), BackendKind::kCublasLt);
    for (int64_t m : {512, 1024, 2048, 4096})
      for (int64_t n : {1024, 4096, 8192}) save(store, fp8(m, n, 4096), BackendKind::kCublasLt);
    save(store, fp8(2048, 4096, 4096, "row"), BackendKind::kCublasLt);
    save(store, form_problem(ProblemForm{}, 2048, 2048, 2048), BackendKind::kCublasLt);
    return db;
  }

  static Problem fp8(int64_t m, int64_t n, int64_t k, const char* recipe = "tensor") {
    ProblemForm form;
    form.dtype = DType::kFp8;
    form.layout = Layout::kNT;
    form.recipe = *parse_recipe(recipe);
    return form_problem(form, m, n, k);
  }

  static double law_us(const Problem& p) { return 6 + p.flops() / 1000e6; }

 private:
  static void save(Store& store, const Problem& p, BackendKind backend) {
    PointResult r;
    r.timing.median_us = r.timing.min_us = r.timing.max_us = r.timing.q1_us = r.timing.q3_us = law_us(p);
    r.timing.samples = 10;
    r.measured_at = "2026-11-25T00:00:00Z";
    r.command = "fixture";
    const int64_t id = store.save_point(h100(), PointKey{backend, std::string(default_algo(backend)), p, false}, r);
    KernelRecord k;
    k.name = "nvjet_sm90_qqtst_128x128_128x6_2x1_v_bz_TNT";
    k.grid_x = uint32_t((p.m + 127) / 128), k.grid_y = uint32_t((p.n + 127) / 128), k.grid_z = 1;
    k.block_x = 384, k.block_y = k.block_z = 1;
    k.registers = 168;
    k.dynamic_smem = 200 * 1024;
    k.duration_us = law_us(p);
    store.save_kernels(id, {k});
  }

  std::filesystem::path dir_ = [] {
    const auto d = std::filesystem::temp_directory_path() / ("perf_fp8_" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
};

TEST_F(PerfFp8Test, TheTensorRecipesPointsOnCublasLtAreSamplesAndNoOtherRecipeIsPredicted) {
  const std::string db = store_with_fp8();
  const PerfSamples got = perf_samples(Store(db, Store::Access::kReadOnly), db);
  EXPECT_EQ(got.skipped, 2u);  // the row recipe's point, and a bf16 one on cuBLASLt
  ASSERT_EQ(got.set.samples.size(), 17u);
  for (const PerfSample& s : got.set.samples) {
    EXPECT_EQ(s.problem.dtype, DType::kFp8);
    EXPECT_EQ(s.tile_m, 128);
    EXPECT_GT(s.slots, 0);
  }
  const PerfModel model = fit_perf_model(got.set, db);
  ASSERT_EQ(model.classes.size(), 1u);
  EXPECT_EQ(model.classes.front().dtype, DType::kFp8);
  EXPECT_EQ(model.classes.front().align_bytes, 16);
  std::string why;
  const Problem between = fp8(3000, 2048, 4096);
  const auto p = predict(model, between, why);
  ASSERT_TRUE(p) << why;
  EXPECT_NEAR(p->us, law_us(between), 0.02 * law_us(between));
  EXPECT_FALSE(predict(model, fp8(3000, 2048, 4096, "row"), why));
  EXPECT_NE(why.find("tensor recipe (one scale per operand), not of the row recipe"), std::string::npos) << why;

  // A set of samples with another recipe's fp8 GEMM in it is refused, not fitted as the tensor one.
  PerfSampleSet mixed = got.set;
  mixed.samples.front().problem.recipe = *parse_recipe("block");
  EXPECT_THROW(fit_perf_model(mixed, "mixed"), Error);
}

TEST_F(PerfFp8Test, ASweepsFp8PlanIsPredictedOnCublasLt) {
  const std::string db = store_with_fp8(), model = path("fp8.json"), none = path("none.db");
  const CliRun fit = run("calibrate-model --db '" + db + "' --out '" + model + "'");
  ASSERT_EQ(fit.code, 0) << fit.err;
  EXPECT_NE(fit.out.find("fp8 nt rows 16-byte aligned"), std::string::npos) << fit.out;
  const std::string plan = "sweep --m 3000 --n 2048 --k 4096 --layout nt --dry-run --perf-model '" + model +
                           "' --gpu h100-sxm --wide --db '" + none + "'";
  const CliRun tensor = run(plan + " --dtype fp8 --backend cublaslt");
  ASSERT_EQ(tensor.code, 0) << tensor.err;
  EXPECT_NE(tensor.out.find("1 of 1 points"), std::string::npos) << tensor.out;
  const CliRun row = run(plan + " --dtype fp8 --recipe row --backend cublaslt");
  ASSERT_EQ(row.code, 0) << row.err;
  EXPECT_NE(row.out.find("not predicted: the model holds fp8 GEMMs of the tensor recipe"), std::string::npos) << row.out;
  // bf16 was fitted on cuBLAS: cuBLASLt's kernels are not what it predicts.
  const CliRun lt = run(plan + " --dtype bf16 --backend cublaslt");
  EXPECT_EQ(lt.code, 2);
  EXPECT_NE(lt.err.find("--backend: 'cublaslt': the performance model predicts cuBLAS's own choice of kernel"),
            std::string::npos) << lt.err;
  EXPECT_FALSE(std::filesystem::exists(none));
}

}  // namespace
}  // namespace shapescope
