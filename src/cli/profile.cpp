// `shapescope profile WORKLOAD`: every distinct GEMM of a real workload (a PyTorch profiler trace, a
// GEMM list, or a model's step), measured on this GPU (or read from the store without one), ranked
// by its time per step with explain's one-line verdict; the total against the trace's GEMM kernels.
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/predict_options.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "core/backend_kind.hpp"
#include "device/device.hpp"
#include "model/config_workload.hpp"
#include "report/output.hpp"
#include "report/profile_html.hpp"
#include "report/profile_report.hpp"
#include "shape/range.hpp"
#include "store/store.hpp"
#include "views/profile.hpp"

namespace shapescope {
namespace {

struct ProfileOptions {
  WorkloadSource source;
  StepArgs step;
  std::string expert_tokens;  // "900,100,..." rows per expert (uneven routing)
  BackendSpec backend{BackendKind::kCublas};
  bool fused_gate_up = false;
  bool attention = false, attention_in_total = false;
  int64_t sequence = 0;
  ProfileRequest request;
  int device = 0;
  bool json = false, wide = false, no_verdict = false;
  std::string html;  // --html FILE: the page too; "-": the page instead of the table
  bool html_given = false, force = false;  // --force: --html may replace a result store
  CLI::Option* what_if_seconds = nullptr;  // --what-if-seconds, checked once the workload is known
  PredictOptions predict;     // --predict, --perf-model, --scale-to
  const GpuProfile* gpu = nullptr;  // --gpu: the GPU --predict predicts for
};

// A model's step as a workload, with the MoE and attention options.
Workload model_workload(const ProfileOptions& o) {
  const ModelConfig config = resolve_model(o.source);
  const ParsedStep step = parse_step(o.step, config, 1, "profile");
  WorkloadRequest r;
  r.tokens = step.tokens.front();
  r.train = o.step.train;
  r.tp = o.step.tp;
  r.dtype = step.dtype;
  r.fp8 = step.fp8;
  if (!o.expert_tokens.empty())
    r.expert_tokens = parse_number_list(o.expert_tokens, "--expert-tokens", "a token count", "token counts, one per expert");
  r.fused_gate_up = o.fused_gate_up;
  r.attention = o.attention;
  r.sequence = o.sequence;
  if (o.attention && o.sequence < 1)
    throw usage_error(fmt::format("--sequence: give the sequence length with --attention (QK^T and PV are per "
                                  "sequence; it divides the {} tokens), e.g. --sequence 1024",
                                  r.tokens));
  Workload w;
  try {
    w = config_workload(config, r);
  } catch (const Error& e) {
    // The model says "workload: ..."; with a list given, the option is what to name.
    const std::string what = e.what();
    if (o.expert_tokens.empty() || what.find("expert token counts") == std::string::npos) throw;
    throw usage_error(fmt::format("--expert-tokens: '{}': {}", o.expert_tokens, what.substr(what.find(": ") + 2)));
  }
  w.source = fmt::format("{} at {} tokens{}", config.name, r.tokens, r.train ? ", training" : "");
  return w;
}

Workload profile_workload(const ProfileOptions& o) {
  const SourceKind kind = source_kind(o.source);
  if (kind == SourceKind::kModel) return model_workload(o);
  const std::string option = kind == SourceKind::kTrace ? "--trace" : "--gemms";
  refuse_step_options(o.step, option);
  const auto refuse = [&](bool given, const char* name) {
    if (given) throw usage_error(fmt::format("{}: goes with --model or --config, not with {}", name, option));
  };
  refuse(!o.expert_tokens.empty(), "--expert-tokens");
  refuse(o.fused_gate_up, "--fused-gate-up");
  refuse(o.attention, "--attention");
  refuse(o.sequence != 0, "--sequence");
  return load_file_workload(o.source);
}

void check_options(const ProfileOptions& o) {
  check_wide_text(o.wide, o.json);
  if (o.attention_in_total && !o.attention) throw usage_error("--attention-in-total: needs --attention");
  if (o.sequence < 0)
    throw usage_error(fmt::format("--sequence: {} is not a sequence length (a positive number of tokens)", o.sequence));
  if (o.sequence != 0 && !o.attention)
    throw usage_error(fmt::format("--sequence: {} is read only with --attention (the length of QK^T and PV's "
                                  "sequences); without it nothing uses it",
                                  o.sequence));
  if (o.html_given && o.html == "-" && o.json)
    throw usage_error("--html: '-' puts the page on standard output, where --format json would go too; give a file");
}

// Never over an input: the store, the trace, the list, the config, the preset, the performance model.
void check_html_path(const ProfileOptions& o, const GpuPerfModel* model) {
  if (o.html_given && o.html != "-")
    check_output_path(o.html, "--html",
                      {o.request.db, o.source.trace, o.source.gemms, o.source.config, preset_file(o.source),
                       model ? model->file : std::string()},
                      store_at_output(o.force));
}

// The page of the profile: to standard output, or to its file, which it replaces only when complete.
void write_html(const ProfileOptions& o, const ProfileResult& result) {
  ProfileHtmlOptions page;
  page.command_line = "shapescope";
  for (const std::string& a : g_arguments) page.command_line += " " + a;
  page.version = version_line();
  write_whole_output(o.html, "--html", [&](std::ostream& out) { write_profile_html(out, result, page); });
  if (o.html == "-") return;
  announce(fmt::format("profile: the page of {} GEMMs to '{}'", result.entries.size(), o.html), true);
}

void run_profile(ProfileOptions o, const CLI::App& cmd) {
  check_options(o);
  const std::shared_ptr<const GpuPerfModel> model = profile_prediction(cmd, o.predict, o.gpu, o.backend, o.device);
  check_html_path(o, model.get());
  const Workload w = profile_workload(o);
  if (w.gemms.empty()) {
    const std::string why = !w.unmapped.empty() ? fmt::format("none of its {} GEMM ops could be mapped (the first: {}: {})",
                                                               w.unmapped_count(), w.unmapped.front().op,
                                                               w.unmapped.front().reason)
                                                : (w.notes.empty() ? std::string("it holds no GEMM") : w.notes.front());
    throw usage_error(fmt::format("{}: nothing to profile: {}", w.source, why));
  }
  if (o.request.replay_always && !w.timeline)
    throw usage_error(fmt::format("--clocks: 'replay' replays a trace's step in its order; {} has no step to replay "
                                  "(give --trace, or --clocks step, sustained or burst)",
                                  w.source));
  check_what_if_seconds(*o.what_if_seconds, !o.request.what_ifs.empty(), w.timeline ? "" : w.source,
                        o.request.clocks_given);
  o.request.backend = o.backend.kind;
  o.request.fused_in_total = o.attention_in_total;
  o.request.verdicts = !o.no_verdict;
  const auto write = [&](const ProfileResult& result) {
    if (o.html_given) write_html(o, result);
    if (o.html_given && o.html == "-") return;
    if (o.json) write_profile_json(std::cout, result);
    else write_profile_text(std::cout, result);
  };
  if (model) return write(profile_predict(w, o.request, model, &g_interrupted));
  if (device_count() == 0) {
    if (o.request.replay_always)
      throw Error(ExitCode::kNoGpu, "--clocks: 'replay' replays the step on a GPU, and there is none here");
    return write(profile_from_store(w, o.request));
  }
  // Checked now, written only when a GEMM is measured.
  Store store(o.request.db);
  const DeviceContext device = query_device(o.device);
  fmt::print(stderr, "{}\n", device_header(device));
  std::unique_ptr<Progress> bar;  // one line on stderr for every GEMM of the step
  const ProgressFor progress_for = [&](size_t points) {
    bar = std::make_unique<Progress>(points, isatty(STDERR_FILENO) == 1);
    return bar->callback();
  };
  // Each phase as it ends: profile of a big step with its what-ifs takes a while.
  o.request.phase_done = [](const std::string& name, double seconds) {
    fmt::print(stderr, "profile: {} in {:.1f} s\n", name, seconds);
  };
  write(profile_measure(w, o.request, device, store, progress_for, &g_interrupted));
}

}  // namespace

void register_profile(CLI::App& app) {
  auto o = std::make_shared<ProfileOptions>();
  auto* cmd = app.add_subcommand("profile", "Your workload's GEMMs, measured, ranked by time, each explained");
  cmd->footer(fmt::format(
      "WORKLOAD is a PyTorch profiler trace (--trace: every aten::mm, addmm, bmm, baddbmm, matmul, linear,\n"
      "_scaled_mm and _grouped_mm with its shapes, strides and dtype; record one with\n"
      "torch.profiler.profile(activities=[CPU, CUDA], record_shapes=True) and prof.export_chrome_trace), a GEMM\n"
      "list (--gemms: CSV or JSON with m, n, k, layout, dtype, batch, count; optional lda, ldb, ldc, offset_a,\n"
      "offset_b, name, group), or a model's step (--model NAME or --config FILE with --tokens N [--train]).\n"
      "Every distinct GEMM is measured once (cold L2; the store is reused), with its count per step, time per\n"
      "call and per step, share of the step's GEMM time and explain's one-line verdict (its neighbours are\n"
      "measured too; --no-verdict skips them), ranked by time per step; the total is compared with the\n"
      "trace's own GEMM kernel time. An MoE layer's experts run as one grouped call (cublas_grouped:\n"
      "cublasGemmGroupedBatchedEx), M per expert from tokens x top-k / experts or --expert-tokens. Ops the\n"
      "trace could not map are counted and listed. Without a GPU the store is read (--db) and what it lacks\n"
      "is listed; with --predict (no GPU needed) every time is the performance model's for --gpu KEY, marked\n"
      "predicted with its held-out error, and so are the what-ifs it can price. An fp8 step's casts as the\n"
      "trace ran them (the kernels inside its shapescope_fp8_cast ranges, --cast-range; else Transformer\n"
      "Engine's cast kernels by name) stand beside shapescope's own.\n"
      "Presets: {}\n"
      "Examples:\n"
      "  shapescope profile --trace step.json\n"
      "  shapescope profile --gemms megatron.csv --format json\n"
      "  shapescope profile --model gpt2 --tokens 12288 --train\n"
      "  shapescope profile --model mixtral-8x7b --tokens 8192 --expert-tokens 4000,1000,2000,2384,1500,1500,2000,2000\n"
      "  shapescope profile --model llama3-8b --tokens 8192 --attention --sequence 8192   # QK^T, PV listed\n"
      "  shapescope profile --trace step.json --db h100.db   # no GPU here: from a store measured elsewhere\n"
      "  shapescope profile --model gpt2 --tokens 12288 --gpu h100-sxm --predict   # no GPU: the H100's model\n"
      "  shapescope profile --trace step.json --html step.html   # the table, and the same as a page",
      preset_list()));
  add_workload_source_options(cmd, o->source);
  add_cast_range_option(cmd, o->source);
  add_step_options(cmd, o->step, "tokens per step (batch x sequence), one value (with --model or --config)");
  cmd->add_option("--expert-tokens", o->expert_tokens, "tokens routed to each expert, comma list (uneven routing)");
  cmd->add_flag("--fused-gate-up", o->fused_gate_up, "the experts' gate and up projections as one GEMM (transformers 5)");
  cmd->add_flag("--attention", o->attention, "list attention's QK^T and PV (usually fused by FlashAttention)");
  cmd->add_flag("--attention-in-total", o->attention_in_total, "count them in the total (attention run as GEMMs)");
  cmd->add_option("--sequence", o->sequence, "sequence length, with --attention (divides --tokens)");
  add_backend_option(cmd, o->backend, "profile", {BackendKind::kCublas, BackendKind::kCublasLt},
                     "cublas | cublaslt (grouped calls always run on cublas_grouped)");
  add_samples_option(cmd, o->request.samples, "samples per GEMM");
  add_step_clocks_option(cmd, o->request.clocks, o->request.clocks_given, o->request.replay_always);
  add_burst_idle_option(cmd, o->request.burst_idle);
  add_db_option(cmd, o->request.db, "result store (SQLite file)");
  add_device_option(cmd, o->device);
  add_result_format_options(cmd, o->json, o->wide);
  cmd->add_flag("--no-verdict", o->no_verdict, "no explain verdicts (their neighbours are not measured)");
  add_pair_seconds_option(cmd, o->request.pair_seconds, "measure every what-if against the step in one paired run");
  cmd->add_option_function<std::string>(
      "--what-if",
      [o](const std::string& text) {
        for (const int64_t n : parse_number_list(text, "--what-if", "a what-if's number", "what-ifs' numbers, e.g. 1,3")) {
          if (n < 1) throw usage_error(fmt::format("--what-if: {} in '{}' is not a what-if's number (1, 2, ...)", n, text));
          o->request.what_ifs.push_back(size_t(n));
        }
      },
      "also measure the step with these what-ifs applied at once, as a step (their numbers: 3 or 1,2,3)");
  o->what_if_seconds = add_what_if_seconds_option(cmd, o->request.what_if_seconds);
  add_max_error_option(cmd, o->request.max_error);
  add_int_option(cmd, "--micro-batches", o->request.micro_batches, 1, 1 << 20,
                 "micro-batches per step (gradient accumulation): an fp8 what-if's weight casts per step = calls / this");
  CLI::Option* html = cmd->add_option("--html", o->html,
                                      "also write the profile as one self-contained HTML page (replaced only when "
                                      "complete); - for the page alone on standard output");
  cmd->add_flag("--force", o->force, kForceHelp);
  add_predict_options(cmd, o->predict, "measuring (no GPU needed)");
  add_gpu_option(cmd, o->gpu, "with --predict: the GPU to predict for: " + profile_keys());
  cmd->callback([o, html, cmd] {
    o->html_given = html->count() > 0;
    run_profile(*o, *cmd);
  });
}

}  // namespace shapescope
