// explain --json: the same content as write_explain_text, as fields (nlohmann-json).
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "report/explain_fp8.hpp"
#include "report/explain_report.hpp"
#include "report/json_schema.hpp"
#include "report/output.hpp"
#include "report/prediction_text.hpp"

namespace shapescope {
namespace {

using Json = nlohmann::ordered_json;

// What the paired passes did with a point: the reference, compared ("paired"), left with its survey
// time ("survey"), or not theirs to compare ("own time": the launch floor, the copy, a cast).
std::string pairing_of(const ExplainReport& r, const ExplainPoint& p) {
  if (p.role == Role::kTarget) return "reference";
  if (!paired_role(p.role)) return "own time";
  return p.paired ? "paired" : left_out_of_pairing(r.points.front(), p) ? "survey" : "not measured";
}

}  // namespace

void write_explain_json(std::ostream& out, const ExplainReport& report) {
  const Explanation& e = report.explanation;
  const Verdict& v = e.verdict;
  const auto label = [&](std::optional<size_t> i) { return i ? Json(report.points[*i].label) : Json(nullptr); };
  Json doc;
  doc["shape"] = report.shape;
  doc["mode"] = report.mode;
  doc["source"] = report.source;
  doc["verdict"] = {{"text", explain_verdict_line(report)}, {"against", label(v.against)}, {"time_ratio", v.time_ratio},
                    {"work_ratio", v.work_ratio}, {"throughput_ratio", v.throughput_ratio}, {"gap_us", v.gap_us},
                    {"unexplained_us", v.unexplained_us}, {"threshold", v.threshold},
                    {"bound", std::string(bound_name(v.bound))}, {"roof_us", v.roof_us}};
  Json effects = Json::array();
  for (const Effect& x : e.effects) {
    Json evidence = Json::array();
    for (size_t i : x.evidence.indices()) evidence.push_back(i);
    effects.push_back({{"effect", std::string(effect_name(x.kind))}, {"cost_us", x.cost_us}, {"measured", x.measured},
                       {"evidence", evidence}, {"detail", explain_effect_detail(report, x)}});
  }
  doc["effects"] = effects;
  Json points = Json::array();
  for (size_t i = 0; i < report.points.size(); ++i) {
    const ExplainPoint& p = report.points[i];
    Json supports = Json::array();
    for (const Effect& x : e.effects)
      if (const std::vector<size_t> named = x.evidence.indices(); std::find(named.begin(), named.end(), i) != named.end())
        supports.push_back(std::string(effect_name(x.kind)));
    const std::string body = report.stored[i] ? point_json(*report.stored[i], p.annotation) : annotation_json(p.annotation);
    points.push_back({{"index", i}, {"role", std::string(role_name(p.role))}, {"label", p.label},
                      {"why", p.candidate.why}, {"size", p.candidate.value}, {"of", p.of ? Json(*p.of) : Json(nullptr)},
                      {"supports", supports}, {"point", Json::parse(body)}});
    if (p.error) points.back()["error"] = numerical_error_json(*p.error);
    if (p.error_outliers) points.back()["error_outliers"] = numerical_error_json(*p.error_outliers);
    if (p.role == Role::kCast) points.back()["per_call"] = p.per_call;
    if (report.paired) points.back()["pairing"] = pairing_of(report, p);
    if (p.paired)
      points.back()["paired"] = {{"time_us", p.time_us ? Json(*p.time_us) : Json(nullptr)}, {"ratio", p.paired->median},
                                 {"low", p.paired->low}, {"high", p.paired->high}, {"pairs", p.paired->pairs},
                                 {"verdict", std::string(paired_verdict_name(judge(*p.paired)))}};
    if (report.prediction)
      points.back()["predicted"] = predicted_time_json(p.candidate.problem, report.prediction->points[i]);
  }
  doc["points"] = points;
  doc["regret"] = e.reference.regret ? Json(*e.reference.regret) : Json(nullptr);
  doc["fixed_kernel"] = report.fixed_kernel;
  doc["fixed_kernel_loss"] = e.reference.fixed_loss ? Json(*e.reference.fixed_loss) : Json(nullptr);
  Json fixes = Json::array();
  for (const Fix& f : e.fixes)
    fixes.push_back({{"text", explain_fix_text(report, size_t(&f - e.fixes.data()))}, {"point", label(f.point)}, {"copy", label(f.copy)},
                     {"time_us", f.time_us ? Json(*f.time_us) : Json(nullptr)}, {"speedup", f.speedup},
                     {"extra_flops", f.extra_flops}, {"extra_bytes", f.extra_bytes}, {"casts_us", f.casts_us},
                     {"per_step_us", f.per_step_us}});
  doc["fixes"] = fixes;
  doc["fp8"] = explain_fp8_json(report);
  Json not_measured = Json::array();
  for (const NotMeasured& m : report.missing) not_measured.push_back({{"what", m.what}, {"why", m.why}});
  doc["not_measured"] = not_measured;
  if (report.paired)
    doc["paired"] = {{"text", explain_paired_line(report)}, {"passes", report.paired->passes - report.paired->warmup_passes},
                     {"seconds", report.paired->seconds}, {"clock_low_mhz", report.paired->clock_low_mhz},
                     {"clock_median_mhz", report.paired->clock_median_mhz}, {"clock_high_mhz", report.paired->clock_high_mhz},
                     {"power_w", report.paired->power_w ? Json(*report.paired->power_w) : Json(nullptr)},
                     {"min_effect", kMinPairedEffect},
                     {"paired_points", report.pairing ? report.pairing->paired : 0},
                     {"survey_only_points", report.pairing ? report.pairing->survey_only : 0},
                     {"budget_s", report.pairing ? report.pairing->budget_s : 0.0},
                     {"pair_all_seconds", report.pairing ? report.pairing->pair_all_s : 0.0}};
  doc["wall_s"] = report.wall_s;
  if (report.prediction) doc["prediction"] = perf_model_json(*report.prediction->model, report.prediction->why);
  write_json_document(out, std::move(doc), "ExplainResult", [&](std::ostream& text) { write_explain_text(text, report); });
}

}  // namespace shapescope
