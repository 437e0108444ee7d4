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

# Words in the names of the GEMM kernels cuBLAS, cuBLASLt and CUTLASS launch.
GEMM_WORDS = ("gemm", "nvjet", "cutlass", "xmma", "s16816", "s1688", "sm90_", "sm80_")
# Categories in lower case: older PyTorch wrote "Kernel", "Runtime", "Memcpy", "Memset".
GPU_SIDE = ("kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset", "gpu_user_annotation")
LAUNCHES = ("cuda_runtime", "cuda_driver", "runtime", "driver")


def cat_of(e):
    return str(e.get("cat", "")).lower()


def events_of(trace):
    return trace["traceEvents"] if isinstance(trace, dict) else trace


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
    events = events_of(trace)
    ranges = []  # (start, end, side) of every step range
    for e in events:
        name = str(e.get("name", ""))
        if e.get("ph") == "X" and cat_of(e) in ("user_annotation", "cpu_op"):
            for side, prefix in enumerate(prefixes):
                if name.startswith(prefix):
                    ranges.append((e["ts"], e["ts"] + e.get("dur", 0), side))
    missing = [p for side, p in enumerate(prefixes) if not any(s == side for *_, s in ranges)]
    if missing:
        raise ValueError(f"split_steps: the trace has no '{missing[0]}' ranges")
    ranges.sort()
    starts = [r[0] for r in ranges]

    def range_at(ts):
        i = bisect.bisect_right(starts, ts) - 1
        return i if i >= 0 and ts <= ranges[i][1] else None

    def side_at(ts):
        i = range_at(ts)
        return None if i is None else ranges[i][2]

    launch_ts = {}
    for e in events:
        if cat_of(e) in LAUNCHES and "correlation" in e.get("args", {}):
            launch_ts[e["args"]["correlation"]] = e.get("ts")
    # The GPU time each step's kernels span (from their launches' ranges): for GPU ranges without a launch.
    gpu_spans = {}
    for e in events:
        if cat_of(e) == "kernel" and "ts" in e:
            i = range_at(launch_ts.get(e.get("args", {}).get("correlation"), -1))
            if i is not None:
                lo, hi = gpu_spans.get(i, (e["ts"], e["ts"]))
                gpu_spans[i] = (min(lo, e["ts"]), max(hi, e["ts"] + e.get("dur", 0)))

    def side_on_gpu(ts):
        for i, (lo, hi) in gpu_spans.items():
            if lo <= ts <= hi:
                return ranges[i][2]
        return None

    def prefix_side(name):
        for side, prefix in enumerate(prefixes):
            if name.startswith(prefix):
                return side
        return None

    parts = tuple([] for _ in prefixes)
    for e in events:
        cat, name = cat_of(e), str(e.get("name", ""))
        side = prefix_side(name)  # the ranges, host and GPU side
        if side is not None:
            pass
        elif cat in GPU_SIDE:
            launched = launch_ts.get(e.get("args", {}).get("correlation"))
            side = side_at(launched) if launched is not None else side_on_gpu(e.get("ts", -1))
        elif cat == "ac2g":  # a launch -> kernel flow: its id is the correlation
            side = side_at(launch_ts.get(e.get("id"), -1))
        elif "ts" in e:
            side = side_at(e["ts"])
        if side is None:
            for part in parts:
                part.append(e)
            continue
        prefix = prefixes[side]
        if name.startswith(prefix):
            e = dict(e, name=renamed + name[len(prefix):])
        parts[side].append(e)
    if isinstance(trace, dict):
        return tuple(dict(trace, traceEvents=p) for p in parts)
    return parts


def mean_interval(values, resamples=2000, seed=0):
    """(mean, low, high): the mean of `values` and its 95 % bootstrap percentile interval (the same
    resamples every run: seeded)."""
    if len(values) < 2:
        raise ValueError("mean_interval: needs 2 values or more")
    rng = random.Random(seed)
    means = sorted(statistics.fmean(rng.choices(values, k=len(values))) for _ in range(resamples))
    return statistics.fmean(values), means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1]
