#!/usr/bin/env python3
"""The closing table of step_truth.sh, from the files it wrote in W: steps.txt (each step's
record_trace.py arguments), NAME.json (the trace with its NVML samples, "shapescopeClocks"),
record-NAME.txt (the step's GEMM kernel time), smi-NAME.csv (nvidia-smi every 20 ms while recording)
and profile-NAME-RUN.out/.time (`profile --json` and its exit status and wall time, runs 1 and 2).

  python3 bench/workloads/step_truth_table.py W

Per step: layers x tokens; the trace's GEMM kernel time; the clock the step ran at from the trace's
NVML samples (median and range over the samples taken while its kernels ran, as shapescope reads
them) and the board power; nvidia-smi's median SM clock over the same stretch of time (the step's
first kernel to its last); profile's measured GEMM time over the trace's (totals.ratio) for each run,
how far run 2 is from run 1, and each run's wall time.
"""
import datetime
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "python"))
from shapescope import _clocks  # noqa: E402
from what_ifs_table import gemm_ms  # noqa: E402


def steps(w):
    """(name, layers x tokens) of each step, in steps.txt's order."""
    for line in open(f"{w}/steps.txt"):
        name, *args = line.split()
        value = {args[i]: args[i + 1] for i in range(0, len(args) - 1) if args[i].startswith("--")}
        yield name, f"{value.get('--layers', '?')} x {value.get('--batch', '?')}x{value.get('--seq', '?')}"


def step_window_ns(trace):
    """The step's first kernel start and last kernel end, in Unix ns; None without kernels."""
    spans = _clocks.kernel_spans(trace)
    if not spans:
        return None
    base = trace.get("baseTimeNanoseconds", 0)
    return base + spans[0][0] * 1000, base + spans[-1][1] * 1000


def smi_median_mhz(path, window):
    """nvidia-smi's median SM clock over the window (its timestamps are local time), and its count."""
    if window is None or not os.path.exists(path):
        return None, 0
    mhz = []
    for line in open(path):
        fields = [f.strip() for f in line.split(",")]
        try:
            t = datetime.datetime.strptime(fields[0], "%Y/%m/%d %H:%M:%S.%f").timestamp() * 1e9
            clock = float(fields[1])
        except (ValueError, IndexError):
            continue
        if window[0] <= t <= window[1]:
            mhz.append(clock)
    return (statistics.median(mhz) if mhz else None), len(mhz)


def profiled(w, name, run):
    """(ratio, measured GEMM ms, 'rc=N S s') of one profile run; None where it did not run."""
    time_path = f"{w}/profile-{name}-{run}.time"
    if not os.path.exists(time_path):
        return None
    rc, seconds = open(time_path).read().split()
    try:
        totals = json.load(open(f"{w}/profile-{name}-{run}.out"))["totals"]
    except (OSError, ValueError, KeyError):
        return None, None, f"{rc} {seconds} s"
    return totals.get("ratio"), totals["measured_us"] / 1000, f"{seconds} s" if rc == "rc=0" else f"{rc} {seconds} s"


def number(value, form):
    return "-" if value is None else format(value, form)


def main(w):
    header = ("step", "layers x tokens", "trace GEMM [ms]", "NVML SM clock [MHz]", "power [W] med/max",
              "smi clock [MHz]", "run 1 meas/trace", "run 2 meas/trace", "run 2 - run 1", "wall [s] 1 / 2")
    rows, device = [], None
    for name, size in steps(w):
        if not os.path.exists(f"{w}/{name}.json"):
            continue
        trace = json.load(open(f"{w}/{name}.json"))
        device = device or (trace.get(_clocks.KEY) or {}).get("device")
        s = _clocks.summary(trace)
        clock = power = "-"
        if s:
            clock = (f"{s['sm_clock_median_mhz']:.0f} ({s['sm_clock_low_mhz']:.0f}-{s['sm_clock_high_mhz']:.0f}), "
                     f"{s['busy_samples']}/{s['samples']}")
            power = f"{number(s['power_median_w'], '.0f')}/{number(s['power_max_w'], '.0f')}"
        smi, smi_n = smi_median_mhz(f"{w}/smi-{name}.csv", step_window_ns(trace))
        runs = [profiled(w, name, run) for run in (1, 2)]
        ratios = [r[0] if r else None for r in runs]
        moved = f"{(ratios[1] / ratios[0] - 1) * 100:+.1f} %" if None not in ratios else "-"
        rows.append((name, size, number(gemm_ms(w, name), ".2f"), clock, power, f"{number(smi, '.0f')}, {smi_n}",
                     number(ratios[0], ".3f"), number(ratios[1], ".3f"), moved,
                     " / ".join(r[2] if r else "-" for r in runs)))
    print(f"GPU: {device or 'unknown'}; NVML clock: median (least-most) over the samples taken while the step's "
          "kernels ran, busy/all; smi: nvidia-smi's median over the step's first to last kernel, samples")
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    for r in [header] + rows:
        print(" | ".join(str(v).ljust(widths[i]) for i, v in enumerate(r)))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
