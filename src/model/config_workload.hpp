// A model config (model/model_config.hpp's ModelConfig) as a workload: the Linear GEMMs of one step, with
// an MoE layer's experts as one grouped GEMM per pass. Pure C++.
//
// MoE: a layer's experts run as one grouped call (cublasGemmGroupedBatchedEx, torch._grouped_mm),
// one problem per expert with M = the tokens routed to it. Routing is balanced (tokens x top-k /
// experts each, the remainder one token each to the first experts) or given per expert (uneven
// routing, as a router really does it). In training each pass is its own group: forward nt
// (M = expert tokens), input gradient nn, weight gradient tn (K = expert tokens). An expert with no
// token is left out of its group (it does nothing). The router and shared experts are ordinary GEMMs.
//
// Attention's QK^T and PV are listed on request as strided batched GEMMs, one matrix per sequence
// and head, marked usually_fused: FlashAttention runs them inside one kernel.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/pad.hpp"
#include "model/workload.hpp"

namespace shapescope {

struct WorkloadRequest {
  int64_t tokens = 0;                  // batch x sequence: the M of every dense forward GEMM
  bool train = false;                  // forward only, or forward, input and weight gradients
  int64_t tp = 1;                      // tensor parallelism (per-rank GEMMs, as pad's)
  DType dtype = DType::kBf16;
  // fp8's training recipe: each Linear pass runs as its recipe's nt fp8 GEMM (model/fp8_steps.hpp's
  // gemm_recipe; the casts transpose the operands of the backward passes); attention stays in bf16.
  Fp8Scaling fp8 = Fp8Scaling::kTensor;
  std::vector<int64_t> expert_tokens;  // rows per expert (uneven routing); empty: balanced
  // transformers 5 stores each expert's gate and up projections as one gate_up_proj (N = 2 x the
  // experts' width) and runs the experts through torch._grouped_mm: one group where transformers 4
  // (and the module names above: w1/w3, gate_proj/up_proj) has two.
  bool fused_gate_up = false;
  bool attention = false;              // also list QK^T and PV
  int64_t sequence = 0;                // sequence length; needed with attention (divides tokens)
};

// Throws usage_error when the request does not fit the model: tp (check_tp), expert_tokens for a
// dense model, for the wrong number of experts or adding up to more than tokens x top-k, attention
// without a sequence length that divides the tokens. Messages start with "workload:" and say which value.
Workload config_workload(const ModelConfig& config, const WorkloadRequest& request);

}  // namespace shapescope
