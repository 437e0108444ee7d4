"""scripts/record_trace.py's argument checks: bad values refused with one line naming the option,
before anything runs. The script needs PyTorch to run a step; the checks come first, so a stand-in
torch module (never called) lets them run here without it."""
import contextlib
import io
import sys
import types
import unittest
from unittest import mock

import support


def stand_in_torch():
    torch = types.ModuleType("torch")
    torch.float8_e4m3fn, torch.float8_e5m2, torch.bfloat16, torch.float32 = "e4m3", "e5m2", "bf16", "f32"
    torch.autograd = types.SimpleNamespace(Function=object)
    profiler = types.ModuleType("torch.profiler")
    profiler.record_function = None
    torch.profiler = profiler
    return {"torch": torch, "torch.profiler": profiler}


with mock.patch.dict(sys.modules, stand_in_torch()), \
        mock.patch.object(sys, "path", [str(support.ROOT / "scripts"), *sys.path]):
    import record_trace  # noqa: E402


ALTERNATED = ["--model", "gpt2", "--out", "after.json", "--fp8-head", "tensor", "--steps", "2",
              "--alternate-baseline", "before.json"]


class Arguments(unittest.TestCase):
    def refused(self, args):
        """The last line record_trace.py writes refusing `args`, and its exit status."""
        err = io.StringIO()
        with mock.patch.object(sys, "argv", ["record_trace.py", *args]), contextlib.redirect_stderr(err), \
                self.assertRaises(SystemExit) as exit:
            record_trace.main()
        return exit.exception.code, err.getvalue().strip().splitlines()[-1]

    def test_timed_pairs_are_an_even_number(self):
        # A B B A cancels a drift over an even number of pairs only, as --steps with --alternate-baseline.
        for n in ("-2", "1", "3"):
            code, line = self.refused(ALTERNATED + ["--timed-pairs", n])
            self.assertEqual(code, 2)
            self.assertIn(f"--timed-pairs: {n} is not an even number of pairs", line)
        code, line = self.refused(["--model", "gpt2", "--out", "after.json", "--timed-pairs", "4"])
        self.assertIn("--timed-pairs: 4 pairs of steps without and with the change: needs --alternate-baseline", line)

    def test_warmup_is_not_negative(self):
        code, line = self.refused(["--model", "gpt2", "--out", "after.json", "--warmup", "-1"])
        self.assertEqual(code, 2)
        self.assertIn("--warmup: -1 is not a number of steps (0 or more)", line)

    def test_settle_seconds_are_a_number_from_0_to_60(self):
        for bad in ("-1", "61", "nan"):
            code, line = self.refused(["--model", "gpt2", "--out", "after.json", "--settle-seconds", bad])
            self.assertEqual(code, 2)
            self.assertIn(f"--settle-seconds: {float(bad)} is not a number of seconds (0 to 60)", line)


if __name__ == "__main__":
    unittest.main()
