"""A PyTorch profiler trace split by its steps: each event with the step it belongs to (host events by
their start, GPU events and their flows by their launch, GPU ranges without a launch by the GPU time
of each step's kernels). record() drops its settling steps with it; scripts/step_trace.py splits
alternated steps and record_trace.py's settling steps with it. Standard library only."""
import bisect

# Categories in lower case: older PyTorch wrote "Kernel", "Runtime", "Memcpy", "Memset".
GPU_SIDE = ("kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset", "gpu_user_annotation")
LAUNCHES = ("cuda_runtime", "cuda_driver", "runtime", "driver")


def cat_of(e):
    return str(e.get("cat", "")).lower()


def events_of(trace):
    return trace["traceEvents"] if isinstance(trace, dict) else trace


def split_by_steps(trace, parts, part_of, rename=None):
    """`parts` traces from one whose steps ran in host ranges (user annotations or ops): part_of(name)
    says which part a range of that name opens (None: no step). Events outside every step go to each
    part; a range's own events (host and GPU side) are renamed rename(name) where it is given. The
    trace's other keys are copied to each."""
    events = events_of(trace)
    ranges = []  # (start, end, part) of every step range
    for e in events:
        if e.get("ph") == "X" and cat_of(e) in ("user_annotation", "cpu_op"):
            part = part_of(str(e.get("name", "")))
            if part is not None:
                ranges.append((e["ts"], e["ts"] + e.get("dur", 0), part))
    ranges.sort()
    starts = [r[0] for r in ranges]

    def range_at(ts):
        i = bisect.bisect_right(starts, ts) - 1
        return i if i >= 0 and ts <= ranges[i][1] else None

    def part_at(ts):
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

    def part_on_gpu(ts):
        for i, (lo, hi) in gpu_spans.items():
            if lo <= ts <= hi:
                return ranges[i][2]
        return None

    out = tuple([] for _ in range(parts))
    for e in events:
        cat, name = cat_of(e), str(e.get("name", ""))
        part = part_of(name)  # the ranges, host and GPU side
        own_range = part is not None
        if own_range:
            pass
        elif cat in GPU_SIDE:
            launched = launch_ts.get(e.get("args", {}).get("correlation"))
            part = part_at(launched) if launched is not None else part_on_gpu(e.get("ts", -1))
        elif cat == "ac2g":  # a launch -> kernel flow: its id is the correlation
            part = part_at(launch_ts.get(e.get("id"), -1))
        elif "ts" in e:
            part = part_at(e["ts"])
        if part is None:
            for p in out:
                p.append(e)
            continue
        if own_range and rename is not None:
            e = dict(e, name=rename(name))
        out[part].append(e)
    if isinstance(trace, dict):
        return tuple(dict(trace, traceEvents=p) for p in out)
    return out
