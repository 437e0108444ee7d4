// Grouped calls (an MoE layer's experts as one cublasGemmGroupedBatchedEx): the problem's groups,
// where each group's operands sit in the buffers, the store's text for them, and the annotation:
// per-group tiles and the waves of the whole group over the kernel's slots.
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "core/backend_kind.hpp"
#include "core/problem.hpp"
#include "model/annotate.hpp"
#include "model/workload.hpp"
#include "report/annotation_text.hpp"

namespace shapescope {
namespace {

// Mixtral's w1 forward with tokens routed to four experts: M per expert, N 14336, K 4096, nt.
Problem experts(const std::vector<int64_t>& rows, int64_t n = 14336, int64_t k = 4096) {
  std::vector<Problem> groups;
  for (int64_t m : rows) groups.push_back(packed_problem(m, n, k, Layout::kNT, DType::kBf16));
  return grouped_problem(groups);
}

TEST(GroupedProblem, GroupsFlopsAndText) {
  const Problem p = experts({1025, 1025, 1024, 1023});
  ASSERT_TRUE(p.grouped());
  EXPECT_EQ(p.groups.size(), 4u);
  EXPECT_EQ(p.m, 1025);  // the first group's, as the fields say
  EXPECT_DOUBLE_EQ(p.flops(), 2.0 * (1025 + 1025 + 1024 + 1023) * 14336.0 * 4096.0);
  EXPECT_EQ(p.shape_string(), "grouped 4 x 1023..1025x14336x4096");
  EXPECT_EQ(p.group(3).m, 1023);
  EXPECT_EQ(p.group(3).lda, 4096);
  EXPECT_FALSE(p.group(3).grouped());
  EXPECT_FALSE(experts({512}).grouped());  // one group is an ordinary problem
  EXPECT_FALSE(p == experts({1025, 1024, 1025, 1023}));
  EXPECT_TRUE(p == experts({1025, 1025, 1024, 1023}));
}

TEST(GroupedProblem, OperandsFollowEachOtherOnSixteenByteStarts) {
  // A: M x K rows of 4096 bf16 (8 KiB): each group starts where the previous ends.
  const Problem p = experts({3, 5, 2}, 24, 8);
  EXPECT_EQ(p.group_a_start(0), 0);
  EXPECT_EQ(p.group_a_start(1), 3 * 8);
  EXPECT_EQ(p.group_a_start(2), 8 * 8);
  EXPECT_EQ(p.a_span(), 10 * 8);
  // B (nt: stored N x K, 24 x 8 per expert) and C (M x N).
  EXPECT_EQ(p.group_b_start(2), 2 * 24 * 8);
  EXPECT_EQ(p.group_c_start(1), 3 * 24);
  // Odd sizes: starts are rounded up to 16 bytes (8 bf16 elements), as separate allocations would be.
  const Problem odd = experts({3, 5}, 7, 5);  // A groups of 15 and 25 elements, C groups of 21 and 35
  EXPECT_EQ(odd.group_a_start(1), 16);
  EXPECT_EQ(odd.a_span(), 16 + 32);
  EXPECT_EQ(odd.group_c_start(1), 24);
  EXPECT_EQ(odd.bytes(), (odd.a_span() + odd.b_span()) * 2 + odd.c_span() * 2);
}

TEST(GroupedProblem, StoreTextRoundTripsAndRefusesDamage) {
  const Problem p = experts({1025, 1023}, 28672, 4096);
  const std::string text = groups_text(p);
  EXPECT_EQ(text, "1025x28672x4096/4096/4096/28672;1023x28672x4096/4096/4096/28672");
  const auto back = parse_groups(text);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, p.groups);
  EXPECT_EQ(groups_text(experts({7})), "");
  EXPECT_TRUE(parse_groups("")->empty());
  for (const char* bad : {"1x2x3/1/1/1", "1x2x3/1/1/1;", "1x2x3/1/1/1;4x5x6/1/1", "1x2x3/1/1/1;4x5x6/1/1/0",
                          "a", "1x2x3/1/1/1;4x5x6/1/1/1x", ";", "1x2x-3/1/1/1;4x5x6/1/1/1"})
    EXPECT_FALSE(parse_groups(bad)) << bad;
}

TEST(GroupedProblem, OnlySameDtypeLayoutUnbatchedGroupsGroup) {
  std::vector<Problem> mixed = {packed_problem(8, 8, 8, Layout::kNT, DType::kBf16),
                                packed_problem(8, 8, 8, Layout::kNN, DType::kBf16)};
  EXPECT_THROW(grouped_problem(mixed), Error);
  mixed[1] = packed_problem(8, 8, 8, Layout::kNT, DType::kBf16, 2);
  EXPECT_THROW(grouped_problem(mixed), Error);
  EXPECT_THROW(grouped_problem({}), Error);
}

// A persistent nvjet kernel of 132 CTAs (one per SM of an H100) running the four experts: its
// 256x128 tile is 128 along the user's M and 256 along N (cuBLAS's column-major frame).
StoredPoint grouped_point(const Problem& p) {
  StoredPoint point;
  point.device.gpu_name = "NVIDIA H100 80GB HBM3";
  point.device.gpu_uuid = "GPU-test";
  point.device.sm_count = 132;
  point.device.cc_major = 9;
  point.device.cc_minor = 0;
  point.key.backend = BackendKind::kCublasGrouped;
  point.key.algo = "default";
  point.key.problem = p;
  point.result.timing.median_us = 1000;
  KernelRecord k;
  k.name = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT";
  k.grid_x = 2;
  k.grid_y = 66;
  k.grid_z = 1;
  k.block_x = 384;
  k.block_y = k.block_z = 1;
  k.cluster_x = 1;
  k.cluster_y = 2;
  k.cluster_z = 1;
  k.registers = 168;
  k.dynamic_smem = 200 * 1024;
  k.duration_us = 990;
  point.kernels = {k};
  return point;
}

TEST(GroupedAnnotation, PerGroupTilesAndTheWavesOfTheWholeGroup) {
  const Problem p = experts({1025, 1025, 1024, 1023});
  const Annotation a = annotate(grouped_point(p), model_gpu(grouped_point(p).device));
  ASSERT_EQ(a.group_grids.size(), 4u);
  EXPECT_EQ(a.grid.tile_m, 128);
  EXPECT_EQ(a.grid.tile_n, 256);
  // 1025 rows: 9 tiles of 128 (the ninth holds one row); 1024: 8; 1023: 8. N: 14336 / 256 = 56.
  EXPECT_EQ(a.group_grids[0].tiles, 9 * 56);
  EXPECT_EQ(a.group_grids[2].tiles, 8 * 56);
  EXPECT_EQ(a.grid.tiles, (9 + 9 + 8 + 8) * 56);
  EXPECT_NEAR(a.grid.efficiency, (1025.0 + 1025 + 1024 + 1023) / (34.0 * 128), 1e-12);
  EXPECT_EQ(a.grid.tiles_m, 0);  // no rectangle
  EXPECT_TRUE(a.persistent);
  EXPECT_EQ(a.waves.slots, 132);
  EXPECT_EQ(a.waves.work, 34 * 56);
  EXPECT_NEAR(a.waves.waves, 34.0 * 56 / 132, 1e-12);
  EXPECT_EQ(a.main_kernels, 1);
  EXPECT_EQ(grid_cell(a), "1904:4g");
  EXPECT_EQ(describe_tile_line(a), "tile 128x256: 4 groups, 9x56 + 9x56 + 8x56 + 8x56 = 1904 tiles, 94% useful");
  // The roofline counts every group's bytes: (M x K + K x N) x 2 + M x N x 2 per expert.
  double bytes = 0;
  for (int64_t m : {1025, 1025, 1024, 1023}) bytes += 2.0 * (m * 4096.0 + 4096.0 * 14336 + m * 14336.0);
  EXPECT_DOUBLE_EQ(a.roofline.min_bytes, bytes);
  EXPECT_DOUBLE_EQ(a.roofline.flops, p.flops());
}

TEST(GroupedAnnotation, PredictionSumsTheGroupsToo) {
  const Problem p = experts({300, 100});
  const Annotation a = predict(p, model_gpu(*find_profile("h100-sxm")), 128, 256);
  ASSERT_EQ(a.group_grids.size(), 2u);
  EXPECT_EQ(a.grid.tiles, (3 + 1) * 56);
  EXPECT_EQ(a.waves.work, 224);
}

}  // namespace
}  // namespace shapescope
