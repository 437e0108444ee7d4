#include "report/explain_report.hpp"

#include <fmt/format.h>

#include "report/output.hpp"
#include "report/table.hpp"

namespace shapescope {

namespace {

std::string percent(double fraction) { return fmt::format("{:.1f} %", fraction * 100); }

std::string time_cell(const ExplainPoint& p) { return p.time_us ? fmt::format("{:.2f}", *p.time_us) : "-"; }

std::string alignment_line(const Annotation& a) {
  std::string line = fmt::format("M/N/K divisible by {}/{}/{}; rows of A/B/C {}/{}/{}-byte aligned", a.alignment.m,
                                 a.alignment.n, a.alignment.k, a.alignment.a.ld_bytes, a.alignment.b.ld_bytes,
                                 a.alignment.c.ld_bytes);
  const std::string bad = a.alignment.violations();
  return line + (bad.empty() ? "; meets the 16-byte rule" : "; breaks the 16-byte rule: " + bad);
}

std::string slots_line(const Annotation& a) {
  if (a.waves.slots <= 0) return "unknown (no launch record)";
  std::string how = a.persistent
                        ? fmt::format("persistent grid of {} CTAs", a.launched_ctas)
                        : a.occupancy.limiter == "assumed"
                              ? fmt::format("{} CTA{}/SM assumed", a.occupancy.ctas_per_sm,
                                            a.occupancy.ctas_per_sm == 1 ? "" : "s")
                              : fmt::format("{} CTA{}/SM, limited by {}", a.occupancy.ctas_per_sm,
                                            a.occupancy.ctas_per_sm == 1 ? "" : "s", a.occupancy.limiter);
  if (a.cluster_size > 1) how += fmt::format(", clusters of {}", a.cluster_size);
  return fmt::format("{} {} on {} slots ({}) = {:.2f} waves: {} round{}, last wave {} full", a.waves.work,
                     a.waves_over, a.waves.slots, how, a.waves.waves, a.waves.rounds, a.waves.rounds == 1 ? "" : "s",
                     percent(a.waves.efficiency));
}

std::string roofline_line(const Annotation& a) {
  const Roofline& r = a.roofline;
  std::string line = fmt::format("{:.1f} GFLOP, {:.1f} MiB minimum traffic, {:.1f} FLOP/byte", r.flops / 1e9,
                                 r.min_bytes / (1 << 20), r.intensity);
  if (!r.bound.empty()) line += fmt::format(": {}-bound (ridge {:.0f} FLOP/byte)", r.bound, r.ridge);
  return line;
}

std::string peak_phrase(const Annotation& a) {
  const Roofline& r = a.roofline;
  if (!r.pct_peak) return "";
  return fmt::format(", {} of peak ({:.1f} TFLOP/s, {})", percent(*r.pct_peak), r.peak_tflops.value,
                     r.peak_tflops.source);
}

std::string tiles_cell(const Annotation& a) {
  return a.grid.tiles > 0 ? fmt::format("{}x{}", a.grid.tiles_m, a.grid.tiles_n) : "-";
}
// The table's waves cell plus the last wave's efficiency: "3.88p (97 %)".
std::string waves_eff_cell(const Annotation& a) {
  if (a.waves.slots <= 0 || a.waves.work <= 0) return "-";
  return fmt::format("{} ({:.0f} %)", waves_cell(a), a.waves.efficiency * 100);
}

// Left-aligned columns, two spaces apart, no trailing blanks.
void write_columns(std::ostream& out, const std::vector<std::vector<std::string>>& rows, const std::string& indent) {
  write_table(out, rows, {}, indent);
}

}  // namespace

namespace {

// The target's evidence, one row per fact: time, kernel, alignment, tile grid, launch, split-K,
// waves, roofline, regret.
std::vector<std::vector<std::string>> evidence_rows(const ExplainReport& report) {
  const ExplainPoint& t = report.points.front();
  const Annotation& a = t.annotation;
  std::vector<std::vector<std::string>> evidence;
  if (t.time_us) {
    evidence.push_back({"time", fmt::format("{:.2f} us (noise {:.1f} %), {:.1f} TFLOP/s{}", *t.time_us, t.noise * 100,
                                            t.tflops().value_or(0), peak_phrase(a))});
  }
  if (!t.kernel.empty()) {
    evidence.push_back({"kernel", fmt::format("{}: {}", t.kernel, describe(a.parsed))});
  } else if (report.mode != "model") {
    evidence.push_back({"kernel", "not recorded"});
  }
  evidence.push_back({"alignment", alignment_line(a)});
  if (a.grid.tiles > 0) {
    evidence.push_back(
        {"tile grid", fmt::format("tile {}x{} along M x N (from {}){}: {}x{}{}{} = {} tiles, {} of their area useful",
                                  a.grid.tile_m, a.grid.tile_n,
                                  a.tile_source.rfind("--", 0) == 0 ? a.tile_source : "the " + a.tile_source,
                                  report.mode == "model" ? "" : " in the user's row-major frame", a.grid.tiles_m,
                                  a.grid.tiles_n, a.grid.batch > 1 ? fmt::format("x{} batch", a.grid.batch) : "",
                                  a.grid.splits > 1 ? fmt::format("x{} split-K", a.grid.splits) : "", a.grid.tiles,
                                  percent(a.grid.efficiency))});
  } else {
    evidence.push_back({"tile grid", "unknown: the kernel's name does not say its tile"});
  }
  if (a.launched_ctas > 0) {
    std::string note;
    if (a.grid.tiles > 0 && a.persistent) {
      note = fmt::format(" (persistent: each CTA loops over ~{:.1f} tiles)", double(a.grid.tiles) / a.launched_ctas);
    } else if (a.grid.tiles > 0 && a.launched_ctas == a.grid.tiles) {
      note = " (= the model's tile count)";
    } else if (a.grid.tiles > 0 && a.launched_ctas > a.grid.tiles) {
      note = fmt::format(" (the {} tiles, padded by the kernel's rasterization; the extra CTAs have no tile)",
                         a.grid.tiles);
    }
    evidence.push_back({"launch", fmt::format("{} CTAs{}", a.launched_ctas, note)});
  }
  if (!a.split_source.empty()) {
    evidence.push_back({"split-K", a.splits > 1 ? fmt::format("{} slices ({})", a.splits, a.split_source)
                                                : a.split_source});
  }
  evidence.push_back({"waves", slots_line(a)});
  evidence.push_back({"roofline", roofline_line(a)});
  if (a.regret) {
    evidence.push_back({"regret", fmt::format("{} vs cuBLASLt's best timed choice ({})", percent(*a.regret),
                                              a.best_algo)});
  }
  return evidence;
}

}  // namespace

void write_explain_text(std::ostream& out, const ExplainReport& report) {
  const Explanation& e = report.explanation;
  const ExplainPoint& t = report.points.front();
  out << e.verdict << "\n";
  out << report.source << "\n\n";

  out << "evidence for " << t.label << "\n";
  write_columns(out, evidence_rows(report), "  ");

  if (!e.effects.empty()) {
    out << "\n" << (t.time_us ? "effects, by the time they cost" : "effects (model)") << "\n";
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < e.effects.size(); ++i) {
      const Effect& effect = e.effects[i];
      std::string cost = "-";
      if (effect.cost_us > 0 && t.time_us)
        cost = fmt::format("{:.2f} us ({:.0f} %)", effect.cost_us, effect.cost_us / *t.time_us * 100);
      rows.push_back({fmt::format("{}.", i + 1), effect.name, cost, effect.detail});
    }
    write_columns(out, rows, "  ");
  }

  out << "\nneighbours\n";
  std::vector<std::vector<std::string>> rows = {{"size", "why", "time [us]", "TFLOP/s", "speed-up", "16B", "tile",
                                                 "tiles", "waves (eff)", "kernel"}};
  for (const ExplainPoint& p : report.points) {
    std::string versus = "-";
    if (p.time_us && t.time_us) versus = fmt::format("{:.2f}x", *t.time_us / *p.time_us);
    rows.push_back({p.label, p.candidate.why.empty() ? "target" : p.candidate.why,
                    time_cell(p), p.tflops() ? fmt::format("{:.1f}", *p.tflops()) : "-", versus,
                    p.annotation.alignment.ok() ? "ok" : "no", tile_cell(p.annotation), tiles_cell(p.annotation),
                    waves_eff_cell(p.annotation), p.kernel.empty() ? "-" : p.kernel});
  }
  write_columns(out, rows, "  ");
  for (const std::string& why : report.missing) out << "  not measured: " << why << "\n";

  out << "\nfix: " << e.fix_text << "\n";
}

void write_explain_json(std::ostream& out, const ExplainReport& report) {
  const Explanation& e = report.explanation;
  auto point_object = [&](size_t i) {
    const ExplainPoint& p = report.points[i];
    std::string body = report.stored[i] ? point_json(*report.stored[i], p.annotation) : annotation_json(p.annotation);
    return fmt::format("{{\"label\": {}, \"why\": {}, \"size\": {}, \"point\": {}}}", json_string(p.label),
                       json_string(p.candidate.why), p.candidate.value, body);
  };
  std::string effects;
  for (const Effect& effect : e.effects) {
    if (!effects.empty()) effects += ", ";
    effects += fmt::format("{{\"effect\": {}, \"cost_us\": {}, \"detail\": {}}}", json_string(effect.name),
                           effect.cost_us > 0 ? fmt::format("{}", effect.cost_us) : "null",
                           json_string(effect.detail));
  }
  std::string neighbours;
  for (size_t i = 1; i < report.points.size(); ++i) {
    if (!neighbours.empty()) neighbours += ",\n    ";
    neighbours += point_object(i);
  }
  std::string missing;
  for (const std::string& m : report.missing) missing += (missing.empty() ? "" : ", ") + json_string(m);
  std::string fix = "null";
  if (e.fix) {
    fix = fmt::format("{{\"size\": {}, \"why\": {}, \"time_us\": {}, \"speedup\": {}, \"extra_flops\": {}, "
                      "\"extra_bytes\": {}}}",
                      e.fix->point.candidate.value, json_string(e.fix->point.candidate.why),
                      e.fix->point.time_us ? fmt::format("{}", *e.fix->point.time_us) : "null", e.fix->speedup,
                      e.fix->extra_flops, e.fix->extra_bytes);
  }
  out << fmt::format(
      "{{\"shape\": {}, \"mode\": {}, \"source\": {}, \"verdict\": {}, \"compared_with\": {},\n"
      "  \"target\": {},\n  \"effects\": [{}],\n  \"neighbours\": [\n    {}],\n  \"not_measured\": [{}],\n"
      "  \"fix\": {}, \"fix_text\": {}}}\n",
      json_string(report.shape), json_string(report.mode), json_string(report.source), json_string(e.verdict),
      e.compared_with ? json_string(e.compared_with->label) : "null", point_object(0), effects, neighbours, missing,
      fix, json_string(e.fix_text));
}

}  // namespace shapescope
