// pad of a trace or GEMM list (views/pad_sizes.hpp): no config names the dimensions, so the sizes of
// its GEMMs are the knobs; the same tables and recommendation as a model's pad (pad_report.cpp).
#include <fmt/format.h>

#include <algorithm>

#include "common/units.hpp"
#include "report/json_schema.hpp"
#include "report/output.hpp"
#include "report/pad_report.hpp"
#include "report/pad_report_parts.hpp"
#include "report/pad_saving_text.hpp"
#include "report/prediction_text.hpp"

namespace shapescope {
namespace {

using namespace pad_text;

std::string size_note(const SizePadResult& r, size_t i) {
  return r.candidates[i].empty() ? no_candidate_note(r.choices[i], r.probes[i], times_of(r)) : "";
}

// Where a size appears: each use when there are few ("N of 12288x50257x768 nt, M of ..."), else how
// many GEMMs have it as M, N and K.
std::string uses_text(const SizePadResult& r, const DimensionKnob& k) {
  std::string out;
  if (k.uses.size() <= 3) {
    for (const DimensionUse& u : k.uses)
      out += fmt::format("{}{} of {}", out.empty() ? "" : ", ", dim_name(u.dim), r.workload.gemms[u.gemm].shape_text());
    return out;
  }
  int64_t per_dim[3] = {0, 0, 0};
  for (const DimensionUse& u : k.uses) per_dim[u.dim == Dim::kM ? 0 : u.dim == Dim::kN ? 1 : 2] += 1;
  for (int d = 0; d < 3; ++d)
    if (per_dim[d] > 0) out += fmt::format("{}{} of {}", out.empty() ? "" : ", ", "MNK"[d], per_dim[d]);
  return out + " GEMMs";
}

std::string size_header(const SizePadResult& r) {
  const Workload& w = r.workload;
  return fmt::format("pad for {}{}: no config names its dimensions, so the sizes of its GEMMs are the knobs: {} sizes in "
                     "{} GEMMs, {} calls per step; a candidate changes every M, N and K equal to its size",
                     w.source, w.device.empty() ? "" : " (recorded on " + w.device + ")", r.knobs.size(), w.gemms.size(),
                     w.calls() / std::max<int64_t>(w.steps, 1));
}

void print_size_gemms(std::ostream& out, const SizePadResult& r, Times measured) {
  std::vector<std::string> header = {"GEMM", "origin", "calls/step", "GFLOP/step"};
  if (measured) header.insert(header.end(), {time_header(measured), noise_header(measured), "share [%]"});
  Table table(header);
  const double steps = double(std::max<int64_t>(r.workload.steps, 1));
  for (const WorkloadGemm& g : r.workload.gemms) {
    if (g.usually_fused) continue;
    std::vector<std::string> row = {g.shape_text(), g.origin, fixed(double(g.count) / steps, 0),
                                    fmt::format("{:.1f}", double(g.count) / steps * g.flops() / 1e9)};
    if (measured) {
      const std::optional<GemmTime> t = r.time_of(grouped_problem(g.problems));
      row.push_back(t ? fmt::format("{:.2f}", t->median_us) : "-");
      row.push_back(t ? fmt::format("{:.1f}", t->noise * 100) : "-");
      row.push_back(t && r.before ? fmt::format("{:.1f}", double(g.count) / steps * t->median_us / r.before->us * 100) : "-");
    }
    table.add(std::move(row));
  }
  out << fmt::format("\nGEMMs of one step: {:.2f} TFLOP{}\n", step_flops(r.workload) / 1e12,
                     r.before ? fmt::format(", GEMM time {} ({} {:.1f} %)", us_or_ms(r.before->us),
                                                measured.predicted ? "predicted, error" : "noise", r.before->noise * 100)
                              : "");
  table.print(out, {0, 1}, {{"origin", {0, 20}}, {noise_header(measured), {1}}, {"GFLOP/step", {2}}});
}

void print_size_candidates(std::ostream& out, const SizePadResult& r, Times measured) {
  std::vector<std::string> header = {"size", "uses", "new", "extra FLOPs"};
  const bool paired = measured && any_paired(r.evaluations);
  if (measured) {
    const std::vector<std::string> more = saving_headers(paired, measured.predicted);
    header.insert(header.end(), more.begin(), more.end());
  }
  header.push_back("why");
  Table table(header);
  std::vector<std::string> notes;
  const double flops = step_flops(r.workload);
  for (size_t i = 0; i < r.knobs.size(); ++i) {
    const int64_t value = r.knobs[i].value;
    notes.push_back(fmt::format("{} is {}{}", value, uses_text(r, r.knobs[i]),
                                size_note(r, i).empty() ? "" : "; " + size_note(r, i)));
    for (size_t j = 0; j < r.candidates[i].size(); ++j) {
      const PadCandidate& c = r.candidates[i][j];
      const Evaluation e = measured ? r.evaluations[i][j] : evaluate_size(r.workload, r.knobs[i], c, std::nullopt, std::nullopt);
      std::vector<std::string> row = {std::to_string(value), std::to_string(e.touched), std::to_string(c.value),
                                      signed_percent(e.extra_flops / flops)};
      if (measured) add_saving_cells(row, r.before, e, paired);
      row.push_back(c.why);
      table.add(std::move(row));
    }
  }
  out << fmt::format("\ncandidates: {}\n", measured.predicted ? "saving = predicted GEMM time per step before - after"
                                           : measured ? "saving = GEMM time per step before - after"
                                                      : "the GEMMs each one touches are measured before and after");
  table.print(out, {header.size() - 1},
              {{"why", {0, 0, 20}}, {"before [us]", {1}}, {"after [us]", {2}}, {"uses", {3}}, {"saving [us]", {4}}});
  for (const std::string& n : notes) out << "  " << n << "\n";
}

std::string size_recommendation_text(const SizePadResult& r, size_t i, Times times) {
  const std::string head = std::to_string(r.knobs[i].value);
  if (const std::optional<std::string> leave = not_padded_text(head, r.evaluations[i], r.best[i], size_note(r, i), times))
    return *leave;
  const Evaluation& e = r.evaluations[i][*r.best[i]];
  return fmt::format("{}: pad to {} ({}): GEMM time per step {} -> {} ({}), for {} FLOPs; it is {}", head,
                     e.candidate.value, e.candidate.why, us_or_ms(e.before_us), us_or_ms(e.after->us),
                     e.paired ? paired_saving_text(e) : signed_percent(-*e.saving_us / e.before_us),
                     signed_percent(e.extra_flops / step_flops(r.workload)),
                     uses_text(r, r.knobs[i]));
}

Json size_json(const SizePadResult& r, size_t i, Times measured) {
  const DimensionKnob& k = r.knobs[i];
  Json d;
  d["value"] = k.value;
  d["uses"] = uses_text(r, k);
  d["calls"] = k.calls;
  d["gflop"] = k.flops / 1e9;
  d["where"] = r.choices[i].where();
  d["note"] = size_note(r, i);
  Json cands = Json::array();
  for (size_t j = 0; j < r.candidates[i].size(); ++j) {
    const PadCandidate& c = r.candidates[i][j];
    const Evaluation e = measured ? r.evaluations[i][j] : evaluate_size(r.workload, k, c, std::nullopt, std::nullopt);
    Json x;
    x["value"] = c.value;
    x["why"] = c.why;
    x["touched"] = e.touched;
    x["extra_gflop"] = e.extra_flops / 1e9;
    if (measured) add_saving_json(x, r.before, e);
    cands.push_back(std::move(x));
  }
  d["candidates"] = std::move(cands);
  if (measured)
    d["recommendation"] = {{"action", action_of(r.evaluations[i], r.best[i])},
                           {"value", r.best[i] ? r.candidates[i][*r.best[i]].value : k.value},
                           {"text", size_recommendation_text(r, i, measured)}};
  return d;
}

}  // namespace

void write_pad_sizes_text(std::ostream& out, const PadRequest& o, const SizePadResult& r) {
  const Times measured = times_of(r);
  out << size_header(r) << "\n";
  if (r.measured) out << source_text(o, *r.measured) << "\n";
  if (r.measured) print_paired(out, *r.measured);
  if (r.predicted) {
    std::vector<Problem> gemms;
    for (const auto& [problem, backend] : size_pad_problems(r, o.backend, true)) gemms.push_back(problem);
    print_prediction(out, *r.predicted, gemms);
  }
  print_size_gemms(out, r, measured);
  print_size_candidates(out, r, measured);
  for (const std::string& n : r.workload.notes) out << "note: " << n << "\n";
  if (!measured) return;
  out << fmt::format("\nrecommendation ({})\n", recommendation_head(any_paired(r.evaluations), measured.predicted));
  for (size_t i = 0; i < r.knobs.size(); ++i) out << "  " << size_recommendation_text(r, i, measured) << "\n";
}

void write_pad_sizes_json(std::ostream& out, const PadRequest& o, const SizePadResult& r) {
  const Times measured = times_of(r);
  Json j;
  j["mode"] = mode_name(measured);
  j["source"] = r.workload.source;
  j["recorded_on"] = r.workload.device;
  j["backend"] = to_string(o.backend);
  if (r.measured) j["numbers"] = source_json(o, *r.measured);
  if (r.predicted) j["prediction"] = perf_model_json(*r.predicted->model, "--predict");
  j["tflop_per_step"] = step_flops(r.workload) / 1e12;
  j["gemm_time_us"] = r.before ? Json(r.before->us) : Json(nullptr);
  j["noise"] = r.before ? Json(r.before->noise) : Json(nullptr);
  Json sizes = Json::array();
  for (size_t i = 0; i < r.knobs.size(); ++i) sizes.push_back(size_json(r, i, measured));
  j["sizes"] = std::move(sizes);
  j["notes"] = r.workload.notes;
  write_json_document(out, std::move(j), "PadSizesResult", [&](std::ostream& text) { write_pad_sizes_text(text, o, r); });
}

}  // namespace shapescope
