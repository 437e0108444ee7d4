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
    @support.reads_without_gpu
    def test_profile_text_is_the_clis_own(self):
        """profile's JSON carries the CLI's text ("text"), and repr() is that text: measured what-ifs,
        replays and clock lines appear as the CLI words them, never drawn a second time here."""
        r = shapescope.profile(trace=support.GPT2_TRACE, db=self.stores[support.PAD])
        self.assertIsNotNone(r.cli_text)
        self.assertEqual(repr(r), r.cli_text.rstrip("\n"))
        r.cli_text = "profile of x\nwhat would make this step faster: ...\n"
        self.assertEqual(repr(r).splitlines(), ["profile of x", "what would make this step faster: ..."])
        r.cli_text = None
        with self.assertRaises(ValueError):
            repr(r)

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
