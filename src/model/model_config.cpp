// Hugging Face configs as ModelConfig, and a model's Linear layers (model/model_config.hpp).
#include "model/model_config.hpp"

#include <fmt/format.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/error.hpp"
#include "model/input_file.hpp"

namespace shapescope {

namespace {

using Json = nlohmann::json;

// The model types each family reads. The gated ones have q/k/v/o_proj and a gated MLP
// (gate/up/down_proj), all unfused. RefinedWeb* are Falcon's names before transformers had it.
struct TypeFamily {
  std::string_view type;
  Family family;
};
constexpr TypeFamily kModelTypes[] = {
    {"gpt2", Family::kGpt2},           {"llama", Family::kGated},       {"mistral", Family::kGated},
    {"qwen2", Family::kGated},         {"qwen3", Family::kGated},       {"gemma", Family::kGated},
    {"gemma2", Family::kGated},        {"falcon", Family::kFalcon},     {"RefinedWeb", Family::kFalcon},
    {"RefinedWebModel", Family::kFalcon}, {"phi", Family::kPhi},        {"gpt_neox", Family::kGptNeox},
    {"mixtral", Family::kMixtral},     {"qwen2_moe", Family::kQwenMoe}, {"qwen3_moe", Family::kQwenMoe},
    {"deepseek_v2", Family::kDeepseek}, {"deepseek_v3", Family::kDeepseek},
};

std::optional<Family> family_of_type(std::string_view type) {
  for (const TypeFamily& t : kModelTypes)
    if (t.type == type) return t.family;
  return std::nullopt;
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
  // The first of two names a family uses for one value (falcon: num_attention_heads or n_head).
  int64_t required(const char* key, const char* old_key) const {
    return has(key) || !has(old_key) ? required(key) : required(old_key);
  }
  bool has(const char* key) const { return json_.contains(key) && !json_[key].is_null(); }
  // A list of layer indices (mlp_only_layers); absent or null: empty.
  std::vector<int64_t> indices(const char* key) const {
    std::vector<int64_t> out;
    if (!has(key)) return out;
    if (json_[key].is_array()) {
      for (const Json& v : json_[key]) {
        if (!v.is_number_integer() || v.get<int64_t>() < 0) break;
        out.push_back(v.get<int64_t>());
      }
      if (out.size() == json_[key].size()) return out;
    }
    throw usage_error(fmt::format("{}: {} is {}; it must be a list of layer indices", origin_, key,
                                  short_dump(json_[key])));
  }
  // nullopt when the key is absent or null (Hugging Face's "use the default").
  std::optional<int64_t> optional(const char* key) const {
    if (!json_.contains(key) || json_[key].is_null()) return std::nullopt;
    return positive(key);
  }
  // A count that may be 0 (first_k_dense_replace, n_shared_experts); absent or null: 0.
  int64_t count(const char* key) const {
    if (!json_.contains(key) || json_[key].is_null()) return 0;
    return positive(key, 0);
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
  int64_t positive(const char* key, int64_t min = 1) const {
    const Json& v = json_[key];
    // A float such as 4096.0 is refused too: configs hold integers, and a float is a sign of a wrong key.
    bool ok = false;
    if (v.is_number_unsigned()) {
      ok = v.get<uint64_t>() >= uint64_t(min) && v.get<uint64_t>() <= uint64_t(kMaxGemmSize);
    } else if (v.is_number_integer()) {
      ok = v.get<int64_t>() >= min && v.get<int64_t>() <= kMaxGemmSize;
    }
    if (!ok)
      throw usage_error(fmt::format("{}: {} is {}; it must be a {} integer (at most {})", origin_, key, short_dump(v),
                                    min == 0 ? "non-negative" : "positive", kMaxGemmSize));
    return v.get<int64_t>();
  }

  const Json& json_;
  const std::string& origin_;
  std::string needs_;
};

void check_size(const ConfigReader& r, const char* what, int64_t value) {
  if (value > kMaxGemmSize) r.fail(fmt::format("{} is {}, more than cuBLAS's 32-bit sizes allow ({})", what, value, kMaxGemmSize));
}

}  // namespace

namespace {

// head_dim from head_dim or hidden / heads, with the check that the heads fit together.
void read_heads(const ConfigReader& r, ModelConfig& c, bool head_dim_key) {
  const std::optional<int64_t> head_dim = head_dim_key ? r.optional("head_dim") : std::nullopt;
  c.head_dim_derived = !head_dim;
  if (head_dim) {
    c.head_dim = *head_dim;
  } else {
    if (c.hidden % c.heads != 0)
      r.fail(fmt::format("hidden_size {} is not a multiple of num_attention_heads {}{}", c.hidden, c.heads,
                         head_dim_key ? " and there is no head_dim" : ""));
    c.head_dim = c.hidden / c.heads;
  }
  if (c.heads % c.kv_heads != 0)
    r.fail(fmt::format("num_attention_heads {} is not a multiple of num_key_value_heads {}", c.heads, c.kv_heads));
}

void read_gpt2(const ConfigReader& r, ModelConfig& c) {
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
}

// Llama-style keys: vocab_size, hidden_size, num_attention_heads, num_key_value_heads, head_dim,
// num_hidden_layers, and intermediate_size where `needs_intermediate`.
void read_llama_keys(const ConfigReader& r, ModelConfig& c, bool needs_intermediate) {
  c.vocab = r.required("vocab_size");
  c.hidden = r.required("hidden_size");
  if (needs_intermediate) c.intermediate = r.required("intermediate_size");
  c.heads = r.required("num_attention_heads");
  c.layers = r.required("num_hidden_layers");
  c.kv_heads = r.optional("num_key_value_heads").value_or(c.heads);
  c.tied_embeddings = r.flag("tie_word_embeddings").value_or(false);  // LlamaConfig's default (and the others')
}

void read_falcon(const ConfigReader& r, ModelConfig& c) {
  c.vocab = r.required("vocab_size");
  c.hidden = r.required("hidden_size");
  c.heads = r.required("num_attention_heads", "n_head");
  c.layers = r.required("num_hidden_layers", "n_layer");
  // FalconConfig's defaults: multi_query true, new_decoder_architecture false, parallel_attn true.
  const bool new_arch = r.flag("new_decoder_architecture").value_or(false);
  const bool multi_query = r.flag("multi_query").value_or(true);
  if (new_arch) {
    c.kv_heads = r.has("num_kv_heads") || !r.has("n_head_kv") ? r.optional("num_kv_heads").value_or(c.heads)
                                                                : r.required("n_head_kv");
  } else {
    c.kv_heads = multi_query ? 1 : c.heads;  // FalconAttention: one KV head, or as many as heads
  }
  read_heads(r, c, false);
  const std::optional<int64_t> ffn = r.optional("ffn_hidden_size");
  c.intermediate_derived = !ffn;
  c.intermediate = ffn ? *ffn : 4 * c.hidden;
  // The new architecture normalises attention's and the MLP's inputs apart (num_ln_in_parallel_attn 2).
  const int64_t norms = r.optional("num_ln_in_parallel_attn").value_or(new_arch ? 2 : 1);
  c.parallel_attention = r.flag("parallel_attn").value_or(true) && norms == 1;
  c.tied_embeddings = r.flag("tie_word_embeddings").value_or(true);  // FalconConfig's default
  check_size(r, "query_key_value's output", (c.heads + 2 * c.kv_heads) * c.head_dim);
}

// "an MoE config (model_type 'mixtral') needs num_local_experts and num_experts_per_tok"
void read_experts(const ConfigReader& r, ModelConfig& c, const char* experts_key) {
  if (!r.has(experts_key) || !r.has("num_experts_per_tok"))
    r.fail(fmt::format("an MoE config (model_type '{}') needs its expert counts: {} and num_experts_per_tok",
                       c.model_type, experts_key));
  c.experts = r.required(experts_key);
  c.experts_per_token = r.required("num_experts_per_tok");
  if (c.experts_per_token > c.experts)
    r.fail(fmt::format("num_experts_per_tok {} is more than {} {}", c.experts_per_token, experts_key, c.experts));
}

// Layers with a dense MLP; those need intermediate_size.
void read_dense_layers(const ConfigReader& r, ModelConfig& c, const std::function<bool(int64_t)>& sparse) {
  c.dense_layers = 0;
  for (int64_t i = 0; i < c.layers; ++i) c.dense_layers += sparse(i) ? 0 : 1;
  if (c.dense_layers > 0) c.intermediate = r.required("intermediate_size");
}

void read_qwen_moe(const ConfigReader& r, ModelConfig& c) {
  read_experts(r, c, "num_experts");
  read_llama_keys(r, c, false);
  read_heads(r, c, true);
  c.expert_intermediate = r.required("moe_intermediate_size");
  c.shared_intermediate = r.optional("shared_expert_intermediate_size").value_or(0);
  c.shared_expert_gate = c.shared_intermediate > 0 && c.model_type == "qwen2_moe";
  // Qwen2MoeDecoderLayer: sparse where the layer is not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0.
  const int64_t step = r.optional("decoder_sparse_step").value_or(1);
  const std::vector<int64_t> dense = r.indices("mlp_only_layers");
  read_dense_layers(r, c, [&](int64_t i) {
    return std::find(dense.begin(), dense.end(), i) == dense.end() && (i + 1) % step == 0;
  });
}

void read_deepseek(const ConfigReader& r, ModelConfig& c) {
  read_experts(r, c, "n_routed_experts");
  read_llama_keys(r, c, false);
  c.expert_intermediate = r.required("moe_intermediate_size");
  c.shared_intermediate = r.count("n_shared_experts") * c.expert_intermediate;
  // DeepseekV2DecoderLayer: MoE from layer first_k_dense_replace on, every moe_layer_freq-th layer.
  const int64_t first_dense = r.count("first_k_dense_replace");
  const int64_t freq = r.optional("moe_layer_freq").value_or(1);
  read_dense_layers(r, c, [&](int64_t i) { return i >= first_dense && i % freq == 0; });
  if (!r.has("kv_lora_rank"))
    r.fail(fmt::format("model_type '{}' without kv_lora_rank: shapescope knows DeepSeek's attention only as "
                       "multi-head latent attention (kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim)",
                       c.model_type));
  c.kv_lora_rank = r.required("kv_lora_rank");
  c.q_lora_rank = r.optional("q_lora_rank").value_or(0);  // null: q_proj, no low-rank query
  c.qk_nope_head_dim = r.required("qk_nope_head_dim");
  c.qk_rope_head_dim = r.required("qk_rope_head_dim");
  c.v_head_dim = r.required("v_head_dim");
  c.head_dim = c.qk_nope_head_dim + c.qk_rope_head_dim;  // the query/key head; values have v_head_dim
  c.head_dim_derived = false;
  c.kv_heads = c.heads;  // MLA expands the latent into every head's key and value
  check_size(r, "kv_b_proj's output", c.heads * (c.qk_nope_head_dim + c.v_head_dim));
}

}  // namespace

std::string_view family_name(Family family) {
  switch (family) {
    case Family::kGpt2: return "gpt2";
    case Family::kGated: return "llama";
    case Family::kFalcon: return "falcon";
    case Family::kPhi: return "phi";
    case Family::kGptNeox: return "gpt_neox";
    case Family::kMixtral: return "mixtral";
    case Family::kQwenMoe: return "qwen_moe";
    case Family::kDeepseek: return "deepseek";
  }
  return "?";
}

std::string known_model_types() {
  std::string out;
  for (const TypeFamily& t : kModelTypes)
    if (t.type.rfind("RefinedWeb", 0) != 0) out += fmt::format("{}{}", out.empty() ? "" : ", ", t.type);
  return out;
}

ModelConfig parse_model_config(std::string_view text, const std::string& origin) {
  const Json json = parse_json_text(text, origin);
  if (!json.is_object()) throw usage_error(fmt::format("{} is not a JSON object", origin));

  ModelConfig c;
  const ConfigReader meta(json, origin, "");
  c.model_type = meta.text("model_type");
  c.description = meta.text("_description");
  c.source = meta.text("_source");
  if (c.model_type.empty()) {
    c.family = json.contains("n_embd") ? Family::kGpt2 : Family::kGated;
  } else if (const std::optional<Family> f = family_of_type(c.model_type)) {
    c.family = *f;
  } else {
    throw usage_error(fmt::format("{}: model_type '{}' is not one shapescope knows ({}); for another model give its "
                                  "GEMMs instead: a PyTorch profiler trace (--trace) or a GEMM list (--gemms)",
                                  origin, c.model_type, known_model_types()));
  }

  const std::string type = c.family == Family::kGpt2 ? "GPT-2"
                           : c.model_type.empty()     ? std::string(family_name(c.family)) + "-style"
                                                      : c.model_type;
  const auto needs = [&](const char* keys) { return fmt::format("a {} config needs {}", type, keys); };
  constexpr const char* kLlamaKeys =
      "vocab_size, hidden_size, intermediate_size, num_attention_heads, num_hidden_layers";
  switch (c.family) {
    case Family::kGpt2: read_gpt2(ConfigReader(json, origin, needs("vocab_size, n_embd, n_head, n_layer")), c); break;
    case Family::kGated:
    case Family::kPhi:
    case Family::kGptNeox:
    case Family::kMixtral: {
      const ConfigReader r(json, origin, needs(kLlamaKeys));
      if (c.family == Family::kMixtral) read_experts(r, c, "num_local_experts");
      read_llama_keys(r, c, true);
      // Phi and GPT-NeoX have no head_dim key: hidden / heads.
      read_heads(r, c, c.family == Family::kGated || c.family == Family::kMixtral);
      c.parallel_attention = c.family == Family::kPhi;
      if (c.family == Family::kMixtral) c.expert_intermediate = c.intermediate;
      break;
    }
    case Family::kFalcon:
      read_falcon(ConfigReader(json, origin, needs("vocab_size, hidden_size, num_attention_heads, num_hidden_layers")),
                  c);
      break;
    case Family::kQwenMoe:
      read_qwen_moe(ConfigReader(json, origin, needs("vocab_size, hidden_size, num_attention_heads, "
                                                     "num_hidden_layers, moe_intermediate_size")),
                    c);
      break;
    case Family::kDeepseek:
      read_deepseek(ConfigReader(json, origin, needs("vocab_size, hidden_size, num_attention_heads, "
                                                     "num_hidden_layers, moe_intermediate_size")),
                    c);
      break;
  }
  if (c.family != Family::kGpt2)
    check_size(ConfigReader(json, origin, ""), "num_attention_heads x head_dim", c.heads * c.head_dim);
  return c;
}

ModelConfig load_model_config(const std::string& path, const std::string& origin) {
  return parse_model_config(read_text_file(path, origin), origin);
}

namespace {

constexpr Parallel kCol = Parallel::kColumn, kRow = Parallel::kRow, kRep = Parallel::kReplicated;

// nanoGPT and llm.c run these as nn.Linear (x @ W.t(), nt). Hugging Face's GPT-2 stores them as
// Conv1D with W as in x out (addmm(x, W): nn); the shapes are the same.
std::vector<LinearLayer> gpt2_layers(const ModelConfig& c) {
  const int64_t l = c.layers;
  return {
      {"c_attn", c.hidden, 3 * c.hidden, l, kCol, "attn_in"},
      {"attn.c_proj", c.hidden, c.hidden, l, kRow, "attn_out"},
      {"c_fc", c.hidden, c.intermediate, l, kCol, "mlp_in"},
      {"mlp.c_proj", c.intermediate, c.hidden, l, kRow, "mlp_act"},
      {"lm_head", c.hidden, c.vocab, 1, kCol, "final"},
  };
}

// Falcon and GPT-NeoX: one fused QKV of (heads + 2 x kv_heads) x head_dim (3 x hidden for gpt_neox
// and multi-head falcon).
std::vector<LinearLayer> fused_qkv_layers(const ModelConfig& c) {
  const int64_t l = c.layers;
  const std::string mlp_in = c.parallel_attention ? "attn_in" : "mlp_in";
  return {
      {"query_key_value", c.hidden, (c.heads + 2 * c.kv_heads) * c.head_dim, l, kCol, "attn_in"},
      {"dense", c.q_width(), c.hidden, l, kRow, "attn_out"},
      {"dense_h_to_4h", c.hidden, c.intermediate, l, kCol, mlp_in},
      {"dense_4h_to_h", c.intermediate, c.hidden, l, kRow, "mlp_act"},
      {c.family == Family::kFalcon ? "lm_head" : "embed_out", c.hidden, c.vocab, 1, kCol, "final"},
  };
}

std::vector<LinearLayer> phi_layers(const ModelConfig& c) {
  const int64_t l = c.layers;
  return {
      {"q_proj", c.hidden, c.q_width(), l, kCol, "attn_in"},
      {"k_proj", c.hidden, c.kv_width(), l, kCol, "attn_in"},
      {"v_proj", c.hidden, c.kv_width(), l, kCol, "attn_in"},
      {"dense", c.q_width(), c.hidden, l, kRow, "attn_out"},
      {"fc1", c.hidden, c.intermediate, l, kCol, "attn_in"},  // parallel attention: the same input
      {"fc2", c.intermediate, c.hidden, l, kRow, "mlp_act"},
      {"lm_head", c.hidden, c.vocab, 1, kCol, "final"},
  };
}

// q/k/v/o_proj, or DeepSeek's multi-head latent attention: queries through a low-rank latent where
// q_lora_rank is set, keys and values always through kv_lora_rank (plus the shared rotary key).
void add_attention_layers(const ModelConfig& c, std::vector<LinearLayer>& out) {
  const int64_t l = c.layers;
  if (!c.mla()) {
    out.push_back({"q_proj", c.hidden, c.q_width(), l, kCol, "attn_in"});
    out.push_back({"k_proj", c.hidden, c.kv_width(), l, kCol, "attn_in"});
    out.push_back({"v_proj", c.hidden, c.kv_width(), l, kCol, "attn_in"});
    out.push_back({"o_proj", c.q_width(), c.hidden, l, kRow, "attn_out"});
    return;
  }
  const int64_t q_head = c.qk_nope_head_dim + c.qk_rope_head_dim;
  if (c.q_lora_rank > 0) {
    out.push_back({"q_a_proj", c.hidden, c.q_lora_rank, l, kRep, "attn_in"});
    out.push_back({"q_b_proj", c.q_lora_rank, c.heads * q_head, l, kCol, "q_latent"});
  } else {
    out.push_back({"q_proj", c.hidden, c.heads * q_head, l, kCol, "attn_in"});
  }
  out.push_back({"kv_a_proj_with_mqa", c.hidden, c.kv_lora_rank + c.qk_rope_head_dim, l, kRep, "attn_in"});
  out.push_back({"kv_b_proj", c.kv_lora_rank, c.heads * (c.qk_nope_head_dim + c.v_head_dim), l, kCol, "kv_latent"});
  out.push_back({"o_proj", c.heads * c.v_head_dim, c.hidden, l, kRow, "attn_out"});
}

// An MoE layer: the router scores every token against every expert; each expert then runs on its
// tokens; shared experts (and qwen2_moe's gate on them) run on every token.
void add_moe_layers(const ModelConfig& c, std::vector<LinearLayer>& out) {
  const int64_t m = c.moe_layers(), e = c.experts, w = c.expert_intermediate;
  const bool mixtral = c.family == Family::kMixtral;
  out.push_back({mixtral ? "block_sparse_moe.gate" : "mlp.gate", c.hidden, e, m, kRep, "mlp_in"});
  out.push_back({mixtral ? "experts.w1" : "experts.gate_proj", c.hidden, w, m, kCol, "routed_in", e, true});
  out.push_back({mixtral ? "experts.w3" : "experts.up_proj", c.hidden, w, m, kCol, "routed_in", e, true});
  out.push_back({mixtral ? "experts.w2" : "experts.down_proj", w, c.hidden, m, kRow, "routed_act", e, true});
  if (c.shared_intermediate > 0) {
    const std::string shared = c.family == Family::kDeepseek ? "shared_experts" : "shared_expert";
    out.push_back({shared + ".gate_proj", c.hidden, c.shared_intermediate, m, kCol, "mlp_in"});
    out.push_back({shared + ".up_proj", c.hidden, c.shared_intermediate, m, kCol, "mlp_in"});
    out.push_back({shared + ".down_proj", c.shared_intermediate, c.hidden, m, kRow, "shared_act"});
  }
  if (c.shared_expert_gate) out.push_back({"shared_expert_gate", c.hidden, 1, m, kRep, "mlp_in"});
}

// The gated families (Llama and the MoE ones): attention, the dense MLP layers, the MoE layers.
std::vector<LinearLayer> gated_layers(const ModelConfig& c) {
  std::vector<LinearLayer> out;
  add_attention_layers(c, out);
  const int64_t dense = c.moe() ? c.dense_layers : c.layers;
  if (dense > 0) {
    out.push_back({"gate_proj", c.hidden, c.intermediate, dense, kCol, "mlp_in"});
    out.push_back({"up_proj", c.hidden, c.intermediate, dense, kCol, "mlp_in"});
    out.push_back({"down_proj", c.intermediate, c.hidden, dense, kRow, "mlp_act"});
  }
  if (c.moe()) add_moe_layers(c, out);
  out.push_back({"lm_head", c.hidden, c.vocab, 1, kCol, "final"});
  return out;
}

}  // namespace

std::vector<LinearLayer> linear_layers(const ModelConfig& c) {
  switch (c.family) {
    case Family::kGpt2: return gpt2_layers(c);
    case Family::kFalcon:
    case Family::kGptNeox: return fused_qkv_layers(c);
    case Family::kPhi: return phi_layers(c);
    case Family::kGated:
    case Family::kMixtral:
    case Family::kQwenMoe:
    case Family::kDeepseek: break;
  }
  return gated_layers(c);
}

std::vector<int64_t> balanced_expert_tokens(int64_t tokens, int64_t top_k, int64_t experts) {
  const int64_t routed = tokens * top_k;
  std::vector<int64_t> out(size_t(experts), routed / experts);
  for (int64_t e = 0; e < routed % experts; ++e) out[size_t(e)] += 1;
  return out;
}


void check_tp(const ModelConfig& c, int64_t tp) {
  const bool gpt2 = c.family == Family::kGpt2 || c.family == Family::kGptNeox;
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
  if ((!c.moe() || c.dense_layers > 0) && c.intermediate % tp != 0)
    throw usage_error(fmt::format("--tp: {} does not divide {} {} (the MLP is split over its intermediate features)",
                                  tp, c.family == Family::kGpt2 ? "n_inner" : "intermediate_size", c.intermediate));
  if (c.moe() && c.expert_intermediate % tp != 0)
    throw usage_error(fmt::format("--tp: {} does not divide the experts' width {} (each expert is split over its "
                                  "intermediate features)",
                                  tp, c.expert_intermediate));
  if (c.shared_intermediate % tp != 0)
    throw usage_error(fmt::format("--tp: {} does not divide the shared expert's width {}", tp, c.shared_intermediate));
}

}  // namespace shapescope
