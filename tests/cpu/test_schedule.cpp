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
      << ", sk_tiles " << p.sk_tiles << ", sk_ctas " << p.sk_ctas;
  return out.str();
}

std::vector<Segment> segments_of(const Plan& plan, int cta) {
  std::vector<Segment> out;
  Cursor cursor(plan, cta);
  Segment s;
  while (cursor.next(plan, s)) out.push_back(s);
  return out;
}

// A segment as {tile, kb_begin, kb_end}, and a CTA's segments as a list of those, to compare.
std::vector<std::vector<int>> walk_of(const Plan& plan, int cta) {
  std::vector<std::vector<int>> out;
  for (const Segment& s : segments_of(plan, cta)) out.push_back({s.tile, s.kb_begin, s.kb_end});
  return out;
}

// A plan's grid, for one comparison per plan: tiles_n, tiles_m, tiles, k_blocks, ctas, sk_tiles,
// sk_ctas.
std::vector<int> grid_of(const Plan& p) {
  return {p.tiles_n, p.tiles_m, p.tiles, p.k_blocks, p.ctas, p.sk_tiles, p.sk_ctas};
}

TEST(Schedule, DataParallelAndPersistentPlans) {
  // 4096^3 in 128 x 128 x 64 tiles: 32 x 32 tiles, 64 K-blocks; 264 CTAs resident (an H200).
  EXPECT_EQ(grid_of(make_plan(Kind::kDataParallel, 4096, 4096, 4096, 1, 128, 128, 64, 264)),
            (std::vector<int>{32, 32, 1024, 64, 1024, 0, 0}));
  EXPECT_EQ(grid_of(make_plan(Kind::kPersistent, 4096, 4096, 4096, 1, 128, 128, 64, 264)),
            (std::vector<int>{32, 32, 1024, 64, 264, 0, 0}));
  // Fewer tiles than resident CTAs: one CTA per tile. Ragged edges round up; the batch counts.
  EXPECT_EQ(grid_of(make_plan(Kind::kPersistent, 129, 257, 1, 3, 128, 128, 64, 264)),
            (std::vector<int>{3, 2, 18, 1, 18, 0, 0}));
}

TEST(Schedule, StreamKSplitsTheLastWaveIntoPieces) {
  constexpr int kG = 264;  // resident CTAs
  // T % G == 0: full waves only, nothing to split.
  for (int waves : {1, 2, 5})
    EXPECT_EQ(grid_of(plan_of(Kind::kStreamK, waves * kG, 64, kG)),
              (std::vector<int>{waves * kG, 1, waves * kG, 64, kG, 0, 0}));
  // T = 2G + 10: only the partial wave's 10 tiles are split, each into 4 pieces (the most) on
  // 40 of the G CTAs.
  EXPECT_EQ(grid_of(plan_of(Kind::kStreamK, 2 * kG + 10, 64, kG)),
            (std::vector<int>{2 * kG + 10, 1, 2 * kG + 10, 64, kG, 10, 40}));
  // Pieces of at least 8 K-blocks: 12 K-blocks make 1 piece (the split tiles are whole), 16
  // make 2, 24 make 3, fewer than 8 make 1.
  EXPECT_EQ(grid_of(plan_of(Kind::kStreamK, 2 * kG + 10, 12, kG)),
            (std::vector<int>{2 * kG + 10, 1, 2 * kG + 10, 12, kG, 10, 10}));
  EXPECT_EQ(grid_of(plan_of(Kind::kStreamK, 2 * kG + 10, 16, kG)),
            (std::vector<int>{2 * kG + 10, 1, 2 * kG + 10, 16, kG, 10, 20}));
  EXPECT_EQ(grid_of(plan_of(Kind::kStreamK, 2 * kG + 10, 24, kG)),
            (std::vector<int>{2 * kG + 10, 1, 2 * kG + 10, 24, kG, 10, 30}));
  EXPECT_EQ(grid_of(plan_of(Kind::kStreamK, 2 * kG + 10, 7, kG)),
            (std::vector<int>{2 * kG + 10, 1, 2 * kG + 10, 7, kG, 10, 10}));
  // 4096^3 in 128 x 128 tiles: 1024 tiles = 3 waves of 264 + 232; no CTAs to spare for a
  // second piece.
  EXPECT_EQ(grid_of(make_plan(Kind::kStreamK, 4096, 4096, 4096, 1, 128, 128, 64, kG)),
            (std::vector<int>{32, 32, 1024, 64, kG, 232, 232}));
  // G < T < 2G: only the 5 tiles past the full wave are split.
  EXPECT_EQ(grid_of(plan_of(Kind::kStreamK, kG + 5, 64, kG)),
            (std::vector<int>{kG + 5, 1, kG + 5, 64, kG, 5, 20}));
  // The pieces are bounded by the CTAs there are, resident / r: G = 132, r = 60 -> 2 pieces;
  // r = 40 -> 3; r = 34 -> 3; r = 33 -> 4, on all 132 CTAs.
  EXPECT_EQ(grid_of(plan_of(Kind::kStreamK, 132 + 60, 64, 132)),
            (std::vector<int>{192, 1, 192, 64, 132, 60, 120}));
  EXPECT_EQ(grid_of(plan_of(Kind::kStreamK, 132 + 40, 64, 132)),
            (std::vector<int>{172, 1, 172, 64, 132, 40, 120}));
  EXPECT_EQ(grid_of(plan_of(Kind::kStreamK, 132 + 34, 64, 132)),
            (std::vector<int>{166, 1, 166, 64, 132, 34, 102}));
  EXPECT_EQ(grid_of(plan_of(Kind::kStreamK, 132 + 33, 64, 132)),
            (std::vector<int>{165, 1, 165, 64, 132, 33, 132}));
  // T < G: every tile is split, the grid is the r x pieces stream-K CTAs.
  EXPECT_EQ(grid_of(plan_of(Kind::kStreamK, 10, 64, kG)),
            (std::vector<int>{10, 1, 10, 64, 40, 10, 40}));
  EXPECT_EQ(grid_of(plan_of(Kind::kStreamK, 100, 64, kG)),
            (std::vector<int>{100, 1, 100, 64, 200, 100, 200}));
  EXPECT_EQ(grid_of(plan_of(Kind::kStreamK, 60, 64, 132)),
            (std::vector<int>{60, 1, 60, 64, 120, 60, 120}));
  EXPECT_EQ(grid_of(plan_of(Kind::kStreamK, 10, 3, kG)),
            (std::vector<int>{10, 1, 10, 3, 10, 10, 10}));
  EXPECT_EQ(grid_of(plan_of(Kind::kStreamK, 1, 1, kG)), (std::vector<int>{1, 1, 1, 1, 1, 1, 1}));

  // The segments of T = 2G + 10 (64 K-blocks): every CTA takes its whole tiles 10 + c, + G, then
  // CTAs 0 to 39 a quarter of tile c / 4 each; CTAs 40 on take whole tiles only.
  const Plan p = plan_of(Kind::kStreamK, 2 * kG + 10, 64, kG);
  using Walk = std::vector<std::vector<int>>;
  EXPECT_EQ(walk_of(p, 0), (Walk{{10, 0, 64}, {10 + kG, 0, 64}, {0, 0, 16}}));
  EXPECT_EQ(walk_of(p, 5), (Walk{{15, 0, 64}, {15 + kG, 0, 64}, {1, 16, 32}}));
  EXPECT_EQ(walk_of(p, 39), (Walk{{49, 0, 64}, {49 + kG, 0, 64}, {9, 48, 64}}));
  EXPECT_EQ(walk_of(p, 40), (Walk{{50, 0, 64}, {50 + kG, 0, 64}}));
  EXPECT_EQ(walk_of(p, kG - 1), (Walk{{kG + 9, 0, 64}, {2 * kG + 9, 0, 64}}));
  EXPECT_EQ(p.sk_begin(0), 0);
  EXPECT_EQ(p.sk_begin(40), 640);
  EXPECT_EQ(p.sk_begin(kG), 640);  // past sk_ctas: empty ranges at the end
  // 33 K-blocks in 4 pieces: 8, 8, 8 and 9 K-blocks.
  const Plan q = plan_of(Kind::kStreamK, kG + 1, 33, kG);
  ASSERT_EQ(grid_of(q), (std::vector<int>{kG + 1, 1, kG + 1, 33, kG, 1, 4}));
  EXPECT_EQ(walk_of(q, 0), (Walk{{1, 0, 33}, {0, 0, 8}}));
  EXPECT_EQ(walk_of(q, 3), (Walk{{4, 0, 33}, {0, 24, 33}}));
  EXPECT_EQ(walk_of(q, 4), (Walk{{5, 0, 33}}));
}

TEST(Schedule, CoordNumbersTilesAlongNThenMThenBatch) {
  // 3 x 2 tiles of 64 x 128 per matrix, 2 matrices.
  const Plan p = make_plan(Kind::kPersistent, 100, 300, 8, 2, 64, 128, 32, 132);
  ASSERT_EQ(grid_of(p), (std::vector<int>{3, 2, 12, 1, 12, 0, 0}));
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
// and multiples of them, K-block counts of 1 (every segment a whole tile) to many: stream-K in
// 1 to 4 pieces, split evenly (16, 64) or not (17, 33), on all the CTAs or on fewer
// (PlansToWalkHaveEveryStreamKShape checks that).
std::vector<Plan> plans_to_walk() {
  std::vector<Plan> plans;
  for (int resident : {1, 7, 16})
    for (int tiles : {1, 2, 5, 6, 7, 8, 13, 14, 15, 16, 17, 21, 31, 32, 33, 40, 48, 53})
      for (int k_blocks : {1, 2, 3, 7, 8, 16, 17, 24, 33, 64})
        for (Kind kind : {Kind::kDataParallel, Kind::kPersistent, Kind::kStreamK})
          plans.push_back(plan_of(kind, tiles, k_blocks, resident));
  return plans;
}

// The stream-K shapes the segment checks must see among plans_to_walk(): no split, 1 piece (the
// split tiles are whole), several pieces on fewer CTAs than the grid (sk_ctas < ctas), on all of
// it with whole tiles too, on all of it with fewer tiles than CTAs, and pieces of unequal length.
TEST(Schedule, PlansToWalkHaveEveryStreamKShape) {
  int none = 0, one_piece = 0, fewer_ctas = 0, all_ctas = 0, only_split = 0, uneven = 0;
  for (const Plan& plan : plans_to_walk()) {
    if (plan.sk_tiles == 0) {
      none += plan.sk_ctas == 0 && plan.tiles > 0;
      continue;
    }
    const bool pieces = plan.sk_ctas > plan.sk_tiles;
    one_piece += plan.sk_ctas == plan.sk_tiles;
    fewer_ctas += pieces && plan.sk_ctas < plan.ctas;
    all_ctas += pieces && plan.sk_ctas == plan.ctas && plan.sk_tiles < plan.tiles;
    only_split += pieces && plan.sk_ctas == plan.ctas && plan.sk_tiles == plan.tiles;
    uneven += pieces && plan.k_blocks % (plan.sk_ctas / plan.sk_tiles) != 0;
  }
  EXPECT_GT(none, 0);
  EXPECT_GT(one_piece, 0);
  EXPECT_GT(fewer_ctas, 0);
  EXPECT_GT(all_ctas, 0);
  EXPECT_GT(only_split, 0);
  EXPECT_GT(uneven, 0);
}

// Every (tile, K-block) is computed by exactly one CTA, segments are non-empty runs inside their
// tile, every CTA has work, and stream-K's split is even: the ranges of CTAs [0, sk_ctas) differ
// by at most one iteration, and CTAs from sk_ctas on have none.
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
      if (cta < plan.sk_ctas) {
        EXPECT_GT(range, 0) << describe(plan) << ": CTA " << cta;
        min_range = std::min(min_range, range);
        max_range = std::max(max_range, range);
      } else {
        EXPECT_EQ(range, 0) << describe(plan) << ": CTA " << cta << " is past sk_ctas";
      }
    }
    for (size_t i = 0; i < seen.size(); ++i)
      ASSERT_EQ(seen[i], 1) << describe(plan) << ": tile " << i / size_t(plan.k_blocks)
                            << ", K-block " << i % size_t(plan.k_blocks);
    if (plan.sk_ctas > 0) {
      EXPECT_LE(max_range - min_range, 1) << describe(plan);
    }
  }
}

// A CTA publishes at most one partial, in its one slot: its whole tiles c + sk_tiles, + ctas, ...
// come first, then its stream-K range, and its contributor segment (the only kind that starts
// inside a tile) is the first of that range.
TEST(Schedule, ContributorSegmentIsTheFirst) {
  for (const Plan& plan : plans_to_walk()) {
    for (int cta = 0; cta < plan.ctas; ++cta) {
      const std::vector<Segment> segments = segments_of(plan, cta);
      int whole = plan.sk_tiles + cta;
      size_t i = 0;
      for (; i < segments.size() && segments[i].tile >= plan.sk_tiles; ++i) {
        EXPECT_EQ(segments[i].tile, whole) << describe(plan) << ": CTA " << cta;
        EXPECT_FALSE(segments[i].contributor()) << describe(plan) << ": CTA " << cta;
        whole += plan.ctas;
      }
      EXPECT_GE(whole, plan.tiles) << describe(plan) << ": CTA " << cta << " left tiles out";
      const size_t first_sk = i;  // the stream-K range's first segment
      for (; i < segments.size(); ++i) {
        const Segment& s = segments[i];
        EXPECT_LT(s.tile, plan.sk_tiles)
            << describe(plan) << ": CTA " << cta << ", a whole tile after the stream-K range";
        if (s.contributor()) {
          EXPECT_EQ(i, first_sk) << describe(plan) << ": CTA " << cta;
        }
      }
    }
  }
}

// For each split tile, contributes() finds exactly the other CTAs that compute part of it: the
// owner (first K-block, not the last) waits for them and no others, and never for a CTA from
// sk_ctas on. With r split tiles on sk_ctas = r x pieces CTAs, split tile t is computed by CTAs
// t x pieces .. (t + 1) x pieces - 1 (the owner and pieces - 1 contributors); 1 piece splits
// nothing.
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
      for (int d = plan.sk_ctas; d < plan.ctas; ++d)
        EXPECT_FALSE(contributes(plan, d, tile)) << describe(plan) << ": tile " << tile
                                                 << ", CTA " << d << " is past sk_ctas";
    }
    if (plan.sk_tiles == 0) {
      EXPECT_TRUE(ctas_of_tile.empty()) << describe(plan);
      continue;
    }
    ASSERT_EQ(plan.sk_ctas % plan.sk_tiles, 0) << describe(plan);
    const int pieces = plan.sk_ctas / plan.sk_tiles;
    if (pieces == 1) {
      EXPECT_TRUE(ctas_of_tile.empty()) << describe(plan) << ": 1 piece splits nothing";
      continue;
    }
    EXPECT_EQ(int(ctas_of_tile.size()), plan.sk_tiles) << describe(plan);
    for (const auto& [tile, ctas] : ctas_of_tile) {
      std::set<int> want;
      for (int d = tile * pieces; d < (tile + 1) * pieces; ++d) want.insert(d);
      EXPECT_EQ(ctas, want) << describe(plan) << ": tile " << tile;
    }
  }
}

// contributes() avoids the division of sk_begin(); both say the same, also where the products
// need 64 bits (K-blocks near 2^26: K near 2^31 in K-blocks of 32), and both leave out the CTAs
// from sk_ctas on (the plans with 64 K-blocks and more have fewer stream-K CTAs than CTAs).
TEST(Schedule, ContributesMatchesSkBegin) {
  for (int k_blocks : {1, 5, 64, (1 << 26) - 3})
    for (int resident : {3, 132, 528})
      for (int tiles : {1, 2, resident - 1, resident + 1, 2 * resident - 1, 3 * resident + 7}) {
        const Plan p = plan_of(Kind::kStreamK, tiles, k_blocks, resident);
        std::vector<int> ds;  // a sample of the CTAs, and those around sk_ctas
        for (int d = 0; d <= p.ctas; d += std::max(1, p.ctas / 23)) ds.push_back(d);
        for (int d : {p.sk_ctas - 1, p.sk_ctas, p.sk_ctas + 1})
          if (d >= 0 && d <= p.ctas) ds.push_back(d);
        for (int tile = 0; tile < p.sk_tiles; tile += std::max(1, p.sk_tiles / 17))
          for (int d : ds) {
            const bool want = d < p.sk_ctas && p.sk_begin(d) < int64_t(tile + 1) * p.k_blocks;
            ASSERT_EQ(contributes(p, d, tile), want)
                << describe(p) << ": d " << d << ", tile " << tile;
          }
      }
}

// 05 walks a CTA's whole tiles (Cursor::whole_tiles) and then the piece it takes from a counter
// (Cursor::piece): any hand-out order must give the same segments as the fixed walk of 04, CTA c's
// whole tiles and piece c's range, and a piece past sk_ctas must be empty.
TEST(Schedule, WholeTilesAndPiecesSplitTheFixedWalk) {
  for (const Plan& plan : plans_to_walk()) {
    for (int cta = 0; cta < plan.ctas; ++cta) {
      std::vector<Segment> whole, piece;
      Segment s;
      for (Cursor c = Cursor::whole_tiles(plan, cta); c.next(plan, s);) whole.push_back(s);
      for (Cursor c = Cursor::piece(plan, cta); c.next(plan, s);) piece.push_back(s);
      for (const Segment& w : whole)
        EXPECT_TRUE(w.tile >= plan.sk_tiles && w.kb_begin == 0 && w.kb_end == plan.k_blocks)
            << describe(plan) << ", CTA " << cta;
      for (const Segment& p : piece) EXPECT_LT(p.tile, plan.sk_tiles) << describe(plan);
      std::vector<std::vector<int>> joined;
      for (const std::vector<Segment>* part : {&whole, &piece})
        for (const Segment& x : *part) joined.push_back({x.tile, x.kb_begin, x.kb_end});
      EXPECT_EQ(joined, walk_of(plan, cta)) << describe(plan) << ", CTA " << cta;
    }
    Segment s;
    Cursor past = Cursor::piece(plan, plan.sk_ctas);
    EXPECT_FALSE(past.next(plan, s)) << describe(plan) << ": piece sk_ctas must be empty";
  }
}

}  // namespace
}  // namespace shapescope::kernels::schedule
