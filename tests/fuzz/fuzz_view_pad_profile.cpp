// Fuzz target: pad and profile from a store (no GPU here), with their text, JSON and HTML writers.
// A random model config (a llama-like, GPT-2 or Mixtral one: heads, head size, widths, vocabulary,
// layers) and step (tokens, train, tensor parallelism, dtype) give pad's GEMMs; a random list of
// GEMMs (counts, the trace's times and kernel names) is profile's workload; the store holds points
// at and near them. Refusals: a config or step the CLI refuses (exit 2), nothing stored (exit 3).
#include <fmt/format.h>

#include <array>

#include "fuzz_views.hpp"
#include "model/model_config.hpp"
#include "model/workload.hpp"
#include "report/pad_report.hpp"
#include "report/profile_html.hpp"
#include "report/profile_report.hpp"
#include "views/pad.hpp"
#include "views/profile.hpp"

namespace {

using namespace shapescope;

std::string config_text(FuzzedDataProvider& in) {
  const int heads = 1 << in.ConsumeIntegralInRange<int>(0, 5);
  const int head_dim = std::array<int, 4>{32, 64, 80, 128}[in.ConsumeIntegralInRange<size_t>(0, 3)];
  const int64_t hidden = int64_t(heads) * head_dim * in.ConsumeIntegralInRange<int>(1, 2);
  const int64_t vocab = fuzz::size(in, 131072), layers = in.ConsumeIntegralInRange<int>(1, 4);
  switch (in.ConsumeIntegralInRange<int>(0, 2)) {
    case 0:
      return fmt::format(R"({{"model_type": "gpt2", "n_embd": {}, "n_head": {}, "n_layer": {}, "vocab_size": {}}})", hidden,
                         heads, layers, vocab);
    case 1:
      return fmt::format(R"({{"model_type": "mixtral", "hidden_size": {}, "intermediate_size": {}, "num_attention_heads": {},
          "num_key_value_heads": {}, "num_hidden_layers": {}, "vocab_size": {}, "num_local_experts": {},
          "num_experts_per_tok": {}}})",
                         hidden, fuzz::size(in, 32768), heads, std::max(1, heads >> in.ConsumeIntegralInRange<int>(0, 3)),
                         layers, vocab, 1 << in.ConsumeIntegralInRange<int>(1, 3), in.ConsumeIntegralInRange<int>(1, 2));
    default:
      return fmt::format(R"({{"model_type": "llama", "hidden_size": {}, "intermediate_size": {}, "num_attention_heads": {},
          "num_key_value_heads": {}, "num_hidden_layers": {}, "vocab_size": {}, "tie_word_embeddings": {}}})",
                         hidden, fuzz::size(in, 32768), heads, std::max(1, heads >> in.ConsumeIntegralInRange<int>(0, 3)),
                         layers, vocab, in.ConsumeBool() ? "true" : "false");
  }
}

void pad_from(FuzzedDataProvider& in, fuzz::TemporaryStore& store) {
  const ModelConfig config = parse_model_config(config_text(in), "fuzz.json");
  PadRequest request;
  request.tokens = {fuzz::size(in, 32768)};
  if (in.ConsumeBool()) request.tokens.push_back(fuzz::size(in, 32768));
  request.train = in.ConsumeBool();
  request.tp = int64_t(1) << in.ConsumeIntegralInRange<int>(0, 2);
  request.dtype = in.ConsumeBool() ? DType::kBf16 : DType::kFp16;
  request.dtype_name = std::string(to_string(request.dtype));
  request.db = store.path();
  const PadResult plan = pad_plan(config, request);
  std::vector<Problem> problems;
  for (const PadAnalysis& a : plan.analyses)
    for (const StepGemm& g : a.gemms) problems.push_back(g.problem);
  if (problems.empty()) return;
  ShapeOptions options;
  options.dtype = request.dtype_name;
  store.fill(in, options, problems, 32);
  const PadResult result = pad_from_store(config, request);
  std::ostringstream text, json;
  write_pad_text(text, config, request, result);
  write_pad_json(json, config, request, result);
  (void)nlohmann::json::parse(json.str());
}

void profile_from(FuzzedDataProvider& in, fuzz::TemporaryStore& store) {
  Workload w;
  w.source = "--gemms 'fuzz.json'";
  const ShapeOptions options = fuzz::shape_options(in);
  std::vector<Problem> problems;
  const int gemms = in.ConsumeIntegralInRange<int>(1, 6);
  for (int i = 0; i < gemms; ++i) {
    WorkloadGemm g;
    g.problems = {fuzz::problem(in, options, 16384)};
    g.count = in.ConsumeIntegralInRange<int64_t>(1, 1000);
    g.origin = "aten::mm";
    if (in.ConsumeBool()) {
      g.kernel_us = in.ConsumeFloatingPointInRange<double>(0.5, 1e6);
      g.kernels = g.count;
      g.kernel_names = {"nvjet_sm90_tst_256x128_64x4_1x4_h_bz_coopA_NNT"};
    }
    problems.push_back(g.problems.front());
    w.add(g);
  }
  if (in.ConsumeBool()) w.all_kernels_us = in.ConsumeFloatingPointInRange<double>(1, 1e7);
  store.fill(in, options, problems, 24);
  ProfileRequest request;
  request.db = store.path();
  request.verdicts = in.ConsumeBool();
  request.fused_in_total = in.ConsumeBool();
  const ProfileResult result = profile_from_store(w, request);
  std::ostringstream text, json, html;
  write_profile_text(text, result);
  write_profile_json(json, result);
  (void)nlohmann::json::parse(json.str());
  write_profile_html(html, result, ProfileHtmlOptions{"shapescope profile --gemms fuzz.json", "shapescope fuzz"});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  fuzz::TemporaryStore store;
  return fuzz::answer_or_refuse(
      [&] {
        if (in.ConsumeBool()) pad_from(in, store);
        else profile_from(in, store);
      },
      {ExitCode::kUsage, ExitCode::kNoGpu});
}
