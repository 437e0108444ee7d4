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
#include "report/pad_report_parts.hpp"
#include "report/pad_saving_text.hpp"
#include "report/prediction_text.hpp"
#include "report/table.hpp"

namespace shapescope {
namespace {

using namespace pad_text;

constexpr std::string_view kLeftOut =
    "the attention core (QK^T, softmax, PV), which runs as a fused FlashAttention kernel, not as cuBLAS GEMMs; "
    "and everything else that is not a GEMM";
constexpr std::string_view kCopyNote =
    "tokens copy: each GEMM's activation input (and, training, each output gradient) copied into a zero-padded "
    "buffer at run time; an upper bound: padding the batch when loading data copies nothing, but every other op "
    "then runs on the padded tokens too";

// Why choice i has no candidate ("" when it has some).
std::string note_of(const PadAnalysis& a, size_t i, Times times) {
  return a.candidates[i].empty() ? no_candidate_note(a.choices[i], a.probes[i], times) : "";
}

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

void print_gemms(std::ostream& out, const PadAnalysis& a, const PadResult& result) {
  const Times measured = times_of(result);
  const GemmTimeOf& time_of = result.time_of;
  std::vector<std::string> header = {"linear", "pass", "layout", "M", "N", "K", "count", "GFLOP/step"};
  if (measured) {
    header.push_back(time_header(measured));
    header.push_back(noise_header(measured));
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
                     a.before ? fmt::format(", GEMM time {} ({} {:.1f} %)", us_or_ms(a.before->us),
                                            measured.predicted ? "predicted, error" : "noise", a.before->noise * 100)
                              : "");
  table.print(out, {0, 1, 2}, {{noise_header(measured), {1}}, {"GFLOP/step", {2}}, {"count", {3}}});
}

std::string copy_cell(const Evaluation& e) {
  if (e.candidate.choice != Choice::kTokens) return "-";
  if (e.copy_us) return fmt::format("{} ({:.1f} us)", in_mib(e.copy_bytes, 1), *e.copy_us);
  return in_mib(e.copy_bytes, 1);
}

void print_candidates(std::ostream& out, const ModelConfig& config, const PadAnalysis& a, Times measured) {
  const double params = weight_parameters(config);
  const double flops = step_flops(a.gemms);
  std::vector<std::string> header = {"dimension", "now", "new", "GEMM size", "touched", "extra params", "extra FLOPs",
                                     "copy [MiB]"};
  const bool paired = measured && any_paired(a.evaluations);
  if (measured)
    for (const std::string& h : saving_headers(paired, measured.predicted)) header.push_back(h);
  header.push_back("why");
  Table table(header);
  std::vector<std::string> notes;
  for (size_t i = 0; i < a.choices.size(); ++i) {
    const ChoiceInfo& c = a.choices[i];
    if (!note_of(a, i, measured).empty()) notes.push_back(fmt::format("{} {}: {}", c.name, c.value, note_of(a, i, measured)));
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
                     : measured.predicted ? "saving = predicted GEMM time per step before - after (the tokens copy not "
                                            "priced); error: the model's, on each side"
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

std::string recommendation_text(const ModelConfig& config, const PadAnalysis& a, size_t i, Times times) {
  const ChoiceInfo& c = a.choices[i];
  const std::vector<Evaluation>& ev = a.evaluations[i];
  const std::string head = fmt::format("{} {}", c.name, c.value);
  if (const std::optional<std::string> leave = not_padded_text(head, ev, a.best[i], note_of(a, i, times), times)) return *leave;
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

Json analysis_json(const ModelConfig& config, const PadAnalysis& a, const PadResult& result) {
  const Times measured = times_of(result);
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
    if (result.predicted) {
      x["predicted"] = gemm_prediction_json(*result.predicted, g.problem);
    } else if (measured) {
      const std::optional<GemmTime> t = result.time_of(g.problem);
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
    d["note"] = note_of(a, i, measured);
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
      r["text"] = recommendation_text(config, a, i, measured);
      d["recommendation"] = std::move(r);
    }
    dims.push_back(std::move(d));
  }
  j["dimensions"] = std::move(dims);
  return j;
}

}  // namespace

void write_pad_json(std::ostream& out, const ModelConfig& config, const PadRequest& o, const PadResult& result) {
  Json j;
  j["mode"] = mode_name(times_of(result));
  j["model"] = model_json(config);
  j["train"] = o.train;
  j["tp"] = o.tp;
  j["dtype"] = o.dtype_name;
  j["backend"] = to_string(o.backend);
  j["left_out"] = kLeftOut;
  j["copy_note"] = kCopyNote;
  if (result.measured) j["source"] = source_json(o, *result.measured);
  if (result.predicted) j["prediction"] = perf_model_json(*result.predicted->model, "--predict");
  Json steps = Json::array();
  for (const PadAnalysis& a : result.analyses) steps.push_back(analysis_json(config, a, result));
  j["steps"] = std::move(steps);
  write_json_document(out, std::move(j), "PadResult", [&](std::ostream& text) { write_pad_text(text, config, o, result); });
}

void write_pad_text(std::ostream& out, const ModelConfig& config, const PadRequest& o, const PadResult& result) {
  const Times measured = times_of(result);
  print_model(out, config, o);
  if (result.measured) out << source_text(o, *result.measured) << "\n";
  if (result.measured) print_paired(out, *result.measured);
  if (result.predicted) print_prediction(out, *result.predicted, distinct_problems(result.analyses, true));
  for (const PadAnalysis& a : result.analyses) {
    print_gemms(out, a, result);
    print_candidates(out, config, a, measured);
    if (!measured) continue;
    out << fmt::format("\nrecommendation for {} tokens ({})\n", a.step.tokens,
                       recommendation_head(any_paired(a.evaluations), measured.predicted));
    for (size_t i = 0; i < a.choices.size(); ++i) out << "  " << recommendation_text(config, a, i, measured) << "\n";
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
