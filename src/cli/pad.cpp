// `shapescope pad --model NAME --tokens N [--train]`: pad-or-not for every dimension of a model that
// its GEMMs see. Lists the Linear GEMMs of one step, proposes padded sizes per dimension, measures
// every GEMM each candidate touches (reusing the store) and reports the GEMM time per step before
// and after, with the cost of each candidate. `--dry-run` lists GEMMs and candidates with no GPU.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "device/device.hpp"
#include "model/pad.hpp"
#include "report/annotated.hpp"
#include "shape/range.hpp"
#include "store/store.hpp"
#include "sweep/measure.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// A range of token counts is one analysis per count; past this it is almost surely a missing step.
constexpr size_t kMaxTokenCounts = 256;
constexpr int64_t kMaxTp = 1024;
constexpr std::string_view kLeftOut =
    "the attention core (QK^T, softmax, PV), which runs as a fused FlashAttention kernel, not as cuBLAS GEMMs; "
    "and everything else that is not a GEMM";
constexpr std::string_view kCopyNote =
    "tokens copy: each GEMM's activation input (and, training, each output gradient) copied into a zero-padded "
    "buffer at run time; an upper bound: padding the batch when loading data copies nothing, but every other op "
    "then runs on the padded tokens too";

struct PadOptions {
  std::string model;
  std::string config;
  std::string tokens;
  bool train = false;
  int64_t tp = 1;
  std::string dtype = "bf16";
  std::string backend = "cublas";
  int samples = 10;
  std::string db = "shapescope.db";
  int device = 0;
  bool json = false;
  bool dry_run = false;
};

// The presets: models/ of the source tree the binary was built from; for a binary moved away from
// it, models/ beside the folder the binary sits in (build/shapescope -> models/).
fs::path models_dir() {
  const fs::path built = SHAPESCOPE_MODELS_DIR;
  std::error_code ec;
  if (fs::is_directory(built, ec)) return built;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path near = exe.parent_path().parent_path() / "models";
    if (fs::is_directory(near, ec)) return near;
  }
  return built;
}

std::vector<std::string> preset_names(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".json") names.push_back(it->path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

ModelConfig resolve_model(const PadOptions& o) {
  if (!o.model.empty() && !o.config.empty())
    throw usage_error(fmt::format("--model: '{}' and --config '{}' both given; give one", o.model, o.config));
  if (!o.config.empty()) {
    ModelConfig c = load_model_config(o.config, fmt::format("--config: '{}'", o.config));
    c.name = o.config;
    return c;
  }
  const fs::path dir = models_dir();
  const std::vector<std::string> presets = preset_names(dir);
  if (o.model.empty())
    throw usage_error(fmt::format("--model: give a preset ({}) or --config FILE (a Hugging Face config.json)",
                                  joined(presets)));
  if (std::find(presets.begin(), presets.end(), o.model) == presets.end())
    throw usage_error(fmt::format("--model: '{}' is not a preset ({}); or use --config FILE (a Hugging Face config.json)",
                                  o.model, presets.empty() ? "none found in " + dir.string() : joined(presets)));
  const fs::path path = dir / (o.model + ".json");
  ModelConfig c = load_model_config(path.string(), fmt::format("--model: preset '{}' ({})", o.model, path.string()));
  c.name = o.model;
  return c;
}

// One token count: the step's GEMMs, the choices, their candidates and, once measured, the times.
struct Analysis {
  StepOptions step;
  std::vector<StepGemm> gemms;
  std::vector<ChoiceInfo> choices;
  std::vector<std::vector<PadCandidate>> candidates;  // per choice
  std::vector<std::string> notes;                      // per choice: why it has no candidate, "" otherwise
  std::optional<StepTime> before;
  std::vector<std::vector<Evaluation>> evaluations;   // per choice
  std::vector<std::optional<size_t>> best;             // per choice
};

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

void add_candidates(Analysis& a, const ModelConfig& config,
                    const std::function<std::optional<Annotation>(const Problem&)>& annotation_of) {
  a.candidates.clear();
  a.notes.clear();
  for (const ChoiceInfo& c : a.choices) {
    const std::optional<Annotation> probe = annotation_of(c.probe);
    a.candidates.push_back(pad_candidates(config, a.step, c, probe.value_or(Annotation{})));
    a.notes.push_back(a.candidates.back().empty() ? no_candidate_note(c, probe) : "");
  }
}

// --- formatting ---

// A plain-text table: columns as wide as their widest cell, text left, numbers right.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& out, const std::set<size_t>& left) const {
    std::vector<size_t> width(rows_.front().size(), 0);
    for (const auto& row : rows_)
      for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    for (const auto& row : rows_) {
      std::string line;
      for (size_t i = 0; i < row.size(); ++i) {
        const bool last = i + 1 == row.size();
        if (left.count(i)) {
          line += last ? row[i] : fmt::format("{:<{}}", row[i], width[i]);
        } else {
          line += fmt::format("{:>{}}", row[i], width[i]);
        }
        if (!last) line += "  ";
      }
      out << line << "\n";
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

std::string si(double value) {
  const double a = std::abs(value);
  if (a >= 1e9) return fmt::format("{:+.2f} G", value / 1e9);
  if (a >= 1e6) return fmt::format("{:+.2f} M", value / 1e6);
  if (a >= 1e3) return fmt::format("{:+.1f} k", value / 1e3);
  return fmt::format("{:+.0f}", value);
}

// Two decimals, three below 0.1 % (a vocabulary padded by a few rows adds thousandths of a percent).
std::string pct(double fraction) {
  const double p = fraction * 100;
  return std::abs(p) < 0.1 && p != 0 ? fmt::format("{:+.3f} %", p) : fmt::format("{:+.2f} %", p);
}

std::string time_text(double us) {
  if (us >= 1e4) return fmt::format("{:.2f} ms", us / 1e3);
  return fmt::format("{:.1f} us", us);
}

std::string mib(double bytes) { return fmt::format("{:.1f}", bytes / (1 << 20)); }

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

void print_model(std::ostream& out, const ModelConfig& c, const PadOptions& o) {
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
                     o.train ? "training (per Linear: fwd nt, dgrad nn, wgrad tn)" : "forward only (nt)", o.dtype, o.tp,
                     o.backend);
  out << "left out: " << kLeftOut << "\n";
}

void print_gemms(std::ostream& out, const Analysis& a, const std::function<std::optional<GemmTime>(const Problem&)>& time_of,
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
                     a.before ? fmt::format(", GEMM time {} (noise {:.1f} %)", time_text(a.before->us),
                                            a.before->noise * 100)
                              : "");
  table.print(out, {0, 1, 2});
}

std::string copy_cell(const Evaluation& e) {
  if (e.candidate.choice != Choice::kTokens) return "-";
  if (e.copy_us) return fmt::format("{} ({:.1f} us)", mib(e.copy_bytes), *e.copy_us);
  return mib(e.copy_bytes);
}

void print_candidates(std::ostream& out, const ModelConfig& config, const Analysis& a, bool measured) {
  const double params = weight_parameters(config);
  const double flops = step_flops(a.gemms);
  std::vector<std::string> header = {"dimension", "now", "new", "GEMM size", "touched", "extra params", "extra FLOPs",
                                     "copy [MiB]"};
  if (measured) {
    for (const char* h : {"before [us]", "after [us]", "saving [us]", "saving [%]", "noise [%]"}) header.push_back(h);
  }
  header.push_back("why");
  Table table(header);
  std::vector<std::string> notes;
  for (size_t i = 0; i < a.choices.size(); ++i) {
    const ChoiceInfo& c = a.choices[i];
    if (!a.notes[i].empty()) notes.push_back(fmt::format("{} {}: {}", c.name, c.value, a.notes[i]));
    for (size_t j = 0; j < a.candidates[i].size(); ++j) {
      const PadCandidate& p = a.candidates[i][j];
      const Evaluation e = measured ? a.evaluations[i][j]
                                    : evaluate(config, a.step, a.gemms, std::nullopt, p, std::nullopt, 0);
      std::vector<std::string> row = {c.name,
                                      std::to_string(c.value),
                                      std::to_string(p.value),
                                      std::to_string(p.gemm_size),
                                      std::to_string(e.touched),
                                      fmt::format("{} ({})", si(e.extra_params), pct(e.extra_params / params)),
                                      pct(e.extra_flops / flops),
                                      copy_cell(e)};
      if (measured) {
        row.push_back(a.before ? fmt::format("{:.1f}", a.before->us) : "-");
        row.push_back(e.after ? fmt::format("{:.1f}", e.after->us) : "-");
        row.push_back(e.saving_us ? fmt::format("{:+.1f}", *e.saving_us) : "-");
        row.push_back(e.saving_us ? fmt::format("{:+.2f}", *e.saving_us / e.before_us * 100) : "-");
        row.push_back(e.after ? fmt::format("{:.1f}", e.after->noise * 100) : "-");
      }
      row.push_back(p.why);
      table.add(std::move(row));
    }
  }
  out << fmt::format("\ncandidates for {} tokens: each changes one dimension and keeps the others; {}\n", a.step.tokens,
                     measured ? "saving = GEMM time per step before - after (- the tokens copy)"
                              : "the GEMMs each one touches are measured before and after");
  table.print(out, {0, header.size() - 1});
  for (const std::string& n : notes) out << "  " << n << "\n";
  const bool tokens = std::any_of(a.candidates.begin(), a.candidates.end(), [](const auto& list) {
    return !list.empty() && list.front().choice == Choice::kTokens;
  });
  if (tokens) out << "  " << kCopyNote << "\n";
}

std::string recommendation_text(const ModelConfig& config, const Analysis& a, size_t i) {
  const ChoiceInfo& c = a.choices[i];
  const std::vector<Evaluation>& ev = a.evaluations[i];
  const std::string head = fmt::format("{} {}", c.name, c.value);
  if (ev.empty()) return fmt::format("{}: leave it ({})", head, a.notes[i]);
  const Evaluation* most = nullptr;  // the largest saving, significant or not
  for (const Evaluation& e : ev)
    if (e.saving_us && (!most || *e.saving_us > *most->saving_us)) most = &e;
  if (!most) return fmt::format("{}: unknown: its candidates' GEMMs are not measured (see the skipped lines)", head);
  if (!a.best[i]) {
    double floor = kMinGain;
    for (const Evaluation& e : ev) floor = std::max(floor, e.threshold);
    return fmt::format("{}: leave it: no candidate saves more than {:.1f} % of the step's GEMM time (the measured "
                       "noise, at least {:.0f} %); the most, {} ({}), {}",
                       head, floor * 100, kMinGain * 100, most->candidate.value, most->candidate.why,
                       *most->saving_us >= 0 ? "saves " + pct(*most->saving_us / most->before_us).substr(1)
                                             : "costs " + pct(-*most->saving_us / most->before_us).substr(1));
  }
  const Evaluation& e = ev[*a.best[i]];
  std::string text =
      fmt::format("{}: pad to {} ({}): GEMM time per step {} -> {} ({}), for {} parameters ({}) and {} FLOPs", head,
                  e.candidate.value, e.candidate.why, time_text(e.before_us), time_text(e.after->us),
                  pct(-*e.saving_us / e.before_us), si(e.extra_params), pct(e.extra_params / weight_parameters(config)),
                  pct(e.extra_flops / step_flops(a.gemms)));
  if (e.candidate.choice == Choice::kTokens) {
    text += e.copy_us ? fmt::format("; the saving counts a run-time copy of {} MiB per step ({:.1f} us at the "
                                    "calibrated bandwidth)",
                                    mib(e.copy_bytes), *e.copy_us)
                      : fmt::format("; plus a run-time copy of {} MiB per step whose time is unknown (no calibrated "
                                    "bandwidth in the store: shapescope info --calibrate)",
                                    mib(e.copy_bytes));
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

Json analysis_json(const ModelConfig& config, const Analysis& a, const std::function<std::optional<GemmTime>(const Problem&)>& time_of,
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
    d["note"] = a.notes[i];
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
      if (measured) {
        x["before_us"] = a.before ? Json(a.before->us) : Json(nullptr);
        x["after_us"] = e.after ? Json(e.after->us) : Json(nullptr);
        x["saving_us"] = optional_number(e.saving_us);
        x["saving_pct"] = e.saving_us ? Json(*e.saving_us / e.before_us * 100) : Json(nullptr);
        x["threshold_pct"] = e.threshold * 100;
        x["significant"] = e.significant;
      }
      cands.push_back(std::move(x));
    }
    d["candidates"] = std::move(cands);
    if (measured) {
      Json r;
      r["action"] = a.best[i] ? "pad" : "leave";
      r["value"] = a.best[i] ? Json(a.candidates[i][*a.best[i]].value) : Json(c.value);
      r["text"] = recommendation_text(config, a, i);
      d["recommendation"] = std::move(r);
    }
    dims.push_back(std::move(d));
  }
  j["dimensions"] = std::move(dims);
  return j;
}

void write_json(const ModelConfig& config, const PadOptions& o, const std::vector<Analysis>& analyses,
                const std::function<std::optional<GemmTime>(const Problem&)>& time_of, Json source) {
  const bool measured = !o.dry_run;
  Json j;
  j["mode"] = measured ? "measured" : "dry-run";
  j["model"] = model_json(config);
  j["train"] = o.train;
  j["tp"] = o.tp;
  j["dtype"] = o.dtype;
  j["backend"] = o.backend;
  j["left_out"] = kLeftOut;
  j["copy_note"] = kCopyNote;
  if (measured) j["source"] = std::move(source);
  Json steps = Json::array();
  for (const Analysis& a : analyses) steps.push_back(analysis_json(config, a, time_of, measured));
  j["steps"] = std::move(steps);
  std::cout << j.dump(2) << "\n";
}

void write_text(const ModelConfig& config, const PadOptions& o, const std::vector<Analysis>& analyses,
                const std::function<std::optional<GemmTime>(const Problem&)>& time_of, const std::string& source) {
  const bool measured = !o.dry_run;
  print_model(std::cout, config, o);
  if (measured) std::cout << source << "\n";
  for (const Analysis& a : analyses) {
    print_gemms(std::cout, a, time_of, measured);
    print_candidates(std::cout, config, a, measured);
    if (!measured) continue;
    std::cout << fmt::format("\nrecommendation for {} tokens (a saving counts above {:.0f} % of the step's GEMM time "
                             "and above the measured noise)\n",
                             a.step.tokens, kMinGain * 100);
    for (size_t i = 0; i < a.choices.size(); ++i) std::cout << "  " << recommendation_text(config, a, i) << "\n";
  }
}

// --- measuring ---

// Every problem of these analyses (the step's, and with `candidates` each candidate's), once each.
std::vector<Problem> distinct_problems(const std::vector<Analysis>& analyses, bool candidates) {
  std::vector<Problem> out;
  auto add = [&](const Problem& p) {
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  for (const Analysis& a : analyses) {
    for (const StepGemm& g : a.gemms) add(g.problem);
    if (!candidates) continue;
    for (const auto& list : a.candidates)
      for (const PadCandidate& c : list)
        for (const StepGemm& g : step_gemms(c.config, c.step)) add(g.problem);
  }
  return out;
}

void print_dry_run_cost(const std::vector<Analysis>& analyses, const PadOptions& o) {
  const std::vector<Problem> base = distinct_problems(analyses, false);
  const std::vector<Problem> all = distinct_problems(analyses, true);
  // Cold samples flush L2 first: ~50 MiB at ~2.5 TB/s, about 20 us each.
  constexpr double kFlushUs = 20;
  double us = 0;
  for (const Problem& p : all) us += (estimate_us(p) + kFlushUs) * o.samples;
  fmt::print(stderr,
             "to measure: {} distinct GEMMs ({} of the step, {} more for the candidates; sizes that fill a last wave "
             "are added after measuring), about {:.1f} s of GPU time at {} samples each (a rough model; points in "
             "the store are reused)\n",
             all.size(), base.size(), all.size() - base.size(), us / 1e6, o.samples);
}

class Measurements {
 public:
  Measurements(const PadOptions& o, const DeviceContext& device, Store& store)
      : o_(o), device_(device), store_(store), algo_(o.backend == "cublaslt" ? "h0" : "default") {}

  void measure_all(const std::vector<Problem>& problems) {
    MeasureRequest request;
    request.backends = {o_.backend};
    request.measure.samples = o_.samples;
    for (const Problem& p : problems)
      if (!find(p)) request.problems.push_back(p);
    if (request.problems.empty()) return;
    Progress progress(request.problems.size(), isatty(STDERR_FILENO) == 1);
    const MeasureOutcome outcome = measure(request, device_, store_, progress, &g_interrupted);
    if (outcome.interrupted)
      throw Error(ExitCode::kInterrupted, "pad: interrupted (measured points are saved; the same command resumes)");
    for (const std::string& why : outcome.skipped) fmt::print(stderr, "skipped: {}\n", why);
    measured_ += outcome.measured;
    reused_ += outcome.reused;
    for (const StoredPoint& p : outcome.points) {
      if (p.key.backend == o_.backend && p.key.algo == algo_ && !p.key.hot) points_.emplace(key_of(p.key.problem), p);
    }
  }

  const StoredPoint* find(const Problem& problem) const {
    const auto found = points_.find(key_of(problem));
    return found != points_.end() && found->second.key.problem == problem ? &found->second : nullptr;
  }

  std::optional<GemmTime> time_of(const Problem& problem) const {
    const StoredPoint* p = find(problem);
    if (!p) return std::nullopt;
    return GemmTime{p->result.timing.median_us, p->result.timing.noise};
  }

  std::optional<Annotation> annotation_of(const Problem& problem) const {
    const StoredPoint* p = find(problem);
    if (!p) return std::nullopt;
    return annotate_points(store_, {*p}).front();
  }

  size_t measured() const { return measured_; }
  size_t reused() const { return reused_; }

  // "SM clock 1515 MHz (median), 15 of 15 GEMMs throttled": big GEMMs timed back to back run into
  // the power cap, and the reader must know the step time was taken at that clock.
  std::string clock_summary() const {
    std::vector<double> clocks;
    size_t throttled = 0;
    for (const auto& [key, p] : points_) {
      if (p.result.timing.sm_clock_mhz) clocks.push_back(*p.result.timing.sm_clock_mhz);
      throttled += p.result.timing.throttled;
    }
    std::string clock = "SM clock unknown";
    if (!clocks.empty()) {
      std::nth_element(clocks.begin(), clocks.begin() + long(clocks.size() / 2), clocks.end());
      clock = fmt::format("SM clock {:.0f} MHz (median)", clocks[clocks.size() / 2]);
    }
    return fmt::format("{}, {} of {} GEMMs throttled (power or thermal cap, or a clock dip)", clock, throttled,
                       points_.size());
  }

 private:
  const PadOptions& o_;
  const DeviceContext& device_;
  Store& store_;
  std::string algo_;
  // Every problem pad plans is packed and unbatched: its sizes, layout and dtype identify it.
  using Key = std::tuple<int64_t, int64_t, int64_t, Layout, DType>;
  static Key key_of(const Problem& p) { return {p.m, p.n, p.k, p.layout, p.dtype}; }
  std::map<Key, StoredPoint> points_;
  size_t measured_ = 0, reused_ = 0;
};

void run_pad(const PadOptions& o) {
  const ModelConfig config = resolve_model(o);
  if (o.tokens.empty())
    throw usage_error("--tokens: give the tokens per step (batch x sequence), e.g. --tokens 12288 or --tokens 1..64");
  const std::vector<int64_t> tokens = parse_range(o.tokens, "--tokens");
  if (tokens.size() > kMaxTokenCounts)
    throw usage_error(fmt::format("--tokens: '{}' has {} values; pad takes at most {} (e.g. 1..64 or 64..8192*2)",
                                  o.tokens, tokens.size(), kMaxTokenCounts));
  if (o.tp < 1 || o.tp > kMaxTp) throw usage_error(fmt::format("--tp: {} must be between 1 and {}", o.tp, kMaxTp));
  const std::optional<DType> dtype = parse_dtype(o.dtype);
  if (!dtype) throw usage_error(fmt::format("--dtype: '{}' is not a dtype (bf16, fp16, fp32, tf32, fp8)", o.dtype));
  if (o.backend != "cublas" && o.backend != "cublaslt")
    throw usage_error(fmt::format("--backend: '{}' is not a backend pad can use (cublas, cublaslt)", o.backend));
  if (*dtype == DType::kFp8 && o.train)
    throw usage_error("--dtype: 'fp8' runs only as nt GEMMs (the forward); --train also needs nn and tn");
  if (*dtype == DType::kFp8 && o.backend == "cublas")
    throw usage_error("--backend: 'cublas' has no fp8 (cublasGemmEx); use --backend cublaslt");
  if (o.samples < 1 || o.samples > 100000)
    throw usage_error(fmt::format("--samples: {} must be between 1 and 100000", o.samples));
  check_tp(config, o.tp);

  std::vector<Analysis> analyses;
  for (int64_t t : tokens) {
    Analysis a;
    a.step = {t, o.train, o.tp, *dtype};
    a.gemms = step_gemms(config, a.step);
    a.choices = choices(config, a.step);
    analyses.push_back(std::move(a));
  }

  if (o.dry_run) {
    for (Analysis& a : analyses) add_candidates(a, config, [](const Problem&) { return std::optional<Annotation>(); });
    auto no_time = [](const Problem&) { return std::optional<GemmTime>(); };
    if (o.json) {
      write_json(config, o, analyses, no_time, Json());
    } else {
      write_text(config, o, analyses, no_time, "");
    }
    print_dry_run_cost(analyses, o);
    return;
  }
  if (device_count() == 0)
    throw Error(ExitCode::kNoGpu,
                "pad: no GPU here, and measuring needs one; --dry-run lists the GEMMs and candidates without it");

  Store store(o.db);
  const DeviceContext device = query_device(o.device);
  fmt::print(stderr, "{}\n", device_header(device));
  Measurements m(o, device, store);

  // First the step as it is: the measured kernels' tiles and slots say which sizes fill a last wave.
  m.measure_all(distinct_problems(analyses, false));
  for (Analysis& a : analyses)
    add_candidates(a, config, [&](const Problem& p) { return m.annotation_of(p); });
  m.measure_all(distinct_problems(analyses, true));

  const Peak bandwidth = model_gpu(device, store.load_calibration(device)).peak_bandwidth();
  const double gbs = bandwidth.measured ? bandwidth.value : 0;
  auto time_of = [&](const Problem& p) { return m.time_of(p); };
  for (Analysis& a : analyses) {
    a.before = step_time(a.gemms, time_of);
    a.evaluations.clear();
    a.best.clear();
    for (const auto& list : a.candidates) {
      std::vector<Evaluation> ev;
      for (const PadCandidate& c : list)
        ev.push_back(evaluate(config, a.step, a.gemms, a.before, c, step_time(step_gemms(c.config, c.step), time_of),
                              gbs));
      a.best.push_back(recommend(ev));
      a.evaluations.push_back(std::move(ev));
    }
  }
  const std::string source = fmt::format(
      "measured on {} ({}), driver {}, cuBLAS {}: {} GEMMs measured now, {} from the store '{}'; {} samples, cold L2; "
      "{}; copy bandwidth {}",
      device.gpu_name, device.gpu_uuid, device.driver, device.cublas, m.measured(), m.reused(), o.db, o.samples,
      m.clock_summary(),
      gbs > 0 ? fmt::format("{:.0f} GB/s ({})", gbs, bandwidth.source) : std::string("not calibrated"));
  if (o.json) {
    Json s;
    s["gpu"] = device.gpu_name;
    s["gpu_uuid"] = device.gpu_uuid;
    s["driver"] = device.driver;
    s["cublas"] = device.cublas;
    s["measured"] = m.measured();
    s["reused"] = m.reused();
    s["db"] = o.db;
    s["samples"] = o.samples;
    s["clocks"] = m.clock_summary();
    s["copy_bandwidth_gbs"] = gbs > 0 ? Json(gbs) : Json(nullptr);
    write_json(config, o, analyses, time_of, std::move(s));
  } else {
    write_text(config, o, analyses, time_of, source);
  }
}

}  // namespace

void register_pad(CLI::App& app) {
  auto o = std::make_shared<PadOptions>();
  auto* cmd = app.add_subcommand("pad", "Pad-or-not for every dimension of a model's GEMMs, measured");
  cmd->footer(fmt::format(
      "Lists the Linear GEMMs of one step (per Linear: forward nt; with --train also the input gradient\n"
      "nn and the weight gradient tn), identical shapes merged with their count per step. For each\n"
      "dimension a model author chooses (vocabulary, hidden, intermediate, heads and KV heads x head_dim,\n"
      "tokens) it proposes padded sizes: the next multiples of 8..256 above (none for a size that already\n"
      "is a multiple of 256), and the size that fills the last wave of the measured kernel. It measures\n"
      "every GEMM each candidate touches (reusing the store) and reports the GEMM time per step before and\n"
      "after, the saving, and the cost: extra parameters and FLOPs; for tokens, the run-time copy that\n"
      "padding them adds (priced at the calibrated bandwidth of `info --calibrate`). It recommends the\n"
      "best candidate per dimension, or says leave it when no saving is above 2 % and the noise.\n"
      "Left out: the attention core (QK^T, softmax, PV), which runs as a fused FlashAttention kernel, not as\n"
      "cuBLAS GEMMs; and everything else that is not a GEMM.\n"
      "Tensor parallelism (--tp): column-parallel Linears (QKV, MLP up/gate/fc, LM head) split their\n"
      "output, row-parallel ones (attention out, MLP down/proj) their input; a size tp does not divide is refused.\n"
      "Presets (models/*.json, values from Hugging Face): {}\n"
      "Examples:\n"
      "  shapescope pad --model gpt2 --tokens 12288 --train\n"
      "  shapescope pad --model gpt2 --tokens 12288 --train --dry-run      # no GPU needed\n"
      "  shapescope pad --model llama3-8b --tokens 1..8,16,32,64           # decode-like sizes\n"
      "  shapescope pad --model llama3-70b --tokens 8192 --tp 8 --train\n"
      "  shapescope pad --config config.json --tokens 4096 --json",
      joined(preset_names(models_dir()))));
  cmd->add_option("--model", o->model, "a preset: models/NAME.json");
  cmd->add_option("--config", o->config, "a Hugging Face style config.json");
  cmd->add_option("--tokens", o->tokens, "tokens per step (batch x sequence); a range for decode-like sizes");
  cmd->add_flag("--train", o->train, "forward and both backward GEMMs of each Linear (default: forward only)");
  cmd->add_option("--tp", o->tp, "tensor-parallel ranks");
  cmd->add_option("--dtype", o->dtype, "bf16 | fp16 | fp32 | tf32 | fp8 (forward only, cublaslt)");
  cmd->add_option("--backend", o->backend, "cublas | cublaslt");
  cmd->add_option("--samples", o->samples, "samples per GEMM");
  cmd->add_option("--db", o->db, "result store (SQLite file)");
  cmd->add_option("--device", o->device, "CUDA device ordinal")->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", o->json, "JSON instead of the tables");
  cmd->add_flag("--dry-run", o->dry_run, "list the GEMMs and candidates; measure nothing (no GPU needed)");
  cmd->callback([o] { run_pad(*o); });
}

}  // namespace shapescope
