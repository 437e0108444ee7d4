// A transformer as its Hugging Face config describes it (ModelConfig), read from a config.json or a
// preset, and the Linear layers it runs (linear_layers): what `pad` pads and what
// model/config_workload.hpp turns into a step's GEMMs. Pure C++.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace shapescope {

// cuBLAS takes every size as a 32-bit int: a config whose Linears exceed it is refused, and a padded
// size never goes beyond it.
constexpr int64_t kMaxGemmSize = std::numeric_limits<int32_t>::max();

// How a model family lays out its Linear layers (names as the transformers modules have them).
enum class Family {
  kGpt2,     // one fused c_attn (hidden -> 3 x hidden), attn.c_proj, GELU MLP c_fc / mlp.c_proj
  kGated,    // Llama, Mistral, Qwen2/3, Gemma: q/k/v/o_proj, gated MLP gate/up/down_proj
  kFalcon,   // fused query_key_value ((heads + 2 x kv_heads) x head_dim; multi-query: 1 KV head), dense,
             // dense_h_to_4h / dense_4h_to_h; parallel attention (attention and MLP read one input)
  kPhi,      // Phi-1/2: q/k/v_proj, dense, fc1 / fc2; parallel attention
  kGptNeox,  // Pythia, GPT-NeoX: fused query_key_value (3 x hidden), dense, dense_h_to_4h / dense_4h_to_h, embed_out
  kMixtral,  // q/k/v/o_proj, router block_sparse_moe.gate, experts w1 / w3 / w2
  kQwenMoe,  // qwen2_moe, qwen3_moe: q/k/v/o_proj, router mlp.gate, experts gate/up/down_proj, shared_expert
             // (qwen2_moe, with its sigmoid shared_expert_gate)
  kDeepseek, // deepseek_v2/v3: MLA attention (q_proj or q_a/q_b_proj, kv_a_proj_with_mqa, kv_b_proj, o_proj),
             // router gate, experts and shared_experts gate/up/down_proj; the first layers dense
};
// "gpt2", "llama", "falcon", "phi", "gpt_neox", "mixtral", "qwen_moe", "deepseek"
std::string_view family_name(Family family);
// The model_type values parse_model_config knows, for messages: "gpt2, llama, mistral, ..."
std::string known_model_types();

struct ModelConfig {
  std::string name;          // the preset's name or the config file's path (set by the caller)
  std::string description;   // a preset's "_description" ("GPT-2 124M"); "" otherwise
  std::string source;        // a preset's "_source" (where its values come from); "" otherwise
  std::string model_type;    // as the config says; "" when it says nothing
  Family family = Family::kGated;
  int64_t vocab = 0, hidden = 0, intermediate = 0;
  int64_t heads = 0, kv_heads = 0, head_dim = 0, layers = 0;
  bool intermediate_derived = false;  // GPT-2's n_inner was null: 4 x n_embd
  bool head_dim_derived = false;      // no head_dim key: hidden / heads
  bool tied_embeddings = false;       // the LM head is the token embedding (one matrix, not two)
  bool parallel_attention = false;    // falcon, phi: attention and MLP read the same normed input

  // Mixture of experts (0 when dense). Every layer but `dense_layers` has a router (hidden ->
  // experts) and experts of width expert_intermediate, each token routed to experts_per_token.
  int64_t experts = 0;               // num_local_experts / num_experts / n_routed_experts
  int64_t experts_per_token = 0;     // num_experts_per_tok (top-k)
  int64_t expert_intermediate = 0;   // moe_intermediate_size (Mixtral: intermediate_size)
  int64_t shared_intermediate = 0;   // the shared expert's width: qwen2_moe shared_expert_intermediate_size,
                                     // deepseek n_shared_experts x moe_intermediate_size; 0: none
  bool shared_expert_gate = false;   // qwen2_moe: a sigmoid gate Linear(hidden, 1) on the shared expert
  int64_t dense_layers = 0;          // layers with a dense MLP of `intermediate` (deepseek first_k_dense_replace,
                                     // qwen mlp_only_layers / decoder_sparse_step)
  // DeepSeek's multi-head latent attention (0 when absent).
  int64_t q_lora_rank = 0, kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;

  bool moe() const { return experts > 0; }
  int64_t moe_layers() const { return moe() ? layers - dense_layers : 0; }
  bool mla() const { return kv_lora_rank > 0; }
  int64_t q_width() const { return heads * head_dim; }
  int64_t kv_width() const { return kv_heads * head_dim; }
};

// Reads a Hugging Face style config.json: GPT-2's vocab_size, n_embd, n_head, n_layer, n_inner
// (null: 4 x n_embd), or hidden_size, intermediate_size, num_attention_heads, num_key_value_heads
// (absent: = heads), head_dim (absent: hidden / heads), num_hidden_layers, vocab_size; and each
// family's own keys (falcon: num_kv_heads, multi_query, new_decoder_architecture, ffn_hidden_size,
// parallel_attn; MoE: num_local_experts / num_experts / n_routed_experts, num_experts_per_tok,
// moe_intermediate_size, shared_expert_intermediate_size, n_shared_experts, first_k_dense_replace,
// moe_layer_freq, decoder_sparse_step, mlp_only_layers; MLA: q_lora_rank, kv_lora_rank,
// qk_nope_head_dim, qk_rope_head_dim, v_head_dim). The family comes from model_type, or from the
// keys when there is none. Every message starts with `origin` ("--config: 'my.json'"); throws
// usage_error for malformed JSON, a missing key, a value that is not a positive integer, an unknown
// model_type (listing the known ones and the trace and GEMM-list sources), an MoE config without
// expert counts, or head counts that do not fit together.
ModelConfig parse_model_config(std::string_view text, const std::string& origin);
// The same from a file; also throws usage_error when the file cannot be read.
ModelConfig load_model_config(const std::string& path, const std::string& origin);

// Tensor parallelism (Megatron): a column-parallel Linear splits its output features over the
// ranks, a row-parallel one its input features; each rank runs the GEMM on its slice.
// A replicated one (a router, a low-rank projection) runs whole on every rank.
enum class Parallel { kColumn, kRow, kReplicated };

struct LinearLayer {
  std::string name;          // as Hugging Face names the module: "c_attn", "q_proj", "lm_head"
  int64_t in = 0, out = 0;   // features of the whole layer (before tensor-parallel splitting)
  int64_t count = 1;         // per step: one per transformer layer; the LM head once
  Parallel parallel = Parallel::kColumn;
  std::string input;         // the activation it reads: Linears reading the same one share a padded copy
  int64_t experts = 1;       // copies of the weight: an MoE layer's experts, else 1
  bool routed = false;       // an expert: each copy runs on the tokens routed to it (tokens x top-k / experts)

  int64_t in_per_rank(int64_t tp) const { return parallel == Parallel::kRow ? in / tp : in; }
  int64_t out_per_rank(int64_t tp) const { return parallel == Parallel::kColumn ? out / tp : out; }
};
// In the order one layer runs them, then the LM head.
std::vector<LinearLayer> linear_layers(const ModelConfig& config);

// Rows each expert gets when `tokens` tokens each go to `top_k` of `experts` experts, routed
// evenly: tokens x top_k / experts each, the remainder one row each to the first experts.
std::vector<int64_t> balanced_expert_tokens(int64_t tokens, int64_t top_k, int64_t experts);

// Throws usage_error("--tp: ...") naming the dimension when tp does not divide one that it splits
// (vocabulary, heads, KV heads, intermediate).
void check_tp(const ModelConfig& config, int64_t tp);

}  // namespace shapescope
