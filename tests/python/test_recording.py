"""What shapescope.record needs besides a GPU: PyTorch imported only when recording, the sequence a
model's tokens are split into, the presets, the clock samples it keeps in the trace (without NVML:
a note and the trace as it was; with samples: the key on the trace's timeline, restricted to its
kernels, summarized as src/model/trace_clocks.cpp summarizes it), and the check the GPU test makes
(the trace's GEMM kernels per shape, counted from the kernel side, against profile's calls), here on
the committed traces."""
import hashlib
import json
import os
import tempfile
import types
import unittest

import support
from support import shapescope

from shapescope import _clocks, _recording as recording, _steps as steps


def torch_installed():
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


class WithoutTorch(unittest.TestCase):
    @unittest.skipIf(torch_installed(), "torch is installed here")
    def test_recording_says_it_needs_pytorch(self):
        for call in (lambda: shapescope.record(print), lambda: shapescope.Recording().__enter__(),
                     lambda: shapescope.record_model("gpt2", tokens=1024)):
            with self.assertRaises(ImportError) as caught:
                call()
            self.assertIn("PyTorch", str(caught.exception))

    def test_steps_are_at_least_one(self):
        with self.assertRaises(ValueError):
            shapescope.record(print, steps=0)

    def test_settling_seconds_are_a_number_from_0_to_60(self):
        for bad in (-1, 61, float("nan")):
            with self.assertRaisesRegex(ValueError, "settle_seconds: "):
                shapescope.record(print, settle_seconds=bad)


class SettlingSteps(unittest.TestCase):
    """record()'s settling steps are traced as ProfilerStep#0.. and left out of the trace it profiles."""

    def test_the_settling_steps_are_left_out(self):
        events = []
        for i in range(4):  # two settling steps, then two recorded ones, a kernel each
            t = 1000 * i
            events += [
                {"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{i}", "ts": t, "dur": 500},
                {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": t + 10, "dur": 5,
                 "args": {"correlation": i}},
                {"ph": "X", "cat": "kernel", "name": "nvjet", "ts": t + 600, "dur": 10 + i, "args": {"correlation": i}},
            ]
        events.append({"ph": "M", "name": "process_name", "args": {"name": "python"}})
        rec = shapescope.Recording()
        rec._settle_steps = 2
        settle, recorded = steps.split_by_steps({"traceEvents": events}, 2, rec._part_of)
        names = [e["name"] for e in recorded["traceEvents"]]
        self.assertEqual([n for n in names if n.startswith("ProfilerStep#")], ["ProfilerStep#2", "ProfilerStep#3"])
        self.assertEqual([e["dur"] for e in recorded["traceEvents"] if e.get("cat") == "kernel"], [12, 13])
        self.assertIn("process_name", names)  # outside every step: kept
        self.assertEqual([e["dur"] for e in settle["traceEvents"] if e.get("cat") == "kernel"], [10, 11])


class Sequence(unittest.TestCase):
    def test_the_models_longest_sequence_at_most_the_tokens(self):
        gpt2 = types.SimpleNamespace(n_positions=1024)
        llama = types.SimpleNamespace(max_position_embeddings=8192)
        self.assertEqual(recording._sequence(gpt2, 12288, None), 1024)
        self.assertEqual(recording._sequence(llama, 8192, None), 8192)
        self.assertEqual(recording._sequence(llama, 512, None), 512)
        self.assertEqual(recording._sequence(llama, 8192, 2048), 2048)

    def test_tokens_that_the_sequence_does_not_divide_are_refused(self):
        with self.assertRaises(ValueError) as caught:
            recording._sequence(types.SimpleNamespace(n_positions=1024), 12000, None)
        self.assertEqual(str(caught.exception),
                         "tokens: 12000 is not a multiple of the sequence length 1024; pass sequence=")


class Presets(unittest.TestCase):
    def test_a_preset_is_the_file_pad_reads(self):
        path = recording._preset("gpt2", None)
        self.assertEqual(json.loads(path.read_text())["model_type"], "gpt2")
        with self.assertRaises(ValueError) as caught:
            recording._preset("no-such-model", None)
        self.assertIn("'no-such-model' is no file and no preset", str(caught.exception))


def kernel(ts, dur):
    return {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": ts, "dur": dur}


def step_trace():
    """The fixture of tests/cpu/test_trace_clocks.cpp: kernels over [1000, 3000] and [10000, 12000] us,
    a sample every 1000 us from 0 to 14000, the busy ones at 1000..4000 and 10000..13000."""
    busy_mhz, busy_w = iter([1980, 1965, 1950, 1935, 1700, 1755, 1800, 1830]), iter([400, 410, 420, 430, 600, 650, 680, 690])
    samples = []
    for t in range(0, 14001, 1000):
        busy = 1000 <= t <= 4000 or 10000 <= t <= 13000
        samples.append([t, next(busy_mhz), next(busy_w), 100] if busy else [t, 345, 70.5, 0])
    return {"traceEvents": [kernel(1000, 500), kernel(1500, 1500), kernel(10000, 2000)],
            "shapescopeClocks": {"version": 1, "source": "NVML", "device": "NVIDIA H100 80GB HBM3", "uuid": "GPU-0123",
                                 "interval_ms": 1, "columns": _clocks.COLUMNS, "samples": samples}}


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class FakeSampler(_clocks.ClockSampler):
    """A sampler that NVML never saw: its samples are set by the test."""

    def __init__(self, samples, interval_ms=20):
        super().__init__(interval_ms=interval_ms, unavailable="a fake")
        self.note, self.samples, self.device, self.uuid = None, samples, "NVIDIA H100 80GB HBM3", "GPU-0123"

    @property
    def available(self):
        return True


class Clocks(unittest.TestCase):
    def test_the_summary_is_the_one_shapescope_reads(self):
        s = _clocks.summary(step_trace())
        self.assertEqual(s, {"samples": 15, "busy_samples": 8, "sm_clock_median_mhz": (1830 + 1935) / 2,
                             "sm_clock_low_mhz": 1700, "sm_clock_high_mhz": 1980,
                             "power_median_w": (430 + 600) / 2, "power_max_w": 690})
        trace = step_trace()
        trace["shapescopeClocks"]["samples"] += [[11500, "1980", 500, 100], [11800], [11950, 1990, None, None]]
        s = _clocks.summary(trace)
        self.assertEqual((s["samples"], s["busy_samples"], s["sm_clock_high_mhz"], s["power_max_w"]), (16, 9, 1990, 690))
        self.assertIsNone(_clocks.summary({"traceEvents": []}))
        self.assertIsNone(_clocks.summary(dict(trace, shapescopeClocks={"version": 2, "samples": []})))

    def test_samples_go_onto_the_traces_timeline_restricted_to_its_kernels(self):
        base = 1_790_857_026_000_000_000
        trace = {"baseTimeNanoseconds": base, "traceEvents": [kernel(100_000, 50_000), kernel(200_000, 10_000)]}
        # Unix ns: 20 ms apart from 20 ms before the profiled step to well after it.
        sampler = FakeSampler([[base + t * 1000, 1980, 500.0, 100] for t in range(0, 400_001, 20_000)])
        clocks = sampler.record(trace)
        self.assertEqual(clocks["columns"], ["t_us", "sm_clock_mhz", "power_w", "gpu_util_pct"])
        self.assertEqual([r[0] for r in clocks["samples"]], list(range(80_000, 230_001, 20_000)))
        self.assertEqual((clocks["version"], clocks["device"], clocks["interval_ms"]), (1, "NVIDIA H100 80GB HBM3", 20))
        # Another time base: no sample near the kernels, so all are kept (shapescope says so).
        trace["baseTimeNanoseconds"] = 0
        self.assertEqual(len(sampler.record(trace)["samples"]), 21)

    def test_attach_writes_the_key_and_keeps_the_rest(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "trace.json")
            trace = {"traceEvents": [kernel(1000, 3000)], "baseTimeNanoseconds": 0, "schemaVersion": 1}
            with open(path, "w") as f:
                json.dump(trace, f)
            line = FakeSampler([[t * 1000, 1980, 400.0, 100] for t in range(0, 6000, 1000)], interval_ms=1).attach(path)
            with open(path) as f:
                written = json.load(f)
            self.assertEqual({k: v for k, v in written.items() if k != "shapescopeClocks"}, trace)
            self.assertEqual(len(written["shapescopeClocks"]["samples"]), 6)
            self.assertTrue(line.startswith("clocks: 5 of 6 NVML samples (every 1 ms) while the step's kernels ran: "
                                            "SM clock median 1980 MHz (1980-1980), power median 400 W (max 400 W)"), line)
            self.assertEqual(os.listdir(folder), ["trace.json"])

    def test_without_nvml_the_trace_is_left_as_it_was(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "trace.json")
            with open(path, "w") as f:
                json.dump(step_trace(), f)
            before = digest(path)
            sampler = _clocks.ClockSampler(uuid="GPU-00000000-0000-0000-0000-000000000000")
            self.assertFalse(sampler.available)
            with sampler:
                pass
            self.assertEqual(sampler.samples, [])
            self.assertTrue(sampler.attach(path).startswith("no clocks recorded: "), sampler.note)
            self.assertEqual(digest(path), before)


class KernelsAgainstCalls(support.WithStoreCopies):
    """The GPU test's check on the committed traces: every GEMM shape's kernels = profile's calls."""

    @support.reads_without_gpu
    def test_committed_traces(self):
        stores = self.stores
        for name in ("gpt2", "gpt2-vocab50264"):
            with self.subTest(trace=name):
                path = support.DATA / "traces" / f"{name}.json"
                events = json.loads(path.read_text())["traceEvents"]
                kernels = support.kernels_per_shape(events)
                profile = shapescope.profile(trace=path, db=stores[support.PAD], no_verdict=True)
                self.assertEqual(support.calls_per_shape(profile), {k: n for k, (n, _) in kernels.items()})
                self.assertEqual(sum(n for n, _ in kernels.values()), 147)
                traced = sum(us for _, us in kernels.values())
                self.assertAlmostEqual(profile.totals.trace_us, traced, delta=traced * 0.01)


if __name__ == "__main__":
    unittest.main()
