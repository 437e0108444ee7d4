#include "model/pad.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/error.hpp"

namespace shapescope {

namespace {

using Json = nlohmann::json;

// cuBLAS takes every size as a 32-bit int.
constexpr int64_t kMaxSize = std::numeric_limits<int32_t>::max();
// Model types whose Linears are q/k/v/o_proj and a gated MLP (gate/up/down_proj), all unfused.
constexpr std::string_view kGatedTypes[] = {"llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2"};
// A candidate value is searched upwards from the size neighbours() proposes; the constraints are
// divisibility by small numbers (heads, tp), so a valid value is always near.
constexpr int64_t kMaxSearch = 1 << 16;

std::string short_dump(const Json& value) {
  std::string text = value.dump();
  constexpr size_t kMaxChars = 40;
  if (text.size() > kMaxChars) text = text.substr(0, kMaxChars) + "...";
  return text;
}

bool is_gated_type(std::string_view type) {
  return std::find(std::begin(kGatedTypes), std::end(kGatedTypes), type) != std::end(kGatedTypes);
}

std::string gated_types() {
  std::string out;
  for (std::string_view t : kGatedTypes) out += fmt::format("{}{}", out.empty() ? "" : ", ", t);
  return out;
}

class ConfigReader {
 public:
  ConfigReader(const Json& json, const std::string& origin, std::string needs)
      : json_(json), origin_(origin), needs_(std::move(needs)) {}

  int64_t required(const char* key) const {
    if (!json_.contains(key) || json_[key].is_null())
      throw usage_error(fmt::format("{} has no '{}' ({})", origin_, key, needs_));
    return positive(key);
  }
  // nullopt when the key is absent or null (Hugging Face's "use the default").
  std::optional<int64_t> optional(const char* key) const {
    if (!json_.contains(key) || json_[key].is_null()) return std::nullopt;
    return positive(key);
  }
  std::optional<bool> flag(const char* key) const {
    if (!json_.contains(key) || json_[key].is_null()) return std::nullopt;
    if (!json_[key].is_boolean())
      throw usage_error(fmt::format("{}: {} is {}; it must be true or false", origin_, key, short_dump(json_[key])));
    return json_[key].get<bool>();
  }
  std::string text(const char* key) const {
    if (!json_.contains(key) || json_[key].is_null()) return "";
    if (!json_[key].is_string())
      throw usage_error(fmt::format("{}: {} is {}; it must be a string", origin_, key, short_dump(json_[key])));
    return json_[key].get<std::string>();
  }
  [[noreturn]] void fail(const std::string& what) const { throw usage_error(fmt::format("{}: {}", origin_, what)); }

 private:
  int64_t positive(const char* key) const {
    const Json& v = json_[key];
    // A float such as 4096.0 is refused too: configs hold integers, and a float is a sign of a wrong key.
    bool ok = false;
    if (v.is_number_unsigned()) {
      ok = v.get<uint64_t>() >= 1 && v.get<uint64_t>() <= uint64_t(kMaxSize);
    } else if (v.is_number_integer()) {
      ok = v.get<int64_t>() >= 1 && v.get<int64_t>() <= kMaxSize;
    }
    if (!ok)
      throw usage_error(fmt::format("{}: {} is {}; it must be a positive integer (at most {})", origin_, key,
                                    short_dump(v), kMaxSize));
    return v.get<int64_t>();
  }

  const Json& json_;
  const std::string& origin_;
  std::string needs_;
};

void check_size(const ConfigReader& r, const char* what, int64_t value) {
  if (value > kMaxSize) r.fail(fmt::format("{} is {}, more than cuBLAS's 32-bit sizes allow ({})", what, value, kMaxSize));
}

Problem gemm(int64_t m, int64_t n, int64_t k, Layout layout, DType dtype) {
  Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.layout = layout;
  p.dtype = dtype;
  // Packed, as `sweep` plans a problem without --ld-pad: the store then shares points with sweeps.
  p.lda = p.a_cols();
  p.ldb = p.b_cols();
  p.ldc = p.n;
  return p;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The largest power of two, up to 256, that divides the size (DESIGN.md "alignment").
int64_t largest_power_of_two(int64_t size) {
  int64_t p = 1;
  while (p < 256 && size % (2 * p) == 0) p *= 2;
  return p;
}

// "multiple of 128"
std::string multiple_phrase(int64_t size) {
  const int64_t p = largest_power_of_two(size);
  return p >= 8 ? fmt::format("multiple of {}", p) : "not a multiple of 8";
}

// Whether the probe GEMM with this size in the choice's dimension, in the measured kernel's tile and
// slots, fills its last wave.
bool fills_last_wave(const ChoiceInfo& choice, int64_t size, const Annotation& a) {
  if (a.grid.tiles <= 0 || a.waves.slots <= 0) return false;
  Problem q = choice.probe;
  (choice.probe_dim == Dim::kM ? q.m : q.n) = size;
  const TileGrid g = tile_grid(q.m, q.n, q.batch, a.grid.tile_m, a.grid.tile_n, a.grid.splits);
  return waves_of(g.tiles, a.waves.slots).efficiency >= kFilledWave;
}

bool valid_value(const ModelConfig& c, const StepOptions& s, Choice choice, int64_t value) {
  switch (choice) {
    case Choice::kVocab: return value % s.tp == 0 && value <= kMaxSize;
    case Choice::kHidden:
      // GPT-2's heads follow n_embd (head_dim = n_embd / n_head), and c_attn is 3 x n_embd wide.
      if (c.family == Family::kGpt2)
        return value % c.head_dim == 0 && (value / c.head_dim) % s.tp == 0 && 3 * value <= kMaxSize;
      return value <= kMaxSize;
    case Choice::kIntermediate: return value % s.tp == 0 && value <= kMaxSize;
    case Choice::kHeads: return value % c.kv_heads == 0 && value % s.tp == 0 && value * c.head_dim <= kMaxSize;
    case Choice::kKvHeads: return c.heads % value == 0 && value % s.tp == 0;
    case Choice::kTokens: return value <= kMaxSize;
  }
  return false;
}

// The model and step with one choice set to `value`; every other size is kept as it is.
std::pair<ModelConfig, StepOptions> with_value(const ModelConfig& config, const StepOptions& step, Choice choice,
                                               int64_t value) {
  ModelConfig c = config;
  StepOptions s = step;
  switch (choice) {
    case Choice::kVocab: c.vocab = value; break;
    case Choice::kHidden:
      c.hidden = value;
      if (c.family == Family::kGpt2) {
        c.heads = c.kv_heads = value / c.head_dim;
        c.intermediate_derived = false;  // n_inner stays at its value, no longer 4 x n_embd
      }
      c.head_dim_derived = false;
      break;
    case Choice::kIntermediate:
      c.intermediate = value;
      c.intermediate_derived = false;
      break;
    case Choice::kHeads: c.heads = value; break;
    case Choice::kKvHeads: c.kv_heads = value; break;
    case Choice::kTokens: s.tokens = value; break;
  }
  return {c, s};
}

}  // namespace

ModelConfig parse_model_config(std::string_view text, const std::string& origin) {
  Json json;
  try {
    json = Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 3, column 5: ...": keep what follows the tag.
    std::string what = e.what();
    const size_t tag = what.find("] ");
    if (tag != std::string::npos) what = what.substr(tag + 2);
    std::replace(what.begin(), what.end(), '\n', ' ');
    throw usage_error(fmt::format("{} is not valid JSON ({})", origin, what));
  }
  if (!json.is_object()) throw usage_error(fmt::format("{} is not a JSON object", origin));

  ModelConfig c;
  const ConfigReader meta(json, origin, "");
  c.model_type = meta.text("model_type");
  c.description = meta.text("_description");
  c.source = meta.text("_source");
  if (c.model_type == "gpt2" || (c.model_type.empty() && json.contains("n_embd"))) {
    c.family = Family::kGpt2;
  } else if (is_gated_type(c.model_type) || c.model_type.empty()) {
    c.family = Family::kGated;
  } else {
    throw usage_error(fmt::format("{}: model_type '{}' is not one pad knows (gpt2: fused c_attn; {}: q/k/v/o_proj "
                                  "and gate/up/down_proj)",
                                  origin, c.model_type, gated_types()));
  }

  if (c.family == Family::kGpt2) {
    const ConfigReader r(json, origin, "a GPT-2 config needs vocab_size, n_embd, n_head, n_layer");
    c.vocab = r.required("vocab_size");
    c.hidden = r.required("n_embd");
    c.heads = r.required("n_head");
    c.layers = r.required("n_layer");
    const std::optional<int64_t> inner = r.optional("n_inner");
    c.intermediate_derived = !inner;
    c.intermediate = inner ? *inner : 4 * c.hidden;
    if (c.hidden % c.heads != 0) r.fail(fmt::format("n_embd {} is not a multiple of n_head {}", c.hidden, c.heads));
    c.kv_heads = c.heads;
    c.head_dim = c.hidden / c.heads;
    c.head_dim_derived = true;
    c.tied_embeddings = r.flag("tie_word_embeddings").value_or(true);  // GPT2Config's default
    check_size(r, "3 x n_embd (c_attn's output)", 3 * c.hidden);
    check_size(r, "n_inner (4 x n_embd)", c.intermediate);
  } else {
    const ConfigReader r(json, origin,
                         "a llama-style config needs vocab_size, hidden_size, intermediate_size, num_attention_heads, "
                         "num_hidden_layers");
    c.vocab = r.required("vocab_size");
    c.hidden = r.required("hidden_size");
    c.intermediate = r.required("intermediate_size");
    c.heads = r.required("num_attention_heads");
    c.layers = r.required("num_hidden_layers");
    c.kv_heads = r.optional("num_key_value_heads").value_or(c.heads);
    const std::optional<int64_t> head_dim = r.optional("head_dim");
    c.head_dim_derived = !head_dim;
    if (head_dim) {
      c.head_dim = *head_dim;
    } else {
      if (c.hidden % c.heads != 0)
        r.fail(fmt::format("hidden_size {} is not a multiple of num_attention_heads {} and there is no head_dim",
                           c.hidden, c.heads));
      c.head_dim = c.hidden / c.heads;
    }
    if (c.heads % c.kv_heads != 0)
      r.fail(fmt::format("num_attention_heads {} is not a multiple of num_key_value_heads {}", c.heads, c.kv_heads));
    c.tied_embeddings = r.flag("tie_word_embeddings").value_or(false);  // LlamaConfig's default
    check_size(r, "num_attention_heads x head_dim", c.heads * c.head_dim);
  }
  return c;
}

ModelConfig load_model_config(const std::string& path, const std::string& origin) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw usage_error(fmt::format("{} is a directory, not a file", origin));
  std::ifstream in(path);
  if (!in) throw usage_error(fmt::format("{} cannot be read ({})", origin, std::strerror(errno)));
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw usage_error(fmt::format("{} cannot be read ({})", origin, std::strerror(errno)));
  return parse_model_config(text.str(), origin);
}

std::vector<LinearLayer> linear_layers(const ModelConfig& c) {
  const int64_t l = c.layers;
  if (c.family == Family::kGpt2) {
    // nanoGPT and llm.c run these as nn.Linear (x @ W.t(), nt). Hugging Face's GPT-2 stores them as
    // Conv1D with W as in x out (addmm(x, W): nn); the shapes are the same.
    return {
        {"c_attn", c.hidden, 3 * c.hidden, l, Parallel::kColumn, "attn_in"},
        {"attn.c_proj", c.hidden, c.hidden, l, Parallel::kRow, "attn_out"},
        {"c_fc", c.hidden, c.intermediate, l, Parallel::kColumn, "mlp_in"},
        {"mlp.c_proj", c.intermediate, c.hidden, l, Parallel::kRow, "mlp_act"},
        {"lm_head", c.hidden, c.vocab, 1, Parallel::kColumn, "final"},
    };
  }
  return {
      {"q_proj", c.hidden, c.q_width(), l, Parallel::kColumn, "attn_in"},
      {"k_proj", c.hidden, c.kv_width(), l, Parallel::kColumn, "attn_in"},
      {"v_proj", c.hidden, c.kv_width(), l, Parallel::kColumn, "attn_in"},
      {"o_proj", c.q_width(), c.hidden, l, Parallel::kRow, "attn_out"},
      {"gate_proj", c.hidden, c.intermediate, l, Parallel::kColumn, "mlp_in"},
      {"up_proj", c.hidden, c.intermediate, l, Parallel::kColumn, "mlp_in"},
      {"down_proj", c.intermediate, c.hidden, l, Parallel::kRow, "mlp_act"},
      {"lm_head", c.hidden, c.vocab, 1, Parallel::kColumn, "final"},
  };
}

std::string_view pass_name(Pass pass) {
  switch (pass) {
    case Pass::kForward: return "fwd";
    case Pass::kInputGrad: return "dgrad";
    case Pass::kWeightGrad: return "wgrad";
  }
  return "?";
}

void check_tp(const ModelConfig& c, int64_t tp) {
  const bool gpt2 = c.family == Family::kGpt2;
  // Megatron pads the vocabulary to a multiple of 128 x tp for this; pad says so rather than doing it.
  if (c.vocab % tp != 0)
    throw usage_error(fmt::format("--tp: {} does not divide vocab_size {} (lm_head is column-parallel: its output "
                                  "is split over the ranks); pad the vocabulary first, e.g. to {}",
                                  tp, c.vocab, (c.vocab / (128 * tp) + 1) * 128 * tp));
  if (c.heads % tp != 0)
    throw usage_error(fmt::format("--tp: {} does not divide {} {} (attention is split over the ranks by heads)", tp,
                                  gpt2 ? "n_head" : "num_attention_heads", c.heads));
  if (!gpt2 && c.kv_heads % tp != 0)
    throw usage_error(fmt::format("--tp: {} does not divide num_key_value_heads {} (k_proj and v_proj are split by "
                                  "heads)",
                                  tp, c.kv_heads));
  if (c.intermediate % tp != 0)
    throw usage_error(fmt::format("--tp: {} does not divide {} {} (the MLP is split over its intermediate features)",
                                  tp, gpt2 ? "n_inner" : "intermediate_size", c.intermediate));
}

namespace {

// One entry per Linear and pass, nothing merged.
std::vector<StepGemm> linear_gemms(const ModelConfig& config, const StepOptions& step) {
  std::vector<StepGemm> out;
  const int64_t t = step.tokens;
  for (const LinearLayer& l : linear_layers(config)) {
    const int64_t in = l.in_per_rank(step.tp), o = l.out_per_rank(step.tp);
    out.push_back({l.name, Pass::kForward, gemm(t, o, in, Layout::kNT, step.dtype), l.count});
    if (!step.train) continue;
    out.push_back({l.name, Pass::kInputGrad, gemm(t, in, o, Layout::kNN, step.dtype), l.count});
    out.push_back({l.name, Pass::kWeightGrad, gemm(o, in, t, Layout::kTN, step.dtype), l.count});
  }
  return out;
}

}  // namespace

std::vector<StepGemm> step_gemms(const ModelConfig& config, const StepOptions& step) {
  std::vector<StepGemm> out;
  for (const StepGemm& g : linear_gemms(config, step)) {
    const auto same = std::find_if(out.begin(), out.end(), [&](const StepGemm& x) { return x.problem == g.problem; });
    if (same == out.end()) {
      out.push_back(g);
      continue;
    }
    if (("+" + same->linear + "+").find("+" + g.linear + "+") == std::string::npos) same->linear += "+" + g.linear;
    same->count += g.count;
  }
  return out;
}

size_t touched_gemms(const ModelConfig& before, const StepOptions& before_step, const ModelConfig& after,
                     const StepOptions& after_step) {
  const std::vector<StepGemm> a = linear_gemms(before, before_step);
  const std::vector<StepGemm> b = linear_gemms(after, after_step);
  size_t changed = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) changed += a[i].problem == b[i].problem ? 0 : 1;
  return changed + std::max(a.size(), b.size()) - std::min(a.size(), b.size());
}

std::string gemm_string(const Problem& p) { return fmt::format("{}x{}x{} {}", p.m, p.n, p.k, to_string(p.layout)); }

std::string ChoiceInfo::where() const { return fmt::format("{} of {}", dim_name(probe_dim), probe_name); }

std::vector<ChoiceInfo> choices(const ModelConfig& c, const StepOptions& s) {
  const bool gpt2 = c.family == Family::kGpt2;
  const int64_t t = s.tokens, tp = s.tp;
  auto fwd = [&](int64_t n, int64_t k) { return gemm(t, n, k, Layout::kNT, s.dtype); };
  std::vector<ChoiceInfo> out;
  out.push_back({Choice::kVocab, "vocab_size", c.vocab, 1, tp, "lm_head fwd", fwd(c.vocab / tp, c.hidden)});
  if (gpt2) {
    out.push_back({Choice::kHidden, "n_embd", c.hidden, 1, 1, "attn.c_proj fwd", fwd(c.hidden, c.hidden / tp)});
    out.push_back({Choice::kIntermediate, "n_inner", c.intermediate, 1, tp, "c_fc fwd",
                   fwd(c.intermediate / tp, c.hidden)});
  } else {
    out.push_back({Choice::kHidden, "hidden_size", c.hidden, 1, 1, "o_proj fwd", fwd(c.hidden, c.q_width() / tp)});
    out.push_back({Choice::kIntermediate, "intermediate_size", c.intermediate, 1, tp, "up_proj fwd",
                   fwd(c.intermediate / tp, c.hidden)});
    out.push_back({Choice::kHeads, "num_attention_heads", c.heads, c.head_dim, tp, "q_proj fwd",
                   fwd(c.q_width() / tp, c.hidden)});
    out.push_back({Choice::kKvHeads, "num_key_value_heads", c.kv_heads, c.head_dim, tp, "k_proj fwd",
                   fwd(c.kv_width() / tp, c.hidden)});
  }
  // Tokens are the M of every forward GEMM; the one with the most FLOPs per step decides the waves.
  const StepGemm* largest = nullptr;
  std::vector<StepGemm> gemms = step_gemms(c, {s.tokens, false, s.tp, s.dtype});
  for (const StepGemm& g : gemms)
    if (!largest || double(g.count) * g.problem.flops() > double(largest->count) * largest->problem.flops()) largest = &g;
  out.push_back({Choice::kTokens, "tokens", t, 1, 1, largest->linear + " fwd", largest->problem,
                 Dim::kM});
  return out;
}

std::vector<PadCandidate> pad_candidates(const ModelConfig& config, const StepOptions& step, const ChoiceInfo& choice,
                                         const Annotation& probe_annotation) {
  const int64_t current = choice.gemm_size();
  const bool aligned = current % 256 == 0;
  // A size that fills the last wave but loses the alignment the current size has would trade the
  // library's fast kernels for a wave: wave sizes are rounded up to keep it (and 16-byte rows).
  const int64_t keep = std::max<int64_t>(16 / input_bytes(step.dtype), largest_power_of_two(current));
  struct Reasons {
    std::vector<std::string> exact;  // reasons whose size is the GEMM size itself
    std::string rounded;             // a reason whose size had to be raised to an allowed value
  };
  std::map<int64_t, Reasons> found;
  for (const Candidate& n : neighbours_along(choice.probe, choice.probe_dim, probe_annotation, Side::kAbove)) {
    const bool multiple = n.why.rfind("multiple of ", 0) == 0;
    const bool wave_only = !multiple && n.why.find("fills its last wave") != std::string::npos;
    if (aligned && n.why.find("fills its last wave") == std::string::npos) continue;
    const int64_t want = wave_only ? ceil_div(n.value, keep) * keep : n.value;
    // The smallest value above the current one whose GEMM size reaches the wanted size.
    int64_t value = std::max(choice.value + 1, ceil_div(want * choice.shard, choice.unit));
    const int64_t last = value + kMaxSearch;
    while (value < last && !valid_value(config, step, choice.choice, value)) ++value;
    if (value == last) continue;
    const int64_t size = value * choice.unit / choice.shard;
    // neighbours() looks for the wave size within +25 %; rounding must not take it past that.
    if (wave_only && (size > current + current / 4 || !fills_last_wave(choice, size, probe_annotation))) continue;
    Reasons& r = found[value];
    if (size == want) {
      r.exact.push_back(wave_only ? "fills its last wave" : n.why);
    } else if (r.rounded.empty()) {
      r.rounded = fmt::format("{}: the nearest {} the model allows at or above {} ({})", multiple_phrase(size),
                              choice.name, want, wave_only ? "fills its last wave" : n.why);
    }
  }
  std::vector<PadCandidate> out;
  for (auto& [value, reasons] : found) {
    PadCandidate c;
    c.choice = choice.choice;
    c.value = value;
    c.gemm_size = value * choice.unit / choice.shard;
    // As neighbours() words it: the multiple first, then the rest.
    std::stable_sort(reasons.exact.begin(), reasons.exact.end(), [](const std::string& a, const std::string& b) {
      return a.rfind("multiple of ", 0) == 0 && b.rfind("multiple of ", 0) != 0;
    });
    for (const std::string& why : reasons.exact) c.why += (c.why.empty() ? "" : ", ") + why;
    if (c.why.empty()) c.why = reasons.rounded;
    std::tie(c.config, c.step) = with_value(config, step, choice.choice, value);
    out.push_back(std::move(c));
  }
  return out;
}

double weight_parameters(const ModelConfig& config) {
  double total = config.tied_embeddings ? 0 : double(config.vocab) * double(config.hidden);
  for (const LinearLayer& l : linear_layers(config)) total += double(l.in) * double(l.out) * double(l.count);
  return total;
}

double step_flops(const std::vector<StepGemm>& gemms) {
  double total = 0;
  for (const StepGemm& g : gemms) total += double(g.count) * g.problem.flops();
  return total;
}

double token_copy_bytes(const ModelConfig& config, const StepOptions& step, int64_t padded) {
  const double rows = double(step.tokens) + double(padded);  // read T rows, write T' rows (pad rows zeroed)
  const double element = input_bytes(step.dtype);
  std::set<std::string> copied;
  double bytes = 0;
  for (const LinearLayer& l : linear_layers(config)) {
    if (copied.insert(l.input).second) bytes += rows * double(l.in_per_rank(step.tp)) * double(l.count) * element;
    if (step.train) bytes += rows * double(l.out_per_rank(step.tp)) * double(l.count) * element;
  }
  return bytes;
}

std::optional<StepTime> step_time(const std::vector<StepGemm>& gemms,
                                  const std::function<std::optional<GemmTime>(const Problem&)>& time_of) {
  StepTime t;
  double weighted_noise = 0;
  for (const StepGemm& g : gemms) {
    const std::optional<GemmTime> x = time_of(g.problem);
    if (!x) return std::nullopt;
    const double us = double(g.count) * x->median_us;
    t.us += us;
    weighted_noise += us * x->noise;
  }
  if (t.us > 0) t.noise = weighted_noise / t.us;
  return t;
}

Evaluation evaluate(const ModelConfig& config, const StepOptions& step, const std::vector<StepGemm>& before,
                    const std::optional<StepTime>& before_time, PadCandidate candidate,
                    const std::optional<StepTime>& after_time, double bandwidth_gbs) {
  Evaluation e;
  const std::vector<StepGemm> after = step_gemms(candidate.config, candidate.step);
  e.touched = touched_gemms(config, step, candidate.config, candidate.step);
  e.extra_params = weight_parameters(candidate.config) - weight_parameters(config);
  e.extra_flops = step_flops(after) - step_flops(before);
  if (candidate.choice == Choice::kTokens) {
    e.copy_bytes = token_copy_bytes(config, step, candidate.value);
    // GB/s is 1e3 bytes per microsecond.
    if (bandwidth_gbs > 0) e.copy_us = e.copy_bytes / (bandwidth_gbs * 1e3);
  }
  e.candidate = std::move(candidate);
  e.after = after_time;
  if (before_time && after_time) {
    e.before_us = before_time->us;
    e.saving_us = before_time->us - after_time->us - e.copy_us.value_or(0);
    e.threshold = std::max({kMinGain, before_time->noise, after_time->noise});
    e.significant = *e.saving_us > before_time->us * e.threshold;
  }
  return e;
}

std::optional<size_t> recommend(const std::vector<Evaluation>& evaluations) {
  std::optional<size_t> largest;
  for (size_t i = 0; i < evaluations.size(); ++i)
    if (evaluations[i].significant && (!largest || *evaluations[i].saving_us > *evaluations[*largest].saving_us))
      largest = i;
  if (!largest) return std::nullopt;
  // Savings within the noise of the largest are the same saving: take the one that adds least work.
  const Evaluation& top = evaluations[*largest];
  const double floor_us = *top.saving_us - top.before_us * top.threshold;
  std::optional<size_t> best;
  for (size_t i = 0; i < evaluations.size(); ++i) {
    const Evaluation& e = evaluations[i];
    if (!e.significant || *e.saving_us < floor_us) continue;
    if (!best || e.extra_flops < evaluations[*best].extra_flops) best = i;
  }
  return best;
}

}  // namespace shapescope
