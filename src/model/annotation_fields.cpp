#include "model/annotation_fields.hpp"

#include <fmt/format.h>

namespace shapescope {

namespace {

FieldValue optional_real(const std::optional<double>& value) {
  return value ? FieldValue(*value) : FieldValue();
}
// A count that is only meaningful when known (> 0).
FieldValue positive(int64_t value) { return value > 0 ? FieldValue(value) : FieldValue(); }
FieldValue positive_real(double value) { return value > 0 ? FieldValue(value) : FieldValue(); }
FieldValue text(const std::string& value) { return value.empty() ? FieldValue() : FieldValue(value); }

}  // namespace

std::vector<AnnotationField> annotation_fields(const Annotation& a) {
  const Alignment& al = a.alignment;
  const KernelTile& k = a.parsed;
  const bool has_kernel = a.main_kernel >= 0;
  const bool has_tile = a.grid.tiles > 0;
  const bool has_waves = a.waves.slots > 0 && a.waves.work > 0;
  const Roofline& r = a.roofline;
  return {
      {"align_m", al.m},
      {"align_n", al.n},
      {"align_k", al.k},
      {"lda_align_bytes", al.a.ld_bytes},
      {"ldb_align_bytes", al.b.ld_bytes},
      {"ldc_align_bytes", al.c.ld_bytes},
      {"a_base_align_bytes", al.a.base_bytes},
      {"b_base_align_bytes", al.b.base_bytes},
      {"c_base_align_bytes", al.c.base_bytes},
      {"aligned_16b", int64_t(al.ok())},
      {"kernel", has_kernel ? text(k.core) : FieldValue()},
      {"kernel_family", has_kernel ? text(k.family) : FieldValue()},
      {"kernel_says", has_kernel ? text(describe(k)) : FieldValue()},
      {"tile_source", text(a.tile_source)},
      {"tile_m", has_tile ? FieldValue(int64_t(a.grid.tile_m)) : FieldValue()},
      {"tile_n", has_tile ? FieldValue(int64_t(a.grid.tile_n)) : FieldValue()},
      {"tile_k", positive(k.tile_k)},
      {"stages", positive(k.stages)},
      {"splits", has_kernel ? FieldValue(a.splits) : FieldValue()},
      {"split_source", text(a.split_source)},
      // A grouped call's tiles are no rectangle: only their number.
      {"tiles_m", has_tile && a.group_grids.empty() ? FieldValue(a.grid.tiles_m) : FieldValue()},
      {"tiles_n", has_tile && a.group_grids.empty() ? FieldValue(a.grid.tiles_n) : FieldValue()},
      {"tiles", has_tile ? FieldValue(a.grid.tiles) : FieldValue()},
      {"tile_efficiency", has_tile ? FieldValue(a.grid.efficiency) : FieldValue()},
      {"launched_ctas", positive(a.launched_ctas)},
      {"cluster_size", has_kernel ? FieldValue(int64_t(a.cluster_size)) : FieldValue()},
      {"ctas_per_sm", positive(a.occupancy.ctas_per_sm)},
      {"occupancy_limiter", text(a.occupancy.limiter)},
      {"data_parallel_slots", positive(a.data_parallel_slots)},
      {"persistent", a.data_parallel_slots > 0 ? FieldValue(int64_t(a.persistent)) : FieldValue()},
      {"slots", has_waves ? FieldValue(a.waves.slots) : FieldValue()},
      {"waves", has_waves ? FieldValue(a.waves.waves) : FieldValue()},
      {"wave_rounds", has_waves ? FieldValue(a.waves.rounds) : FieldValue()},
      {"wave_efficiency", has_waves ? FieldValue(a.waves.efficiency) : FieldValue()},
      {"waves_over", text(a.waves_over)},
      {"flops", r.flops},
      {"min_bytes", r.min_bytes},
      {"intensity", r.intensity},
      {"bound", text(std::string(to_string(r.bound)))},
      {"peak_tflops", positive_real(r.peak_tflops.value)},
      {"peak_source", text(r.peak_tflops.source)},
      {"bandwidth_gbs", positive_real(r.bandwidth_gbs.value)},
      {"bandwidth_source", text(r.bandwidth_gbs.source)},
      {"attainable_tflops", positive_real(r.attainable_tflops)},
      {"pct_peak", optional_real(r.pct_peak ? std::optional<double>(*r.pct_peak * 100) : std::nullopt)},
      {"pct_roof", optional_real(r.pct_roof ? std::optional<double>(*r.pct_roof * 100) : std::nullopt)},
      {"regret", optional_real(a.regret)},
      {"best_algo", text(a.best_algo)},
  };
}

}  // namespace shapescope

namespace shapescope {

DerivedTable annotation_table() {
  DerivedTable table;
  table.version = kModelVersion;
  for (const AnnotationField& field : annotation_fields(Annotation{})) table.columns.emplace_back(field.name);
  return table;
}

}  // namespace shapescope
