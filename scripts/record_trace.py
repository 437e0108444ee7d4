#!/usr/bin/env python3
"""Record a PyTorch profiler trace (Chrome trace JSON, record_shapes=True) of one training step of a
real `transformers` model built from its config class: random weights, nothing downloaded.

These traces are what `shapescope profile` / `pad --trace` read, and the fixtures of the trace
parser's tests. Run on a GPU host:

  python3 scripts/record_trace.py --model gpt2 --batch 12 --seq 1024 --out gpt2.json
  python3 scripts/record_trace.py --model gpt2 --vocab 50264 --batch 12 --seq 1024 --out gpt2-50264.json
  python3 scripts/record_trace.py --model mixtral --layers 2 --batch 4 --seq 1024 --out mixtral.json
  python3 scripts/record_trace.py --model qwen2 --batch 4 --seq 1024 --out qwen2.json
  python3 scripts/record_trace.py --model gpt2 --attn eager --upcast-attn --batch 12 --seq 1024 --out gpt2-fp32attn.json
  python3 scripts/record_trace.py --model qwen2moe --layers 4 --batch 2 --seq 1024 --out qwen2moe.json
  python3 scripts/record_trace.py --model qwen2moe --experts eager --layers 4 --batch 2 --seq 1024 --out qwen2moe-loop.json
  python3 scripts/record_trace.py --model gptj-6b --layers 4 --batch 2 --seq 1024 --out gptj.json
  python3 scripts/record_trace.py --model llama3-8b --layers 8 --batch 2 --seq 4096 --out llama3-8l.json

Dense families at a real model's widths (--layers, 2 by default, keeps them small): gptj-6b (GPT-J 6B,
hidden 4096), bloom-7b1 (4096), opt-6.7b (4096), gpt-neox-20b (6144), falcon-7b (4544, one KV head),
llama3-8b (Llama 3 8B: 4096, FFN 14336, 8 KV heads) and qwen2.5-7b (3584, FFN 18944, 4 KV heads).

--attn picks transformers' attention implementation (sdpa, the default, or eager: attention's QK^T
and PV as GEMMs). --upcast-attn (gpt2) sets reorder_and_upcast_attn: eager attention computes QK^T
in fp32 with autocast off, as GPT-2's Megatron-style option does. --experts picks how an MoE layer
runs its experts (transformers' experts implementation: grouped_mm, batched_mm or eager, a loop).
--fp8-lm-head computes the LM head's forward GEMM in fp8 (torch._scaled_mm, e4m3 with one scale per
tensor; its backward stays bf16), as profile's precision what-if for that GEMM proposes.
--fp8-linears RECIPE runs every Linear's three GEMMs in fp8 through torch._scaled_mm under a training
recipe (tensor, row or block: scripts/fp8_linear.py), the operands quantized in the step inside
record_function("shapescope_fp8_cast"); --fp8-compile fuses those quantizers with torch.compile (as
Transformer Engine's and torchao's casts are fused); --fp8-casts-lib LIB quantizes with shapescope's
own cast kernels instead (build/libshapescope_casts.so: the kernels profile prices an fp8 what-if's
casts with). --fp8-head RECIPE does the same for the LM head alone (its three GEMMs: profile's
precision what-ifs of the head, applied). --fp8-plan FILE runs the passes a plan names in fp8, each
Linear's (by its out and in features) forward, input and weight gradients in the recipe it gives or
in bf16 (bench/workloads/changed_steps.py writes one from profile's precision what-ifs). The log then
says the casts' kernel time too:

  python3 scripts/record_trace.py --model llama3-8b --layers 2 --batch 2 --seq 1024 --fp8-linears block --out fp8.json

--steps N records N steps in one trace (each in its ProfilerStep#i range; the log's times are per
step, their mean), so that a comparison of two traces is not one step's noise.

--settle-seconds S (default 1) runs the steps for S seconds or more under the profiler before the
recorded ones, and leaves them out of the trace: the profiler's start idles the GPU for a moment, and
the steps right after it run their GEMMs faster than a training run's steps, one after the other at
the power limit, do. On an H200, GPT-NeoX widths recorded right after the start held 19.7-20.2 ms of
GEMMs per step, their GEMMs' times at 1898-1926 MHz, and profile's replay read 1.047-1.069x of them;
settled, 20.8-22.9 ms at 1666-1856 MHz, and 0.925-1.024x
(bench/workloads/results/step-truth-settle-h200-2026-11-28/). 0: none; at most 60 (the settling
steps are traced in full before they are left out).

--alternate-baseline FILE (with an fp8 option and an even --steps N) records, in the same process and
profiler session, N steps of the model without its fp8 change between N steps with it (A B B A A B B
A ...: a linear drift of the clock over the recording cancels), then splits the trace by step (each
kernel with the step whose launch made it, scripts/step_trace.py): the steps without the change go to
FILE, those with it to --out. Two recordings made one after the other put the step before a change in
another clock state than the step after it (the same step's GEMMs moved 1.8 % between two recordings
on an H100). Each half keeps the other's steps as gaps: compare their kernel times; for profile's
replay of a step, record it alone. With --timed-pairs N (even) it then runs N more pairs of steps
without and with the change (A B B A ..., after the traces are written, without the profiler) timed
with CUDA events, and prints the whole step's move per step with a 95 % interval ("timed pairs: ..."): near the
power limit a few steps of a trace move by more than a small change saves.

  python3 scripts/record_trace.py --model llama3-8b --layers 2 --batch 2 --seq 2048 --fp8-head tensor \
      --fp8-casts-lib build/libshapescope_casts.so --steps 4 --alternate-baseline before.json --out after.json

While the step runs, the GPU's SM clock, board power and utilization are sampled through NVML every
20 ms and kept in the trace (its "shapescopeClocks" key: the clock the step ran at; docs/method.md);
without NVML the trace has none and the log says why.

Besides the trace it prints one line per distinct GEMM kernel launch shape it saw (from the trace's
own cpu_op events), the step's GEMM kernel time and the clock it ran at, so a run's log can be
compared with shapescope's.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from shapescope import _clocks  # noqa: E402  (the source tree's package: NVML sampling, standard library only)
import fp8_linear  # noqa: E402  (beside this script: fp8 Linears through torch._scaled_mm)
import step_trace  # noqa: E402  (beside this script: a trace's kernels, the split of alternated steps)


class Fp8Logits(torch.autograd.Function):
    """logits = x @ w^T with the GEMM in fp8 (e4m3, a scale per tensor); the gradients in bf16."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        x2 = x.reshape(-1, x.shape[-1])
        sx = x2.abs().amax().float().clamp(min=1e-12) / 448.0
        sw = w.abs().amax().float().clamp(min=1e-12) / 448.0
        xq = (x2.float() / sx).to(torch.float8_e4m3fn)
        wq = (w.float() / sw).to(torch.float8_e4m3fn)
        out = torch._scaled_mm(xq, wq.t(), scale_a=sx, scale_b=sw, out_dtype=x.dtype)
        return out.reshape(*x.shape[:-1], w.shape[0])

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        g2 = g.reshape(-1, g.shape[-1])
        return (g2 @ w).reshape(x.shape), g2.t() @ x.reshape(-1, x.shape[-1])


def build(args):
    # Built on the GPU in bf16 directly: a 3-billion-parameter Mixtral initialised on the CPU in fp32
    # takes minutes; the shapes are the same either way.
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        model, vocab = build_on_device(args)
    torch.set_default_dtype(torch.float32)
    return model, vocab


# Dense families at one real model's widths each: (config class, model class, the config's values).
DENSE = {
    "gptj-6b": ("GPTJConfig", "GPTJForCausalLM",
                dict(n_embd=4096, n_head=16, rotary_dim=64, n_positions=2048, vocab_size=50400)),
    "bloom-7b1": ("BloomConfig", "BloomForCausalLM", dict(hidden_size=4096, n_head=32, vocab_size=250880)),
    "opt-6.7b": ("OPTConfig", "OPTForCausalLM",
                 dict(hidden_size=4096, ffn_dim=16384, num_attention_heads=32, word_embed_proj_dim=4096,
                      max_position_embeddings=2048, vocab_size=50272)),
    "gpt-neox-20b": ("GPTNeoXConfig", "GPTNeoXForCausalLM",
                     dict(hidden_size=6144, intermediate_size=24576, num_attention_heads=64,
                          max_position_embeddings=2048, vocab_size=50432)),
    "falcon-7b": ("FalconConfig", "FalconForCausalLM",
                  dict(hidden_size=4544, num_attention_heads=71, multi_query=True, new_decoder_architecture=False,
                       parallel_attn=True, bias=False, vocab_size=65024)),
    "llama3-8b": ("LlamaConfig", "LlamaForCausalLM",
                  dict(hidden_size=4096, intermediate_size=14336, num_attention_heads=32, num_key_value_heads=8,
                       max_position_embeddings=8192, vocab_size=128256)),
    # Encoders trained with masked-LM heads over odd vocabularies (BERT's 30522, RoBERTa's 50265): the
    # head's GEMMs have 2-byte rows, the case padding the vocabulary fixes. Positions: 512.
    "bert-base": ("BertConfig", "BertForMaskedLM",
                  dict(hidden_size=768, intermediate_size=3072, num_attention_heads=12, vocab_size=30522)),
    "roberta-base": ("RobertaConfig", "RobertaForMaskedLM",
                     dict(hidden_size=768, intermediate_size=3072, num_attention_heads=12, vocab_size=50265,
                          max_position_embeddings=514, pad_token_id=1)),
    "qwen2.5-7b": ("Qwen2Config", "Qwen2ForCausalLM",
                   dict(hidden_size=3584, intermediate_size=18944, num_attention_heads=28, num_key_value_heads=4,
                        max_position_embeddings=32768, vocab_size=152064)),
}


def build_dense(tf, args):
    config_name, model_name, values = DENSE[args.model]
    config_class, model_class = getattr(tf, config_name, None), getattr(tf, model_name, None)
    if config_class is None or model_class is None:
        sys.exit(f"--model {args.model}: transformers {tf.__version__} has no {config_name}/{model_name}")
    values = dict(values, vocab_size=args.vocab or values["vocab_size"])
    # GPT-J's and Bloom's configs take the layer count as n_layer, the others as num_hidden_layers.
    layers_key = "n_layer" if args.model in ("gptj-6b", "bloom-7b1") else "num_hidden_layers"
    config = config_class(**values, **{layers_key: args.layers or 2})
    return model_class(config), config.vocab_size


def build_on_device(args):
    import transformers as tf

    if args.model in DENSE:
        model, vocab = build_dense(tf, args)
        return finish(model, vocab, args)

    if args.model == "gpt2":
        config = tf.GPT2Config(n_layer=args.layers or 12, reorder_and_upcast_attn=args.upcast_attn)
        if args.vocab:
            config.vocab_size = args.vocab
        model = tf.GPT2LMHeadModel(config)
        vocab = config.vocab_size
    elif args.model == "mixtral":
        # Mixtral-8x7B's widths with 2 layers: the expert GEMMs are real-sized, the model fits.
        config = tf.MixtralConfig(num_hidden_layers=args.layers or 2, hidden_size=4096,
                                  intermediate_size=14336, num_attention_heads=32,
                                  num_key_value_heads=8, num_local_experts=8, num_experts_per_tok=2,
                                  vocab_size=args.vocab or 32000)
        model = tf.MixtralForCausalLM(config)
        vocab = config.vocab_size
    elif args.model == "qwen2":
        # Qwen2.5-0.5B's widths: hidden 896 is a multiple of 64 but not of 256 (14 heads of 64).
        config = tf.Qwen2Config(num_hidden_layers=args.layers or 24, hidden_size=896, intermediate_size=4864,
                                num_attention_heads=14, num_key_value_heads=2, vocab_size=args.vocab or 151936,
                                tie_word_embeddings=True)
        model = tf.Qwen2ForCausalLM(config)
        vocab = config.vocab_size
    elif args.model == "qwen2moe":
        # Qwen1.5-MoE-A2.7B's widths: 60 experts of 1408, 4 per token, a shared expert of 5632; with
        # 2 x 1024 tokens each expert gets ~137 rows.
        config = tf.Qwen2MoeConfig(num_hidden_layers=args.layers or 4, hidden_size=2048, intermediate_size=5632,
                                   moe_intermediate_size=1408, shared_expert_intermediate_size=5632,
                                   num_experts=60, num_experts_per_tok=4, num_attention_heads=16,
                                   num_key_value_heads=16, vocab_size=args.vocab or 151936)
        model = tf.Qwen2MoeForCausalLM(config)
        vocab = config.vocab_size
    else:
        sys.exit(f"--model: '{args.model}' is not gpt2, mixtral, qwen2, qwen2moe or {', '.join(DENSE)}")
    return finish(model, vocab, args)


def casts_text(args):
    if args.fp8_casts_lib:
        return f" (quantizers: shapescope's cast kernels from {args.fp8_casts_lib})"
    return " (quantizers compiled)" if args.fp8_compile else " (quantizers eager)"


def finish(model, vocab, args):
    """The options that change how a built model runs, then the model on the GPU in bf16."""
    if args.attn:
        model.set_attn_implementation(args.attn)
    if args.fp8_lm_head:
        head = model.lm_head
        head.forward = lambda x: Fp8Logits.apply(x, head.weight)
    if args.experts:
        if not hasattr(model, "set_experts_implementation"):
            sys.exit("--experts: this transformers has no set_experts_implementation")
        model.set_experts_implementation(args.experts)
    model = model.to(device="cuda", dtype=torch.bfloat16)
    if args.fp8_linears:
        count = fp8_linear.patch_linears(model, args.fp8_linears, args.fp8_compile, args.fp8_casts_lib)
        print(f"fp8: {count} Linears in recipe {args.fp8_linears}{casts_text(args)}")
    if args.fp8_head:
        count = fp8_linear.patch_linears(model.lm_head, args.fp8_head, args.fp8_compile, args.fp8_casts_lib)
        print(f"fp8: {count} Linear (the LM head) in recipe {args.fp8_head}{casts_text(args)}")
    if args.fp8_plan:
        plan = fp8_linear.read_plan(args.fp8_plan)
        count = fp8_linear.patch_linears(model, None, args.fp8_compile, args.fp8_casts_lib, plan)
        print(f"fp8: {count} Linears by the plan {args.fp8_plan} "
              f"({', '.join(f'{o}x{i}: {p}' for (o, i), p in plan.items())}){casts_text(args)}")
        if count == 0:
            sys.exit("--fp8-plan: no Linear of this model has the out x in features the plan names")
    return model, vocab


def alternated(n):
    """The fp8 change's state per step of n steps without it alternated with n with it, as A B B A A B B A
    ...: a linear drift of the clock cancels over an even n."""
    return [i % 4 in (1, 2) for i in range(2 * n)]


def warm_up(args, step):
    """--warmup steps before anything is measured: with --alternate-baseline each warm-up step runs both
    variants (the GPU reaches the clock the alternated steps hold it at); it leaves the fp8 change on."""
    for _ in range(args.warmup):
        for changed in ([True, False] if args.alternate_baseline else [True]):
            fp8_linear.set_enabled(changed)
            step()
    fp8_linear.set_enabled(True)


SETTLE_RANGE = "SettleStep"


def settle(args, step, order, record_function):
    """Steps as the recorded ones run (their variants in the same order), each in a SETTLE_RANGE#i range,
    for --settle-seconds or more, one step at least (0: none): the GPU back at the clock and power its
    steps hold it at after the profiler's start. The number of steps run."""
    if args.settle_seconds <= 0:
        return 0
    start, n = time.monotonic(), 0
    while n == 0 or time.monotonic() - start < args.settle_seconds:
        fp8_linear.set_enabled(order[n % len(order)])
        with record_function(f"{SETTLE_RANGE}#{n}"):
            step()
        torch.cuda.synchronize()
        n += 1
    return n


def timed_pairs(args, step):
    """--timed-pairs N: after the traces are written, N more steps without the change and N with it,
    alternated (A B B A ...) and timed with CUDA events, without the profiler: the whole step's move
    with an interval. A few steps of a trace move by more than a small change saves near the power limit
    (the clock follows the power within a step), so the traces' move alone cannot tell 10 % of it."""
    warm_up(args, step)  # the export left the GPU idle: back to the steps' clock first
    times = {False: [], True: []}
    for changed in alternated(args.timed_pairs):
        fp8_linear.set_enabled(changed)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        torch.cuda.synchronize()
        times[changed].append(start.elapsed_time(end))
    fp8_linear.set_enabled(True)
    moved = [b - a for b, a in zip(times[False], times[True])]
    mean, low, high = step_trace.mean_interval(moved)
    print(f"timed pairs: {args.timed_pairs} pairs (A B B A, CUDA events, no profiler): step without the change "
          f"{statistics.median(times[False]):.3f} ms, with it {statistics.median(times[True]):.3f} ms (medians); "
          f"moved {mean:.3f} ms per step [{low:.3f}, {high:.3f}] (mean, 95 % bootstrap interval), "
          f"pairs {min(moved):.3f} to {max(moved):.3f} ms")


# The alternated steps' ranges while recording; each half of the split trace names its own ProfilerStep#i.
BASELINE_RANGE, CHANGED_RANGE = "BaselineStep", "ChangedStep"


def per_step(args):
    return f" per step (mean of {args.steps} steps)" if args.steps > 1 else ""


def in_steps(args):
    return f" in {args.steps} steps" if args.steps > 1 else ""


def summarize(args, path, vocab, label):
    """One line from the trace itself: its kernels, the GEMM-like ones and their time per step; the
    trace's events."""
    with open(path) as f:
        events = step_trace.events_of(json.load(f))
    kernels = [e for e in events if step_trace.cat_of(e) == "kernel"]
    gemm = step_trace.gemm_kernels(events)
    total = sum(e.get("dur", 0) for e in gemm)
    print(f"{label}{args.model}: vocab {vocab}, tokens {args.batch * args.seq}; {len(kernels)} kernels{in_steps(args)}, "
          f"{len(gemm)} GEMM-like, {total / 1000 / args.steps:.3f} ms GEMM kernel time{per_step(args)}; torch {torch.__version__}, "
          f"{torch.cuda.get_device_name()}")
    return events


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, choices=["gpt2", "mixtral", "qwen2", "qwen2moe", *DENSE])
    parser.add_argument("--attn", choices=["sdpa", "eager"], default=None)
    parser.add_argument("--upcast-attn", action="store_true")
    parser.add_argument("--experts", choices=["grouped_mm", "batched_mm", "eager"], default=None)
    parser.add_argument("--fp8-lm-head", action="store_true")
    parser.add_argument("--fp8-linears", choices=sorted(fp8_linear.RECIPES), default=None)
    parser.add_argument("--fp8-compile", action="store_true")
    parser.add_argument("--fp8-casts-lib", default=None, metavar="LIB")
    parser.add_argument("--fp8-plan", default=None, metavar="FILE")
    parser.add_argument("--fp8-head", choices=sorted(fp8_linear.RECIPES), default=None)
    parser.add_argument("--layers", type=int, default=0)
    parser.add_argument("--vocab", type=int, default=0)
    parser.add_argument("--batch", type=int, default=12)
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=1)
    parser.add_argument("--settle-seconds", type=float, default=1.0)
    parser.add_argument("--alternate-baseline", default=None, metavar="FILE")
    parser.add_argument("--timed-pairs", type=int, default=0, metavar="N")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    if args.upcast_attn and (args.model != "gpt2" or args.attn != "eager"):
        parser.error("--upcast-attn: GPT-2's reorder_and_upcast_attn acts in eager attention only (--model gpt2 --attn eager)")
    if args.fp8_head and (args.fp8_lm_head or args.fp8_linears):
        parser.error("--fp8-head: --fp8-lm-head or --fp8-linears already runs the LM head in fp8")
    if args.fp8_lm_head and args.fp8_linears:
        parser.error("--fp8-lm-head: --fp8-linears already runs the LM head in fp8")
    if args.fp8_plan and (args.fp8_lm_head or args.fp8_linears or args.fp8_head):
        parser.error("--fp8-plan: names the fp8 passes itself; drop --fp8-lm-head, --fp8-linears and --fp8-head")
    if (args.fp8_compile or args.fp8_casts_lib) and not (args.fp8_linears or args.fp8_head or args.fp8_plan):
        parser.error("--fp8-compile/--fp8-casts-lib: choose the quantizers of --fp8-linears, --fp8-head or "
                     "--fp8-plan; give one")
    if args.fp8_compile and args.fp8_casts_lib:
        parser.error("--fp8-casts-lib: shapescope's casts replace the compiled ones; give one of --fp8-compile, --fp8-casts-lib")
    if args.fp8_casts_lib and not Path(args.fp8_casts_lib).is_file():
        parser.error(f"--fp8-casts-lib: no such file: {args.fp8_casts_lib!r} (build it: cmake --build build --target shapescope_casts)")

    if args.alternate_baseline and not (args.fp8_linears or args.fp8_head or args.fp8_plan):
        parser.error("--alternate-baseline: alternates the fp8 steps of --fp8-linears, --fp8-head or --fp8-plan "
                     "with steps without them; give one")
    if args.alternate_baseline and args.steps % 2:
        parser.error(f"--steps: {args.steps} with --alternate-baseline: give an even number (A B B A cancels a "
                     "clock drift only over an even number of steps each)")
    if args.alternate_baseline and Path(args.alternate_baseline).resolve() == Path(args.out).resolve():
        parser.error(f"--alternate-baseline: {args.alternate_baseline!r} is --out; the two traces need two files")
    if args.steps < 1:
        parser.error(f"--steps: {args.steps} is not a number of steps (1 or more)")
    if args.timed_pairs and not args.alternate_baseline:
        parser.error(f"--timed-pairs: {args.timed_pairs} pairs of steps without and with the change: needs "
                     "--alternate-baseline")
    if args.timed_pairs < 0 or args.timed_pairs % 2:
        parser.error(f"--timed-pairs: {args.timed_pairs} is not an even number of pairs (A B B A cancels a clock "
                     "drift only over an even number; 0 for none)")
    if args.warmup < 0:
        parser.error(f"--warmup: {args.warmup} is not a number of steps (0 or more)")
    if not 0 <= args.settle_seconds <= 60:  # also NaN; the settling steps are traced in full
        parser.error(f"--settle-seconds: {args.settle_seconds} is not a number of seconds (0 to 60)")
    torch.manual_seed(0)
    model, vocab = build(args)
    model.train()
    ids = torch.randint(0, vocab, (args.batch, args.seq), device="cuda")

    def step():
        out = model(input_ids=ids, labels=ids)
        out.loss.backward()
        model.zero_grad(set_to_none=True)

    warm_up(args, step)
    torch.cuda.synchronize()
    from torch.profiler import ProfilerActivity, profile, record_function

    sampler = _clocks.ClockSampler.for_torch_device(torch)
    # With --alternate-baseline, steps without fp8 (in ranges BaselineStep#i) alternate with the fp8 ones.
    order = alternated(args.steps) if args.alternate_baseline else [True] * args.steps
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        # The profiler's start leaves the GPU idle for a moment, and steps right after a pause run at
        # higher clocks than the steps of a training run (their power average has fallen): the settling
        # steps run first, under the profiler, and are dropped from the trace.
        settled = settle(args, step, order, record_function)
        with sampler:
            counts = [0, 0]
            for changed in order:
                fp8_linear.set_enabled(changed)
                # The range torch's profiler writes around a step under a schedule (without one it writes
                # none): the trace's readers divide by them.
                name = "ProfilerStep" if not args.alternate_baseline else CHANGED_RANGE if changed else BASELINE_RANGE
                with record_function(f"{name}#{counts[changed]}"):
                    step()
                torch.cuda.synchronize()
                counts[changed] += 1
    fp8_linear.set_enabled(True)
    if settled or args.alternate_baseline:
        # Every step in one trace beside --out, split into the recorded variants (the settling steps
        # dropped); left there if the split fails.
        fd, whole_path = tempfile.mkstemp(prefix=Path(args.out).stem + ".", suffix=".whole.json",
                                          dir=Path(args.out).resolve().parent)
        os.close(fd)
        prof.export_chrome_trace(whole_path)
        with open(whole_path) as f:
            whole = json.load(f)
        names = [BASELINE_RANGE + "#", CHANGED_RANGE + "#"] if args.alternate_baseline else ["ProfilerStep#"]
        parts = step_trace.split_steps(whole, ([SETTLE_RANGE + "#"] if settled else []) + names)[1 if settled else 0:]
        for path, part in zip([args.alternate_baseline, args.out] if args.alternate_baseline else [args.out], parts):
            with open(path, "w") as f:
                json.dump(part, f)
        Path(whole_path).unlink()
    else:  # nothing to split: the trace as the profiler writes it
        prof.export_chrome_trace(args.out)
    print(f"settled: {settled} steps ({args.settle_seconds:g} s or more) under the profiler before the recorded ones, "
          "left out of the trace" if settled else "settled: none (--settle-seconds 0): the recorded steps follow the "
          "profiler's start")
    if args.alternate_baseline:
        sampler.attach(args.alternate_baseline)
        summarize(args, args.alternate_baseline, vocab, "the baseline, alternated with the changed steps: ")
    clocks_line = sampler.attach(args.out)
    events = summarize(args, args.out, vocab, "")
    config = model.config
    print(clocks_line)
    if args.fp8_linears or args.fp8_head or args.fp8_plan:
        print(f"fp8 casts (kernels inside record_function(\"{fp8_linear.CAST_RANGE}\")): "
              f"{fp8_linear.cast_kernel_us(events) / 1000 / args.steps:.3f} ms{per_step(args)}")
    if args.timed_pairs:
        timed_pairs(args, step)
    print(f"attention {getattr(config, '_attn_implementation', '?')}, experts "
          f"{getattr(config, '_experts_implementation', '-')}, transformers {__import__('transformers').__version__}")
    ops = {}
    for e in events:
        if e.get("cat") == "cpu_op" and e["name"] in ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm",
                                                      "aten::_grouped_mm", "aten::_scaled_mm"):
            a = e.get("args", {})
            key = (e["name"], json.dumps(a.get("Input Dims")), json.dumps(a.get("Input Strides")))
            ops[key] = ops.get(key, 0) + 1
    for (name, dims, strides), count in sorted(ops.items(), key=lambda kv: -kv[1]):
        print(f"  {count:5d} x {name} dims {dims} strides {strides}{in_steps(args)}")


if __name__ == "__main__":
    main()
