#!/usr/bin/env python3
"""GPU test (CTest python.gpu_record, label gpu): a real transformers model's training step recorded
from Python with shapescope.record_model (GPT-2 small built from its config, random weights, nothing
downloaded; 12 x 1024 tokens, as bench/workloads records it), profiled on this GPU, and checked
against the trace's own kernels:

  - every GEMM shape: the trace's GEMM kernels, counted from the kernel side (scripts/trim_trace.py),
    equal profile's calls;
  - the GEMM time per step profile measured is within 10 % of the trace's GEMM kernel time, both as
    profile compares them (totals.ratio) and against that kernel-side count's own sum;
  - shapescope.record of a plain function over two steps gives the calls of one step, and the
    Recording context manager the same GEMMs;
  - the trace record_model kept holds the SM clock and power sampled through NVML while the step ran
    ("shapescopeClocks"), on the trace's timeline, most samples taken while its kernels ran;
  - shapescope run by this process, which holds a CUDA context (as record() runs profile), does not
    flag its points shared_gpu: the process that started it waits on it; a process that did not start
    it and holds a context on the GPU still gets every point flagged.

From the repository root on a GPU host with PyTorch and transformers (a GPU build in build/):

  PYTHONPATH=python SHAPESCOPE_BIN=build/shapescope python3 tests/python/gpu_record.py

Exits 77 (CTest: skipped), saying why, without a GPU, torch, transformers or a binary that measures.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def skip(why):
    print(f"skipped: {why}")
    sys.exit(77)


try:
    import torch
except ImportError:
    skip("no PyTorch (import torch failed)")
if not torch.cuda.is_available():
    skip("no CUDA GPU visible to PyTorch")
try:
    import transformers
except ImportError:
    skip("no transformers (import transformers failed)")

import support  # noqa: E402  (after the checks: it runs the binary)
from support import shapescope  # noqa: E402

if not support.GPU:
    skip(f"{support.BIN} cannot measure here: {support.cli(['info'])[2].strip()}")

TOLERANCE = 0.10
SHARED_GPU = 1 << 62  # throttle::kSharedGpu in a point's throttle_reasons


class RecordModel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory(prefix="shapescope-gpu-record-")
        cls.db = os.path.join(cls.folder.name, "record.db")
        cls.trace = os.path.join(cls.folder.name, "gpt2.json")
        cls.result = shapescope.record_model("gpt2", tokens=12288, train=True, trace=cls.trace, db=cls.db,
                                             options={"no_verdict": True})
        with open(cls.trace) as f:
            cls.events = json.load(f)["traceEvents"]
        print(f"\n{torch.cuda.get_device_name()}, torch {torch.__version__}, transformers {transformers.__version__}")
        print(repr(cls.result))

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def test_the_trace_holds_the_clock_the_step_ran_at(self):
        from shapescope import _clocks
        with open(self.trace) as f:
            trace = json.load(f)
        clocks = trace.get("shapescopeClocks")
        self.assertIsNotNone(clocks, "no shapescopeClocks in the trace record_model kept")
        self.assertEqual(clocks["device"], torch.cuda.get_device_name())
        s = _clocks.summary(trace)
        print(_clocks.summary_line(trace))
        self.assertGreaterEqual(s["busy_samples"], 0.5 * s["samples"])
        self.assertGreater(s["sm_clock_median_mhz"], 0.5 * clocks["max_sm_clock_mhz"])

    def test_the_step_is_measured_on_this_gpu(self):
        r = self.result
        self.assertEqual(r.mode, "measured")
        self.assertEqual(r.steps, 1)
        self.assertEqual(r.recorded_on, torch.cuda.get_device_name())
        self.assertEqual(r.totals.missing_gemms, 0)
        self.assertEqual(r.unmapped, [])
        self.assertEqual(r.model_config.model_type, "gpt2")

    def test_gemm_kernels_per_shape_equal_profiles_calls(self):
        kernels = support.kernels_per_shape(self.events)
        calls = support.calls_per_shape(self.result)
        self.assertEqual(calls, {key: n for key, (n, _) in kernels.items()})
        self.assertEqual(sum(calls.values()), self.result.totals.calls_per_step)

    def test_gemm_time_per_step_within_10_percent_of_the_traces_kernels(self):
        t = self.result.totals
        self.assertEqual(t.compared_gemms, len(self.result.gemms))
        self.assertLessEqual(abs(t.ratio - 1), TOLERANCE,
                             f"measured {t.compared_measured_us:.1f} us, the trace {t.compared_trace_us:.1f} us")
        traced = sum(us for _, us in support.kernels_per_shape(self.events).values())
        self.assertLessEqual(abs(t.measured_us / traced - 1), TOLERANCE,
                             f"measured {t.measured_us:.1f} us against {traced:.1f} us of GEMM kernels in the trace")


class RecordFunction(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory(prefix="shapescope-gpu-record-")
        self.addCleanup(self.folder.cleanup)
        self.db = os.path.join(self.folder.name, "record.db")
        a = torch.randn(4096, 4095, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(4095, 4096, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(1024, 4096, device="cuda", dtype=torch.bfloat16)
        self.step = lambda: torch.nn.functional.linear(a @ b, w)  # an unaligned K, then x @ W.t()

    def shapes(self, result):
        return sorted((g.shape, g.calls_per_step) for g in result.gemms)

    def test_two_steps_give_the_calls_of_one(self):
        r = shapescope.record(self.step, steps=2, db=self.db, options={"no_verdict": True})
        self.assertEqual(r.steps, 2)
        self.assertEqual(self.shapes(r), [("4096x1024x4096 nt", 1), ("4096x4096x4095 nn", 1)])
        self.assertTrue(all(g.median_us and g.median_us > 0 for g in r.gemms))

    def test_the_context_manager(self):
        with shapescope.recording(db=self.db, options={"no_verdict": True}) as rec:
            self.step()
        self.assertEqual(self.shapes(rec.result), [("4096x1024x4096 nt", 1), ("4096x4096x4095 nn", 1)])
        left = [f for f in os.listdir(self.folder.name) if not f.startswith("record.db")]
        self.assertEqual(left, [])  # the temporary trace is removed


class SharedGpu(unittest.TestCase):
    """Points measured by a shapescope that this process (holding a CUDA context) started, alone and
    with a process that is not its ancestor holding a context on the GPU too."""

    @classmethod
    def setUpClass(cls):
        torch.zeros(1, device="cuda")
        torch.cuda.synchronize()  # this process holds a context on the GPU, as record()'s does

    def shared_points(self):
        with tempfile.TemporaryDirectory(prefix="shapescope-gpu-shared-") as folder:
            p = subprocess.run([support.BIN, "sweep", "--n", "2048,4096", "--format", "json", "--db",
                                os.path.join(folder, "shared.db")], capture_output=True, text=True,
                               stdin=subprocess.DEVNULL)
        self.assertEqual(p.returncode, 0, p.stderr)
        points = json.loads(p.stdout)
        self.assertEqual(len(points), 2)
        return sum(1 for point in points if point["throttle_reasons"] & SHARED_GPU), p.stderr

    def test_the_process_that_started_shapescope_is_not_another(self):
        shared, stderr = self.shared_points()
        self.assertEqual(shared, 0, stderr)
        self.assertNotIn("other process", stderr)

    def test_a_process_that_did_not_start_it_is(self):
        holder = subprocess.Popen([sys.executable, "-c", "import sys, torch; torch.zeros(1, device='cuda'); "
                                   "torch.cuda.synchronize(); print('ready', flush=True); sys.stdin.read()"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(holder.stdout.readline().strip(), "ready")
            shared, stderr = self.shared_points()
        finally:
            holder.stdin.close()
            holder.wait(timeout=60)
        self.assertEqual(shared, 2, stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
