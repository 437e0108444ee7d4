#include "model/pad.hpp"

#include <fmt/format.h>

#include "core/fp8.hpp"
#include "model/fp8_steps.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "common/error.hpp"
#include "model/workload.hpp"

namespace shapescope {

namespace {

// A candidate value is searched upwards from the size neighbours() proposes; the constraints are
// divisibility by small numbers (heads, tp), so a valid value is always near.
constexpr int64_t kMaxSearch = 1 << 16;

// Families whose head_dim is hidden / heads by construction (no head_dim key): a new hidden size
// moves the head count.
bool heads_follow_hidden(const ModelConfig& c) {
  return c.family == Family::kGpt2 || c.family == Family::kFalcon || c.family == Family::kPhi ||
         c.family == Family::kGptNeox;
}

// Packed, as `sweep` plans a problem without --ld-pad: the store then shares points with sweeps. In
// fp8 the pass runs as its recipe's nt GEMM (model/fp8_steps.hpp).
Problem gemm(int64_t m, int64_t n, int64_t k, Layout layout, const StepOptions& s) {
  if (s.dtype != DType::kFp8) return packed_problem(m, n, k, layout, s.dtype);
  return fp8_problem(packed_problem(m, n, k, layout, DType::kBf16), gemm_recipe(s.fp8, linear_roles(layout)));
}

// The block a dimension of the step must fill: 128 under fp8 block scaling (its scales cover 128
// elements; model/explain_fp8.hpp), else 1.
int64_t recipe_block(const StepOptions& s) {
  return s.dtype == DType::kFp8 && (s.fp8 == Fp8Scaling::kBlock || s.fp8 == Fp8Scaling::kBlock1x128) ? kScaleBlock : 1;
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
    case Choice::kVocab: return value % s.tp == 0 && value <= kMaxGemmSize;
    case Choice::kHidden:
      // GPT-2's (falcon's, phi's, gpt_neox's) heads follow hidden (head_dim = hidden / heads), and the fused
      // QKV projection is up to 3 x hidden wide; grouped KV heads must still divide the heads.
      if (heads_follow_hidden(c))
        return value % c.head_dim == 0 && (value / c.head_dim) % s.tp == 0 && 3 * value <= kMaxGemmSize &&
               (c.kv_heads == c.heads || (value / c.head_dim) % c.kv_heads == 0);
      return value <= kMaxGemmSize;
    case Choice::kIntermediate: return value % s.tp == 0 && value <= kMaxGemmSize;
    case Choice::kHeads: return value % c.kv_heads == 0 && value % s.tp == 0 && value * c.head_dim <= kMaxGemmSize;
    case Choice::kKvHeads: return c.heads % value == 0 && value % s.tp == 0;
    case Choice::kTokens:
    case Choice::kSize: return value <= kMaxGemmSize;
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
      if (heads_follow_hidden(c)) {
        if (c.kv_heads == c.heads) c.kv_heads = value / c.head_dim;
        c.heads = value / c.head_dim;
        c.intermediate_derived = false;  // n_inner (ffn_hidden_size) stays at its value, no longer 4 x hidden
      }
      c.head_dim_derived = false;
      break;
    case Choice::kIntermediate:
      if (c.family == Family::kQwenMoe || c.family == Family::kDeepseek) {
        // The experts' width; DeepSeek's shared experts are n_shared_experts of them.
        if (c.family == Family::kDeepseek) c.shared_intermediate = c.shared_intermediate / c.expert_intermediate * value;
        c.expert_intermediate = value;
        break;
      }
      c.intermediate = value;
      if (c.family == Family::kMixtral) c.expert_intermediate = value;
      c.intermediate_derived = false;
      break;
    case Choice::kHeads: c.heads = value; break;
    case Choice::kKvHeads: c.kv_heads = value; break;
    case Choice::kTokens: s.tokens = value; break;
    case Choice::kSize: break;
  }
  return {c, s};
}

}  // namespace

std::string_view pass_name(Pass pass) {
  switch (pass) {
    case Pass::kForward: return "fwd";
    case Pass::kInputGrad: return "dgrad";
    case Pass::kWeightGrad: return "wgrad";
  }
  return "?";
}

namespace {

// One entry per Linear and pass, nothing merged.
std::vector<StepGemm> linear_gemms(const ModelConfig& config, const StepOptions& step) {
  std::vector<StepGemm> out;
  const int64_t t = step.tokens;
  for (const LinearLayer& l : linear_layers(config)) {
    const int64_t in = l.in_per_rank(step.tp), o = l.out_per_rank(step.tp);
    // An expert runs on its share of the routed tokens: balanced, two row counts at most (the
    // remainder's experts have one row more), each with the experts that have it.
    std::map<int64_t, int64_t, std::greater<>> experts_with_rows;
    if (l.routed) {
      for (int64_t rows : balanced_expert_tokens(t, config.experts_per_token, config.experts))
        if (rows > 0) experts_with_rows[rows] += 1;
    } else {
      experts_with_rows[t] = 1;
    }
    for (const auto& [rows, experts] : experts_with_rows) {
      const int64_t count = l.count * experts;
      out.push_back({l.name, Pass::kForward, gemm(rows, o, in, Layout::kNT, step), count});
      if (!step.train) continue;
      out.push_back({l.name, Pass::kInputGrad, gemm(rows, in, o, Layout::kNN, step), count});
      out.push_back({l.name, Pass::kWeightGrad, gemm(o, in, rows, Layout::kTN, step), count});
    }
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
    join_name(same->linear, g.linear);
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
  auto fwd = [&](int64_t n, int64_t k) { return gemm(t, n, k, Layout::kNT, s); };
  std::vector<ChoiceInfo> out;
  const std::vector<LinearLayer> layers = linear_layers(c);
  out.push_back({Choice::kVocab, "vocab_size", c.vocab, 1, tp, layers.back().name + " fwd", fwd(c.vocab / tp, c.hidden)});
  if (c.family != Family::kGpt2 && c.family != Family::kGated) {
    // The attention output projection shows hidden_size as its N; the MLP's up projection (an
    // expert's, where the MLP is routed) shows the MLP's width.
    const LinearLayer& o_proj =
        *std::find_if(layers.begin(), layers.end(), [](const LinearLayer& l) { return l.input == "attn_out"; });
    out.push_back({Choice::kHidden, "hidden_size", c.hidden, 1, 1, o_proj.name + " fwd",
                   fwd(c.hidden, o_proj.in_per_rank(tp))});
    const bool experts_key = c.family == Family::kQwenMoe || c.family == Family::kDeepseek;
    const std::string key = c.family == Family::kFalcon ? "ffn_hidden_size"
                            : experts_key               ? "moe_intermediate_size"
                                                        : "intermediate_size";
    const std::string up = c.family == Family::kPhi       ? "fc1"
                           : c.family == Family::kMixtral ? "experts.w3"
                           : experts_key                  ? "experts.up_proj"
                                                          : "dense_h_to_4h";
    const int64_t width = c.moe() ? c.expert_intermediate : c.intermediate;
    const int64_t rows = c.moe() ? balanced_expert_tokens(t, c.experts_per_token, c.experts).front() : t;
    out.push_back({Choice::kIntermediate, key, width, 1, tp, up + " fwd",
                   gemm(rows, width / tp, c.hidden, Layout::kNT, s)});
  } else if (gpt2) {
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
  std::vector<StepGemm> gemms = step_gemms(c, {s.tokens, false, s.tp, s.dtype, s.fp8});
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
  const int64_t block = recipe_block(step);
  const int64_t keep = std::max({int64_t(16 / input_bytes(step.dtype)), largest_power_of_two(current), block});
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
    if (size % block != 0) continue;  // an fp8 block recipe runs only sizes that fill its blocks
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
  for (const LinearLayer& l : linear_layers(config))
    total += double(l.in) * double(l.out) * double(l.count) * double(l.experts);
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
    if (l.routed) continue;  // experts read a permuted copy of their tokens anyway
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
  add_saving(e, before_time, after_time);
  return e;
}

void add_saving(Evaluation& e, const std::optional<StepTime>& before, const std::optional<StepTime>& after) {
  e.after = after;
  if (!before || !after) return;
  e.before_us = before->us;
  e.saving_us = before->us - after->us - e.copy_us.value_or(0);
  e.threshold = std::max({kMinGain, before->noise, after->noise});
  e.significant = *e.saving_us > before->us * e.threshold;
}

void add_paired_saving(Evaluation& e, const PairedRatio& ratio, double before_us) {
  const double copy = e.copy_us.value_or(0);
  e.paired = ratio;
  e.before_us = before_us;
  e.after = StepTime{before_us * ratio.median, 0};
  e.saving_us = before_us * (1 - ratio.median) - copy;
  e.saving_low_us = before_us * (1 - ratio.high) - copy;
  e.saving_high_us = before_us * (1 - ratio.low) - copy;
  e.threshold = kMinGain;
  e.significant = e.saving_low_us > before_us * kMinGain;
  e.cannot_tell = !e.significant && e.saving_high_us > before_us * kMinGain;
}

std::optional<size_t> recommend(const std::vector<Evaluation>& evaluations) {
  std::optional<size_t> largest;
  for (size_t i = 0; i < evaluations.size(); ++i)
    if (evaluations[i].significant && (!largest || *evaluations[i].saving_us > *evaluations[*largest].saving_us))
      largest = i;
  if (!largest) return std::nullopt;
  // Savings within the noise of the largest are the same saving: take the one that adds least work.
  const Evaluation& top = evaluations[*largest];
  const double floor_us = top.paired ? top.saving_low_us : *top.saving_us - top.before_us * top.threshold;
  std::optional<size_t> best;
  for (size_t i = 0; i < evaluations.size(); ++i) {
    const Evaluation& e = evaluations[i];
    if (!e.significant || (e.paired ? e.saving_high_us : *e.saving_us) < floor_us) continue;
    if (!best || e.extra_flops < evaluations[*best].extra_flops) best = i;
  }
  return best;
}

}  // namespace shapescope
