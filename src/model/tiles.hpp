// Tile and wave quantization (DESIGN.md "tile grid", "slots", "waves"): how a kernel's CTA tile cuts
// the output, how many CTAs the GPU holds at once, and how full the last wave is. Pure C++.
#pragma once
#include <cstdint>
#include <string>

#include "model/device_profile.hpp"

namespace shapescope {

struct TileGrid {
  int tile_m = 0, tile_n = 0;      // the CTA tile along the user's M and N
  int64_t tiles_m = 0, tiles_n = 0;
  int64_t batch = 1, splits = 1;   // split-K slices: each output tile is computed `splits` times
  int64_t tiles = 0;               // tiles_m * tiles_n * batch * splits: the work items
  double efficiency = 0;           // M*N / (tiles_m*tile_m * tiles_n*tile_n): useful share of the tiles
};
TileGrid tile_grid(int64_t m, int64_t n, int64_t batch, int tile_m, int tile_n, int64_t splits = 1);

// One CTA's appetite, from the launch record.
struct CtaResources {
  int threads = 0;
  int registers_per_thread = 0;
  int64_t smem_bytes = 0;   // static + dynamic
  int cluster_size = 1;     // CTAs per thread-block cluster
};

struct Occupancy {
  int ctas_per_sm = 0;
  std::string limiter;      // "registers", "shared memory", "threads", "CTAs per SM"; "" when 0
};
// CTAs of this kind that one SM holds at once. Registers are allocated per warp in units of 256
// (each thread's count rounded up to a multiple of 8) from four 16384-register sub-partitions;
// shared memory adds the driver's per-CTA reservation.
Occupancy occupancy(const SmLimits& limits, int regs_per_sm, int64_t smem_per_sm,
                    const CtaResources& cta);

// Slots of a data-parallel kernel: SMs x CTAs per SM, rounded down to whole clusters (a cluster's
// CTAs are co-scheduled; GPC boundaries can lower the real figure further).
int64_t data_parallel_slots(int sm_count, const Occupancy& occupancy, int cluster_size);

struct Waves {
  int64_t work = 0;         // tiles (or CTAs, when the tile is unknown)
  int64_t slots = 0;
  double waves = 0;         // work / slots
  int64_t rounds = 0;       // ceil(waves): what the GPU actually pays for
  double efficiency = 0;    // work / (rounds * slots)
  // Work items one more wave would have held for free: rounds * slots - work.
  int64_t idle_slots() const { return rounds * slots - work; }
};
Waves waves_of(int64_t work, int64_t slots);

}  // namespace shapescope
