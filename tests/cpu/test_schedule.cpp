// kernels/schedule.cuh's host side, without a GPU: the plans make_plan() draws, and the segments
// the kernels walk with Cursor. Host-compilable: cuda_runtime_api.h (CUDA's include directory
// comes with the GPU library) defines __host__ and __device__ as nothing for a host compiler, and
// the device-only flag helpers are inline functions this file never calls.
#include "kernels/schedule.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace shapescope::kernels::schedule {
namespace {

// A plan of `tiles` tiles of 1 x 1 in one row (tile t is column t), each of k_blocks K-blocks.
Plan plan_of(Kind kind, int tiles, int k_blocks, int resident) {
  return make_plan(kind, 1, tiles, k_blocks, 1, 1, 1, 1, resident);
}

std::string describe(const Plan& p) {
  std::ostringstream out;
  out << "tiles " << p.tiles << ", k_blocks " << p.k_blocks << ", ctas " << p.ctas
      << ", sk_tiles " << p.sk_tiles;
  return out.str();
}

std::vector<Segment> segments_of(const Plan& plan, int cta) {
  std::vector<Segment> out;
  Cursor cursor(plan, cta);
  Segment s;
  while (cursor.next(plan, s)) out.push_back(s);
  return out;
}

// A plan's grid, for one comparison per plan: tiles_n, tiles_m, tiles, k_blocks, ctas, sk_tiles.
std::vector<int> grid_of(const Plan& p) {
  return {p.tiles_n, p.tiles_m, p.tiles, p.k_blocks, p.ctas, p.sk_tiles};
}

TEST(Schedule, DataParallelAndPersistentPlans) {
  // 4096^3 in 128 x 128 x 64 tiles: 32 x 32 tiles, 64 K-blocks; 264 CTAs resident (an H200).
  EXPECT_EQ(grid_of(make_plan(Kind::kDataParallel, 4096, 4096, 4096, 1, 128, 128, 64, 264)),
            (std::vector<int>{32, 32, 1024, 64, 1024, 0}));
  EXPECT_EQ(grid_of(make_plan(Kind::kPersistent, 4096, 4096, 4096, 1, 128, 128, 64, 264)),
            (std::vector<int>{32, 32, 1024, 64, 264, 0}));
  // Fewer tiles than resident CTAs: one CTA per tile. Ragged edges round up; the batch counts.
  EXPECT_EQ(grid_of(make_plan(Kind::kPersistent, 129, 257, 1, 3, 128, 128, 64, 264)),
            (std::vector<int>{3, 2, 18, 1, 18, 0}));
}

TEST(Schedule, StreamKSplitsTheLastTwoWavesOnly) {
  constexpr int kG = 264;  // resident CTAs
  // T % G == 0: full waves only, nothing to split.
  for (int waves : {1, 2, 5})
    EXPECT_EQ(grid_of(plan_of(Kind::kStreamK, waves * kG, 64, kG)),
              (std::vector<int>{waves * kG, 1, waves * kG, 64, kG, 0}));
  // T = 2G + 10: the partial wave (10) and one full wave before it.
  EXPECT_EQ(grid_of(plan_of(Kind::kStreamK, 2 * kG + 10, 64, kG)),
            (std::vector<int>{2 * kG + 10, 1, 2 * kG + 10, 64, kG, kG + 10}));
  // 4096^3 in 128 x 128 tiles: 1024 tiles = 3 waves of 264 + 232.
  EXPECT_EQ(grid_of(make_plan(Kind::kStreamK, 4096, 4096, 4096, 1, 128, 128, 64, kG)),
            (std::vector<int>{32, 32, 1024, 64, kG, 232 + kG}));
  // G < T < 2G: every tile is split.
  EXPECT_EQ(grid_of(plan_of(Kind::kStreamK, kG + 5, 64, kG)),
            (std::vector<int>{kG + 5, 1, kG + 5, 64, kG, kG + 5}));
  // T < G: every tile is split, over min(G, iterations) CTAs.
  EXPECT_EQ(grid_of(plan_of(Kind::kStreamK, 10, 64, kG)),
            (std::vector<int>{10, 1, 10, 64, kG, 10}));
  EXPECT_EQ(grid_of(plan_of(Kind::kStreamK, 10, 3, kG)), (std::vector<int>{10, 1, 10, 3, 30, 10}));
  EXPECT_EQ(grid_of(plan_of(Kind::kStreamK, 1, 1, kG)), (std::vector<int>{1, 1, 1, 1, 1, 1}));
}

TEST(Schedule, CoordNumbersTilesAlongNThenMThenBatch) {
  // 3 x 2 tiles of 64 x 128 per matrix, 2 matrices.
  const Plan p = make_plan(Kind::kPersistent, 100, 300, 8, 2, 64, 128, 32, 132);
  ASSERT_EQ(grid_of(p), (std::vector<int>{3, 2, 12, 1, 12, 0}));
  const auto at = [&](int tile) {
    const TileCoord c = p.coord<64, 128>(tile);
    return std::vector<int>{c.m0, c.n0, c.batch};
  };
  EXPECT_EQ(at(0), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(at(2), (std::vector<int>{0, 256, 0}));
  EXPECT_EQ(at(3), (std::vector<int>{64, 0, 0}));
  EXPECT_EQ(at(7), (std::vector<int>{0, 128, 1}));
  EXPECT_EQ(at(11), (std::vector<int>{64, 256, 1}));
}

// The plans the segment checks below run over: every kind, tile counts around 0, 1 and 2 waves
// and multiples of them, K-block counts of 1 (every segment a whole tile) to many.
std::vector<Plan> plans_to_walk() {
  std::vector<Plan> plans;
  for (int resident : {1, 7, 16})
    for (int tiles : {1, 2, 5, 6, 7, 8, 13, 14, 15, 16, 17, 21, 31, 32, 33, 40, 48, 53})
      for (int k_blocks : {1, 2, 3, 7, 64})
        for (Kind kind : {Kind::kDataParallel, Kind::kPersistent, Kind::kStreamK})
          plans.push_back(plan_of(kind, tiles, k_blocks, resident));
  return plans;
}

// Every (tile, K-block) is computed by exactly one CTA, segments are non-empty runs inside their
// tile, every CTA has work, and stream-K's split is even: ranges differ by at most one iteration.
TEST(Schedule, CursorsCoverEveryIterationOnce) {
  for (const Plan& plan : plans_to_walk()) {
    std::vector<int> seen(size_t(plan.tiles) * size_t(plan.k_blocks), 0);
    int64_t min_range = INT64_MAX, max_range = 0;
    for (int cta = 0; cta < plan.ctas; ++cta) {
      const std::vector<Segment> segments = segments_of(plan, cta);
      EXPECT_FALSE(segments.empty()) << describe(plan) << ": CTA " << cta << " has no work";
      int64_t range = 0;
      for (const Segment& s : segments) {
        ASSERT_GE(s.tile, 0) << describe(plan);
        ASSERT_LT(s.tile, plan.tiles) << describe(plan);
        ASSERT_GE(s.kb_begin, 0) << describe(plan);
        ASSERT_LT(s.kb_begin, s.kb_end) << describe(plan) << ": an empty segment";
        ASSERT_LE(s.kb_end, plan.k_blocks) << describe(plan);
        for (int kb = s.kb_begin; kb < s.kb_end; ++kb)
          ++seen[size_t(s.tile) * size_t(plan.k_blocks) + size_t(kb)];
        if (s.tile < plan.sk_tiles) {
          range += s.kb_end - s.kb_begin;
        } else {  // past the stream-K tiles, only whole tiles
          EXPECT_EQ(s.kb_begin, 0) << describe(plan);
          EXPECT_EQ(s.kb_end, plan.k_blocks) << describe(plan);
        }
      }
      if (plan.sk_tiles > 0) {
        min_range = std::min(min_range, range);
        max_range = std::max(max_range, range);
      }
    }
    for (size_t i = 0; i < seen.size(); ++i)
      ASSERT_EQ(seen[i], 1) << describe(plan) << ": tile " << i / size_t(plan.k_blocks)
                            << ", K-block " << i % size_t(plan.k_blocks);
    if (plan.sk_tiles > 0) {
      EXPECT_LE(max_range - min_range, 1) << describe(plan);
    }
  }
}

// A CTA publishes at most one partial, in its one slot: its contributor segment (the only kind
// that starts inside a tile) is its first. And the stream-K tiles come first, then whole tiles
// c + sk_tiles, + ctas, ...
TEST(Schedule, ContributorSegmentIsTheFirst) {
  for (const Plan& plan : plans_to_walk()) {
    for (int cta = 0; cta < plan.ctas; ++cta) {
      const std::vector<Segment> segments = segments_of(plan, cta);
      int whole = plan.sk_tiles + cta;
      for (size_t i = 0; i < segments.size(); ++i) {
        const Segment& s = segments[i];
        if (s.contributor()) {
          EXPECT_EQ(i, 0u) << describe(plan) << ": CTA " << cta;
        }
        if (s.tile >= plan.sk_tiles) {
          EXPECT_EQ(s.tile, whole) << describe(plan) << ": CTA " << cta;
          whole += plan.ctas;
        }
      }
      EXPECT_GE(whole, plan.tiles) << describe(plan) << ": CTA " << cta << " left tiles out";
    }
  }
}

// For each split tile, contributes() finds exactly the other CTAs that compute part of it: the
// owner (first K-block, not the last) waits for them and no others. A tile with more than one CTA
// has an owner; with at least as many tiles as CTAs it has exactly one contributor.
TEST(Schedule, OwnerWaitsForExactlyTheOtherContributors) {
  for (const Plan& plan : plans_to_walk()) {
    std::map<int, std::set<int>> ctas_of_tile;      // split tiles: the CTAs computing part of it
    std::map<int, std::pair<int, Segment>> owners;  // tile -> owner CTA, its segment
    for (int cta = 0; cta < plan.ctas; ++cta)
      for (const Segment& s : segments_of(plan, cta)) {
        if (s.kb_begin == 0 && s.kb_end == plan.k_blocks) continue;  // a whole tile
        ctas_of_tile[s.tile].insert(cta);
        if (s.owner_with_fixup(plan.k_blocks)) {
          EXPECT_EQ(owners.count(s.tile), 0u) << describe(plan) << ": two owners of " << s.tile;
          owners[s.tile] = {cta, s};
        } else {
          EXPECT_TRUE(s.contributor()) << describe(plan);
        }
      }
    for (const auto& [tile, ctas] : ctas_of_tile) {
      ASSERT_EQ(owners.count(tile), 1u) << describe(plan) << ": split tile " << tile
                                        << " has no owner";
      const int owner = owners[tile].first;
      EXPECT_EQ(owner, *ctas.begin()) << describe(plan) << ": the owner is the lowest CTA";
      std::set<int> waited;
      for (int d = owner + 1; contributes(plan, d, tile); ++d) waited.insert(d);
      std::set<int> others = ctas;
      others.erase(owner);
      EXPECT_EQ(waited, others) << describe(plan) << ": tile " << tile;
      if (plan.tiles >= plan.ctas) {
        EXPECT_EQ(others.size(), 1u) << describe(plan) << ": tile " << tile;
      }
    }
  }
}

// contributes() avoids the division of sk_begin(); both say the same, also where the products
// need 64 bits (K-blocks near 2^26: K near 2^31 in K-blocks of 32).
TEST(Schedule, ContributesMatchesSkBegin) {
  for (int k_blocks : {1, 5, 64, (1 << 26) - 3})
    for (int resident : {3, 132, 528})
      for (int tiles : {1, 2, resident - 1, resident + 1, 2 * resident - 1, 3 * resident + 7}) {
        const Plan p = plan_of(Kind::kStreamK, tiles, k_blocks, resident);
        for (int tile = 0; tile < p.sk_tiles; tile += std::max(1, p.sk_tiles / 17))
          for (int d = 0; d <= p.ctas; d += std::max(1, p.ctas / 23)) {
            const bool want = d < p.ctas && p.sk_begin(d) < int64_t(tile + 1) * p.k_blocks;
            ASSERT_EQ(contributes(p, d, tile), want)
                << describe(p) << ": d " << d << ", tile " << tile;
          }
      }
}

}  // namespace
}  // namespace shapescope::kernels::schedule
