#include "report/pad_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "common/units.hpp"
#include "measure/measure.hpp"
#include "report/json_schema.hpp"
#include "report/output.hpp"
#include "report/pad_saving_text.hpp"
#include "report/table.hpp"

namespace shapescope {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kLeftOut =
    "the attention core (QK^T, softmax, PV), which runs as a fused FlashAttention kernel, not as cuBLAS GEMMs; "
    "and everything else that is not a GEMM";
constexpr std::string_view kCopyNote =
    "tokens copy: each GEMM's activation input (and, training, each output gradient) copied into a zero-padded "
    "buffer at run time; an upper bound: padding the batch when loading data copies nothing, but every other op "
    "then runs on the padded tokens too";

// Why a choice has no candidate. `probe` is the measured annotation of its probe GEMM, nullopt
// before measuring.
std::string no_candidate_note(const ChoiceInfo& c, const std::optional<Annotation>& probe) {
  if (c.gemm_size() % 256 != 0) return "no larger size the model allows";
  std::string why;
  if (!probe) {
    why = fmt::format("the {} of {} that fills its last wave is looked for after measuring it", dim_name(c.probe_dim),
                      c.probe_name);
  } else if (probe->grid.tiles <= 0 || probe->waves.slots <= 0) {
    why = fmt::format("the tile or the slots of {}'s kernel are unknown, so no size that fills its last wave is known",
                      c.probe_name);
  } else if (probe->waves.efficiency >= kFilledWave) {
    why = fmt::format("{}'s last wave is already {:.0f} % full", c.probe_name, probe->waves.efficiency * 100);
  } else {
    why = fmt::format("no {} of {} within +25 % that keeps its alignment fills its last wave", dim_name(c.probe_dim),
                      c.probe_name);
  }
  return fmt::format("{} is a multiple of 256, so no multiple above is proposed; {}", c.gemm_size(), why);
}

// Why choice i has no candidate ("" when it has some).
std::string note_of(const PadAnalysis& a, size_t i) {
  return a.candidates[i].empty() ? no_candidate_note(a.choices[i], a.probes[i]) : "";
}

// The pad tables: text columns left, numbers right (report/table.hpp).
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // `fit`: how it narrows to the terminal, by the header's names (report/table.hpp).
  void print(std::ostream& out, const std::set<size_t>& left,
             const std::vector<std::pair<std::string, ColumnFit>>& fit = {}) const {
    std::vector<bool> right(rows_.front().size(), true);
    for (size_t i : left) right[i] = false;
    write_table(out, rows_, right, "", fit.empty() ? std::vector<ColumnFit>() : fit_by_name(rows_.front(), fit));
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

std::string model_line(const ModelConfig& c) {
  if (c.family == Family::kGpt2)
    return fmt::format("vocab_size {}, n_embd {}, n_inner {}{}, n_head {} (head_dim {}), n_layer {}{}", c.vocab,
                       c.hidden, c.intermediate, c.intermediate_derived ? " (null: 4 x n_embd)" : "", c.heads,
                       c.head_dim, c.layers, c.tied_embeddings ? ", tied embeddings" : "");
  return fmt::format(
      "vocab_size {}, hidden_size {}, intermediate_size {}, num_attention_heads {} x head_dim {}{}, "
      "num_key_value_heads {}, num_hidden_layers {}{}",
      c.vocab, c.hidden, c.intermediate, c.heads, c.head_dim, c.head_dim_derived ? " (hidden / heads)" : "",
      c.kv_heads, c.layers, c.tied_embeddings ? ", tied embeddings" : "");
}

std::string family_text(const ModelConfig& c) {
  std::string layers;
  if (c.family == Family::kGpt2) {
    layers = "gpt2 layout (fused c_attn, c_fc/c_proj MLP)";
  } else if (c.family == Family::kGated) {
    layers = "llama layout (q/k/v/o_proj, gate/up/down_proj MLP)";
  } else {
    std::string names;
    for (const LinearLayer& l : linear_layers(c)) names += (names.empty() ? "" : ", ") + l.name;
    layers = fmt::format("{} layout ({})", family_name(c.family), names);
  }
  return c.model_type.empty() ? layers + ", guessed from its keys (no model_type)" : layers;
}

void print_model(std::ostream& out, const ModelConfig& c, const PadRequest& o) {
  out << fmt::format("model {}: {}{}\n", c.name, c.description.empty() ? "" : c.description + ", ", family_text(c));
  if (!c.source.empty()) out << "  values from " << c.source << "\n";
  out << "  " << model_line(c) << "\n";
  if (c.family == Family::kGpt2) {
    out << "  n_head moves with n_embd (head_dim kept)\n";
  } else if (c.head_dim_derived) {
    out << fmt::format("  candidates keep head_dim {}: a config that changes hidden_size or num_attention_heads must "
                       "then set head_dim\n",
                       c.head_dim);
  }
  out << fmt::format("GEMMs per rank: {}, {}, tp {}, backend {}\n",
                     !o.train ? "forward only (nt)"
                             : o.dtype == DType::kFp8 ? "training (per Linear: fwd, dgrad, wgrad, each in fp8's nt form)"
                                                      : "training (per Linear: fwd nt, dgrad nn, wgrad tn)", o.dtype_name, o.tp,
                     to_string(o.backend));
  out << "left out: " << kLeftOut << "\n";
}

void print_gemms(std::ostream& out, const PadAnalysis& a, const GemmTimeOf& time_of,
                 bool measured) {
  std::vector<std::string> header = {"linear", "pass", "layout", "M", "N", "K", "count", "GFLOP/step"};
  if (measured) {
    header.push_back("median [us]");
    header.push_back("noise [%]");
    header.push_back("share [%]");
  }
  Table table(header);
  int64_t calls = 0;
  for (const StepGemm& g : a.gemms) {
    calls += g.count;
    std::vector<std::string> row = {g.linear,
                                    std::string(pass_name(g.pass)),
                                    std::string(to_string(g.problem.layout)),
                                    std::to_string(g.problem.m),
                                    std::to_string(g.problem.n),
                                    std::to_string(g.problem.k),
                                    std::to_string(g.count),
                                    fmt::format("{:.1f}", double(g.count) * g.problem.flops() / 1e9)};
    if (measured) {
      const std::optional<GemmTime> t = time_of(g.problem);
      row.push_back(t ? fmt::format("{:.2f}", t->median_us) : "-");
      row.push_back(t ? fmt::format("{:.1f}", t->noise * 100) : "-");
      row.push_back(t && a.before ? fmt::format("{:.1f}", double(g.count) * t->median_us / a.before->us * 100) : "-");
    }
    table.add(std::move(row));
  }
  out << fmt::format("\nstep of {} tokens: {} GEMMs, {} calls, {:.2f} TFLOP per rank{}\n", a.step.tokens,
                     a.gemms.size(), calls, step_flops(a.gemms) / 1e12,
                     a.before ? fmt::format(", GEMM time {} (noise {:.1f} %)", us_or_ms(a.before->us),
                                            a.before->noise * 100)
                              : "");
  table.print(out, {0, 1, 2}, {{"noise [%]", {1}}, {"GFLOP/step", {2}}, {"count", {3}}});
}

std::string copy_cell(const Evaluation& e) {
  if (e.candidate.choice != Choice::kTokens) return "-";
  if (e.copy_us) return fmt::format("{} ({:.1f} us)", in_mib(e.copy_bytes, 1), *e.copy_us);
  return in_mib(e.copy_bytes, 1);
}

void print_candidates(std::ostream& out, const ModelConfig& config, const PadAnalysis& a, bool measured) {
  const double params = weight_parameters(config);
  const double flops = step_flops(a.gemms);
  std::vector<std::string> header = {"dimension", "now", "new", "GEMM size", "touched", "extra params", "extra FLOPs",
                                     "copy [MiB]"};
  const bool paired = measured && any_paired(a.evaluations);
  if (measured)
    for (const std::string& h : saving_headers(paired)) header.push_back(h);
  header.push_back("why");
  Table table(header);
  std::vector<std::string> notes;
  for (size_t i = 0; i < a.choices.size(); ++i) {
    const ChoiceInfo& c = a.choices[i];
    if (!note_of(a, i).empty()) notes.push_back(fmt::format("{} {}: {}", c.name, c.value, note_of(a, i)));
    for (size_t j = 0; j < a.candidates[i].size(); ++j) {
      const PadCandidate& p = a.candidates[i][j];
      const Evaluation e = measured ? a.evaluations[i][j]
                                    : evaluate(config, a.step, a.gemms, std::nullopt, p, std::nullopt, 0);
      std::vector<std::string> row = {c.name,
                                      std::to_string(c.value),
                                      std::to_string(p.value),
                                      std::to_string(p.gemm_size),
                                      std::to_string(e.touched),
                                      fmt::format("{} ({})", signed_si(e.extra_params), signed_percent(e.extra_params / params)),
                                      signed_percent(e.extra_flops / flops),
                                      copy_cell(e)};
      if (measured) add_saving_cells(row, a.before, e, paired);
      row.push_back(p.why);
      table.add(std::move(row));
    }
  }
  out << fmt::format("\ncandidates for {} tokens: each changes one dimension and keeps the others; {}\n", a.step.tokens,
                     !measured ? "the GEMMs each one touches are measured before and after"
                     : paired  ? "saving = GEMM time per step before - after (- the tokens copy), the step and the "
                                 "candidate measured in the same passes"
                               : "saving = GEMM time per step before - after (- the tokens copy)");
  // The saving and its noise or interval stay longest; the candidate's cost in parameters too.
  table.print(out, {0, header.size() - 1},
              {{"why", {0, 0, 20}}, {"copy [MiB]", {1}}, {"before [us]", {2}}, {"after [us]", {3}}, {"GEMM size", {4}},
               {"touched", {5}}, {"extra FLOPs", {6}}, {"saving [us]", {7}}});
  for (const std::string& n : notes) out << "  " << n << "\n";
  const bool tokens = std::any_of(a.candidates.begin(), a.candidates.end(), [](const auto& list) {
    return !list.empty() && list.front().choice == Choice::kTokens;
  });
  if (tokens) out << "  " << kCopyNote << "\n";
}

// The recommendation when it is not to pad: no candidate, none measured, or none saving enough;
// nullopt when `best` is a candidate to pad to.
std::optional<std::string> not_padded_text(const std::string& head, const std::vector<Evaluation>& ev,
                                           const std::optional<size_t>& best, const std::string& note) {
  if (ev.empty()) return fmt::format("{}: leave it ({})", head, note);
  const Evaluation* most = nullptr;  // the largest saving, significant or not
  for (const Evaluation& e : ev)
    if (e.saving_us && (!most || *e.saving_us > *most->saving_us)) most = &e;
  if (!most)
    return fmt::format("{}: unknown: its candidates' GEMMs have no time (not in the store read, or skipped when "
                       "measuring, each with its reason on stderr)", head);
  if (best) return std::nullopt;
  if (most->paired) return paired_leave_text(head, ev, *most);
  double floor = kMinGain;
  for (const Evaluation& e : ev) floor = std::max(floor, e.threshold);
  return fmt::format("{}: leave it: no candidate saves more than {:.1f} % of the step's GEMM time (the measured "
                     "noise, at least {:.0f} %); the most, {} ({}), {}",
                     head, floor * 100, kMinGain * 100, most->candidate.value, most->candidate.why,
                     *most->saving_us >= 0 ? "saves " + signed_percent(*most->saving_us / most->before_us).substr(1)
                                           : "costs " + signed_percent(-*most->saving_us / most->before_us).substr(1));
}

std::string recommendation_text(const ModelConfig& config, const PadAnalysis& a, size_t i) {
  const ChoiceInfo& c = a.choices[i];
  const std::vector<Evaluation>& ev = a.evaluations[i];
  const std::string head = fmt::format("{} {}", c.name, c.value);
  if (const std::optional<std::string> leave = not_padded_text(head, ev, a.best[i], note_of(a, i))) return *leave;
  const Evaluation& e = ev[*a.best[i]];
  std::string text =
      fmt::format("{}: pad to {} ({}): GEMM time per step {} -> {} ({}), for {} parameters ({}) and {} FLOPs", head,
                  e.candidate.value, e.candidate.why, us_or_ms(e.before_us), us_or_ms(e.after->us),
                  e.paired ? paired_saving_text(e) : signed_percent(-*e.saving_us / e.before_us), signed_si(e.extra_params),
                  signed_percent(e.extra_params / weight_parameters(config)), signed_percent(e.extra_flops / step_flops(a.gemms)));
  if (e.candidate.choice == Choice::kTokens) {
    text += e.copy_us ? fmt::format("; the saving counts a run-time copy of {} MiB per step ({:.1f} us at the "
                                    "calibrated bandwidth)",
                                    in_mib(e.copy_bytes, 1), *e.copy_us)
                      : fmt::format("; plus a run-time copy of {} MiB per step whose time is unknown (no calibrated "
                                    "bandwidth in the store: shapescope info --calibrate)",
                                    in_mib(e.copy_bytes, 1));
  }
  return text;
}

// --- JSON ---

Json model_json(const ModelConfig& c) {
  Json j;
  j["name"] = c.name;
  j["description"] = c.description;
  j["source"] = c.source;
  j["model_type"] = c.model_type;
  j["layout"] = family_name(c.family);
  j["vocab_size"] = c.vocab;
  j["hidden_size"] = c.hidden;
  j["intermediate_size"] = c.intermediate;
  j["num_attention_heads"] = c.heads;
  j["num_key_value_heads"] = c.kv_heads;
  j["head_dim"] = c.head_dim;
  j["num_hidden_layers"] = c.layers;
  j["tied_embeddings"] = c.tied_embeddings;
  j["weight_parameters"] = std::llround(weight_parameters(c));
  return j;
}

Json optional_number(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

// The same as JSON fields.
void add_saving_json(Json& x, const std::optional<StepTime>& before, const Evaluation& e) {
  x["before_us"] = before ? Json(before->us) : Json(nullptr);
  x["after_us"] = e.after ? Json(e.after->us) : Json(nullptr);
  x["saving_us"] = optional_number(e.saving_us);
  x["saving_pct"] = e.saving_us ? Json(*e.saving_us / e.before_us * 100) : Json(nullptr);
  x["threshold_pct"] = e.threshold * 100;
  x["significant"] = e.significant;
  if (!e.paired) return;
  x["before_us"] = e.before_us;  // the step in the paired passes
  x["saving_low_pct"] = e.saving_low_us / e.before_us * 100;
  x["saving_high_pct"] = e.saving_high_us / e.before_us * 100;
  x["pairs"] = e.paired->pairs;
  x["cannot_tell"] = e.cannot_tell;
}

Json analysis_json(const ModelConfig& config, const PadAnalysis& a, const GemmTimeOf& time_of,
                   bool measured) {
  Json j;
  j["tokens"] = a.step.tokens;
  j["tflop_per_step"] = step_flops(a.gemms) / 1e12;
  j["gemm_time_us"] = a.before ? Json(a.before->us) : Json(nullptr);
  j["noise"] = a.before ? Json(a.before->noise) : Json(nullptr);
  Json gemms = Json::array();
  for (const StepGemm& g : a.gemms) {
    Json x;
    x["linear"] = g.linear;
    x["pass"] = pass_name(g.pass);
    x["layout"] = to_string(g.problem.layout);
    x["m"] = g.problem.m;
    x["n"] = g.problem.n;
    x["k"] = g.problem.k;
    x["count"] = g.count;
    x["gflop"] = double(g.count) * g.problem.flops() / 1e9;
    if (measured) {
      const std::optional<GemmTime> t = time_of(g.problem);
      x["median_us"] = t ? Json(t->median_us) : Json(nullptr);
      x["noise"] = t ? Json(t->noise) : Json(nullptr);
    }
    gemms.push_back(std::move(x));
  }
  j["gemms"] = std::move(gemms);
  const double params = weight_parameters(config);
  const double flops = step_flops(a.gemms);
  Json dims = Json::array();
  for (size_t i = 0; i < a.choices.size(); ++i) {
    const ChoiceInfo& c = a.choices[i];
    Json d;
    d["name"] = c.name;
    d["value"] = c.value;
    d["gemm_size"] = c.gemm_size();
    d["where"] = c.where();
    d["note"] = note_of(a, i);
    Json cands = Json::array();
    for (size_t k = 0; k < a.candidates[i].size(); ++k) {
      const PadCandidate& p = a.candidates[i][k];
      const Evaluation e = measured ? a.evaluations[i][k]
                                    : evaluate(config, a.step, a.gemms, std::nullopt, p, std::nullopt, 0);
      Json x;
      x["value"] = p.value;
      x["gemm_size"] = p.gemm_size;
      x["why"] = p.why;
      x["touched"] = e.touched;
      x["extra_params"] = std::llround(e.extra_params);
      x["extra_params_pct"] = e.extra_params / params * 100;
      x["extra_gflop"] = e.extra_flops / 1e9;
      x["extra_flops_pct"] = e.extra_flops / flops * 100;
      x["copy_bytes"] = std::llround(e.copy_bytes);
      x["copy_us"] = optional_number(e.copy_us);
      if (measured) add_saving_json(x, a.before, e);
      cands.push_back(std::move(x));
    }
    d["candidates"] = std::move(cands);
    if (measured) {
      Json r;
      r["action"] = action_of(a.evaluations[i], a.best[i]);
      r["value"] = a.best[i] ? Json(a.candidates[i][*a.best[i]].value) : Json(c.value);
      r["text"] = recommendation_text(config, a, i);
      d["recommendation"] = std::move(r);
    }
    dims.push_back(std::move(d));
  }
  j["dimensions"] = std::move(dims);
  return j;
}

Json source_json(const PadRequest& o, const PadMeasurement& m) {
  const double gbs = copy_gbs(m);
  Json s;
  s["gpu"] = m.device.gpu_name;
  s["gpu_uuid"] = m.device.gpu_uuid;
  s["driver"] = m.device.driver;
  s["cublas"] = m.device.cublas;
  s["measured"] = m.measured;
  s["reused"] = m.reused;
  s["db"] = o.db;
  s["samples"] = o.samples;
  s["clock_state"] = to_string(o.clocks);
  s["clocks"] = clock_summary(m);
  s["copy_bandwidth_gbs"] = gbs > 0 ? Json(gbs) : Json(nullptr);
  Json runs = Json::array();
  for (const PairedStepsRun& r : m.paired)
    runs.push_back({{"dtype", to_string(r.dtype)}, {"calls", r.calls}, {"comparisons", r.comparisons},
                    {"passes", r.passes}, {"seconds", r.seconds}, {"clock_low_mhz", r.clock_low_mhz},
                    {"clock_median_mhz", r.clock_median_mhz}, {"clock_high_mhz", r.clock_high_mhz},
                    {"power_w", optional_number(r.power_w)}, {"settled", r.settle.settled},
                    {"warmup_s", r.settle.seconds}});
  s["paired"] = std::move(runs);
  s["not_paired"] = m.not_paired;
  return s;
}

// --- pad of a trace or GEMM list: the sizes are the knobs ---

std::string size_note(const SizePadResult& r, size_t i) {
  return r.candidates[i].empty() ? no_candidate_note(r.choices[i], r.probes[i]) : "";
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

void print_size_gemms(std::ostream& out, const SizePadResult& r, bool measured) {
  std::vector<std::string> header = {"GEMM", "origin", "calls/step", "GFLOP/step"};
  if (measured) header.insert(header.end(), {"median [us]", "noise [%]", "share [%]"});
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
                     r.before ? fmt::format(", GEMM time {} (noise {:.1f} %)", us_or_ms(r.before->us), r.before->noise * 100)
                              : "");
  table.print(out, {0, 1}, {{"origin", {0, 20}}, {"noise [%]", {1}}, {"GFLOP/step", {2}}});
}

void print_size_candidates(std::ostream& out, const SizePadResult& r, bool measured) {
  std::vector<std::string> header = {"size", "uses", "new", "extra FLOPs"};
  const bool paired = measured && any_paired(r.evaluations);
  if (measured) {
    const std::vector<std::string> more = saving_headers(paired);
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
  out << fmt::format("\ncandidates: {}\n", measured ? "saving = GEMM time per step before - after"
                                                     : "the GEMMs each one touches are measured before and after");
  table.print(out, {header.size() - 1},
              {{"why", {0, 0, 20}}, {"before [us]", {1}}, {"after [us]", {2}}, {"uses", {3}}, {"saving [us]", {4}}});
  for (const std::string& n : notes) out << "  " << n << "\n";
}

std::string size_recommendation_text(const SizePadResult& r, size_t i) {
  const std::string head = std::to_string(r.knobs[i].value);
  if (const std::optional<std::string> leave = not_padded_text(head, r.evaluations[i], r.best[i], size_note(r, i)))
    return *leave;
  const Evaluation& e = r.evaluations[i][*r.best[i]];
  return fmt::format("{}: pad to {} ({}): GEMM time per step {} -> {} ({}), for {} FLOPs; it is {}", head,
                     e.candidate.value, e.candidate.why, us_or_ms(e.before_us), us_or_ms(e.after->us),
                     e.paired ? paired_saving_text(e) : signed_percent(-*e.saving_us / e.before_us),
                     signed_percent(e.extra_flops / step_flops(r.workload)),
                     uses_text(r, r.knobs[i]));
}

Json size_json(const SizePadResult& r, size_t i, bool measured) {
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
                           {"text", size_recommendation_text(r, i)}};
  return d;
}

}  // namespace

void write_pad_json(std::ostream& out, const ModelConfig& config, const PadRequest& o, const PadResult& result) {
  const bool measured = result.measured.has_value();
  Json j;
  j["mode"] = measured ? "measured" : "dry-run";
  j["model"] = model_json(config);
  j["train"] = o.train;
  j["tp"] = o.tp;
  j["dtype"] = o.dtype_name;
  j["backend"] = to_string(o.backend);
  j["left_out"] = kLeftOut;
  j["copy_note"] = kCopyNote;
  if (measured) j["source"] = source_json(o, *result.measured);
  Json steps = Json::array();
  for (const PadAnalysis& a : result.analyses) steps.push_back(analysis_json(config, a, result.time_of, measured));
  j["steps"] = std::move(steps);
  write_json_document(out, std::move(j), "PadResult", [&](std::ostream& text) { write_pad_text(text, config, o, result); });
}

void write_pad_text(std::ostream& out, const ModelConfig& config, const PadRequest& o, const PadResult& result) {
  const bool measured = result.measured.has_value();
  print_model(out, config, o);
  if (measured) out << source_text(o, *result.measured) << "\n";
  if (measured) print_paired(out, *result.measured);
  for (const PadAnalysis& a : result.analyses) {
    print_gemms(out, a, result.time_of, measured);
    print_candidates(out, config, a, measured);
    if (!measured) continue;
    out << fmt::format("\nrecommendation for {} tokens ({})\n", a.step.tokens,
                       recommendation_head(any_paired(a.evaluations)));
    for (size_t i = 0; i < a.choices.size(); ++i) out << "  " << recommendation_text(config, a, i) << "\n";
  }
}

void write_pad_dry_run_cost(std::ostream& err, const PadRequest& o, const PadResult& result) {
  const std::vector<Problem> base = distinct_problems(result.analyses, false);
  const std::vector<Problem> all = distinct_problems(result.analyses, true);
  // Cold samples flush L2 first: ~50 MiB at ~2.5 TB/s, about 20 us each.
  constexpr double kFlushUs = 20;
  double us = 0;
  for (const Problem& p : all) us += (estimate_us(p) + kFlushUs) * o.samples;
  err << fmt::format(
      "to measure: {} distinct GEMMs ({} of the step, {} more for the candidates; sizes that fill a last wave "
      "are added after measuring), about {:.1f} s of GPU time at {} samples each (a rough model; points in "
      "the store are reused)\n",
      all.size(), base.size(), all.size() - base.size(), us / 1e6, o.samples);
}

}  // namespace shapescope

namespace shapescope {

void write_pad_sizes_text(std::ostream& out, const PadRequest& o, const SizePadResult& r) {
  const bool measured = r.measured.has_value();
  out << size_header(r) << "\n";
  if (measured) out << source_text(o, *r.measured) << "\n";
  if (measured) print_paired(out, *r.measured);
  print_size_gemms(out, r, measured);
  print_size_candidates(out, r, measured);
  for (const std::string& n : r.workload.notes) out << "note: " << n << "\n";
  if (!measured) return;
  out << fmt::format("\nrecommendation ({})\n", recommendation_head(any_paired(r.evaluations)));
  for (size_t i = 0; i < r.knobs.size(); ++i) out << "  " << size_recommendation_text(r, i) << "\n";
}

void write_pad_sizes_json(std::ostream& out, const PadRequest& o, const SizePadResult& r) {
  const bool measured = r.measured.has_value();
  Json j;
  j["mode"] = measured ? "measured" : "dry-run";
  j["source"] = r.workload.source;
  j["recorded_on"] = r.workload.device;
  j["backend"] = to_string(o.backend);
  if (measured) j["numbers"] = source_json(o, *r.measured);
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
