#!/usr/bin/env python3
"""The table of bench/speed/sweep_speed.sh: reads its folder of logs and CSVs, prints Markdown.

    python3 bench/speed/speed_table.py out/gpu_speed
A row whose input is missing says "missing (FILE)" rather than failing, so that one broken step
leaves the others' numbers readable.
"""
import csv
import os
import re
import sys

D = sys.argv[1] if len(sys.argv) > 1 else "out/gpu_speed"


def read(name):
    path = os.path.join(D, name)
    if not os.path.exists(path):
        return None
    with open(path, errors="replace") as f:
        return f.read()


def walls():
    out = {}
    for line in (read("walls.txt") or "").splitlines():
        parts = line.split()
        if len(parts) == 3:
            out[parts[0]] = (float(parts[1]), int(parts[2]))
    return out


def summary(log_name):
    """Numbers of a sweep's last line and of its --verbose lines."""
    text = read(log_name)
    if text is None:
        return None
    s = {"log": log_name}
    last = [l for l in text.splitlines() if l.startswith("measured ")]
    if last:
        line = last[-1]
        s["line"] = line
        for key, pattern in [("wall", r"in ([\d.]+) s wall"), ("floor", r"GPU-time floor ([\d.]+) s"),
                             ("ratio", r"wall/floor ([\d.]+)"), ("clock", r"median SM clock (\d+) MHz"),
                             ("measured", r"^measured (\d+) points"), ("drift", r"largest drift ([\d.]+) %"),
                             ("remeasured", r"(\d+) chunks re-measured"), ("throttled", r"(\d+) throttled"),
                             ("noisy", r"(\d+) noisy")]:
            m = re.search(pattern, line)
            if m:
                s[key] = float(m.group(1))
    for line in text.splitlines():
        if line.startswith("samples per point:"):
            s["histogram"] = line[len("samples per point:"):].strip()
        if line.startswith("wall ") and "start-up" in line:
            s["phases"] = line
            for key, pattern in [("startup", r"start-up ([\d.]+)"), ("trace", r"kernels read from graphs ([\d.]+)"),
                                 ("timing", r"timing ([\d.]+)"), ("warmup", r"warm-up ([\d.]+)"),
                                 ("verify", r"verify ([\d.]+)"), ("after", r"annotate and print ([\d.]+)"),
                                 ("busy", r"GPU busy ([\d.]+)"), ("idle", r"GPU idle between graphs ([\d.]+)")]:
                m = re.search(pattern, line)
                if m:
                    s[key] = float(m.group(1))
    s["skipped"] = sum(1 for l in text.splitlines() if l.startswith("skipped:"))
    s["sentinel_lines"] = [l for l in text.splitlines() if l.startswith("sentinel:")]
    return s


def compare_lines(name):
    """(first, second, median %, p95 %) of each bench/agreement/compare.py line in the file."""
    rows = []
    for line in (read(name) or "").splitlines():
        m = re.search(r"^(\S+) vs (\S+): .*median \|ratio-1\| ([\d.]+) %, p95 ([\d.]+) %", line)
        if m:
            rows.append((os.path.basename(m.group(1)), os.path.basename(m.group(2)), m.group(3), m.group(4)))
    return rows


def agreement(label):
    for line in (read("agreement.txt") or "").splitlines():
        if line.startswith("agreement: " + label + " over"):
            m = re.search(r"median ([\d.]+) %, p95 ([\d.]+) %.*signed median ([-+\d.]+) %", line)
            if m:
                return m.groups()
    return None


def bands(label):
    lines = (read("agreement.txt") or "").splitlines()
    for i, line in enumerate(lines):
        if line.startswith("agreement: " + label + " over") and i + 1 < len(lines):
            return lines[i + 1].split(":", 1)[-1].strip()
    return None


def csv_point(name):
    text = read(name)
    if text is None:
        return None
    rows = list(csv.DictReader(text.splitlines()))
    return rows[0] if rows else None


def gpu_tests():
    text = read("gpu_tests.txt")
    if text is None:
        return "missing (gpu_tests.txt)"
    ran = re.search(r"\[==========\] (\d+) tests? from", text)
    passed = re.search(r"\[  PASSED  \] (\d+) tests?", text)
    failed = sorted(set(re.findall(r"^\[  FAILED  \] ([A-Za-z]\S+)", text, re.M)))
    skipped = sorted(set(re.findall(r"^\[  SKIPPED \] ([A-Za-z]\S+)", text, re.M)))
    new = [t for t in ("Engine.StoppingRuleStopsSteadyJobsEarlyAndNoisyOnesAtTheCap",
                       "Engine.SentinelDriftMeasuresTheChunkAgain", "Engine.BurstReadsTheClockOnTheGpu",
                       "Verify.CatchesWrongResultsAndPassesCorrectOnes", "Verify.QueuedChecksKeepTheirOwnVerdicts")
           if f"[       OK ] {t}" in text]
    return (f"{passed.group(1) if passed else '?'} of {ran.group(1) if ran else '?'} passed; failed: "
            f"{', '.join(failed) or 'none'}; skipped: {len(skipped)}; new ones passing: {len(new)} of 5")


def fmt(value, unit="", digits=2):
    return "-" if value is None else f"{value:.{digits}f}{unit}"


def wall(w, name):
    """The whole-process wall of a step, and its exit status when it failed."""
    if name not in w:
        return "-"
    seconds, rc = w[name]
    return f"{seconds:.2f} s" + (f" (FAILED: exit {rc})" if rc != 0 else "")


def main():
    w = walls()
    rows = []

    def row(what, measured, target=""):
        rows.append((what, measured, target))

    runs = [summary(f"sweep{i}.log") for i in (1, 2, 3)]
    row("sweep --n 1..4096: whole-process wall, runs 1 / 2 / 3",
        f"{wall(w, 'sweep1')} / {wall(w, 'sweep2')} / {wall(w, 'sweep3')}", "at most half of before issue 14 on the same GPU (H100: 13.65 s, H200: 13.1-13.5 s)")
    for i, s in enumerate(runs, 1):
        if s is None:
            row(f"run {i}", f"missing (sweep{i}.log)")
            continue
        row(f"run {i}: in-process wall, GPU-time floor, wall/floor; GPU busy, idle between graphs",
            f"{fmt(s.get('wall'), ' s')}, {fmt(s.get('floor'), ' s')}, {fmt(s.get('ratio'))}; "
            f"{fmt(s.get('busy'), ' s')}, {fmt(s.get('idle'), ' s')}",
            "floor was 9.90 s (10 samples)")
    if runs[0]:
        row("run 1: samples per point", runs[0].get("histogram", "-"))
        row("run 1: where the wall went", runs[0].get("phases", "-"))
        row("run 1: clock, noisy, throttled", f"{fmt(runs[0].get('clock'), ' MHz', 0)}, "
            f"{fmt(runs[0].get('noisy'), '', 0)}, {fmt(runs[0].get('throttled'), '', 0)}")
    fixed = summary("sweep10.log")
    if fixed:
        row("--samples 10 (fixed, new engine): whole wall, floor, wall/floor",
            f"{wall(w, 'sweep10')}, {fmt(fixed.get('floor'), ' s')}, {fmt(fixed.get('ratio'))}")
    for first, second, med, p95 in compare_lines("repeatability.txt"):
        target = "same accuracy" if "sweep10" in (first, second) else "<= 0.5 % / 2.5 %"
        row(f"{first} vs {second}: median / p95 of abs(ratio - 1)", f"{med} % / {p95} %", target)

    eager = agreement("sweep vs torch eager")
    row("agreement sweep 1 vs PyTorch eager, n = 256..4096: median / p95",
        f"{eager[0]} % / {eager[1]} % (signed {eager[2]} %)" if eager else "missing (agreement.txt)",
        "<= 1 % / 4 % (was 1.14 % / 5.58 %)")
    for which in ("same kernels", "other kernels (kernels_differ.csv)"):
        part = agreement("sweep vs torch eager, " + which)
        if part:
            row(f"  over the sizes where PyTorch's cuBLAS ran {which.split(' (')[0]}",
                f"{part[0]} % / {part[1]} % (signed {part[2]} %)")
    for first, second, med, p95 in compare_lines("agreement.txt"):
        row(f"agreement {first} vs {second}", f"{med} % / {p95} %", "<= 1 % / 4 %")
    graph = agreement("sweep vs torch graph-shuffled")
    if graph:
        row("agreement sweep 1 vs PyTorch in shapescope's order (graphs, shuffled)",
            f"{graph[0]} % / {graph[1]} % (signed {graph[2]} %)")
    for label, what in [("torch eager-shuffled vs torch eager (order)", "order effect (PyTorch shuffled vs "
                         "consecutive), signed by n"),
                        ("torch graph-shuffled vs torch eager-shuffled (graphs)", "graphs vs eager launches, signed by n"),
                        ("torch eager-gaps vs torch eager (launch gaps)", "launch gaps (no pre-queue vs pre-queue)"),
                        ("sweep vs torch eager", "sweep vs PyTorch eager, signed by n")]:
        b = bands(label)
        if b:
            row(what, b)

    custom = summary("custom.log")
    if custom:
        measuring = None
        if custom.get("floor"):
            spent = sum(custom.get(k, 0) for k in ("verify", "trace", "timing")) - custom.get("warmup", 0)
            measuring = spent / custom["floor"]
        row("custom sweep (112 points): whole wall, floor, wall/floor",
            f"{wall(w, 'custom')}, {fmt(custom.get('floor'), ' s', 3)}, {fmt(custom.get('ratio'))}",
            "<= 2x floor (was 16.45 s, 66x)")
        row("custom sweep: verify + graph reads + timing - warm-up, over the floor",
            f"{fmt(measuring)} (start-up {fmt(custom.get('startup'), ' s')}, verify {fmt(custom.get('verify'), ' s', 3)}, "
            f"warm-up {fmt(custom.get('warmup'), ' s')}; {custom.get('skipped', 0)} skipped)")

    burst, sustained = csv_point("burst.csv"), csv_point("sustained.csv")
    if burst and sustained:
        def num(p, k):
            try:
                return float(p[k])
            except (KeyError, ValueError, TypeError):
                return None
        for label, p in (("burst", burst), ("sustained", sustained)):
            row(f"8192^3 bf16 {label}: SM clock, TFLOP/s, median, throttled",
                f"{fmt(num(p, 'sm_clock_mhz'), ' MHz', 0)}, {fmt(num(p, 'tflops'), '', 1)}, "
                f"{fmt(num(p, 'median_us'), ' us', 1)}, {p.get('throttled')} (state {p.get('clocks')})")
        bc, sc, bt, st = (num(burst, "sm_clock_mhz"), num(sustained, "sm_clock_mhz"), num(burst, "tflops"),
                          num(sustained, "tflops"))
        if None not in (bc, sc, bt, st) and sc and st:
            row("burst vs sustained", f"clock {100 * (bc / sc - 1):+.1f} %, TFLOP/s {100 * (bt / st - 1):+.1f} %",
                "burst faster")
    else:
        row("8192^3 burst / sustained", "missing (burst.csv / sustained.csv)")

    drift = summary("drift.log")
    if drift:
        again = sum("measured again" in l for l in drift["sentinel_lines"])
        kept = sum("flagged drifted" in l for l in drift["sentinel_lines"])
        row("provoked drift (a second process's GEMMs): chunks re-measured, kept drifted, largest drift",
            f"{again}, {kept}, {fmt(drift.get('drift'), ' %', 1)}", ">= 1 re-measured")
    burst_drift = summary("drift_burst.log")
    if burst_drift:
        again = sum("measured again" in l for l in burst_drift["sentinel_lines"])
        row("provoked drift against a burst sweep: chunks re-measured, largest drift",
            f"{again}, {fmt(burst_drift.get('drift'), ' %', 1)}", ">= 1 re-measured")
    row("GPU tests (label gpu)", gpu_tests(), "all pass")

    print("| what | measured | target |")
    print("|---|---|---|")
    for what, measured, target in rows:
        print(f"| {what} | {measured} | {target} |")


if __name__ == "__main__":
    main()
