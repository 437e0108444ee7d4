// The grouped schedule's table (kernels/05_wgmma_tma_grouped.cuh, Schedule::kGrouped): a grouped call's
// groups as one list of output tiles, numbered group by group and, inside a group, along M or N
// first (the M form: see tile()) or along N first (the K form). Two forms: groups that differ in M (an MoE layer's
// forward and input-gradient calls, nn and nt: the same N and K, M rows each; make_group_table) and
// groups that differ in K (its weight-gradient call, tn: the same M and N, K_g each;
// make_group_table_k).
// The kernel gets it by value among its parameters (__grid_constant__: ~8 KiB, so no launch needs a
// copy to the device and a graph capture bakes it in) and finds a tile's group by binary search over
// the groups' first tiles. Plain C++ with host-device helpers, so that CPU tests check the mapping.
#pragma once
#include <cstdint>
#include <vector>

#if defined(__CUDACC__)
#define SHAPESCOPE_HOST_DEVICE __host__ __device__
#else
#define SHAPESCOPE_HOST_DEVICE
#endif

namespace shapescope::kernels {

// One output tile of the grouped schedule: rows [m0, min(m0 + BM, m_end)) of the groups' stacked
// rows (group g's rows start where group g - 1's end), columns n0 .., of group `group`.
struct GroupTile {
  int m0, n0, group, m_end;
};

struct GroupTable {
  // 2 x 4 x 1025 + 16 B of kernel parameters (CUDA 12.1+ takes up to 32764 B of them).
  static constexpr int kMaxGroups = 1024;
  int count = 0;    // groups, 1 .. kMaxGroups
  int tiles_n = 0;  // tiles along N (every group has the same N)
  // tile_start[g]: the first tile of group g; row_start[g]: its first row among all groups' rows
  // (the K form: its first k, its first row of A and B among all groups' stacked K rows);
  // [count]: the total tiles and rows.
  int tile_start[kMaxGroups + 1];
  int row_start[kMaxGroups + 1];
  // 0: groups differ in M. > 0: the K form; every group has m rows (and the same number of tiles),
  // group g's C rows are rows g x m .. g x m + m - 1 of one matrix of all groups' rows. (After the
  // arrays: the M form's kernels read the table at the offsets they had before the K form.)
  int m = 0;
  // The M form: inside a group along M first (nt) or along N first (nn); see tile().
  int along_m = 0;

  int tiles() const { return tile_start[count]; }
  int rows() const { return row_start[count]; }

  // The group of tile t (0 <= t < tiles()): the last g with tile_start[g] <= t. Every group has at
  // least one row, so the starts increase strictly.
  SHAPESCOPE_HOST_DEVICE int group_of(int t) const {
    int lo = 0, hi = count - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (tile_start[mid] <= t)
        lo = mid;
      else
        hi = mid - 1;
    }
    return lo;
  }

  // The M form, inside a group along M first when along_m (nt: the group's tiles of one block of B
  // rows follow each other, so the CTAs that read it run at once and the second reads it from L2;
  // along N, six groups' B, 11.5 MiB each at 2816 x 2048, were in flight: an H100 ran the call
  // 1.25x slower), else along N first (nn, where B's columns are read in boxes of 64 and CTAs side by
  // side along N share its rows: along M it ran 1.1x slower).
  template <int BM, int BN>
  SHAPESCOPE_HOST_DEVICE GroupTile tile(int t) const {
    const int g = group_of(t);
    const int local = t - tile_start[g];
    const int tiles_m = (tile_start[g + 1] - tile_start[g]) / tiles_n;
    const int mi = along_m ? local % tiles_m : local / tiles_n, ni = along_m ? local / tiles_m : local % tiles_n;
    return {row_start[g] + mi * BM, ni * BN, g, row_start[g + 1]};
  }

  // The K form (m > 0): every group has tile_start[1] tiles, so tile t's group is a division.
  SHAPESCOPE_HOST_DEVICE int group_of_k(int t) const { return t / tile_start[1]; }
  // The K form: group g's K (>= 1).
  SHAPESCOPE_HOST_DEVICE int k(int g) const { return row_start[g + 1] - row_start[g]; }
  // The K form: tile t's rows among all groups' stacked C rows (group g's start at g x m), its
  // columns, group, and the end of its group's rows.
  template <int BM, int BN>
  SHAPESCOPE_HOST_DEVICE GroupTile tile_k(int t) const {
    const int g = group_of_k(t);
    const int local = t - g * tile_start[1];
    return {g * m + local / tiles_n * BM, local % tiles_n * BN, g, (g + 1) * m};
  }
};

// The table of groups of rows[g] rows each (each >= 1, at most kMaxGroups groups, totals below
// 2^31: the registry's unsupported() checks), N columns, BM x BN tiles.
inline GroupTable make_group_table(const std::vector<int64_t>& rows, int n, int bm, int bn, bool along_m = false) {
  GroupTable t;
  t.along_m = along_m ? 1 : 0;
  t.count = int(rows.size());
  t.tiles_n = (n + bn - 1) / bn;
  t.tile_start[0] = 0;
  t.row_start[0] = 0;
  for (int g = 0; g < t.count; ++g) {
    const int64_t tiles_m = (rows[size_t(g)] + bm - 1) / bm;
    t.tile_start[g + 1] = t.tile_start[g] + int(tiles_m * t.tiles_n);
    t.row_start[g + 1] = t.row_start[g] + int(rows[size_t(g)]);
  }
  return t;
}

// The K form's table: groups of k[g] (each >= 1) x m rows x n columns, BM x BN tiles (at most
// kMaxGroups groups, all groups' K, C rows and tiles below 2^31: the registry's unsupported() checks).
inline GroupTable make_group_table_k(const std::vector<int64_t>& k, int m, int n, int bm, int bn) {
  GroupTable t;
  t.count = int(k.size());
  t.tiles_n = (n + bn - 1) / bn;
  t.m = m;
  const int per_group = (m + bm - 1) / bm * t.tiles_n;
  t.tile_start[0] = 0;
  t.row_start[0] = 0;
  for (int g = 0; g < t.count; ++g) {
    t.tile_start[g + 1] = t.tile_start[g] + per_group;
    t.row_start[g + 1] = t.row_start[g] + int(k[size_t(g)]);
  }
  return t;
}

}  // namespace shapescope::kernels

#undef SHAPESCOPE_HOST_DEVICE
