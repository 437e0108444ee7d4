#include "report/annotation_text.hpp"

#include <fmt/format.h>

#include "common/units.hpp"
#include "model/alignment.hpp"
#include "model/kernel_name.hpp"

namespace shapescope {

std::string tile_cell(const Annotation& a) {
  if (a.grid.tiles <= 0) return "-";
  return fmt::format("{}x{}", a.grid.tile_m, a.grid.tile_n);
}

std::string grid_cell(const Annotation& a) {
  if (a.grid.tiles <= 0) return "-";
  if (!a.group_grids.empty()) return fmt::format("{}:{}g", a.grid.tiles, a.group_grids.size());
  std::string cell = fmt::format("{}x{}", a.grid.tiles_m, a.grid.tiles_n);
  if (a.grid.batch > 1) cell += fmt::format("x{}b", a.grid.batch);
  if (a.grid.splits > 1) cell += fmt::format("x{}k", a.grid.splits);
  return cell;
}

std::string waves_cell(const Annotation& a) {
  if (a.waves.slots <= 0 || a.waves.work <= 0) return "-";
  return fmt::format("{:.2f}{}", a.waves.waves, a.persistent ? "p" : "");
}

std::string align_cell(const Annotation& a) {
  return fmt::format("{}/{}/{}", a.alignment.m, a.alignment.n, a.alignment.k);
}

std::string rule_cell(const Annotation& a) {
  std::string failing;
  if (!a.alignment.a.ok()) failing += 'A';
  if (!a.alignment.b.ok()) failing += 'B';
  if (!a.alignment.c.ok()) failing += 'C';
  return failing.empty() ? "ok" : failing;
}

std::string describe_tile_line(const Annotation& a) {
  if (a.grid.tiles <= 0) {
    return a.main_kernel >= 0 ? fmt::format("tile unknown ({})", describe(a.parsed)) : "tile unknown (no kernel recorded)";
  }
  if (!a.group_grids.empty()) {
    std::string groups;
    for (const TileGrid& g : a.group_grids) groups += fmt::format("{}{}x{}", groups.empty() ? "" : " + ", g.tiles_m, g.tiles_n);
    return fmt::format("tile {}x{}: {} groups, {} = {} tiles{}, {} useful", a.grid.tile_m, a.grid.tile_n,
                       a.group_grids.size(), groups, a.grid.tiles,
                       a.grid.splits > 1 ? fmt::format(" ({} split-K slices each)", a.grid.splits) : "",
                       percent_tight(a.grid.efficiency, 0));
  }
  std::string grid = fmt::format("{} x {}", a.grid.tiles_m, a.grid.tiles_n);
  if (a.grid.batch > 1) grid += fmt::format(" x batch {}", a.grid.batch);
  if (a.grid.splits > 1) grid += fmt::format(" x {} split-K slices", a.grid.splits);
  return fmt::format("tile {}x{}: {} = {} tiles, {} useful", a.grid.tile_m, a.grid.tile_n, grid, a.grid.tiles,
                     percent_tight(a.grid.efficiency, 0));
}

std::string describe_waves_line(const Annotation& a) {
  if (a.waves.slots <= 0 || a.waves.work <= 0) return "waves unknown";
  return fmt::format("waves {} {} / {} slots{} = {:.2f} -> {} ({} full)", a.waves.work, a.waves_over, a.waves.slots,
                     a.persistent ? " (persistent grid)" : "", a.waves.waves, a.waves.rounds,
                     percent_tight(a.waves.efficiency, 0));
}

std::string describe_alignment_line(const Annotation& a) {
  const Alignment& al = a.alignment;
  return fmt::format("align M/N/K {}/{}/{}; rows A/B/C {}/{}/{} B ({})", al.m, al.n, al.k, al.a.ld_bytes,
                     al.b.ld_bytes, al.c.ld_bytes, al.ok() ? "16-byte rule met" : "16-byte rule broken");
}

}  // namespace shapescope
