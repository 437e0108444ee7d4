// `shapescope pad`: the Linear GEMMs of one step of a transformer, the dimensions a model author
// chooses (vocabulary, hidden, intermediate, heads, KV heads, tokens), the sizes worth padding each
// to, and the arithmetic that turns measured GEMM times into a saving and a cost. Pure C++: configs
// in, GEMM lists and sums out; it measures nothing.
//
// Conventions (DESIGN.md): C[M,N] = A[M,K] @ B[K,N], row-major. A Linear y = x @ W.t() with W stored
// out x in runs three GEMMs per step when training:
//   forward          y  = x  @ W.t()   nt  M = tokens, N = out, K = in
//   input gradient   dx = dy @ W       nn  M = tokens, N = in,  K = out
//   weight gradient  dW = dy.t() @ x   tn  M = out,    N = in,  K = tokens
// The attention core (QK^T, softmax, PV) is not in the list: it runs as one fused FlashAttention
// kernel, not as cuBLAS GEMMs.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/annotate.hpp"
#include "model/explain.hpp"
#include "core/paired_ratio.hpp"
#include "core/problem.hpp"

namespace shapescope {

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

enum class Pass { kForward, kInputGrad, kWeightGrad };
std::string_view pass_name(Pass pass);  // "fwd", "dgrad", "wgrad"

struct StepOptions {
  int64_t tokens = 0;   // batch x sequence: the M of every forward GEMM
  bool train = false;   // forward only, or forward and both backward GEMMs
  int64_t tp = 1;
  DType dtype = DType::kBf16;
};

// Throws usage_error("--tp: ...") naming the dimension when tp does not divide one that it splits
// (vocabulary, heads, KV heads, intermediate).
void check_tp(const ModelConfig& config, int64_t tp);

struct StepGemm {
  std::string linear;    // "c_attn"; Linears of the same shape merged: "k_proj+v_proj"
  Pass pass = Pass::kForward;
  Problem problem;       // per rank, packed leading dimensions (as `sweep` plans them)
  int64_t count = 0;     // calls per step
};
// Every GEMM of one step per rank, identical problems merged with their counts added, in the order
// the Linears run (for each: fwd, dgrad, wgrad).
std::vector<StepGemm> step_gemms(const ModelConfig& config, const StepOptions& step);
// "12288x2304x768 nt" for messages.
std::string gemm_string(const Problem& problem);

// The dimensions a model author chooses. kSize: a size of a trace or GEMM list that no config
// names (model/workload.hpp's dimension_knobs): any value is allowed, and the caller applies it to
// the workload (with_dimension); the config is left as it is.
enum class Choice { kVocab, kHidden, kIntermediate, kHeads, kKvHeads, kTokens, kSize };

struct ChoiceInfo {
  Choice choice = Choice::kVocab;
  std::string name;        // the config key ("vocab_size", "n_embd", "num_attention_heads"), or "tokens"
  int64_t value = 0;       // in its own units: a head count for the head choices
  int64_t unit = 1;        // GEMM elements per unit: head_dim for head counts, 1 otherwise
  int64_t shard = 1;       // tp where tensor parallelism splits it, else 1
  std::string probe_name;  // the forward GEMM that shows it: "lm_head fwd"
  Problem probe;           // that GEMM: its tile and slots say which size fills the last wave
  Dim probe_dim = Dim::kN; // as its N (M for tokens)

  int64_t gemm_size() const { return value * unit / shard; }
  std::string where() const;  // "N of lm_head fwd"
};
// GPT-2: vocab_size, n_embd (moves n_head, head_dim 64 kept), n_inner, tokens. The gated family:
// vocab_size, hidden_size (head_dim kept), intermediate_size, num_attention_heads and
// num_key_value_heads (x head_dim), tokens. The other families: vocab_size, hidden_size (falcon,
// phi, gpt_neox: moves the heads, head_dim kept), the MLP width (ffn_hidden_size, intermediate_size,
// or the experts' moe_intermediate_size), tokens.
std::vector<ChoiceInfo> choices(const ModelConfig& config, const StepOptions& step);

struct PadCandidate {
  Choice choice = Choice::kVocab;
  int64_t value = 0;       // the new value, in the choice's units
  int64_t gemm_size = 0;   // what the GEMMs see: value x unit / shard
  std::string why;         // "multiple of 128 above", "fills its last wave", ...
  ModelConfig config;      // the model with this value (the tokens choice leaves it)
  StepOptions step;        // the step with this value (only the tokens choice changes it)
};

// A last wave at least this full counts as filled, as neighbours() counts it.
constexpr double kFilledWave = 0.95;

// The sizes to try for one choice: neighbours_along(probe, dim, probe_annotation, Side::kAbove) —
// the next multiples of 8..256 above and, when the annotation knows the tile and slots, the size
// that fills the last wave — each raised to the nearest value the model allows (whole heads, a
// multiple of the KV heads, divisible by tp). A size that already is a multiple of 256 gets no
// multiples: it meets every alignment on the list, and a larger multiple only adds work. The wave
// size is rounded up to keep the current size's alignment (and 16-byte rows), and kept only if it
// still fills the last wave and is within +25 % of the current size.
std::vector<PadCandidate> pad_candidates(const ModelConfig& config, const StepOptions& step, const ChoiceInfo& choice,
                                         const Annotation& probe_annotation);

// Elements of the weight matrices: every Linear, and the token embedding where the LM head does
// not share it. Biases, norms and GPT-2's position embedding are vectors or small next to these.
double weight_parameters(const ModelConfig& config);
// FLOPs of the GEMMs of one step on one rank: sum of count x 2MNK.
double step_flops(const std::vector<StepGemm>& gemms);
// Bytes one rank copies per step to pad the tokens from step.tokens to `padded` at run time: each
// distinct forward input is copied into a zero-padded buffer (read T rows, write T' rows), and in
// training each Linear's output gradient too (the weight gradient reuses both copies). Outputs
// need no copy: their first T rows are a row-major view.
double token_copy_bytes(const ModelConfig& config, const StepOptions& step, int64_t padded);
// How many GEMMs of single Linears (per layer, before merging) a change alters: what a candidate
// touches. The two models have the same Linears.
size_t touched_gemms(const ModelConfig& before, const StepOptions& before_step, const ModelConfig& after,
                     const StepOptions& after_step);

// A measured GEMM: its median and relative IQR.
struct GemmTime {
  double median_us = 0;
  double noise = 0;
};
struct StepTime {
  double us = 0;     // sum of count x median
  double noise = 0;  // relative IQR of the GEMMs, weighted by their time in the step
};
// nullopt when a GEMM of the step has no time.
std::optional<StepTime> step_time(const std::vector<StepGemm>& gemms,
                                  const std::function<std::optional<GemmTime>(const Problem&)>& time_of);

// A saving counts only above this share of the step, and above the noise of the measurements.
constexpr double kMinGain = 0.02;

struct Evaluation {
  PadCandidate candidate;
  size_t touched = 0;           // GEMMs of single Linears it changes
  double extra_params = 0;      // whole model, elements
  double extra_flops = 0;       // per step per rank
  double copy_bytes = 0;        // per step per rank; tokens only
  std::optional<double> copy_us;   // at the calibrated copy bandwidth; nullopt when unknown or none
  double before_us = 0;            // the step as it is; 0 when not measured
  std::optional<StepTime> after;   // nullopt when a GEMM is not measured
  std::optional<double> saving_us; // before - after - copy (the copy where known)
  double threshold = 0;         // relative: max(kMinGain, noise of before and after); kMinGain when paired
  bool significant = false;
  // Paired (views/paired_steps.hpp): the step and this candidate measured in the same passes, the
  // saving from the ratio of their GEMM times with its 95 % interval. Then `significant` means the
  // whole interval saves more than kMinGain, and `cannot_tell` that it straddles kMinGain.
  std::optional<PairedRatio> paired;       // after / before
  double saving_low_us = 0, saving_high_us = 0;  // the saving's 95 % interval (paired only)
  bool cannot_tell = false;
};
// Fills the cost and, when both step times are known, the saving. `bandwidth_gbs` (0 when not
// calibrated) prices the tokens copy.
Evaluation evaluate(const ModelConfig& config, const StepOptions& step, const std::vector<StepGemm>& before,
                    const std::optional<StepTime>& before_time, PadCandidate candidate,
                    const std::optional<StepTime>& after_time, double bandwidth_gbs);

// The saving part of an evaluation: before_us, after, saving_us (before - after - the copy where
// priced), threshold (max(kMinGain, both noises)) and significant, when both times are known.
void add_saving(Evaluation& e, const std::optional<StepTime>& before, const std::optional<StepTime>& after);

// The saving part from a paired comparison instead: `ratio` (after / before) measured in the same
// passes as the step, whose GEMM time there was `before_us`. Replaces what add_saving set.
void add_paired_saving(Evaluation& e, const PairedRatio& ratio, double before_us);

// The best candidate of one choice: of those whose saving is significant, the one that adds least
// among those within the threshold of the largest saving (paired: whose interval reaches the largest
// one's interval). nullopt: leave it.
std::optional<size_t> recommend(const std::vector<Evaluation>& evaluations);

}  // namespace shapescope
