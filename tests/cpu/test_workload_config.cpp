// Workloads from Hugging Face configs of the families beyond GPT-2 and Llama: the presets' values,
// their weight matrices against the published parameter counts, each family's GEMMs against
// shapes computed by hand from the real configs, the MoE groups (balanced with a remainder, given
// per expert, training passes), attention on request, and the bad configs.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>

#include "common/error.hpp"
#include "model/config_workload.hpp"
#include "model/pad.hpp"
#include "model/trace_import.hpp"
#include "model_util.hpp"

namespace shapescope {
namespace {

// "q_proj fwd nt 4096x4096x4096 x32", one line per call; grouped: "experts.w1 fwd nt grouped 8 x 1024x14336x4096 x64"
std::vector<std::string> listing(const Workload& w) {
  std::vector<std::string> out;
  for (const WorkloadGemm& g : w.gemms) out.push_back(fmt::format("{} {} x{}", g.origin, g.shape_text(), g.count));
  return out;
}

WorkloadRequest request(int64_t tokens, bool train) {
  WorkloadRequest r;
  r.tokens = tokens;
  r.train = train;
  return r;
}

TEST(ConfigFamilies, PresetValuesAsHuggingFaceHasThem) {
  const ModelConfig falcon = preset("falcon-7b");
  EXPECT_EQ(falcon.family, Family::kFalcon);
  EXPECT_EQ(falcon.heads, 71);
  EXPECT_EQ(falcon.kv_heads, 1);  // multi_query
  EXPECT_EQ(falcon.head_dim, 64);
  EXPECT_EQ(falcon.intermediate, 4 * 4544);
  EXPECT_TRUE(falcon.intermediate_derived);
  EXPECT_TRUE(falcon.tied_embeddings);
  EXPECT_TRUE(falcon.parallel_attention);
  const ModelConfig phi = preset("phi-2");
  EXPECT_EQ(phi.family, Family::kPhi);
  EXPECT_EQ(phi.head_dim, 80);
  const ModelConfig mixtral = preset("mixtral-8x7b");
  EXPECT_EQ(mixtral.family, Family::kMixtral);
  EXPECT_EQ(mixtral.experts, 8);
  EXPECT_EQ(mixtral.experts_per_token, 2);
  EXPECT_EQ(mixtral.expert_intermediate, 14336);
  EXPECT_EQ(mixtral.moe_layers(), 32);
  const ModelConfig qwen = preset("qwen3-30b-a3b");
  EXPECT_EQ(qwen.family, Family::kQwenMoe);
  EXPECT_EQ(qwen.experts, 128);
  EXPECT_EQ(qwen.expert_intermediate, 768);
  EXPECT_EQ(qwen.q_width(), 4096);  // 32 heads x head_dim 128: wider than hidden 2048
  EXPECT_EQ(qwen.shared_intermediate, 0);
  EXPECT_EQ(qwen.dense_layers, 0);
  const ModelConfig ds = preset("deepseek-v2-lite");
  EXPECT_EQ(ds.family, Family::kDeepseek);
  EXPECT_TRUE(ds.mla());
  EXPECT_EQ(ds.q_lora_rank, 0);
  EXPECT_EQ(ds.dense_layers, 1);
  EXPECT_EQ(ds.moe_layers(), 26);
  EXPECT_EQ(ds.shared_intermediate, 2 * 1408);
  for (const char* name : {"falcon-7b", "phi-2", "mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v2-lite"})
    EXPECT_NE(preset(name).source.find("https://huggingface.co/"), std::string::npos) << name;
}

TEST(ConfigFamilies, WeightMatricesMatchThePublishedSizes) {
  // Published totals less the vectors (norms, biases), computed by hand from the configs:
  // Falcon-7B 6,921,720,704 less 32 x 2 x 4544 + 9088 layer-norm weights and biases (tied LM head).
  EXPECT_EQ(weight_parameters(preset("falcon-7b")), 6'921'420'800.0);
  // Phi-2 2,779,683,840 less 957,440 biases and norms.
  EXPECT_EQ(weight_parameters(preset("phi-2")), 2'778'726'400.0);
  // Mixtral-8x7B 46,702,792,704 less 266,240 norm weights.
  EXPECT_EQ(weight_parameters(preset("mixtral-8x7b")), 46'702'526'464.0);
  // Qwen3-30B-A3B: 48 x (attention 18,874,368 + router 262,144 + 128 x 3 x 2048 x 768) + 2 x 151936 x 2048.
  EXPECT_EQ(weight_parameters(preset("qwen3-30b-a3b")), 30'531'911'680.0);
  // DeepSeek-V2-Lite: 27 x MLA 13,762,560 + 1 dense MLP 67,239,936 + 26 MoE layers x 571,080,704 + embeddings.
  EXPECT_EQ(weight_parameters(preset("deepseek-v2-lite")), 15'706'357'760.0);
}

TEST(ConfigFamilies, Falcon7bForwardStep) {
  const std::vector<std::string> expected = {
      "query_key_value fwd 4096x4672x4544 nt x32",  // (71 + 2 x 1) x 64: multi-query, one K and one V head
      "dense fwd 4096x4544x4544 nt x32",
      "dense_h_to_4h fwd 4096x18176x4544 nt x32",
      "dense_4h_to_h fwd 4096x4544x18176 nt x32",
      "lm_head fwd 4096x65024x4544 nt x1",
  };
  EXPECT_EQ(listing(config_workload(preset("falcon-7b"), request(4096, false))), expected);
  // The pad view of the same: hidden_size shows in dense, the MLP width (ffn_hidden_size) in dense_h_to_4h.
  const std::vector<ChoiceInfo> ch = choices(preset("falcon-7b"), {4096, false, 1, DType::kBf16});
  ASSERT_EQ(ch.size(), 4u);
  EXPECT_EQ(ch[1].name, "hidden_size");
  EXPECT_EQ(ch[1].probe_name, "dense fwd");
  EXPECT_EQ(ch[2].name, "ffn_hidden_size");
  EXPECT_EQ(gemm_string(ch[2].probe), "4096x18176x4544 nt");
}

TEST(ConfigFamilies, FalconNewDecoderArchitectureHasGroupedKvHeads) {
  // Falcon-40B's values: 128 heads, 8 KV heads, hidden 8192.
  const ModelConfig c = parse_model_config(R"({"model_type": "falcon", "vocab_size": 65024, "hidden_size": 8192,
      "num_attention_heads": 128, "num_kv_heads": 8, "num_hidden_layers": 60, "new_decoder_architecture": true})",
                                           "f40");
  EXPECT_EQ(c.kv_heads, 8);
  EXPECT_FALSE(c.parallel_attention);  // two layer norms: attention and MLP read different inputs
  EXPECT_EQ(linear_layers(c)[0].out, (128 + 2 * 8) * 64);
  // The names before transformers had Falcon: n_head, n_layer.
  const ModelConfig old = parse_model_config(R"({"model_type": "RefinedWebModel", "vocab_size": 65024,
      "hidden_size": 4544, "n_head": 71, "n_layer": 32, "multi_query": true})",
                                             "rw");
  EXPECT_EQ(old.heads, 71);
  EXPECT_EQ(old.layers, 32);
}

TEST(ConfigFamilies, Phi2TrainingStep) {
  const Workload w = config_workload(preset("phi-2"), request(2048, true));
  // q/k/v_proj and dense are all 2560 x 2560 (32 heads x 80): one shape, 4 x 32 calls per pass.
  const std::vector<std::string> expected = {
      "q_proj fwd+k_proj fwd+v_proj fwd+dense fwd 2048x2560x2560 nt x128",
      "q_proj dgrad+k_proj dgrad+v_proj dgrad+dense dgrad 2048x2560x2560 nn x128",
      "q_proj wgrad+k_proj wgrad+v_proj wgrad+dense wgrad 2560x2560x2048 tn x128",
      "fc1 fwd 2048x10240x2560 nt x32",
      "fc1 dgrad 2048x2560x10240 nn x32",
      "fc1 wgrad 10240x2560x2048 tn x32",
      "fc2 fwd 2048x2560x10240 nt x32",
      "fc2 dgrad 2048x10240x2560 nn x32",
      "fc2 wgrad 2560x10240x2048 tn x32",
      "lm_head fwd 2048x51200x2560 nt x1",
      "lm_head dgrad 2048x2560x51200 nn x1",
      "lm_head wgrad 51200x2560x2048 tn x1",
  };
  EXPECT_EQ(listing(w), expected);
  EXPECT_EQ(w.calls(), 3 * (4 * 32 + 2 * 32 + 1));
}

TEST(ConfigFamilies, GptNeoxFusedQkv) {
  // Pythia-1B's values.
  const ModelConfig c = parse_model_config(R"({"model_type": "gpt_neox", "vocab_size": 50304, "hidden_size": 2048,
      "intermediate_size": 8192, "num_attention_heads": 8, "num_hidden_layers": 16})",
                                           "pythia");
  const std::vector<std::string> expected = {
      "query_key_value fwd 1024x6144x2048 nt x16", "dense fwd 1024x2048x2048 nt x16",
      "dense_h_to_4h fwd 1024x8192x2048 nt x16",   "dense_4h_to_h fwd 1024x2048x8192 nt x16",
      "embed_out fwd 1024x50304x2048 nt x1",
  };
  EXPECT_EQ(listing(config_workload(c, request(1024, false))), expected);
}

TEST(ConfigFamilies, Mixtral8x7bExpertsAsGroupedGemms) {
  const Workload w = config_workload(preset("mixtral-8x7b"), request(4096, true));
  // 4096 tokens x top-2 / 8 experts = 1024 rows per expert.
  const std::vector<std::string> expected = {
      "q_proj fwd+o_proj fwd 4096x4096x4096 nt x64",
      "q_proj dgrad+o_proj dgrad 4096x4096x4096 nn x64",
      "q_proj wgrad+o_proj wgrad 4096x4096x4096 tn x64",
      "k_proj fwd+v_proj fwd 4096x1024x4096 nt x64",
      "k_proj dgrad+v_proj dgrad 4096x4096x1024 nn x64",
      "k_proj wgrad+v_proj wgrad 1024x4096x4096 tn x64",
      "block_sparse_moe.gate fwd 4096x8x4096 nt x32",
      "block_sparse_moe.gate dgrad 4096x4096x8 nn x32",
      "block_sparse_moe.gate wgrad 8x4096x4096 tn x32",
      "experts.w1 fwd+experts.w3 fwd grouped 8 x 1024x14336x4096 nt x64",
      "experts.w1 dgrad+experts.w3 dgrad grouped 8 x 1024x4096x14336 nn x64",
      "experts.w1 wgrad+experts.w3 wgrad grouped 8 x 14336x4096x1024 tn x64",
      "experts.w2 fwd grouped 8 x 1024x4096x14336 nt x32",
      "experts.w2 dgrad grouped 8 x 1024x14336x4096 nn x32",
      "experts.w2 wgrad grouped 8 x 4096x14336x1024 tn x32",
      "lm_head fwd 4096x32000x4096 nt x1",
      "lm_head dgrad 4096x4096x32000 nn x1",
      "lm_head wgrad 32000x4096x4096 tn x1",
  };
  EXPECT_EQ(listing(w), expected);
}

TEST(ConfigFamilies, MixtralConfigMatchesTheRealTraceOfItsTrainingStep) {
  // The trace in tests/data/traces: Mixtral-8x7B's widths with 2 layers, 4096 tokens, one training
  // step under transformers 5 (experts' gate and up fused, torch._grouped_mm). Its GEMMs are the
  // config's, call for call; the trace also has the rotary embedding's fp32 bmm (64x1024x1).
  ModelConfig c = preset("mixtral-8x7b");
  c.layers = 2;
  WorkloadRequest r = request(4096, true);
  r.fused_gate_up = true;
  const auto per_shape = [](const Workload& w) {
    std::map<std::string, int64_t> out;
    for (const WorkloadGemm& g : w.gemms)
      if (g.problems[0].dtype == DType::kBf16)
        out[fmt::format("{} x{}", gemm_string(g.problems[0]), g.problems.size())] += g.count;
    return out;
  };
  const Workload trace = load_torch_trace(std::string(SHAPESCOPE_TEST_DATA) + "/traces/mixtral-2l.json", "mixtral");
  const std::map<std::string, int64_t> expected = per_shape(trace);
  EXPECT_EQ(per_shape(config_workload(c, r)), expected);
  EXPECT_EQ(expected.at("1024x28672x4096 nt x8"), 2);  // gate_up fwd: 8 experts x 1024 rows, per layer
  EXPECT_EQ(trace.calls(), config_workload(c, r).calls() + 1);
}

TEST(ConfigFamilies, BalancedRoutingSpreadsTheRemainderOverTheFirstExperts) {
  EXPECT_EQ(balanced_expert_tokens(101, 2, 8), (std::vector<int64_t>{26, 26, 25, 25, 25, 25, 25, 25}));
  EXPECT_EQ(balanced_expert_tokens(4096, 8, 128), std::vector<int64_t>(128, 256));
  // Fewer routed tokens than experts: most experts get none, and are left out of the group.
  const Workload w = config_workload(preset("qwen3-30b-a3b"), request(10, false));
  const auto experts = std::find_if(w.gemms.begin(), w.gemms.end(), [](const WorkloadGemm& g) { return g.grouped(); });
  ASSERT_NE(experts, w.gemms.end());
  EXPECT_EQ(experts->problems.size(), 80u);  // 10 tokens x top-8 = 80 rows, one each for experts 0..79
  EXPECT_EQ(experts->shape_text(), "grouped 80 x 1x768x2048 nt");
  ASSERT_EQ(w.notes.size(), 1u);
  EXPECT_NE(w.notes[0].find("no token"), std::string::npos);
  // pad's view of the same layer: the experts as ordinary GEMMs, one per row count.
  const std::vector<StepGemm> g = step_gemms(preset("mixtral-8x7b"), {101, false, 1, DType::kBf16});
  std::map<std::string, int64_t> counts;
  for (const StepGemm& s : g) counts[s.linear + " " + gemm_string(s.problem)] += s.count;
  EXPECT_EQ(counts["experts.w2 26x4096x14336 nt"], 2 * 32);
  EXPECT_EQ(counts["experts.w2 25x4096x14336 nt"], 6 * 32);
}

TEST(ConfigFamilies, UnevenRoutingFromGivenExpertTokens) {
  WorkloadRequest r = request(4096, true);
  r.expert_tokens = {3000, 1000, 2000, 0, 500, 500, 600, 592};  // sums to 4096 x 2
  const Workload w = config_workload(preset("mixtral-8x7b"), r);
  std::vector<const WorkloadGemm*> w2;
  for (const WorkloadGemm& g : w.gemms)
    if (g.origin.rfind("experts.w2", 0) == 0) w2.push_back(&g);
  ASSERT_EQ(w2.size(), 3u);
  ASSERT_EQ(w2[0]->problems.size(), 7u);  // the expert with no token is left out
  EXPECT_EQ(gemm_string(w2[0]->problems[0]), "3000x4096x14336 nt");
  EXPECT_EQ(gemm_string(w2[1]->problems[1]), "1000x14336x4096 nn");  // dgrad
  EXPECT_EQ(gemm_string(w2[2]->problems[2]), "4096x14336x2000 tn");  // wgrad: K = the expert's tokens

  r.expert_tokens = {1, 2, 3};
  try {
    config_workload(preset("mixtral-8x7b"), r);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("3 expert token counts for 8 experts"), std::string::npos) << e.what();
  }
  try {
    config_workload(preset("phi-2"), r);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has no experts"), std::string::npos) << e.what();
  }
}

TEST(ConfigFamilies, Qwen3_30bA3bForwardStep) {
  const std::vector<std::string> expected = {
      "q_proj fwd 4096x4096x2048 nt x48",
      "k_proj fwd+v_proj fwd 4096x512x2048 nt x96",
      "o_proj fwd 4096x2048x4096 nt x48",
      "mlp.gate fwd 4096x128x2048 nt x48",
      "experts.gate_proj fwd+experts.up_proj fwd grouped 128 x 256x768x2048 nt x96",  // 4096 x 8 / 128
      "experts.down_proj fwd grouped 128 x 256x2048x768 nt x48",
      "lm_head fwd 4096x151936x2048 nt x1",
  };
  EXPECT_EQ(listing(config_workload(preset("qwen3-30b-a3b"), request(4096, false))), expected);
}

TEST(ConfigFamilies, Qwen2MoeSharedExpertAndItsGate) {
  // Qwen1.5-MoE-A2.7B's values, with the last layer dense (mlp_only_layers).
  const ModelConfig c = parse_model_config(R"({"model_type": "qwen2_moe", "vocab_size": 151936, "hidden_size": 2048,
      "intermediate_size": 5632, "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
      "num_attention_heads": 16, "num_key_value_heads": 16, "num_hidden_layers": 24, "num_experts": 60,
      "num_experts_per_tok": 4, "mlp_only_layers": [23]})",
                                           "qwen2-moe");
  EXPECT_EQ(c.dense_layers, 1);
  const std::vector<std::string> expected = {
      "q_proj fwd+k_proj fwd+v_proj fwd+o_proj fwd 1024x2048x2048 nt x96",
      "gate_proj fwd+up_proj fwd+shared_expert.gate_proj fwd+shared_expert.up_proj fwd 1024x5632x2048 nt x48",
      "down_proj fwd+shared_expert.down_proj fwd 1024x2048x5632 nt x24",
      "mlp.gate fwd 1024x60x2048 nt x23",
      // 1024 x 4 = 4096 rows over 60 experts: 68 each, 16 experts with 69.
      "experts.gate_proj fwd+experts.up_proj fwd grouped 60 x 68..69x1408x2048 nt x46",
      "experts.down_proj fwd grouped 60 x 68..69x2048x1408 nt x23",
      "shared_expert_gate fwd 1024x1x2048 nt x23",
      "lm_head fwd 1024x151936x2048 nt x1",
  };
  EXPECT_EQ(listing(config_workload(c, request(1024, false))), expected);
}

TEST(ConfigFamilies, DeepseekV2LiteLatentAttentionAndSharedExperts) {
  const std::vector<std::string> expected = {
      "q_proj fwd 4096x3072x2048 nt x27",  // 16 heads x (128 + 64): no q_lora_rank
      "kv_a_proj_with_mqa fwd 4096x576x2048 nt x27",  // kv_lora_rank 512 + the rotary key 64
      "kv_b_proj fwd 4096x4096x512 nt x27",  // 16 heads x (128 + 128)
      "o_proj fwd 4096x2048x2048 nt x27",
      "gate_proj fwd+up_proj fwd 4096x10944x2048 nt x2",  // first_k_dense_replace 1: one dense layer
      "down_proj fwd 4096x2048x10944 nt x1",
      "mlp.gate fwd 4096x64x2048 nt x26",
      "experts.gate_proj fwd+experts.up_proj fwd grouped 64 x 384x1408x2048 nt x52",  // 4096 x 6 / 64
      "experts.down_proj fwd grouped 64 x 384x2048x1408 nt x26",
      "shared_experts.gate_proj fwd+shared_experts.up_proj fwd 4096x2816x2048 nt x52",  // 2 x 1408
      "shared_experts.down_proj fwd 4096x2048x2816 nt x26",
      "lm_head fwd 4096x102400x2048 nt x1",
  };
  EXPECT_EQ(listing(config_workload(preset("deepseek-v2-lite"), request(4096, false))), expected);
  // DeepSeek-V3's low-rank query: q_a_proj and q_b_proj instead of q_proj.
  const ModelConfig v3 = parse_model_config(R"({"model_type": "deepseek_v3", "vocab_size": 129280, "hidden_size": 7168,
      "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_attention_heads": 128, "num_hidden_layers": 61,
      "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3,
      "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128})",
                                            "v3");
  const std::vector<LinearLayer> l = linear_layers(v3);
  EXPECT_EQ(l[0].name, "q_a_proj");
  EXPECT_EQ(l[0].out, 1536);
  EXPECT_EQ(l[0].parallel, Parallel::kReplicated);
  EXPECT_EQ(l[1].name, "q_b_proj");
  EXPECT_EQ(l[1].out, 128 * 192);
  EXPECT_EQ(v3.dense_layers, 3);
}

TEST(ConfigFamilies, AttentionOnRequestIsMarkedUsuallyFused) {
  WorkloadRequest r = request(8192, true);
  r.attention = true;
  r.sequence = 2048;
  const Workload w = config_workload(preset("mixtral-8x7b"), r);
  std::vector<const WorkloadGemm*> fused;
  for (const WorkloadGemm& g : w.gemms)
    if (g.usually_fused) fused.push_back(&g);
  // QK^T, PV and their four backward GEMMs; with head_dim 128 for queries, keys and values, dP = dO V^T
  // is QK^T's shape, dQ = dS K is PV's, and dV and dK share theirs.
  ASSERT_EQ(fused.size(), 3u);
  EXPECT_EQ(fused[0]->origin, "attention QK^T fwd+attention dP = dO V^T");
  EXPECT_EQ(gemm_string(fused[0]->problems[0]), "2048x2048x128 nt");
  EXPECT_EQ(fused[0]->problems[0].batch, 4 * 32);  // 4 sequences x 32 heads
  EXPECT_EQ(fused[0]->count, 64);
  EXPECT_EQ(gemm_string(fused[1]->problems[0]), "2048x128x2048 nn");
  EXPECT_EQ(gemm_string(fused[2]->problems[0]), "2048x128x2048 tn");
  // DeepSeek's query/key heads (192) and value heads (128) differ.
  const Workload ds = config_workload(preset("deepseek-v2-lite"), [] {
    WorkloadRequest q = request(4096, false);
    q.attention = true;
    q.sequence = 4096;
    return q;
  }());
  EXPECT_EQ(gemm_string(ds.gemms[ds.gemms.size() - 2].problems[0]), "4096x4096x192 nt");
  EXPECT_EQ(gemm_string(ds.gemms.back().problems[0]), "4096x128x4096 nn");
  r.sequence = 3000;
  EXPECT_THROW(config_workload(preset("mixtral-8x7b"), r), Error);
}

void expect_config_error(const std::string& text, const std::string& words) {
  expect_usage_error([&] { parse_model_config(text, "--config: 'c.json'"); }, "--config: 'c.json'", words);
}

TEST(ConfigFamilies, BadConfigsAreOneLine) {
  expect_config_error(R"({"model_type": "mamba", "vocab_size": 1})",
                      "model_type 'mamba' is not one shapescope knows (gpt2, llama, mistral, qwen2, qwen3, gemma, gemma2, "
                      "falcon, phi, gpt_neox, mixtral, qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3); for another "
                      "model give its GEMMs instead: a PyTorch profiler trace (--trace) or a GEMM list (--gemms)");
  expect_config_error(R"({"model_type": "mixtral", "vocab_size": 32000, "hidden_size": 4096})",
                      "an MoE config (model_type 'mixtral') needs its expert counts: num_local_experts and "
                      "num_experts_per_tok");
  expect_config_error(R"({"model_type": "qwen3_moe", "num_experts": 128})", "needs its expert counts: num_experts and");
  expect_config_error(R"({"model_type": "deepseek_v2", "vocab_size": 1, "hidden_size": 64, "num_attention_heads": 4,
      "num_hidden_layers": 2, "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32})",
                      "model_type 'deepseek_v2' without kv_lora_rank");
  expect_config_error(R"({"model_type": "mixtral", "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
      "num_attention_heads": 32, "num_hidden_layers": 2, "num_local_experts": 2, "num_experts_per_tok": 4})",
                      "num_experts_per_tok 4 is more than num_local_experts 2");
  expect_config_error(R"({"model_type": "qwen2_moe", "vocab_size": 1, "hidden_size": 64, "num_attention_heads": 4,
      "num_hidden_layers": 2, "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
      "mlp_only_layers": [1]})",
                      "has no 'intermediate_size'");  // a dense layer needs the dense MLP's width
  expect_config_error(R"({"model_type": "qwen2_moe", "vocab_size": 1, "hidden_size": 64, "num_attention_heads": 4,
      "num_hidden_layers": 2, "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
      "mlp_only_layers": "none"})",
                      "mlp_only_layers is \"none\"; it must be a list of layer indices");
  expect_config_error(R"({"model_type": "falcon", "vocab_size": 1, "hidden_size": 100, "num_attention_heads": 3,
      "num_hidden_layers": 1})",
                      "hidden_size 100 is not a multiple of num_attention_heads 3");
}

}  // namespace
}  // namespace shapescope
