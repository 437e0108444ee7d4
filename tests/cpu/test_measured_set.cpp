// MeasuredSet (views/measured_set.hpp) without a GPU: the points it reuses from a store are kept by
// their call, problem and backend typed, so that an fp8 GEMM's recipes and our kernels' variants at
// one size are told apart, and each wanted call is looked up once.
#include "views/measured_set.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "backends/variants.hpp"
#include "core/fp8_recipe.hpp"
#include "shape/plan.hpp"
#include "stored_points.hpp"

namespace shapescope {
namespace {

class MeasuredSetTest : public testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path() const { return (dir_ / "set.db").string(); }

 private:
  std::filesystem::path dir_ = [] {
    const auto d = std::filesystem::temp_directory_path() / ("measured_set_" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
};

void save_as(Store& store, const Problem& p, BackendKind backend, const std::string& algo, double median_us) {
  PointResult r;
  r.timing.median_us = r.timing.min_us = r.timing.max_us = r.timing.q1_us = r.timing.q3_us = median_us;
  r.timing.samples = 10;
  r.measured_at = "2026-11-25T00:00:00Z";
  r.command = "fixture";
  store.save_point(h100(), PointKey{backend, algo, p, false}, r);
}

TEST_F(MeasuredSetTest, KeepsPointsByTheirTypedCall) {
  const Problem square = form_problem(ProblemForm{}, 2048, 2048, 2048);
  ProblemForm fp8;
  fp8.dtype = DType::kFp8;
  fp8.layout = Layout::kNT;
  const Problem tensor = form_problem(fp8, 4096, 4096, 4096);
  fp8.recipe = *parse_recipe("row");
  const Problem row = form_problem(fp8, 4096, 4096, 4096);
  const BackendSpec dp = parse_backend_spec("custom:05_wgmma_tma:128x256:dp");
  const BackendSpec persistent = parse_backend_spec("custom:05_wgmma_tma:128x256:persistent");
  {
    Store store(path());
    save(store, square, BackendKind::kCublas, 10);
    save_as(store, square, BackendKind::kCustom, dp.algo(), 11);
    save_as(store, tensor, BackendKind::kCublasLt, "h0", 20);
    save_as(store, row, BackendKind::kCublasLt, "h0", 21);
  }
  Store store(path());
  const DeviceContext device = h100();
  MeasuredSet set(device, store, 10, ClockState::kSustained, nullptr, "test");
  set.read_only_from(store.load_all());
  const std::vector<SpecProblem> wanted = {{square, BackendSpec(BackendKind::kCublas)},
                                           {square, dp},
                                           {square, persistent},
                                           {square, dp},  // asked twice: one call
                                           {tensor, BackendSpec(BackendKind::kCublasLt)},
                                           {row, BackendSpec(BackendKind::kCublasLt)}};
  EXPECT_EQ(set.unknown(wanted), 5u);
  EXPECT_TRUE(set.measure_all(wanted, {}).empty());
  EXPECT_EQ(set.unknown(wanted), 1u);  // the persistent variant: not in the store
  ASSERT_TRUE(set.find(square, BackendKind::kCublas));
  EXPECT_EQ(set.find(square, BackendKind::kCublas)->result.timing.median_us, 10);
  ASSERT_TRUE(set.find(square, dp));
  EXPECT_EQ(set.find(square, dp)->result.timing.median_us, 11);
  EXPECT_FALSE(set.find(square, persistent));
  ASSERT_TRUE(set.find(tensor, BackendKind::kCublasLt));
  ASSERT_TRUE(set.find(row, BackendKind::kCublasLt));
  EXPECT_EQ(set.find(tensor, BackendKind::kCublasLt)->result.timing.median_us, 20);
  EXPECT_EQ(set.find(row, BackendKind::kCublasLt)->result.timing.median_us, 21);
  EXPECT_FALSE(set.find(square, BackendKind::kCublasLt));
  EXPECT_EQ(set.summary().reused, 4u);
}

}  // namespace
}  // namespace shapescope
