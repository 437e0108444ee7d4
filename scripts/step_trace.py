"""Reading a recorded step's trace without PyTorch: its GEMM and cast kernel time, and the split of a
trace whose steps alternate between two variants of a model into one trace per variant (or that ran
settling steps before the recorded ones, dropped).

Used by scripts/record_trace.py (its summary, --alternate-baseline), scripts/fp8_linear.py (the casts)
and the bench scripts that compare recorded steps (bench/workloads/changed_steps.py, bench/fp8/).
Standard library only.
"""
import bisect
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
from shapescope import _steps  # noqa: E402  (the source tree's package: the split by steps, standard library only)
from shapescope._steps import GPU_SIDE, LAUNCHES, cat_of, events_of  # noqa: E402,F401  (this module's readers use them)

# Words in the names of the GEMM kernels cuBLAS, cuBLASLt and CUTLASS launch.
GEMM_WORDS = ("gemm", "nvjet", "cutlass", "xmma", "s16816", "s1688", "sm90_", "sm80_")


def gemm_kernels(events):
    return [e for e in events if cat_of(e) == "kernel" and any(w in e["name"].lower() for w in GEMM_WORDS)]


def kernel_us(events):
    """Every GPU kernel's time (us): the whole step's, not only its GEMMs."""
    return sum(e.get("dur", 0) for e in events if cat_of(e) == "kernel")


def kernel_us_per_step(events, prefix="ProfilerStep#"):
    """Every GPU kernel's time (us) per step, in the order of the steps' numbers (prefix<i>): each
    kernel with the host range its launch ran in; kernels launched outside every step count in none."""
    ranges = sorted((e["ts"], e["ts"] + e.get("dur", 0), int(str(e["name"])[len(prefix):]))
                    for e in events if e.get("ph") == "X" and cat_of(e) in ("user_annotation", "cpu_op")
                    and str(e.get("name", "")).startswith(prefix) and str(e["name"])[len(prefix):].isdigit())
    starts = [r[0] for r in ranges]
    launch_ts = {e["args"]["correlation"]: e.get("ts") for e in events
                 if cat_of(e) in LAUNCHES and "correlation" in e.get("args", {})}
    per = {r[2]: 0.0 for r in ranges}
    for e in events:
        if cat_of(e) != "kernel":
            continue
        ts = launch_ts.get(e.get("args", {}).get("correlation"))
        i = bisect.bisect_right(starts, ts) - 1 if ts is not None else -1
        if i >= 0 and ts <= ranges[i][1]:
            per[ranges[i][2]] += e.get("dur", 0)
    return [per[k] for k in sorted(per)]


def steps_of(events, prefix="ProfilerStep#"):
    """The trace's step ranges (the profiler's own, or record_trace.py's): at least 1."""
    return max(1, len({e["name"] for e in events
                       if e.get("ph") == "X" and str(e.get("name", "")).startswith(prefix)}))


def cast_kernel_us(events, cast_range):
    """The GPU time of the kernels launched inside record_function(cast_range): the ops inside each
    range on its thread and the ranges themselves, their kernels through the launches' correlation ids."""
    ranges = {}
    inside = set()  # the ranges' own ids too: kernels launched in a range outside any op (ShapescopeCasts)
    for e in events:
        if e.get("name") == cast_range and cat_of(e) in ("user_annotation", "cpu_op"):
            ranges.setdefault(e.get("tid"), []).append((e["ts"], e["ts"] + e.get("dur", 0)))
            if e.get("args", {}).get("External id") is not None:
                inside.add(e["args"]["External id"])
    for e in events:
        if cat_of(e) != "cpu_op" or e.get("name") == cast_range:
            continue
        for lo, hi in ranges.get(e.get("tid"), []):
            if lo <= e["ts"] and e["ts"] + e.get("dur", 0) <= hi:
                ext = e.get("args", {}).get("External id")
                if ext is not None:
                    inside.add(ext)
                break
    ext_of_corr, launched_inside = {}, set()
    for e in events:
        if cat_of(e) in LAUNCHES:
            a = e.get("args", {})
            if "correlation" in a and "External id" in a:
                ext_of_corr[a["correlation"]] = a["External id"]
            # A launch made in a range outside any op (ShapescopeCasts' ctypes calls) carries the id of
            # the op around the range, if any: it is inside by its time on the range's thread.
            if "correlation" in a and any(lo <= e.get("ts", -1) <= hi for lo, hi in ranges.get(e.get("tid"), [])):
                launched_inside.add(a["correlation"])
    total = 0.0
    for e in events:
        if cat_of(e) != "kernel":
            continue
        a = e.get("args", {})
        ext = ext_of_corr.get(a.get("correlation"), a.get("External id"))
        if ext in inside or a.get("correlation") in launched_inside:
            total += e.get("dur", 0)
    return total


def split_alternated(trace, prefix_a, prefix_b, renamed="ProfilerStep#"):
    """(trace A, trace B) from a trace whose steps ran in ranges named prefix_a<i> and prefix_b<i>.

    Host events go by their start time (inside an A or a B range), GPU events (kernels, copies) and
    the flow events that tie them to a launch by the time of their launch, GPU ranges without a launch
    (an inner record_function's GPU side) by the GPU time of each step's kernels; events outside every
    range (metadata, the synchronisations between steps) go to both. Both halves' ranges are renamed
    renamed<i>, so that a reader counts them as steps. The trace's other keys are copied to both.

    Each half keeps the other's steps as gaps: its kernel times are the steps', its timeline is not
    (profile's replay of a half would idle the GPU where the other variant ran)."""
    return split_steps(trace, (prefix_a, prefix_b), renamed)


def split_steps(trace, prefixes, renamed="ProfilerStep#"):
    """One trace per prefix, from a trace whose steps ran in ranges named prefix<i>, as split_alternated
    splits two: events outside every range go to each. record_trace.py's settling steps (the steps run
    under the profiler before the recorded ones, SETTLE_RANGE<i>) are the first part, dropped."""
    def part_of(name):
        return next((i for i, p in enumerate(prefixes) if name.startswith(p)), None)

    for i, prefix in enumerate(prefixes):
        if not any(e.get("ph") == "X" and cat_of(e) in ("user_annotation", "cpu_op")
                   and str(e.get("name", "")).startswith(prefix) for e in events_of(trace)):
            raise ValueError(f"split_steps: the trace has no '{prefix}' ranges")
    return _steps.split_by_steps(trace, len(prefixes), part_of,
                                 lambda name: renamed + name[len(prefixes[part_of(name)]):])


def mean_interval(values, resamples=2000, seed=0):
    """(mean, low, high): the mean of `values` and its 95 % bootstrap percentile interval (the same
    resamples every run: seeded)."""
    if len(values) < 2:
        raise ValueError("mean_interval: needs 2 values or more")
    rng = random.Random(seed)
    means = sorted(statistics.fmean(rng.choices(values, k=len(values))) for _ in range(resamples))
    return statistics.fmean(values), means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1]
