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
#include "model/model_config.hpp"
#include "core/problem.hpp"

namespace shapescope {

enum class Pass { kForward, kInputGrad, kWeightGrad };
std::string_view pass_name(Pass pass);  // "fwd", "dgrad", "wgrad"

struct StepOptions {
  int64_t tokens = 0;   // batch x sequence: the M of every forward GEMM
  bool train = false;   // forward only, or forward and both backward GEMMs
  int64_t tp = 1;
  DType dtype = DType::kBf16;
  // fp8's training recipe (model/fp8_steps.hpp's gemm_recipe gives each pass its own): every pass then
  // runs as the nt fp8 GEMM of its recipe, its operands cast (and transposed) into that form.
  Fp8Scaling fp8 = Fp8Scaling::kTensor;
};

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
// A problem's time, nullopt where it has none (not measured, or a dry run).
using GemmTimeOf = std::function<std::optional<GemmTime>(const Problem&)>;
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
