#!/usr/bin/env python3
"""Run 45: shapescope.record_model's settling steps (traced as ProfilerStep#0.., left out of the trace)
against none: Llama 3 8B widths, 2 layers, 2 x 4096 tokens (at the power limit on an H200), 30
warm-up steps, 4 steps recorded, twice each way alternately; the plain profile (no verdicts) of each.
Prints per recording: the trace's ProfilerStep ranges, its GEMM kernel time per step, the NVML clock
recorded with it and profile's measured / trace."""
import json
import os
import sys
import tempfile

import shapescope

out = os.environ.get("OUT", ".")
rows = []
for i in range(2):
    for settle in (0.0, 1.0):
        with tempfile.TemporaryDirectory() as d:
            trace = os.path.join(d, "t.json")
            r = shapescope.record_model("llama3-8b", tokens=8192, sequence=4096, layers=2, steps=4, warmup=30,
                                        settle_seconds=settle, trace=trace, db=os.path.join(d, "s.db"),
                                        options={"no_verdict": True})
            events = json.load(open(trace))["traceEvents"]
            steps = sorted({e["name"] for e in events if str(e.get("name", "")).startswith("ProfilerStep#")
                            and e.get("cat") == "user_annotation"})
            line = (f"settle {settle:g} s, recording {i + 1}: ranges {steps}; trace GEMM {r.totals.trace_us / 1000:.2f} ms "
                    f"per step, profile {r.totals.ratio:.3f}; {r.clocks_note}")
            print(line[:600], flush=True)
            rows.append(line)
open(os.path.join(out, "run45.txt"), "w").write("\n".join(rows) + "\n")
