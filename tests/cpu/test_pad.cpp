// pad: the GEMM list of every preset (golden shapes, layouts and counts), the candidates per
// dimension, the saving and cost arithmetic on synthetic times, and the command as a user without
// a GPU meets it (--dry-run output, every bad input as one line with exit code 2).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "device/device.hpp"
#include "model/pad.hpp"
#include "cli_util.hpp"
#include "model_util.hpp"

namespace shapescope {
namespace {

StepOptions step(int64_t tokens, bool train, int64_t tp = 1) { return {tokens, train, tp, DType::kBf16}; }

// "c_attn fwd nt 12288x2304x768 x12"
std::vector<std::string> listing(const std::vector<StepGemm>& gemms) {
  std::vector<std::string> out;
  for (const StepGemm& g : gemms)
    out.push_back(fmt::format("{} {} {} {}x{}x{} x{}", g.linear, pass_name(g.pass), to_string(g.problem.layout),
                              g.problem.m, g.problem.n, g.problem.k, g.count));
  return out;
}

// --- presets: the Hugging Face values, and the GEMMs of one step ---

TEST(PadPresets, ValuesAsHuggingFaceHasThem) {
  struct Expected {
    const char* name;
    int64_t vocab, hidden, intermediate, heads, kv_heads, head_dim, layers;
    bool tied;
  };
  const Expected expected[] = {
      {"gpt2", 50257, 768, 3072, 12, 12, 64, 12, true},
      {"gpt2-xl", 50257, 1600, 6400, 25, 25, 64, 48, true},
      {"llama3-8b", 128256, 4096, 14336, 32, 8, 128, 32, false},
      {"llama3-70b", 128256, 8192, 28672, 64, 8, 128, 80, false},
      {"mistral-7b", 32000, 4096, 14336, 32, 8, 128, 32, false},
      {"qwen2.5-7b", 152064, 3584, 18944, 28, 4, 128, 28, false},
  };
  for (const Expected& e : expected) {
    const ModelConfig c = preset(e.name);
    EXPECT_EQ(c.vocab, e.vocab) << e.name;
    EXPECT_EQ(c.hidden, e.hidden) << e.name;
    EXPECT_EQ(c.intermediate, e.intermediate) << e.name;
    EXPECT_EQ(c.heads, e.heads) << e.name;
    EXPECT_EQ(c.kv_heads, e.kv_heads) << e.name;
    EXPECT_EQ(c.head_dim, e.head_dim) << e.name;
    EXPECT_EQ(c.layers, e.layers) << e.name;
    EXPECT_EQ(c.tied_embeddings, e.tied) << e.name;
    EXPECT_NE(c.source.find("https://huggingface.co/"), std::string::npos) << e.name;
  }
  EXPECT_TRUE(preset("gpt2").intermediate_derived);  // n_inner null: 4 x n_embd
  EXPECT_EQ(preset("gpt2").family, Family::kGpt2);
  EXPECT_EQ(preset("qwen2.5-7b").family, Family::kGated);
}

TEST(PadPresets, WeightMatricesMatchThePublishedSizes) {
  // GPT-2 124M: 124,439,808 parameters, of which 786,432 position embeddings and 121,344 biases and
  // norms; the rest are matrices (the LM head is the token embedding).
  EXPECT_EQ(weight_parameters(preset("gpt2")), 123'532'032.0);
  // Llama 3 8B: 8,030,261,248 parameters, of which 266,240 are norm weights.
  EXPECT_EQ(weight_parameters(preset("llama3-8b")), 8'029'995'008.0);
}

TEST(PadGemms, Gpt2TrainingStep) {
  const std::vector<StepGemm> g = step_gemms(preset("gpt2"), step(12288, true));
  EXPECT_EQ(listing(g), (std::vector<std::string>{
                            "c_attn fwd nt 12288x2304x768 x12",
                            "c_attn dgrad nn 12288x768x2304 x12",
                            "c_attn wgrad tn 2304x768x12288 x12",
                            "attn.c_proj fwd nt 12288x768x768 x12",
                            "attn.c_proj dgrad nn 12288x768x768 x12",
                            "attn.c_proj wgrad tn 768x768x12288 x12",
                            "c_fc fwd nt 12288x3072x768 x12",
                            "c_fc dgrad nn 12288x768x3072 x12",
                            "c_fc wgrad tn 3072x768x12288 x12",
                            "mlp.c_proj fwd nt 12288x768x3072 x12",
                            "mlp.c_proj dgrad nn 12288x3072x768 x12",
                            "mlp.c_proj wgrad tn 768x3072x12288 x12",
                            "lm_head fwd nt 12288x50257x768 x1",
                            "lm_head dgrad nn 12288x768x50257 x1",
                            "lm_head wgrad tn 50257x768x12288 x1",
                        }));
  // Packed leading dimensions, as `sweep` plans them, so the store shares points with sweeps:
  // x (M x K) row-major, W stored N x K (nt), C M x N.
  const Problem& fwd = g.front().problem;
  EXPECT_EQ(fwd.lda, 768);
  EXPECT_EQ(fwd.ldb, 768);
  EXPECT_EQ(fwd.ldc, 2304);
  // The weight gradient reads dy stored T x out (A transposed) and x stored T x in.
  const Problem& wgrad = g[2].problem;
  EXPECT_EQ(wgrad.lda, 2304);
  EXPECT_EQ(wgrad.ldb, 768);
  EXPECT_EQ(wgrad.ldc, 768);
}

TEST(PadGemms, Gpt2XlTrainingStep) {
  EXPECT_EQ(listing(step_gemms(preset("gpt2-xl"), step(4096, true))), (std::vector<std::string>{
                                                                           "c_attn fwd nt 4096x4800x1600 x48",
                                                                           "c_attn dgrad nn 4096x1600x4800 x48",
                                                                           "c_attn wgrad tn 4800x1600x4096 x48",
                                                                           "attn.c_proj fwd nt 4096x1600x1600 x48",
                                                                           "attn.c_proj dgrad nn 4096x1600x1600 x48",
                                                                           "attn.c_proj wgrad tn 1600x1600x4096 x48",
                                                                           "c_fc fwd nt 4096x6400x1600 x48",
                                                                           "c_fc dgrad nn 4096x1600x6400 x48",
                                                                           "c_fc wgrad tn 6400x1600x4096 x48",
                                                                           "mlp.c_proj fwd nt 4096x1600x6400 x48",
                                                                           "mlp.c_proj dgrad nn 4096x6400x1600 x48",
                                                                           "mlp.c_proj wgrad tn 1600x6400x4096 x48",
                                                                           "lm_head fwd nt 4096x50257x1600 x1",
                                                                           "lm_head dgrad nn 4096x1600x50257 x1",
                                                                           "lm_head wgrad tn 50257x1600x4096 x1",
                                                                       }));
}

TEST(PadGemms, Llama3_8bMergesIdenticalShapes) {
  // q_proj and o_proj are both 4096 x 4096; k_proj and v_proj 4096 -> 1024; gate and up 4096 -> 14336.
  EXPECT_EQ(listing(step_gemms(preset("llama3-8b"), step(8192, true))),
            (std::vector<std::string>{
                "q_proj+o_proj fwd nt 8192x4096x4096 x64",
                "q_proj+o_proj dgrad nn 8192x4096x4096 x64",
                "q_proj+o_proj wgrad tn 4096x4096x8192 x64",
                "k_proj+v_proj fwd nt 8192x1024x4096 x64",
                "k_proj+v_proj dgrad nn 8192x4096x1024 x64",
                "k_proj+v_proj wgrad tn 1024x4096x8192 x64",
                "gate_proj+up_proj fwd nt 8192x14336x4096 x64",
                "gate_proj+up_proj dgrad nn 8192x4096x14336 x64",
                "gate_proj+up_proj wgrad tn 14336x4096x8192 x64",
                "down_proj fwd nt 8192x4096x14336 x32",
                "down_proj dgrad nn 8192x14336x4096 x32",
                "down_proj wgrad tn 4096x14336x8192 x32",
                "lm_head fwd nt 8192x128256x4096 x1",
                "lm_head dgrad nn 8192x4096x128256 x1",
                "lm_head wgrad tn 128256x4096x8192 x1",
            }));
}

TEST(PadGemms, Llama3_70bForwardWithTensorParallelism) {
  // tp 8: column-parallel q (8192 -> 1024), k/v (1024 -> 128), gate/up (28672 -> 3584), LM head
  // (128256 -> 16032) split their output; row-parallel o and down their input.
  EXPECT_EQ(listing(step_gemms(preset("llama3-70b"), step(8192, false, 8))),
            (std::vector<std::string>{
                "q_proj fwd nt 8192x1024x8192 x80",
                "k_proj+v_proj fwd nt 8192x128x8192 x160",
                "o_proj fwd nt 8192x8192x1024 x80",
                "gate_proj+up_proj fwd nt 8192x3584x8192 x160",
                "down_proj fwd nt 8192x8192x3584 x80",
                "lm_head fwd nt 8192x16032x8192 x1",
            }));
}

TEST(PadGemms, Mistral7bDecodeStep) {
  EXPECT_EQ(listing(step_gemms(preset("mistral-7b"), step(1, false))), (std::vector<std::string>{
                                                                            "q_proj+o_proj fwd nt 1x4096x4096 x64",
                                                                            "k_proj+v_proj fwd nt 1x1024x4096 x64",
                                                                            "gate_proj+up_proj fwd nt 1x14336x4096 x64",
                                                                            "down_proj fwd nt 1x4096x14336 x32",
                                                                            "lm_head fwd nt 1x32000x4096 x1",
                                                                        }));
}

TEST(PadGemms, Qwen25_7bTrainingWithTensorParallelism) {
  EXPECT_EQ(listing(step_gemms(preset("qwen2.5-7b"), step(4096, true, 2))),
            (std::vector<std::string>{
                "q_proj fwd nt 4096x1792x3584 x28",
                "q_proj dgrad nn 4096x3584x1792 x28",
                "q_proj wgrad tn 1792x3584x4096 x28",
                "k_proj+v_proj fwd nt 4096x256x3584 x56",
                "k_proj+v_proj dgrad nn 4096x3584x256 x56",
                "k_proj+v_proj wgrad tn 256x3584x4096 x56",
                "o_proj fwd nt 4096x3584x1792 x28",
                "o_proj dgrad nn 4096x1792x3584 x28",
                "o_proj wgrad tn 3584x1792x4096 x28",
                "gate_proj+up_proj fwd nt 4096x9472x3584 x56",
                "gate_proj+up_proj dgrad nn 4096x3584x9472 x56",
                "gate_proj+up_proj wgrad tn 9472x3584x4096 x56",
                "down_proj fwd nt 4096x3584x9472 x28",
                "down_proj dgrad nn 4096x9472x3584 x28",
                "down_proj wgrad tn 3584x9472x4096 x28",
                "lm_head fwd nt 4096x76032x3584 x1",
                "lm_head dgrad nn 4096x3584x76032 x1",
                "lm_head wgrad tn 76032x3584x4096 x1",
            }));
}

TEST(PadGemms, TensorParallelismMustDivideWhatItSplits) {
  auto refused = [](const ModelConfig& c, int64_t tp, const std::string& words) {
    try {
      check_tp(c, tp);
      ADD_FAILURE() << c.name << " tp " << tp << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kUsage);
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refused(preset("gpt2"), 2, "--tp: 2 does not divide vocab_size 50257");
  refused(preset("gpt2"), 2, "e.g. to 50432");  // the next multiple of 128 x 2
  refused(preset("llama3-8b"), 3, "num_attention_heads 32");
  refused(preset("llama3-8b"), 16, "num_key_value_heads 8");
  ModelConfig odd = preset("llama3-8b");
  odd.intermediate = 14335;
  refused(odd, 2, "intermediate_size 14335");
  check_tp(odd, 1);  // one rank splits nothing
}

// --- parsing ---

void expect_config_error(const std::string& text, const std::string& words) {
  try {
    parse_model_config(text, "--config: 'c.json'");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage) << text;
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("--config: 'c.json'", 0), 0u) << what;
    EXPECT_NE(what.find(words), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(PadConfig, HuggingFaceKeys) {
  // No model_type: the keys decide. No head_dim: hidden / heads; no num_key_value_heads: = heads.
  ModelConfig c = parse_model_config(
      R"({"vocab_size": 1000, "hidden_size": 512, "intermediate_size": 1376, "num_attention_heads": 8,
          "num_hidden_layers": 2})",
      "x");
  EXPECT_EQ(c.family, Family::kGated);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_TRUE(c.head_dim_derived);
  EXPECT_EQ(c.kv_heads, 8);
  EXPECT_FALSE(c.tied_embeddings);
  // An explicit head_dim (Qwen3, Gemma): the attention width need not be the hidden size.
  c = parse_model_config(
      R"({"model_type": "qwen3", "vocab_size": 151936, "hidden_size": 2560, "intermediate_size": 9728,
          "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 36,
          "tie_word_embeddings": true})",
      "x");
  EXPECT_EQ(c.q_width(), 4096);
  EXPECT_TRUE(c.tied_embeddings);
  EXPECT_EQ(listing(step_gemms(c, step(16, false)))[2], "o_proj fwd nt 16x2560x4096 x36");
  // GPT-2 keys with an explicit n_inner.
  c = parse_model_config(R"({"vocab_size": 100, "n_embd": 64, "n_head": 4, "n_layer": 1, "n_inner": 100})", "x");
  EXPECT_EQ(c.family, Family::kGpt2);
  EXPECT_EQ(c.intermediate, 100);
  EXPECT_FALSE(c.intermediate_derived);
}

TEST(PadConfig, BadConfigsAreOneLineNamingTheKey) {
  const std::string llama =
      R"("vocab_size": 1000, "hidden_size": 512, "intermediate_size": 1376, "num_attention_heads": 8,
         "num_hidden_layers": 2)";
  expect_config_error("{\"vocab_size\": ", "is not valid JSON (parse error at line 1");
  expect_config_error("[1, 2]", "is not a JSON object");
  expect_config_error(R"({"model_type": "llama", "hidden_size": 4096})", "has no 'vocab_size'");
  expect_config_error(R"({"n_embd": 768, "n_head": 12, "n_layer": 12})", "has no 'vocab_size' (a GPT-2 config");
  expect_config_error("{" + llama + ", \"num_key_value_heads\": 0}", "num_key_value_heads is 0; it must be a positive integer");
  expect_config_error(R"({"vocab_size": -5, "n_embd": 768, "n_head": 12, "n_layer": 12})", "vocab_size is -5");
  expect_config_error(R"({"vocab_size": 50257, "n_embd": 768.0, "n_head": 12, "n_layer": 12})", "n_embd is 768.0");
  expect_config_error(R"({"vocab_size": "50257", "n_embd": 768, "n_head": 12, "n_layer": 12})", R"(vocab_size is "50257")");
  expect_config_error(R"({"vocab_size": 4294967296, "n_embd": 768, "n_head": 12, "n_layer": 12})", "at most 2147483647");
  expect_config_error(R"({"model_type": "mamba", "vocab_size": 1})", "model_type 'mamba' is not one shapescope knows");
  expect_config_error(R"({"model_type": 7})", "model_type is 7; it must be a string");
  expect_config_error(R"({"vocab_size": 100, "n_embd": 100, "n_head": 12, "n_layer": 1})", "n_embd 100 is not a multiple of n_head 12");
  expect_config_error("{" + llama + ", \"num_key_value_heads\": 3}", "num_attention_heads 8 is not a multiple of num_key_value_heads 3");
  expect_config_error("{" + llama + ", \"tie_word_embeddings\": 1}", "tie_word_embeddings is 1; it must be true or false");
  expect_config_error(R"({"vocab_size": 1, "n_embd": 900000000, "n_head": 1, "n_layer": 1})", "3 x n_embd");
}

// --- candidates ---

std::vector<int64_t> values(const std::vector<PadCandidate>& candidates) {
  std::vector<int64_t> out;
  for (const PadCandidate& c : candidates) out.push_back(c.value);
  return out;
}

const ChoiceInfo& choice_of(const std::vector<ChoiceInfo>& list, Choice which) {
  for (const ChoiceInfo& c : list)
    if (c.choice == which) return c;
  throw std::runtime_error("no such choice");
}

TEST(PadCandidates, Gpt2VocabularyBeforeMeasuring) {
  const ModelConfig gpt2 = preset("gpt2");
  const StepOptions s = step(12288, true);
  const std::vector<ChoiceInfo> list = choices(gpt2, s);
  std::vector<std::string> names;
  for (const ChoiceInfo& c : list) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"vocab_size", "n_embd", "n_inner", "tokens"}));

  const std::vector<PadCandidate> vocab = pad_candidates(gpt2, s, choice_of(list, Choice::kVocab), Annotation{});
  EXPECT_EQ(values(vocab), (std::vector<int64_t>{50264, 50272, 50304, 50432}));
  EXPECT_EQ(vocab[0].why, "multiple of 8 above");
  EXPECT_EQ(vocab[1].why, "multiple of 32 above");  // 50272 is a multiple of 16 and 32: the larger says it
  EXPECT_EQ(vocab[2].why, "multiple of 128 above");  // nanoGPT's 50304
  EXPECT_EQ(vocab[3].why, "multiple of 256 above");
  EXPECT_EQ(vocab[2].config.vocab, 50304);
  EXPECT_EQ(vocab[2].config.hidden, 768);
  // 768, 3072 and 12288 are multiples of 256: nothing until the measured tile says a wave is partial.
  for (Choice aligned : {Choice::kHidden, Choice::kIntermediate, Choice::kTokens})
    EXPECT_TRUE(pad_candidates(gpt2, s, choice_of(list, aligned), Annotation{}).empty());
}

TEST(PadCandidates, WholeHeadsAndTheirGrouping) {
  // GPT-2 XL: n_embd 1600 = 25 heads of 64; padding it adds whole heads.
  const ModelConfig xl = preset("gpt2-xl");
  const StepOptions s = step(1024, false);
  std::vector<PadCandidate> c = pad_candidates(xl, s, choice_of(choices(xl, s), Choice::kHidden), Annotation{});
  EXPECT_EQ(values(c), (std::vector<int64_t>{1664, 1792}));
  EXPECT_EQ(c[0].config.heads, 26);
  EXPECT_EQ(c[0].why, "multiple of 128 above");
  EXPECT_EQ(c[1].config.heads, 28);
  EXPECT_EQ(c[0].config.intermediate, 6400);  // n_inner stays; it is no longer 4 x n_embd

  // 25 query heads in 5 KV groups of 64: the next head count that keeps whole groups is 30 (1920).
  const ModelConfig odd = parse_model_config(
      R"({"model_type": "llama", "vocab_size": 1024, "hidden_size": 1600, "intermediate_size": 4096,
          "num_attention_heads": 25, "num_key_value_heads": 5, "head_dim": 64, "num_hidden_layers": 2})",
      "x");
  c = pad_candidates(odd, s, choice_of(choices(odd, s), Choice::kHeads), Annotation{});
  ASSERT_EQ(values(c), (std::vector<int64_t>{30}));
  EXPECT_EQ(c[0].gemm_size, 1920);
  EXPECT_EQ(c[0].why.rfind("multiple of 128: the nearest num_attention_heads the model allows at or above 1608", 0), 0u)
      << c[0].why;
}

TEST(PadCandidates, TensorParallelSizesArePerRank) {
  // tp 2: the LM head's per-rank N is 64128 (a multiple of 128, not of 256); candidates pad that.
  const ModelConfig llama = preset("llama3-8b");
  const StepOptions s = step(4096, false, 2);
  const std::vector<PadCandidate> c = pad_candidates(llama, s, choice_of(choices(llama, s), Choice::kVocab), Annotation{});
  EXPECT_EQ(values(c), (std::vector<int64_t>{128272, 128288, 128320, 128384, 128512}));
  EXPECT_EQ(c.back().gemm_size, 64256);
  EXPECT_EQ(c.back().why, "multiple of 256 above");
}

TEST(PadCandidates, SizeThatFillsTheLastWave) {
  // 1000 tokens into a 32000-row LM head, 128x128 tiles on 132 SMs: 8 x 250 = 2000 tiles, 15.2 waves
  // (94.7 % over all rounds). 1153 tokens would give 10 x 250 = 2500 tiles, 99.7 %; rounded up to
  // keep 16-byte rows (1000 is a multiple of 8), 1160.
  const ModelConfig tiny = parse_model_config(
      R"({"model_type": "llama", "vocab_size": 32000, "hidden_size": 1024, "intermediate_size": 4096,
          "num_attention_heads": 8, "num_hidden_layers": 1})",
      "x");
  const StepOptions s = step(1000, false);
  const ChoiceInfo tokens = choice_of(choices(tiny, s), Choice::kTokens);
  EXPECT_EQ(tokens.probe_name, "lm_head fwd");
  EXPECT_EQ(tokens.where(), "M of lm_head fwd");
  const Annotation a = predict(tokens.probe, model_gpu(*find_profile("h100-sxm")), 128, 128);
  const std::vector<PadCandidate> c = pad_candidates(tiny, s, tokens, a);
  EXPECT_EQ(values(c), (std::vector<int64_t>{1008, 1024, 1160}));
  EXPECT_EQ(c[0].why, "multiple of 16 above");
  EXPECT_EQ(c[1].why, "multiple of 256 above");
  EXPECT_EQ(c[2].why, "fills its last wave");
  EXPECT_EQ(c[2].step.tokens, 1160);
  EXPECT_EQ(c[2].config.vocab, 32000);

  // GPT-2 XL's attn.c_proj (1024 x 1600) in 128x128 tiles: 8 x 13 = 104 tiles on 132 slots (79 %).
  // 8 x 16 = 128 tiles (97 %) need N >= 1921; keeping 1600's alignment (a multiple of 64), 1984:
  // 31 heads of 64.
  const ModelConfig xl = preset("gpt2-xl");
  const StepOptions t = step(1024, false);
  const ChoiceInfo hidden = choice_of(choices(xl, t), Choice::kHidden);
  const std::vector<PadCandidate> h =
      pad_candidates(xl, t, hidden, predict(hidden.probe, model_gpu(*find_profile("h100-sxm")), 128, 128));
  ASSERT_EQ(values(h), (std::vector<int64_t>{1664, 1792, 1984}));
  EXPECT_EQ(h[2].why, "fills its last wave");
  EXPECT_EQ(h[2].config.heads, 31);
  // GPT-2's 768 (6 tiles of 128, 576 tiles, 87 % over 5 rounds) would fill at 897, 1024 once
  // rounded to keep its multiple of 256: +33 %, past the +25 % neighbours() looks within. None.
  const ModelConfig gpt2 = preset("gpt2");
  const StepOptions g = step(12288, false);
  const ChoiceInfo embd = choice_of(choices(gpt2, g), Choice::kHidden);
  EXPECT_TRUE(pad_candidates(gpt2, g, embd, predict(embd.probe, model_gpu(*find_profile("h100-sxm")), 128, 128)).empty());

  // 25 heads of 64 in 5 KV groups: q_proj (1024 x 1600) has 8 x 13 = 104 tiles on 132 slots (79 %);
  // 8 x 16 = 128 tiles (97 %) need N >= 1921, a multiple of 64: 1984 = 31 heads, not a multiple of 5.
  // The next allowed count, 35 heads (2240: 8 x 18 = 144 tiles, 2 rounds, 55 %), does not fill: dropped.
  const ModelConfig odd = parse_model_config(
      R"({"model_type": "llama", "vocab_size": 1024, "hidden_size": 1600, "intermediate_size": 4096,
          "num_attention_heads": 25, "num_key_value_heads": 5, "head_dim": 64, "num_hidden_layers": 2})",
      "x");
  const StepOptions u = step(1024, false);
  const ChoiceInfo heads = choice_of(choices(odd, u), Choice::kHeads);
  const std::vector<PadCandidate> q =
      pad_candidates(odd, u, heads, predict(heads.probe, model_gpu(*find_profile("h100-sxm")), 128, 128));
  EXPECT_EQ(values(q), (std::vector<int64_t>{30}));  // the multiples' candidate only
}

// --- cost and saving ---

TEST(PadCost, ParametersFlopsAndTheTokensCopy) {
  const ModelConfig gpt2 = preset("gpt2");
  const StepOptions s = step(12287, false);
  PadCandidate pad;
  pad.choice = Choice::kTokens;
  pad.value = pad.gemm_size = 12288;
  pad.config = gpt2;
  pad.step = step(12288, false);
  // Forward inputs per row: attention in, attention out, MLP in (768 each) and the MLP activation
  // (3072) in each of 12 layers, and the final norm's output (768): 65,280 elements; read 12287
  // rows and write 12288, 2 bytes each.
  EXPECT_EQ(token_copy_bytes(gpt2, s, 12288), 65280.0 * (12287 + 12288) * 2);
  const Evaluation e = evaluate(gpt2, s, step_gemms(gpt2, s), StepTime{1000, 0.01}, pad, StepTime{900, 0.01}, 4000);
  EXPECT_EQ(e.extra_params, 0);
  EXPECT_NEAR(e.extra_flops / step_flops(step_gemms(gpt2, s)), 1.0 / 12287, 1e-12);
  EXPECT_EQ(e.touched, 5u);
  ASSERT_TRUE(e.copy_us);
  EXPECT_NEAR(*e.copy_us, 65280.0 * 24575 * 2 / 4e6, 1e-9);  // 4000 GB/s = 4e6 bytes per us
  EXPECT_NEAR(*e.saving_us, 100 - *e.copy_us, 1e-9);
  // Without a calibrated bandwidth the copy time is unknown, and the saving is the GEMMs' alone.
  const Evaluation unknown = evaluate(gpt2, s, step_gemms(gpt2, s), StepTime{1000, 0.01}, pad, StepTime{900, 0.01}, 0);
  EXPECT_FALSE(unknown.copy_us);
  EXPECT_DOUBLE_EQ(*unknown.saving_us, 100);

  // Padding the vocabulary adds rows to the (tied) embedding: 47 x 768.
  PadCandidate vocab;
  vocab.choice = Choice::kVocab;
  vocab.value = vocab.gemm_size = 50304;
  vocab.config = gpt2;
  vocab.config.vocab = 50304;
  vocab.step = s;
  EXPECT_EQ(evaluate(gpt2, s, step_gemms(gpt2, s), std::nullopt, vocab, std::nullopt, 0).extra_params, 47.0 * 768);
  vocab.config.tied_embeddings = false;
  ModelConfig untied = gpt2;
  untied.tied_embeddings = false;
  EXPECT_EQ(evaluate(untied, s, step_gemms(untied, s), std::nullopt, vocab, std::nullopt, 0).extra_params,
            2 * 47.0 * 768);
}

// A GPU where a GEMM runs at `base` TFLOP/s, faster when the vocabulary dimension is a multiple of 128.
std::function<std::optional<GemmTime>(const Problem&)> synthetic(double base, double aligned, double noise) {
  return [=](const Problem& p) -> std::optional<GemmTime> {
    const int64_t vocab = std::max({p.m, p.n, p.k}) > 40000 ? std::max({p.m, p.n, p.k}) : 0;
    const double rate = vocab > 0 && vocab % 128 == 0 ? aligned : base;
    return GemmTime{p.flops() / (rate * 1e12) * 1e6, noise};
  };
}

std::vector<Evaluation> evaluate_vocab(double aligned, double noise) {
  const ModelConfig gpt2 = preset("gpt2");
  const StepOptions s = step(12288, true);
  const auto time_of = synthetic(500, aligned, noise);
  const std::vector<StepGemm> before = step_gemms(gpt2, s);
  const std::optional<StepTime> before_time = step_time(before, time_of);
  std::vector<Evaluation> out;
  for (const PadCandidate& c : pad_candidates(gpt2, s, choice_of(choices(gpt2, s), Choice::kVocab), Annotation{}))
    out.push_back(evaluate(gpt2, s, before, before_time, c, step_time(step_gemms(c.config, c.step), time_of), 0));
  return out;
}

TEST(PadRecommend, TheLeastPaddingWithinTheNoiseOfTheBest) {
  // Multiples of 128 run 40 % faster per FLOP: 50304 saves most; 50432 nearly as much but adds more.
  std::vector<Evaluation> e = evaluate_vocab(700, 0.01);
  ASSERT_EQ(e.size(), 4u);
  EXPECT_FALSE(e[0].significant);  // 50264: more work at the same rate
  EXPECT_TRUE(e[2].significant);
  EXPECT_GT(*e[2].saving_us, 0);
  EXPECT_EQ(e[2].touched, 3u);
  ASSERT_TRUE(recommend(e));
  EXPECT_EQ(e[*recommend(e)].candidate.value, 50304);

  // Noise of 40 %: no saving stands out of it.
  e = evaluate_vocab(700, 0.4);
  EXPECT_DOUBLE_EQ(e[2].threshold, 0.4);
  EXPECT_FALSE(recommend(e));

  // The same rate for every size: padding only adds work. Leave it.
  e = evaluate_vocab(500, 0.01);
  EXPECT_FALSE(recommend(e));
  for (const Evaluation& x : e) EXPECT_LT(*x.saving_us, 0);
}

TEST(PadRecommend, StepTimeIsCountTimesMedian) {
  std::vector<StepGemm> gemms(2);
  gemms[0].problem.m = 1;
  gemms[0].count = 12;
  gemms[1].problem.m = 2;
  gemms[1].count = 1;
  auto time_of = [](const Problem& p) -> std::optional<GemmTime> {
    if (p.m == 1) return GemmTime{10, 0.01};
    return GemmTime{80, 0.06};
  };
  const std::optional<StepTime> t = step_time(gemms, time_of);
  ASSERT_TRUE(t);
  EXPECT_DOUBLE_EQ(t->us, 200);
  EXPECT_DOUBLE_EQ(t->noise, (120 * 0.01 + 80 * 0.06) / 200);
  EXPECT_FALSE(step_time(gemms, [](const Problem&) { return std::optional<GemmTime>(); }));
}

// --- the command ---

int lines(const std::string& text) { return int(std::count(text.begin(), text.end(), '\n')); }

TEST(PadCommand, DryRunListsTheGemmsAndCandidatesOfGpt2) {
  const CliRun r = run("pad --model gpt2 --tokens 12288 --train --dry-run");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* line : {
           "model gpt2: GPT-2 124M, gpt2 layout (fused c_attn, c_fc/c_proj MLP)\n",
           "left out: the attention core (QK^T, softmax, PV), which runs as a fused FlashAttention kernel",
           "step of 12288 tokens: 15 GEMMs, 147 calls, 9.11 TFLOP per rank\n",
           "linear       pass   layout      M      N      K  count  GFLOP/step\n",
           "c_attn       fwd    nt      12288   2304    768     12       521.8\n",
           "c_attn       dgrad  nn      12288    768   2304     12       521.8\n",
           "c_attn       wgrad  tn       2304    768  12288     12       521.8\n",
           "mlp.c_proj   dgrad  nn      12288   3072    768     12       695.8\n",
           "lm_head      fwd    nt      12288  50257    768      1       948.6\n",
           "lm_head      wgrad  tn      50257    768  12288      1       948.6\n",
           "vocab_size  50257  50304      50304        3  +36.1 k (+0.029 %)     +0.029 %           -  multiple of 128 above\n",
           "  n_embd 768: 768 is a multiple of 256, so no multiple above is proposed; the N of attn.c_proj fwd that fills "
           "its last wave is looked for after measuring it\n",
       })
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n--- got:\n" << r.out;
  EXPECT_NE(r.err.find("to measure: 27 distinct GEMMs"), std::string::npos) << r.err;
}

TEST(PadCommand, DryRunJson) {
  const CliRun r = run("pad --model llama3-8b --tokens 1..16:8 --tp 2 --dry-run --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["mode"], "dry-run");
  EXPECT_EQ(j["model"]["num_key_value_heads"], 8);
  ASSERT_EQ(j["steps"].size(), 2u);
  EXPECT_EQ(j["steps"][1]["tokens"], 9);
  const nlohmann::json& first = j["steps"][0]["gemms"][0];
  EXPECT_EQ(first["linear"], "q_proj");
  EXPECT_EQ(first["layout"], "nt");
  EXPECT_EQ(first["n"], 2048);
  EXPECT_EQ(first["count"], 32);
  EXPECT_EQ(j["steps"][0]["dimensions"][0]["name"], "vocab_size");
  EXPECT_EQ(j["steps"][0]["dimensions"][0]["candidates"][0]["value"], 128272);
  EXPECT_NE(j["left_out"].get<std::string>().find("attention core"), std::string::npos);
}

TEST(PadCommand, EveryPresetDryRuns) {
  for (const char* name : {"gpt2", "gpt2-xl", "llama3-8b", "llama3-70b", "mistral-7b", "qwen2.5-7b", "falcon-7b", "phi-2",
                           "mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v2-lite"}) {
    const CliRun r = run(std::string("pad --model ") + name + " --tokens 4096 --train --dry-run");
    EXPECT_EQ(r.code, 0) << name << "\n" << r.err;
  }
}

TEST(PadCommand, NoGpuWithoutDryRun) {
  if (device_count() > 0) GTEST_SKIP() << "a GPU is present: pad would measure";
  const std::string db = ::testing::TempDir() + "shapescope_pad_" + std::to_string(getpid()) + ".db";
  const CliRun r = run("pad --model gpt2 --tokens 12288 --db " + db);
  EXPECT_EQ(r.code, int(ExitCode::kNoGpu)) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--dry-run"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(db));  // nothing written without a GPU
}

// Without a GPU, pad answers from a store that holds the step's GEMMs (the committed H200 store of
// pad's GPU run), reading it only.
TEST(PadCommand, NoGpuAnswersFromAStoreThatHoldsTheGemms) {
  if (device_count() > 0) GTEST_SKIP() << "a GPU is present: pad would measure";
  const std::string committed = std::string(SHAPESCOPE_TEST_DATA) + "/h200-2026-11-21-final/pad.db";
  const std::string db = ::testing::TempDir() + "shapescope_pad_store_" + std::to_string(getpid()) + ".db";
  std::filesystem::copy_file(committed, db, std::filesystem::copy_options::overwrite_existing);
  const std::string before = file_text(db);
  const CliRun r = run("pad --model gpt2 --tokens 12288 --train --db " + db);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("0 GEMMs measured now, 27 from the store"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vocab_size  50257  50264"), std::string::npos) << r.out;
  EXPECT_EQ(file_text(db), before);
  EXPECT_FALSE(std::filesystem::exists(db + "-wal"));
  std::filesystem::remove(db);
}

TEST(PadCommand, HelpSaysWhatIsLeftOut) {
  const CliRun r = run("pad --help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("attention core"), std::string::npos);
  EXPECT_NE(r.out.find("deepseek-v2-lite, falcon-7b, gpt2, gpt2-xl, llama3-70b, llama3-8b, mistral-7b, mixtral-8x7b, phi-2, qwen2.5-7b, qwen3-30b-a3b"), std::string::npos) << r.out;
}

class PadBadInput : public ::testing::Test {
 protected:
  std::string file(const std::string& name, const std::string& text) {
    const std::string path = ::testing::TempDir() + "shapescope_pad_" + std::to_string(getpid()) + "_" + name;
    std::ofstream(path) << text;
    files_.push_back(path);
    return path;
  }
  void TearDown() override {
    for (const std::string& f : files_) std::remove(f.c_str());
  }
  std::vector<std::string> files_;
};

TEST_F(PadBadInput, OneLineAndExitCode2) {
  const std::string malformed = file("malformed.json", "{\"vocab_size\": 50257,");
  const std::string missing = file("missing.json", R"({"model_type": "llama", "vocab_size": 32000, "hidden_size": 4096})");
  const std::string zero = file("zero.json", R"({"vocab_size": 50257, "n_embd": 0, "n_head": 12, "n_layer": 12})");
  const std::string unknown = file("unknown.json", R"({"model_type": "mamba", "vocab_size": 32000})");
  const std::string good = file("good.json", R"({"vocab_size": 50257, "n_embd": 768, "n_head": 12, "n_layer": 12})");
  struct Case {
    std::string args, words;
  };
  const std::vector<Case> cases = {
      {"pad --model nope --tokens 8",
       "--model: 'nope' is not a preset (deepseek-v2-lite, falcon-7b, gpt2, gpt2-xl, llama3-70b, llama3-8b, mistral-7b, mixtral-8x7b, phi-2, qwen2.5-7b, qwen3-30b-a3b)"},
      {"pad --model nope", "--model: 'nope' is not a preset"},
      {"pad --model ../models/gpt2 --tokens 8", "is not a preset"},
      {"pad --tokens 8", "--model: give a preset"},
      {"pad --model gpt2 --config " + good + " --tokens 8", "give one"},
      {"pad --model gpt2", "--tokens: give the tokens per step"},
      {"pad --config /nonexistent/config.json --tokens 8", "--config: '/nonexistent/config.json' cannot be read"},
      {"pad --config " + ::testing::TempDir() + " --tokens 8", "is a directory"},
      {"pad --config " + malformed + " --tokens 8", "is not valid JSON"},
      {"pad --config " + missing + " --tokens 8", "has no 'intermediate_size'"},
      {"pad --config " + zero + " --tokens 8", "n_embd is 0; it must be a positive integer"},
      {"pad --config " + unknown + " --tokens 8", "model_type 'mamba' is not one shapescope knows"},
      {"pad --model gpt2 --tokens 0", "--tokens: '0'"},
      {"pad --model gpt2 --tokens 64..8", "--tokens: '64..8' is a reversed range"},
      {"pad --model gpt2 --tokens abc", "--tokens: 'abc'"},
      {"pad --model gpt2 --tokens 1..4096", "--tokens: '1..4096' has 4096 values"},
      {"pad --model gpt2 --tokens 8 --tp 0", "--tp: 0 must be between 1 and 1024"},
      {"pad --model gpt2 --tokens 8 --tp 2", "--tp: 2 does not divide vocab_size 50257"},
      {"pad --model llama3-70b --tokens 8 --tp 3", "--tp: 3 does not divide num_attention_heads 64"},
      {"pad --model llama3-8b --tokens 8 --tp 16", "--tp: 16 does not divide num_key_value_heads 8"},
      {"pad --model gpt2 --tokens 8 --dtype int4", "--dtype: 'int4'"},
      {"pad --model gpt2 --tokens 8 --dtype bf16 --recipe block", "--recipe: 'block' is an fp8 recipe; --dtype is bf16"},
      {"pad --model gpt2 --tokens 8 --dtype fp8 --recipe block-1x128", "--recipe: 'block-1x128' names one GEMM's recipe"},
      {"pad --model gpt2 --tokens 8 --dtype fp8", "--backend: 'cublas' has no fp8"},
      {"pad --model gpt2 --tokens 8 --backend cutlass", "--backend: 'cutlass'"},
      {"pad --model gpt2 --tokens 8 --samples 0", "--samples: 0"},
  };
  for (const Case& c : cases) {
    const CliRun r = run(c.args + " --dry-run");
    EXPECT_EQ(r.code, int(ExitCode::kUsage)) << c.args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.words), std::string::npos) << c.args << "\n" << r.err;
  }
}

}  // namespace
}  // namespace shapescope
