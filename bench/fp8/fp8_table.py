#!/usr/bin/env python3
"""The closing table of bench/fp8 (no GPU): from the files the stages wrote in OUT/fp8,

  (a) per recipe against bf16 over M (N = K = 7168) and over N and K (M = 4096): TFLOP/s of the GEMM
      alone and with its casts (amax, scale, cast of A and of B at every call), where fp8 with its
      casts stops paying (the largest M at which it is not faster than bf16), and a figure of TFLOP/s
      against M (fp8_m.png, by gnuplot or matplotlib where one is installed; fp8_m.dat either way);
  (b) shapescope's time over torch._scaled_mm's per recipe (torch.json, the median over the shapes);
  (c) the FP8 training step: its trace's _scaled_mm kernel time and its casts' kernels against
      profile's GEMM time and its measured casts; profile's reading of the trace's casts against this
      script's count of the same kernels, GEMMs + the trace's casts, and the fused-casts what-if.

  python3 bench/fp8/fp8_table.py OUT/fp8
"""
import csv
import json
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

RECIPES = ["tensor", "row", "block"]


def read_family(folder, family):
    """{precision: {(m, n, k): gemm_us}}, {(recipe, operand, rows, k): cast_us} of one shape family."""
    gemms, casts = defaultdict(dict), {}
    for path in sorted(Path(folder).glob(f"*-{family}.csv")):
        with open(path) as f:
            for row in csv.DictReader(f):
                m, n, k, us = int(row["m"]), int(row["n"]), int(row["k"]), float(row["median_us"])
                if row.get("cast"):
                    rows = m if row["cast"] == "a" else n
                    casts[(row["recipe"], row["cast"], rows, k)] = us
                else:
                    gemms["bf16" if row["dtype"] == "bf16" else row["recipe"]][(m, n, k)] = us
    return gemms, casts


def with_casts(recipe, shape, gemm_us, casts):
    m, n, k = shape
    a, b = casts.get((recipe, "a", m, k)), casts.get((recipe, "b", n, k))
    return None if a is None or b is None else gemm_us + a + b


def tflops(shape, us):
    m, n, k = shape
    return 2.0 * m * n * k / us / 1e6


def family_lines(folder, family, varying):
    gemms, casts = read_family(folder, family)
    bf16 = gemms.get("bf16", {})
    lines = []
    for recipe in RECIPES:
        own = gemms.get(recipe, {})
        shared = sorted(set(own) & set(bf16))
        if not shared:
            lines.append(f"  {recipe:6s}: not measured")
            continue
        alone = [bf16[s] / own[s] for s in shared]
        cast = [(s, with_casts(recipe, s, own[s], casts)) for s in shared]
        paid = [(s, bf16[s] / t) for s, t in cast if t]
        losing = [s for s, speedup in paid if speedup <= 1.0]
        where = max((s[varying] for s in losing), default=None)
        alone.sort()
        paid_speedups = sorted(x for _, x in paid)
        line = (f"  {recipe:6s}: {len(shared)} shapes, speedup over bf16 alone {alone[len(alone) // 2]:.2f}x "
                f"({alone[0]:.2f}..{alone[-1]:.2f})")
        if paid_speedups:
            line += (f", with its casts {paid_speedups[len(paid_speedups) // 2]:.2f}x "
                     f"({paid_speedups[0]:.2f}..{paid_speedups[-1]:.2f})")
            line += (f"; with casts not faster than bf16 up to {'MNK'[varying]} = {where}" if where is not None
                     else "; with casts faster than bf16 everywhere")
        lines.append(line)
    return lines, gemms, casts


def write_figure(folder, gemms, casts):
    """TFLOP/s against M: bf16, each recipe alone (dashed) and with its casts (solid)."""
    shapes = sorted(gemms.get("bf16", {}))
    dat = Path(folder) / "fp8_m.dat"
    with open(dat, "w") as f:
        f.write("# M bf16 " + " ".join(f"{r} {r}+casts" for r in RECIPES) + "  [TFLOP/s]\n")
        for s in shapes:
            cells = [f"{tflops(s, gemms['bf16'][s]):.1f}"]
            for r in RECIPES:
                us = gemms.get(r, {}).get(s)
                total = with_casts(r, s, us, casts) if us else None
                cells += [f"{tflops(s, us):.1f}" if us else "NaN", f"{tflops(s, total):.1f}" if total else "NaN"]
            f.write(f"{s[0]} " + " ".join(cells) + "\n")
    png = Path(folder) / "fp8_m.png"
    if shutil.which("gnuplot"):
        plots = ['"fp8_m.dat" using 1:2 with lines lw 2 title "bf16"']
        for i, r in enumerate(RECIPES):
            plots.append(f'"fp8_m.dat" using 1:{3 + 2 * i} with lines dt 2 title "fp8 {r}, GEMM alone"')
            plots.append(f'"fp8_m.dat" using 1:{4 + 2 * i} with lines lw 2 title "fp8 {r} + casts"')
        script = ("set terminal pngcairo size 1200,700; set output 'fp8_m.png'; set key bottom right; "
                  "set xlabel 'M (N = K = 7168)'; set ylabel 'TFLOP/s'; set logscale x 2; set grid; "
                  "plot " + ", ".join(plots) + "\n")
        (Path(folder) / "fp8_m.gp").write_text(script)
        done = subprocess.run(["gnuplot", "fp8_m.gp"], cwd=folder, capture_output=True, text=True)
        return f"figure: {png}" if done.returncode == 0 else f"figure: gnuplot failed ({done.stderr.strip()[:80]})"
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return f"figure: neither gnuplot nor matplotlib here; the data is {dat}"
    xs = [s[0] for s in shapes]
    plt.figure(figsize=(12, 7))
    plt.plot(xs, [tflops(s, gemms["bf16"][s]) for s in shapes], label="bf16", lw=2)
    for r in RECIPES:
        own = gemms.get(r, {})
        plt.plot(xs, [tflops(s, own[s]) if s in own else float("nan") for s in shapes], "--", label=f"fp8 {r}, GEMM alone")
        plt.plot(xs, [tflops(s, with_casts(r, s, own[s], casts)) if s in own and with_casts(r, s, own[s], casts)
                      else float("nan") for s in shapes], lw=2, label=f"fp8 {r} + casts")
    plt.xscale("log", base=2)
    plt.xlabel("M (N = K = 7168)")
    plt.ylabel("TFLOP/s")
    plt.grid(True)
    plt.legend()
    plt.savefig(png)
    return f"figure: {png}"


def step_lines(folder):
    trace_path, profile_path = Path(folder) / "step.json", Path(folder) / "profile-step.out"
    if not trace_path.exists() or not profile_path.exists():
        return ["  not recorded (stage step)"]
    import fp8_linear
    with open(trace_path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    try:
        profile = json.loads(profile_path.read_text())
    except json.JSONDecodeError:
        return [f"  profile wrote no JSON (see {folder}/profile-step.err)"]
    steps = max(profile.get("steps") or 1, 1)
    casts_trace = fp8_linear.cast_kernel_us(events) / steps
    record_log = Path(folder) / "record-step.out"
    quantizers = "PyTorch's amax, divide and cast ops"
    if record_log.exists() and "shapescope's cast kernels" in record_log.read_text():
        quantizers = "shapescope's cast kernels, called from PyTorch"
    t = profile["totals"]
    gemm_trace, gemm_ours = t.get("compared_trace_us") or t.get("trace_us"), t.get("compared_measured_us") or t["measured_us"]
    casts_ours = (profile.get("fp8_casts") or {}).get("us_per_step")
    lines = [f"  GEMMs: profile {gemm_ours / 1000:.3f} ms, trace {gemm_trace / 1000:.3f} ms: {gemm_ours / gemm_trace:.3f}x"
             if gemm_trace else "  GEMMs: the trace has no GEMM kernel time"]
    if casts_ours is not None:
        lines.append(f"  casts: profile {casts_ours / 1000:.3f} ms (our cast kernels), trace {casts_trace / 1000:.3f} ms "
                     f"({quantizers}): {casts_ours / casts_trace:.3f}x" if casts_trace else
                     f"  casts: profile {casts_ours / 1000:.3f} ms, the trace's casts not found")
        if gemm_trace and casts_trace:
            both_ours, both_trace = gemm_ours + casts_ours, gemm_trace + casts_trace
            lines.append(f"  GEMMs and casts: profile {both_ours / 1000:.3f} ms, trace {both_trace / 1000:.3f} ms: "
                         f"{both_ours / both_trace:.3f}x (target within 10 %)")
    lines += trace_casts_lines(profile, casts_trace)
    return lines


def trace_casts_lines(profile, bench_casts_us):
    """profile's own reading of the trace's casts (`trace_casts`) against this script's count of the same
    kernels (fp8_linear.cast_kernel_us), and the step as it ran: GEMMs measured + the trace's casts."""
    tc = profile.get("trace_casts")
    if not tc:
        return ["  casts as the step ran them: not in profile's JSON (a profile from before trace_casts)"]
    if tc.get("us_per_step") is None:
        return [f"  casts as the step ran them: profile found none ('{tc['range']}'), this script's count "
                f"{bench_casts_us / 1000:.3f} ms"]
    us = tc["us_per_step"]
    lines = [f"  casts as the step ran them: profile {us / 1000:.3f} ms ({tc['kernels_per_step']:.0f} kernels by "
             f"{tc['found_by']}), this script's count {bench_casts_us / 1000:.3f} ms: "
             + (f"{us / bench_casts_us:.4f}x" if bench_casts_us else "none counted")]
    if tc.get("ratio") is not None:
        lines.append(f"  GEMMs + the trace's casts: profile {tc['gemms_and_casts_us'] / 1000:.3f} ms, trace "
                     f"{tc['trace_gemms_and_casts_us'] / 1000:.3f} ms: {tc['ratio']:.3f}x (target within 10 %)")
    if tc.get("fused_saving_us") is not None:
        lines.append(f"  what-if, shapescope's cast kernels in place of the step's: "
                     f"{tc['fused_saving_us'] / 1000:.3f} ms less per step")
    return lines


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else sys.exit(__doc__)
    out = []
    gpu = (Path(folder) / "gpu.txt")
    out.append(f"GPU: {gpu.read_text().strip() if gpu.exists() else 'unknown'}")
    out.append("(a) fp8 recipes against bf16, the GEMM alone and with the casts of both operands at every call")
    figure = None
    for family, varying, title in [("m", 0, "M = 16..8192, N = K = 7168"), ("n", 1, "N = 512..16384, M = 4096, K = 7168"),
                                   ("k", 2, "K = 512..16384, M = 4096, N = 7168")]:
        lines, gemms, casts = family_lines(folder, family, varying)
        out.append(f" {title}")
        out += lines
        if family == "m" and gemms.get("bf16"):
            figure = write_figure(folder, gemms, casts)
    if figure:
        out.append(f" {figure}")
    out.append("(b) shapescope's GEMM time over torch._scaled_mm's, same shapes and kinds of scales (target within 3 %)")
    torch_path = Path(folder) / "torch.json"
    if torch_path.exists():
        for recipe, v in json.loads(torch_path.read_text())["recipes"].items():
            s = v["summary"]
            line = f"  {recipe:6s}: {s['shapes']} shapes"
            if "median_ratio" in s:
                line += f", median {s['median_ratio']:.3f} (IQR {s['q1']:.3f}..{s['q3']:.3f})"
            if "max_error_vs_dequantized" in s:
                line += f", torch against the dequantized product {s['max_error_vs_dequantized']:.1e}"
            if s.get("refused"):
                line += f"; refused: {s['refused']}"
            out.append(line)
    else:
        out.append("  not measured (stage torch)")
    out.append("(c) an FP8 training step (Llama 3 8B widths, 2 layers, 2 x 1024 tokens, block recipe) against profile")
    out += step_lines(folder)
    print("\n".join(out))


if __name__ == "__main__":
    main()
