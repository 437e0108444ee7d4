"""Every command from Python against the committed stores and traces: the dataclasses hold every
field of the tool's JSON (none left over in `extra`), typed, and give the JSON back unchanged;
to_pandas() has a row per point, GEMM or candidate."""
import json
import os
import tempfile
import unittest
from pathlib import Path

import support
from support import shapescope

from shapescope import _record


def json_of(result):
    code, out, err = support.cli(result.command[1:])
    assert code == 0, err
    return json.loads(out)


class Checks(support.WithStoreCopies):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.before = support.digests(support.STORES)

    def tearDown(self):
        self.assertEqual(support.digests(support.STORES), self.before, "a committed store changed")

    def assert_complete(self, result, records):
        """Every JSON key has a field, and the fields give the JSON back."""
        leftover = [key for r in records for key in _record.unknown_keys(r)]
        self.assertEqual(leftover, [], f"{type(result).__name__}: JSON keys no field declares")
        self.assertEqual(result.to_dict(), json_of(result))
        self.assertEqual(result.command[0], support.BIN)

    def frame(self, result, *args):
        pandas = support.pandas_or_none()
        if pandas is None:
            with self.assertRaises(ImportError) as caught:
                result.to_pandas(*args)
            self.assertIn("python3-pandas", str(caught.exception))
            return None
        frame = result.to_pandas(*args)
        self.assertIsInstance(frame, pandas.DataFrame)
        return frame


class Export(Checks):
    def test_points_with_every_annotation(self):
        r = shapescope.export(db=support.SWEEP, n=range(1791, 1794))
        self.assertIsInstance(r, shapescope.ExportResult)
        self.assertEqual([p.n for p in r], [1791, 1792, 1793])
        p1793 = r[2]
        self.assertIsInstance(p1793, shapescope.Point)
        self.assertEqual((p1793.m, p1793.k, p1793.dtype, p1793.layout, p1793.backend),
                         (1793, 1793, "bf16", "nn", "cublas"))
        self.assertEqual(p1793.kernel, "cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1")
        self.assertEqual((p1793.tiles_m, p1793.tiles_n, p1793.tiles, p1793.slots), (15, 8, 120, 132))
        self.assertIsInstance(p1793.kernels[0], shapescope.Kernel)
        self.assertEqual(p1793.kernels[0].grid_x, 120)
        self.assertAlmostEqual(p1793.tflops, 2 * 1793 ** 3 / p1793.median_us / 1e6, places=9)
        self.assertEqual(r[1].aligned_16b, 1)
        self.assertEqual(p1793.aligned_16b, 0)
        self.assert_complete(r, r.points)
        frame = self.frame(r)
        if frame is not None:
            self.assertEqual(list(frame["n"]), [1791, 1792, 1793])
            self.assertIn("nvjet_sm90", frame["kernels"][1])
            self.assertEqual(len(frame.columns), len(r.points[0].to_dict()))

    def test_a_gpu_model_and_a_gpu_name_select_alike(self):
        by_model = shapescope.export(db=support.SWEEP, gpu="h200", n=range(1791, 1794))
        by_name = shapescope.export(db=support.SWEEP, gpu_name="H200", n=range(1791, 1794))
        self.assertEqual([p.n for p in by_model], [1791, 1792, 1793])
        self.assertEqual(by_model.to_dict(), by_name.to_dict())
        self.assertIn("--gpu-name", by_name._plot[1])

    def test_every_store(self):
        for store in support.STORES:
            with self.subTest(store=store.name):
                r = shapescope.export(db=store)
                self.assertGreater(len(r), 0)
                self.assert_complete(r, r.points)

    def test_lt_algorithms_and_our_kernels(self):
        r = shapescope.export(db=support.EXPLAIN_H100, backend="cublaslt")
        self.assertTrue(r.points)
        self.assertTrue(all(p.backend == "cublaslt" and p.lt_algo_id is not None and p.lt_tile for p in r))
        ours = shapescope.export(db=support.LADDER, algo="05_wgmma_tma:128x256:dp")
        self.assertEqual(len(ours), 99)
        self.assertTrue(all(p.backend == "custom" and p.algo == "05_wgmma_tma:128x256:dp" for p in ours))


class Explain(Checks):
    @support.reads_without_gpu
    def test_from_a_store(self):
        r = shapescope.explain(1793, db=self.stores[support.EXPLAIN_H200])
        self.assertIsInstance(r, shapescope.ExplainResult)
        self.assertEqual((r.shape, r.mode), ("1793", "store"))
        self.assertEqual(r.verdict.against, "1792")
        self.assertGreater(r.verdict.time_ratio, 4)
        self.assertEqual([e.effect for e in r.effects], ["16-byte alignment", "tile quantization"])
        self.assertAlmostEqual(sum(e.cost_us for e in r.effects), r.verdict.gap_us, places=6)
        self.assertEqual(r.target.role, "target")
        self.assertEqual(r.target.point.m, 1793)
        self.assertEqual(r.target.time_us, r.target.point.median_us)
        self.assertTrue(r.fixes[0].text.startswith("pad to 1808"))
        self.assertIsNone(r.paired)
        self.assert_complete(r, [r])
        frame = self.frame(r)
        if frame is not None:
            self.assertEqual(list(frame["role"])[:2], ["target", "neighbour"])
            self.assertEqual(frame["label"][0], "1793")

    @support.reads_without_gpu
    def test_controls_from_a_store(self):
        r = shapescope.explain(3080, db=self.stores[support.EXPLAIN_H100])
        roles = {p.role for p in r.points}
        self.assertEqual(roles, {"target", "neighbour", "fixed kernel", "aligned 32 B", "alternative",
                                 "neighbour alternative", "launch floor"})
        fixed = [p for p in r.points if p.role == "fixed kernel"]
        self.assertEqual(len(fixed), 9)
        for p in fixed:  # `of` is the library point with the same problem
            self.assertEqual((r.points[p.of].label, r.points[p.of].point.n), (p.label, p.point.n))
        self.assertIsNotNone(r.regret)
        self.assert_complete(r, [r])

    def test_a_model_prediction(self):
        r = shapescope.explain(1793, gpu="a100", tile="256x128")
        self.assertEqual(r.mode, "model")
        self.assertIsNone(r.target.time_us)
        self.assertEqual((r.target.point.tiles, r.target.point.slots, r.target.point.wave_rounds), (120, 108, 2))
        self.assertIsNone(r.target.point.median_us)
        self.assert_complete(r, [r])

    def test_gpus_side_by_side(self):
        r = shapescope.explain((1793, 1793, 1793), db=[support.EXPLAIN_H100, support.SWEEP])
        self.assertIsInstance(r, shapescope.GpuComparison)
        self.assertEqual([g.gpu for g in r.gpus], ["NVIDIA H100 80GB HBM3", "NVIDIA H200"])
        self.assertTrue(all(isinstance(g.point, shapescope.Point) and g.point.n == 1793 for g in r.gpus))
        self.assert_complete(r, [r])
        frame = self.frame(r)
        if frame is not None:
            self.assertEqual(list(frame["gpu"]), ["NVIDIA H100 80GB HBM3", "NVIDIA H200"])
            self.assertIn("point_median_us", frame.columns)


class Profile(Checks):
    @support.reads_without_gpu
    def test_a_trace(self):
        r = shapescope.profile(trace=support.GPT2_TRACE, db=self.stores[support.PAD])
        self.assertIsInstance(r, shapescope.ProfileResult)
        self.assertEqual(r.mode, "store")
        self.assertEqual(len(r.gemms), 15)
        self.assertEqual(r.totals.calls_per_step, 147)
        self.assertEqual(sum(g.count for g in r.gemms), 147)
        top = r.gemms[0]
        self.assertEqual((top.shape, top.dtype, top.origin), ("12288x50257x768 nt", "bf16", "aten::mm"))
        self.assertIsInstance(top.problems[0], shapescope.GemmProblem)
        self.assertEqual((top.problems[0].m, top.problems[0].n, top.problems[0].k), (12288, 50257, 768))
        measured = [g for g in r.gemms if g.median_us is not None]
        self.assertEqual(len(measured), r.totals.measured_gemms)
        self.assertAlmostEqual(sum(g.step_us for g in measured), r.totals.measured_us, places=3)
        self.assertAlmostEqual(r.totals.ratio, r.totals.compared_measured_us / r.totals.compared_trace_us, places=9)
        self.assertEqual(r.unmapped, [])
        self.assert_complete(r, [r])
        frame = self.frame(r)
        if frame is not None:
            self.assertEqual(len(frame), 15)
            self.assertEqual(int(frame["count"].sum()), 147)
            self.assertEqual(list(frame["n"])[0], 50257)

    @support.reads_without_gpu
    def test_a_model_step(self):
        r = shapescope.profile(model="gpt2", tokens=12288, train=True, db=self.stores[support.PAD])
        self.assertEqual(len(r.gemms), 15)
        self.assertIsNone(r.totals.trace_us)
        self.assertEqual(r.totals.missing_gemms, 0)
        self.assert_complete(r, [r])


class Pad(Checks):
    @support.reads_without_gpu
    def test_a_model_from_the_store(self):
        r = shapescope.pad(model="gpt2", tokens=12288, train=True, db=self.stores[support.PAD])
        self.assertIsInstance(r, shapescope.PadResult)
        self.assertEqual((r.model.name, r.model.vocab_size, r.train, r.tp), ("gpt2", 50257, True, 1))
        (step,) = r.steps
        self.assertEqual(step.tokens, 12288)
        self.assertEqual(sum(g.count for g in step.gemms), 147)
        self.assertEqual(step.gemms[0].pass_, "fwd")
        vocab = r.recommendations()[(12288, "vocab_size")]
        self.assertEqual((vocab.action, vocab.value), ("pad", 50264))
        self.assertEqual(r.recommendations()[(12288, "n_embd")].action, "leave")
        self.assert_complete(r, [r])
        self.assertEqual(r.to_dict()["steps"][0]["gemms"][0]["pass"], "fwd")
        frame = self.frame(r)
        if frame is not None:
            self.assertEqual(len(frame), 15)
            self.assertIn("pass", frame.columns)
        candidates = self.frame(r, "candidates")
        if candidates is not None:
            chosen = candidates[candidates["recommended"]]
            self.assertEqual(list(chosen["value"]), [50264])
            self.assertEqual(list(chosen["dimension"]), ["vocab_size"])

    def test_a_dry_run(self):
        r = shapescope.pad(model="gpt2", tokens=[4096, 12288], train=True, dry_run=True)
        self.assertEqual(r.mode, "dry-run")
        self.assertEqual([s.tokens for s in r.steps], [4096, 12288])
        self.assertIsNone(r.source)
        self.assertTrue(all(g.median_us is None for s in r.steps for g in s.gemms))
        self.assert_complete(r, [r])
        with self.assertRaises(ValueError):
            r.to_pandas("waves")

    def test_the_sizes_of_a_trace(self):
        r = shapescope.pad(trace=support.GPT2_TRACE, dry_run=True)
        self.assertIsInstance(r, shapescope.PadSizesResult)
        vocab = next(s for s in r.sizes if s.value == 50257)
        self.assertEqual([c.value for c in vocab.candidates], [50264, 50272, 50304, 50432])
        self.assertIsNone(vocab.recommendation)
        self.assert_complete(r, [r])
        frame = self.frame(r)
        if frame is not None:
            self.assertEqual(list(frame[frame["size"] == 50257]["value"]), [50264, 50272, 50304, 50432])
            self.assertFalse(frame["recommended"].any())


class Sweep(Checks):
    def test_a_dry_run_is_the_plan_as_printed(self):
        r = shapescope.sweep(n=range(1791, 1794), dry_run=True)
        self.assertIsInstance(r, shapescope.SweepPlan)
        code, out, err = support.cli(["sweep", "--n", "1791..1793", "--dry-run"])
        self.assertEqual(code, 0)
        self.assertEqual((r.summary, r.plan), (err, out))
        self.assertEqual(r.text(), err + out)
        self.assertEqual(repr(r), (err + out).rstrip("\n"))
        self.assertIn("3 problems x 1 backend(s) = 3 points", r.summary)
        self.assertEqual(r.plan.splitlines()[1].split()[:3], ["1791", "1791", "1791"])

    @support.reads_without_gpu
    def test_without_a_gpu_it_says_so(self):
        with tempfile.TemporaryDirectory(prefix="shapescope-sweep-") as folder:
            db = Path(folder) / "sweep.db"
            with self.assertRaises(shapescope.ShapescopeError) as caught:
                shapescope.sweep(n=range(1791, 1794), db=db)
            self.assertEqual(caught.exception.exit_code, 3)
            self.assertRegex(caught.exception.message, r"GPU|measure")  # no GPU here, or a CPU-only build
            self.assertEqual(os.listdir(folder), [])


class Records(unittest.TestCase):
    def test_a_newer_binarys_keys_are_kept_not_lost(self):
        p = shapescope.Point.from_json({"m": 1, "n": 2, "new_key": [1, 2], "kernels": [{"name": "k", "new": 1}]})
        self.assertEqual((p.m, p.n, p.k), (1, 2, None))
        self.assertEqual(p.extra, {"new_key": [1, 2]})
        self.assertEqual(_record.unknown_keys(p), ["new_key", "kernels[0].new"])
        self.assertEqual(p.to_dict()["new_key"], [1, 2])

    def test_numbers_keep_their_type(self):
        p = shapescope.Point.from_json({"median_us": 12, "samples": 10, "noisy": False})
        self.assertIsInstance(p.median_us, float)
        self.assertIsInstance(p.samples, int)
        self.assertIs(p.noisy, False)
        with self.assertRaises(TypeError):
            shapescope.Point.from_json([1, 2])


if __name__ == "__main__":
    unittest.main()
