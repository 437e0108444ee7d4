"""repr() of a result is the CLI's text: the same table the command prints without --json, line for
line (export and sweep, profile, a GPU comparison), or those of its lines it renders, in the CLI's
order (explain without the target's evidence block, pad's step tables and recommendations); and
_repr_html_ is one self-contained HTML fragment with the figure the CLI draws."""
import base64
import html
import re
import shutil
import tempfile
import unittest
from pathlib import Path

import support
from support import shapescope


class Text(support.WithStoreCopies):
    def cli_lines(self, result):
        code, out, err = support.cli(support.text_command(result))
        self.assertEqual(code, 0, err)
        return out.splitlines()

    def assert_same_text(self, result):
        self.assertEqual(repr(result).splitlines(), self.cli_lines(result))

    def assert_lines_in_order(self, result, at_least):
        mine = repr(result).splitlines()
        self.assertGreaterEqual(len(mine), at_least)
        self.assertIsNone(support.missing_in_order(mine, self.cli_lines(result)))
        return mine

    def test_export_is_the_points_table(self):
        cases = [dict(db=support.SWEEP, n=range(1, 300)), dict(db=support.SWEEP, n=[1791, 1792, 1793, 4095, 4096]),
                 dict(db=support.LADDER), dict(db=support.EXPLAIN_H100), dict(db=support.EXPLAIN_H200),
                 dict(db=support.PAD)]
        for case in cases:
            with self.subTest(**{k: str(v) for k, v in case.items()}):
                self.assert_same_text(shapescope.export(**case))

    def test_a_gpu_comparison_is_the_whole_output(self):
        self.assert_same_text(shapescope.explain(1793, db=[support.EXPLAIN_H100, support.SWEEP]))
        self.assert_same_text(shapescope.explain(1793, db=[support.PAD, support.SWEEP]))

    @support.reads_without_gpu
    def test_profile_is_the_whole_output(self):
        pad = self.stores[support.PAD]
        self.assert_same_text(shapescope.profile(trace=support.GPT2_TRACE, db=pad))
        self.assert_same_text(shapescope.profile(model="gpt2", tokens=12288, train=True, db=pad))
        self.assert_same_text(shapescope.profile(model="gpt2", tokens=12288, db=pad))

    @support.reads_without_gpu
    def test_profile_what_ifs_follow_the_total(self):
        """Measured on a GPU, profile prints what would make the step faster after the total line, as
        print_what_ifs does (a store run has none, so this one is given its JSON)."""
        r = shapescope.profile(trace=support.GPT2_TRACE, db=self.stores[support.PAD])
        self.assertIsNone(r.what_ifs)
        lines = repr(r).splitlines()
        total = lines.index(r.total_text)
        r.mode = "measured"
        r.what_ifs = shapescope.WhatIfs.from_json({
            "ranked": [{"kind": "padding", "change": "12288x50257x768 nt: pad to 12288x50272x768", "calls_per_step": 1.0,
                        "now_us": 9837.92, "after_us": 1304.0, "saving_us": 8533.92, "saving_low_us": 8528.3,
                        "saving_high_us": 8546.3, "paired": True},
                       {"kind": "algorithm", "change": "768x768x12288 tn: use cuBLASLt's algorithm h7",
                        "calls_per_step": 12.0, "now_us": 39.5, "after_us": 35.9, "saving_us": 42.7,
                        "saving_low_us": None, "saving_high_us": None, "paired": False}],
            "step_us": 32220.0, "with_all_us": 23643.38})
        measured = repr(r).splitlines()
        self.assertEqual(measured[:total + 1], lines[:total + 1])
        self.assertEqual(measured[total + 1:total + 8], [
            "",
            "what would make this step faster (measured: explain's fixes in its paired passes, the saving per step = "
            "calls x time x (1 - the paired ratio) [95 % interval]):",
            "rank  kind       calls/step        now      after  saving/step [95 %]                         change",
            "   1  padding             1  9837.9 us  1304.0 us  8533.9 us (26.5 %) [8528.3 us..8546.3 us]  "
            "12288x50257x768 nt: pad to 12288x50272x768",
            "   2  algorithm          12    39.5 us    35.9 us  42.7 us (0.1 %)                            "
            "768x768x12288 tn: use cuBLASLt's algorithm h7",
            "the step's GEMM time: 32.22 ms now, 23.64 ms with each GEMM's best change (-26.62 %; added over distinct "
            "GEMMs, each measured against its own GEMM)",
            "1 of them not paired (the points' own medians)"])
        self.assertEqual(measured[total + 8:], lines[total + 1:])
        r.what_ifs.ranked = []
        self.assertEqual(repr(r).splitlines()[total + 1:total + 3], [
            "", "what would make this step faster: no change measured here saves more than 2 % of a GEMM (explain's "
            "fixes, paired)"])

    def assert_explain_text(self, result):
        """The CLI's text less the target's evidence block (from its blank line to the next)."""
        lines = self.cli_lines(result)
        start = lines.index(f"evidence for {result.target.label}") - 1
        end = lines.index("", start + 1)
        self.assertEqual(repr(result).splitlines(), lines[:start] + lines[end:])

    @support.reads_without_gpu
    def test_explain_is_the_clis_text_less_the_evidence(self):
        for shape, store in ((1793, support.EXPLAIN_H200), (3080, support.EXPLAIN_H100), (2616, support.EXPLAIN_H100),
                             (1793, support.EXPLAIN_H100), (4096, support.SWEEP), (100, support.SWEEP)):
            with self.subTest(shape=shape, store=store.parent.name):
                r = shapescope.explain(shape, db=self.stores[store])
                self.assert_explain_text(r)
                if store == support.EXPLAIN_H100:  # every kind of table: controls, fixed kernel, regret
                    text = repr(r)
                    for heading in ("controls (the same GEMM with one thing changed)", "heuristic regret: ",
                                    "neighbours (fixed: our "):
                        self.assertIn(heading, text)

    def test_a_model_prediction(self):
        self.assert_explain_text(shapescope.explain(1793, gpu="a100", tile="256x128"))
        self.assert_explain_text(shapescope.explain("4096x1x4096", gpu="h100-sxm", tile="128x256"))

    @support.reads_without_gpu
    def test_pad_shows_its_tables_and_recommendations(self):
        mine = self.assert_lines_in_order(
            shapescope.pad(model="gpt2", tokens=12288, train=True, db=self.stores[support.PAD]), 20)
        self.assertIn("  vocab_size 50257: pad to 50264 (multiple of 8 above): GEMM time per step 32.59 ms -> 13.82 ms "
                      "(-57.60 %), for +5.4 k parameters (+0.004 %) and +0.004 % FLOPs", mine)

    def test_a_pad_dry_run(self):
        self.assert_lines_in_order(shapescope.pad(model="gpt2", tokens=[4096, 12288], train=True, dry_run=True), 30)
        self.assert_lines_in_order(shapescope.pad(model="llama3-8b", tokens=8192, dry_run=True), 7)
        self.assert_lines_in_order(shapescope.pad(trace=support.GPT2_TRACE, dry_run=True), 5)


class Html(unittest.TestCase):
    def test_a_table_and_its_figure(self):
        r = shapescope.export(db=support.SWEEP, n=range(1780, 1800))
        page = r._repr_html_()
        self.assertEqual(page.count("<tr>"), 21)
        self.assertIn("<th>backend</th>", page)
        self.assertIn("<td>cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1</td>", page)  # whole, as --wide
        self.assertNotIn("<script", page)
        if shutil.which("gnuplot") is None:
            self.assertIn("<p>no figure: shapescope: ", page)
            return
        figure = re.search(r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', page)
        self.assertIsNotNone(figure, page[:500])
        svg = base64.b64decode(figure.group(1)).decode("utf-8")
        self.assertIn("<svg", svg)
        self.assertEqual(svg, r.figure())

    def test_cells_are_escaped(self):
        r = shapescope.explain(1793, gpu="a100", tile="256x128")
        r.verdict.text = "<b>&"
        page = r._repr_html_()
        self.assertIn("<p>&lt;b&gt;&amp;</p>", page)

    def test_a_refused_figure_is_said_not_raised(self):
        r = shapescope.export(db=support.SWEEP, n=4096)
        absent = Path(tempfile.gettempdir()) / "shapescope-no-such-store.db"
        r._plot = (None, ["plot", "flops", "--db", str(absent)])
        page = r._repr_html_()
        self.assertEqual(page.count("<p>no figure: shapescope: "), 1)
        self.assertIn(html.escape(str(absent)), page)
        self.assertEqual(page.count("<tr>"), 2)
        with self.assertRaises(shapescope.ShapescopeError):
            r.figure()


if __name__ == "__main__":
    unittest.main()
