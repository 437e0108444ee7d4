#!/usr/bin/env python3
"""profile --predict against a measured profile of the same trace, no GPU: each GEMM's predicted time
over its measured one, whether the model flags it outside its measured range, and the step's totals
(predicted, measured, the trace's own kernels) with the expected error the prediction states.

  python3 bench/workloads/predict_check.py [BINARY [TRACE MEASURED_PROFILE_JSON [GPU]]]

Defaults: build-cpu/shapescope (else build/shapescope), GPT-2 small's H100 trace and its profile
measured on that H100 (results/h100-2026-11-25/gpt2-trimmed.json, profile-gpt2.json), --gpu h100-sxm.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
RESULTS = ROOT / "bench/workloads/results/h100-2026-11-25"


def main(argv):
    binary = argv[1] if len(argv) > 1 else next(
        (str(p) for p in (ROOT / "build-cpu/shapescope", ROOT / "build/shapescope") if p.exists()), "shapescope")
    trace = argv[2] if len(argv) > 2 else str(RESULTS / "gpt2-trimmed.json")
    measured = json.load(open(argv[3] if len(argv) > 3 else RESULTS / "profile-gpt2.json"))
    gpu = argv[4] if len(argv) > 4 else "h100-sxm"
    with tempfile.TemporaryDirectory() as tmp:  # a store that does not exist: nothing is read
        out = subprocess.run([binary, "profile", "--trace", trace, "--gpu", gpu, "--predict", "--no-verdict",
                              "--json", "--db", os.path.join(tmp, "none.db")],
                             env=dict(os.environ, CUDA_VISIBLE_DEVICES=""), capture_output=True, text=True,
                             check=True)
    predicted = json.loads(out.stdout)
    by_shape = {(g["shape"], g["dtype"]): g for g in measured["gemms"]}
    rows, errors = [], []
    inside_pred = inside_meas = 0.0
    for g in predicted["gemms"]:
        m = by_shape.get((g["shape"], g["dtype"]))
        if not m or g["median_us"] is None or not m["median_us"]:
            rows.append(f"{g['shape']:26} {g['dtype']:5} not compared ({g['not_predicted'] or 'not measured'})")
            continue
        ratio = g["median_us"] / m["median_us"]
        errors.append(abs(ratio - 1))
        outside = bool(g["prediction"]["outside"])
        if not outside:
            inside_pred += g["step_us"]
            inside_meas += m["step_us"]
        rows.append(f"{g['shape']:26} {g['dtype']:5} {g['calls_per_step']:5.0f} {m['median_us']:10.1f} "
                    f"{g['median_us']:10.1f} {ratio:9.3f} {100 * g['error_median']:6.1f} "
                    f"{'; '.join(g['prediction']['outside'])}")
    t, mt = predicted["totals"], measured["totals"]
    print(f"predicted: {predicted['numbers']}")
    print(f"measured: {measured['numbers']}")
    print(f"{'GEMM':26} {'dtype':5} {'calls':>5} {'meas [us]':>10} {'pred [us]':>10} {'pred/meas':>9} "
          f"{'err %':>6} outside the measured range")
    print("\n".join(rows))
    if errors:
        print(f"per GEMM |predicted / measured - 1|: median {100 * statistics.median(errors):.1f} %, "
              f"max {100 * max(errors):.1f} % ({len(errors)} GEMMs)")
    if inside_meas > 0:
        print(f"GEMMs inside the measured range: {inside_pred / 1e3:.2f} ms predicted against "
              f"{inside_meas / 1e3:.2f} ms measured per step ({inside_pred / inside_meas:.3f})")
    print(f"step: {t['measured_us'] / 1e3:.2f} ms predicted ({t['measured_gemms']} GEMMs, expected error "
          f"{100 * t['error_median']:.1f} % median, {100 * t['error_p95']:.1f} % p95; {t['outside_range_gemms']} "
          f"GEMMs, {t['outside_range_us'] / 1e3:.2f} ms, outside the range) against {mt['measured_us'] / 1e3:.2f} ms "
          f"measured ({t['measured_us'] / mt['measured_us']:.3f}); the trace's kernels "
          f"{t['trace_us'] / 1e3:.2f} ms (predicted / trace {t['ratio']:.3f}, measured / trace {mt['ratio']:.3f})")


if __name__ == "__main__":
    main(sys.argv)
