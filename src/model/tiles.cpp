#include "model/tiles.hpp"

#include <algorithm>

namespace shapescope {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

constexpr int kWarpSize = 32;
constexpr int kSubPartitions = 4;       // register file banks per SM; a warp lives in one
constexpr int kRegisterAllocUnit = 256; // registers per warp are allocated in these units

}  // namespace

TileGrid tile_grid(int64_t m, int64_t n, int64_t batch, int tile_m, int tile_n, int64_t splits) {
  TileGrid g;
  if (tile_m <= 0 || tile_n <= 0 || m <= 0 || n <= 0) return g;
  g.tile_m = tile_m;
  g.tile_n = tile_n;
  g.tiles_m = ceil_div(m, tile_m);
  g.tiles_n = ceil_div(n, tile_n);
  g.batch = std::max<int64_t>(batch, 1);
  g.splits = std::max<int64_t>(splits, 1);
  g.tiles = g.tiles_m * g.tiles_n * g.batch * g.splits;
  g.efficiency = double(m) * double(n) / (double(g.tiles_m * tile_m) * double(g.tiles_n * tile_n));
  return g;
}

Occupancy occupancy(const SmLimits& limits, int regs_per_sm, int64_t smem_per_sm,
                    const CtaResources& cta) {
  Occupancy o;
  if (cta.threads <= 0) return o;
  const int warps = (cta.threads + kWarpSize - 1) / kWarpSize;

  int by_threads = limits.max_threads_per_sm / (warps * kWarpSize);
  int by_ctas = limits.max_ctas_per_sm;

  int by_registers = by_ctas;
  if (cta.registers_per_thread > 0) {
    const int regs_per_warp =
        (cta.registers_per_thread * kWarpSize + kRegisterAllocUnit - 1) / kRegisterAllocUnit *
        kRegisterAllocUnit;
    const int warps_per_partition = regs_per_sm / kSubPartitions / regs_per_warp;
    by_registers = warps_per_partition * kSubPartitions / warps;
  }

  int by_smem = by_ctas;
  const int64_t smem = cta.smem_bytes + limits.reserved_smem_per_cta;
  if (cta.smem_bytes > 0) by_smem = int(smem_per_sm / smem);

  o.ctas_per_sm = by_ctas;
  o.limiter = "CTAs per SM";
  // Ties name the first resource in this order: the one a kernel author would look at first.
  const std::pair<int, const char*> limits_in_order[] = {
      {by_registers, "registers"}, {by_smem, "shared memory"}, {by_threads, "threads"}};
  for (const auto& [count, name] : limits_in_order) {
    if (count < o.ctas_per_sm) {
      o.ctas_per_sm = count;
      o.limiter = name;
    }
  }
  if (o.ctas_per_sm <= 0) {
    o.ctas_per_sm = 0;
  }
  return o;
}

int64_t data_parallel_slots(int sm_count, const Occupancy& occupancy, int cluster_size) {
  const int64_t ctas = int64_t(sm_count) * occupancy.ctas_per_sm;
  if (cluster_size <= 1) return ctas;
  return ctas / cluster_size * cluster_size;
}

Waves waves_of(int64_t work, int64_t slots) {
  Waves w;
  w.work = work;
  w.slots = slots;
  if (work <= 0 || slots <= 0) return w;
  w.waves = double(work) / double(slots);
  w.rounds = ceil_div(work, slots);
  w.efficiency = double(work) / double(w.rounds * slots);
  return w;
}

}  // namespace shapescope
