#include "model/config_workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "common/error.hpp"
#include "core/fp8.hpp"
#include "model/fp8_steps.hpp"

namespace shapescope {

namespace {

WorkloadGemm call(const std::string& origin, std::vector<Problem> problems, int64_t count, bool fused = false) {
  WorkloadGemm g;
  g.problems = std::move(problems);
  g.count = count;
  g.origin = origin;
  g.usually_fused = fused;
  return g;
}

// One pass of a Linear: packed in the request's dtype, or in fp8 its recipe's nt GEMM.
Problem linear_gemm(int64_t m, int64_t n, int64_t k, Layout layout, const WorkloadRequest& r) {
  if (r.dtype != DType::kFp8) return packed_problem(m, n, k, layout, r.dtype);
  return fp8_problem(packed_problem(m, n, k, layout, DType::kBf16), gemm_recipe(r.fp8, linear_roles(layout)));
}

// QK^T and PV per sequence and head (batch = sequences x heads per rank), and in training the four
// GEMMs of their backward: dP = dO V^T, dV = P^T dO, dQ = dS K, dK = dS^T Q.
void add_attention(Workload& w, const ModelConfig& c, const WorkloadRequest& r) {
  if (r.sequence < 1 || r.tokens % r.sequence != 0)
    throw usage_error(fmt::format("workload: attention GEMMs need a sequence length that divides the tokens ({}); "
                                  "got {}",
                                  r.tokens, r.sequence));
  const int64_t s = r.sequence, batch = r.tokens / r.sequence * (c.heads / r.tp);
  const int64_t qk = c.head_dim, v = c.mla() ? c.v_head_dim : c.head_dim;
  // FlashAttention keeps its GEMMs in 16 bits when the Linears run in fp8.
  const DType dtype = r.dtype == DType::kFp8 ? DType::kBf16 : r.dtype;
  const auto bmm = [&](int64_t m, int64_t n, int64_t k, Layout layout) {
    return std::vector<Problem>{packed_problem(m, n, k, layout, dtype, batch)};
  };
  const int64_t l = c.layers;
  w.add(call("attention QK^T fwd", bmm(s, s, qk, Layout::kNT), l, true));
  w.add(call("attention PV fwd", bmm(s, v, s, Layout::kNN), l, true));
  if (!r.train) return;
  w.add(call("attention dP = dO V^T", bmm(s, s, v, Layout::kNT), l, true));
  w.add(call("attention dV = P^T dO", bmm(s, v, s, Layout::kTN), l, true));
  w.add(call("attention dQ = dS K", bmm(s, qk, s, Layout::kNN), l, true));
  w.add(call("attention dK = dS^T Q", bmm(s, qk, s, Layout::kTN), l, true));
}

}  // namespace

Workload config_workload(const ModelConfig& c, const WorkloadRequest& r) {
  check_tp(c, r.tp);
  std::vector<int64_t> rows = r.expert_tokens;
  if (!rows.empty() && !c.moe())
    throw usage_error(fmt::format("workload: expert token counts given, but {} has no experts", c.name));
  if (c.moe() && rows.empty()) rows = balanced_expert_tokens(r.tokens, c.experts_per_token, c.experts);
  if (c.moe() && int64_t(rows.size()) != c.experts)
    throw usage_error(fmt::format("workload: {} expert token counts for {} experts", rows.size(), c.experts));
  // Each token goes to top-k experts: more routed rows than that is no routing (fewer: dropped tokens).
  const int64_t routed = std::accumulate(rows.begin(), rows.end(), int64_t(0));
  if (c.moe() && routed > r.tokens * c.experts_per_token)
    throw usage_error(fmt::format("workload: the expert token counts add up to {}, more than tokens x top-k = {} x {} "
                                  "= {}",
                                  routed, r.tokens, c.experts_per_token, r.tokens * c.experts_per_token));

  Workload w;
  w.source = c.name;
  const int64_t t = r.tokens;
  const std::vector<LinearLayer> layers = linear_layers(c);
  for (size_t i = 0; i < layers.size(); ++i) {
    LinearLayer l = layers[i];
    // The experts' gate and up projections (the first two routed Linears) as one gate_up_proj.
    if (r.fused_gate_up && l.routed && i + 1 < layers.size() && layers[i + 1].routed && layers[i + 1].in == l.in) {
      l.out *= 2;
      l.name = "experts.gate_up_proj";
      ++i;
    }
    const int64_t in = l.in_per_rank(r.tp), o = l.out_per_rank(r.tp);
    if (!l.routed) {
      w.add(call(l.name + " fwd", {linear_gemm(t, o, in, Layout::kNT, r)}, l.count));
      if (!r.train) continue;
      w.add(call(l.name + " dgrad", {linear_gemm(t, in, o, Layout::kNN, r)}, l.count));
      w.add(call(l.name + " wgrad", {linear_gemm(o, in, t, Layout::kTN, r)}, l.count));
      continue;
    }
    std::vector<Problem> fwd, dgrad, wgrad;
    for (int64_t m : rows) {
      if (m == 0) continue;
      fwd.push_back(linear_gemm(m, o, in, Layout::kNT, r));
      dgrad.push_back(linear_gemm(m, in, o, Layout::kNN, r));
      wgrad.push_back(linear_gemm(o, in, m, Layout::kTN, r));
    }
    if (fwd.empty()) continue;
    w.add(call(l.name + " fwd", fwd, l.count));
    if (!r.train) continue;
    w.add(call(l.name + " dgrad", dgrad, l.count));
    w.add(call(l.name + " wgrad", wgrad, l.count));
  }
  if (c.moe() && std::find(rows.begin(), rows.end(), 0) != rows.end())
    w.notes.push_back("experts with no token are left out of their groups");
  if (r.attention) add_attention(w, c, r);
  return w;
}

}  // namespace shapescope
