"""What shapescope.record needs besides a GPU: PyTorch imported only when recording, the sequence a
model's tokens are split into, the presets, and the check the GPU test makes (the trace's GEMM
kernels per shape, counted from the kernel side, against profile's calls), here on the committed
traces."""
import json
import types
import unittest

import support
from support import shapescope

from shapescope import _recording as recording


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
