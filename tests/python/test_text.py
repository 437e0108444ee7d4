"""repr() of a result is the CLI's text: what the command prints without --json, with --wide, line for
line: carried in the JSON ("text": explain, a GPU comparison, profile, pad), or for points (an array)
export's table of the same selection; and _repr_html_ is one self-contained HTML fragment with the
figure the CLI draws and that text."""
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

    def test_export_is_the_points_table(self):
        cases = [dict(db=support.SWEEP, n=range(1, 300)), dict(db=support.SWEEP, n=[1791, 1792, 1793, 4095, 4096]),
                 dict(db=support.LADDER), dict(db=support.EXPLAIN_H100), dict(db=support.EXPLAIN_H200),
                 dict(db=support.PAD)]
        for case in cases:
            with self.subTest(**{k: str(v) for k, v in case.items()}):
                self.assert_same_text(shapescope.export(**case))

    def test_a_sweeps_text_is_exports_table_of_its_selection(self):
        """A stand-in for the binary whose sweep found every point stored (export's JSON of the same
        options): the sweep's text is export's table of its selection, with every point in it."""
        with tempfile.TemporaryDirectory(prefix="shapescope-sweep-") as folder:
            fake = Path(folder) / "shapescope"
            fake.write_text(f'#!/bin/sh\nif [ "$1" = sweep ]; then shift; exec {support.BIN} export "$@"; fi\n'
                            f'exec {support.BIN} "$@"\n')
            fake.chmod(0o755)
            r = shapescope.sweep(n=range(1791, 1794), db=support.SWEEP, dtype="bf16", binary=fake)
            code, out, err = support.cli(["export", "--db", support.SWEEP, "--n", "1791..1793", "--dtype", "bf16",
                                          "--format", "table", "--wide"])
            self.assertEqual(code, 0, err)
            self.assertEqual(repr(r), out.rstrip("\n"))
            self.assertEqual(len(out.splitlines()), len(r) + 1)

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

    @support.reads_without_gpu
    def test_explain_is_the_whole_output(self):
        for shape, store in ((1793, support.EXPLAIN_H200), (3080, support.EXPLAIN_H100), (2616, support.EXPLAIN_H100),
                             (1793, support.EXPLAIN_H100), (4096, support.SWEEP), (100, support.SWEEP)):
            with self.subTest(shape=shape, store=store.parent.name):
                r = shapescope.explain(shape, db=self.stores[store])
                self.assert_same_text(r)
                self.assertIn(f"evidence for {r.target.label}", repr(r))
                if store == support.EXPLAIN_H100:  # every kind of table: controls, fixed kernel, regret
                    text = repr(r)
                    for heading in ("controls (the same GEMM with one thing changed)", "heuristic regret: ",
                                    "neighbours (fixed: our "):
                        self.assertIn(heading, text)

    def test_a_model_prediction(self):
        self.assert_same_text(shapescope.explain(1793, gpu="a100", tile="256x128"))
        self.assert_same_text(shapescope.explain("4096x1x4096", gpu="h100-sxm", tile="128x256"))

    @support.reads_without_gpu
    def test_pad_is_the_whole_output(self):
        r = shapescope.pad(model="gpt2", tokens=12288, train=True, db=self.stores[support.PAD])
        self.assert_same_text(r)
        self.assertIn("  vocab_size 50257: pad to 50264 (multiple of 8 above): GEMM time per step 32.59 ms -> 13.82 ms "
                      "(-57.60 %), for +5.4 k parameters (+0.004 %) and +0.004 % FLOPs", repr(r).splitlines())

    def test_a_pad_dry_run(self):
        self.assert_same_text(shapescope.pad(model="gpt2", tokens=[4096, 12288], train=True, dry_run=True))
        self.assert_same_text(shapescope.pad(model="llama3-8b", tokens=8192, dry_run=True))
        self.assert_same_text(shapescope.pad(trace=support.GPT2_TRACE, dry_run=True))


class Html(unittest.TestCase):
    def test_a_table_and_its_figure(self):
        r = shapescope.export(db=support.SWEEP, n=range(1780, 1800))
        page = r._repr_html_()
        text = re.search(r"<pre>(.*)</pre>", page, re.S)
        self.assertIsNotNone(text, page[-500:])
        self.assertEqual(html.unescape(text.group(1)), repr(r))
        self.assertEqual(len(repr(r).splitlines()), 21)
        self.assertIn("cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1", page)  # whole, as --wide
        self.assertNotIn("<script", page)
        if shutil.which("gnuplot") is None:
            self.assertIn("<p>no figure: shapescope: ", page)
            return
        figure = re.search(r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', page)
        self.assertIsNotNone(figure, page[:500])
        svg = base64.b64decode(figure.group(1)).decode("utf-8")
        self.assertIn("<svg", svg)
        self.assertEqual(svg, r.figure())

    def test_text_is_escaped(self):
        r = shapescope.explain(1793, gpu="a100", tile="256x128")
        r.cli_text = "<b>&\n"
        page = r._repr_html_()
        self.assertIn("<pre>&lt;b&gt;&amp;</pre>", page)

    def test_a_refused_figure_is_said_not_raised(self):
        r = shapescope.export(db=support.SWEEP, n=4096)
        absent = Path(tempfile.gettempdir()) / "shapescope-no-such-store.db"
        r._plot = (None, ["plot", "flops", "--db", str(absent)])
        page = r._repr_html_()
        self.assertEqual(page.count("<p>no figure: shapescope: "), 1)
        self.assertIn(html.escape(str(absent)), page)
        self.assertEqual(len(repr(r).splitlines()), 2)
        with self.assertRaises(shapescope.ShapescopeError):
            r.figure()


if __name__ == "__main__":
    unittest.main()
