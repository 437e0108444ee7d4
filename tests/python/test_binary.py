"""Finding the binary, the options a call becomes, and the tool's refusals as ShapescopeError."""
import os
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path
from unittest import mock

import support
from support import shapescope

from shapescope import ShapescopeError, _binary


class FindBinary(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory(prefix="shapescope-find-")
        self.addCleanup(self.folder.cleanup)
        self.fake = Path(self.folder.name) / "shapescope"
        self.fake.write_text("#!/bin/sh\nexit 0\n")
        self.fake.chmod(self.fake.stat().st_mode | stat.S_IXUSR)

    def test_an_explicit_binary_comes_first(self):
        with mock.patch.dict(os.environ, {"SHAPESCOPE_BIN": support.BIN}):
            self.assertEqual(shapescope.find_binary(self.fake), str(self.fake))

    def test_then_the_environment(self):
        with mock.patch.dict(os.environ, {"SHAPESCOPE_BIN": str(self.fake)}):
            self.assertEqual(shapescope.find_binary(), str(self.fake))

    def test_then_the_build_tree_then_path(self):
        env = {k: v for k, v in os.environ.items() if k != "SHAPESCOPE_BIN"}
        env["PATH"] = self.folder.name
        with mock.patch.dict(os.environ, env, clear=True):
            built = [p for p in _binary._source_tree_binaries() if _binary._executable(p)]
            found = shapescope.find_binary()
            if built:
                self.assertEqual(found, str(built[0]))
            with mock.patch.object(_binary, "_source_tree_binaries", return_value=[]):
                self.assertEqual(shapescope.find_binary(), str(self.fake))

    def test_none_found_says_what_it_tried(self):
        env = {k: v for k, v in os.environ.items() if k != "SHAPESCOPE_BIN"}
        env["PATH"] = os.path.join(self.folder.name, "empty")
        with mock.patch.dict(os.environ, env, clear=True), \
                mock.patch.object(_binary, "_source_tree_binaries", return_value=[Path("/nonexistent/shapescope")]):
            with self.assertRaises(ShapescopeError) as caught:
                shapescope.find_binary()
        self.assertEqual(caught.exception.exit_code, 127)
        self.assertIn("/nonexistent/shapescope", caught.exception.message)
        self.assertIn("SHAPESCOPE_BIN", caught.exception.message)

    def test_a_named_binary_that_is_no_executable_is_refused(self):
        self.fake.chmod(0o644)
        with self.assertRaises(ShapescopeError) as caught:
            shapescope.find_binary(self.fake)
        self.assertEqual(caught.exception.exit_code, 127)
        self.assertEqual(caught.exception.message, f"shapescope: binary= '{self.fake}' is not an executable file")
        with mock.patch.dict(os.environ, {"SHAPESCOPE_BIN": str(self.fake)}):
            with self.assertRaises(ShapescopeError) as caught:
                shapescope.find_binary()
        self.assertIn("$SHAPESCOPE_BIN", caught.exception.message)

    def test_a_binary_in_the_current_folder_runs_that_file(self):
        # "./shapescope" is not looked up on PATH (which here holds no shapescope at all).
        env = {k: v for k, v in os.environ.items() if k != "SHAPESCOPE_BIN"}
        env["PATH"] = os.path.join(self.folder.name, "empty")
        cwd = os.getcwd()
        os.chdir(self.folder.name)
        self.addCleanup(os.chdir, cwd)
        with mock.patch.dict(os.environ, env, clear=True):
            for given in ("./shapescope", "shapescope", Path("./shapescope")):
                self.assertEqual(_binary.run(["info"], binary=given)[1], "")
            with mock.patch.dict(os.environ, {"SHAPESCOPE_BIN": "./shapescope"}):
                self.assertEqual(_binary.run(["info"])[1], "")

    def test_importing_the_package_imports_no_torch(self):
        code = ("import sys, shapescope; "
                "print(sorted(m for m in ('torch', 'transformers', 'pandas') if m in sys.modules))")
        out = subprocess.run([sys.executable, "-B", "-c", code], capture_output=True, text=True,
                             env=dict(os.environ, PYTHONPATH=str(support.ROOT / "python")))
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.strip(), "[]")


class Interrupt(unittest.TestCase):
    """A ^C while the tool runs reaches it once (it then saves and stops), and is raised when it ends.
    The tool here is a stand-in script that logs each SIGINT it gets and exits 130 as shapescope does."""

    def test_one_sigint_is_forwarded(self):
        with tempfile.TemporaryDirectory(prefix="shapescope-interrupt-") as folder:
            log, script = Path(folder) / "log", Path(folder) / "tool"
            script.write_text(f"#!/bin/sh\ntrap 'echo int >> {log}; exit 130' INT\necho started > {log}\n"
                              "while :; do sleep 0.05; done\n")
            script.chmod(0o755)

            def interrupt_when_started():
                while not log.exists():
                    time.sleep(0.01)
                os.kill(os.getpid(), signal.SIGINT)  # as a terminal's ^C or a notebook's interrupt

            threading.Thread(target=interrupt_when_started).start()
            with self.assertRaises(KeyboardInterrupt):
                _binary.run(["sweep"], binary=script)
            self.assertEqual(log.read_text().split(), ["started", "int"])


class Options(unittest.TestCase):
    def test_keywords_become_options(self):
        self.assertEqual(_binary.options(lt_algos=8, train=True, hot=False, db=None, backend=["cublas", "cublaslt"]),
                         ["--lt-algos", "8", "--train", "--backend", "cublas,cublaslt"])

    def test_ranges_are_written_as_the_tool_reads_them(self):
        self.assertEqual(_binary.option_value(range(1, 4097)), "1..4096")
        self.assertEqual(_binary.option_value(range(1, 4097, 8)), "1..4089:8")
        self.assertEqual(_binary.option_value([range(1, 65), 128, range(1000, 1101)]), "1..64,128,1000..1100")
        self.assertEqual(_binary.option_value(Path("a/b.db")), "a/b.db")

    def test_values_no_command_line_can_hold_are_refused_as_the_tool_refuses(self):
        for bad, says in ((range(5, 5), "--n: range(5, 5) is empty"),
                          (range(5, 1), "--n: range(5, 1) is empty"),
                          (range(10, 1, -1), "--n: range(10, 1, -1) counts down; the tool's ranges count up"),
                          ([8, range(5, 1)], "--n: range(5, 1) is empty")):
            with self.assertRaises(ShapescopeError) as caught:
                _binary.options(n=bad)
            self.assertEqual(caught.exception.exit_code, 2)
            self.assertEqual(caught.exception.message, "shapescope: " + says)
        with self.assertRaises(ShapescopeError) as caught:
            _binary.options(repeated=("db",), db=["a.db", "b\0.db"])
        self.assertEqual((caught.exception.exit_code, caught.exception.message),
                         (2, "shapescope: --db: 'b\\x00.db' holds a NUL character, which no command-line argument can"))
        with self.assertRaises(ShapescopeError) as caught:
            shapescope.explain("17\0", db=support.SWEEP)
        self.assertEqual(caught.exception.exit_code, 2)
        with self.assertRaises(TypeError):
            _binary.options(n=[1, True])

    def test_a_shape_is_whole_numbers(self):
        for bad in ((1793.9, 1793, 1793), (1793, True, 1793), 1793.0, None):
            with self.assertRaises(TypeError):
                shapescope.explain(bad, db=support.SWEEP)
        self.assertIn("1793x1793x1793", shapescope.explain((1793, 1793, 1793), db=support.SWEEP).command)

    def test_several_stores_repeat_the_option(self):
        self.assertEqual(_binary.options(repeated=("db",), db=["a.db", "b.db"]), ["--db", "a.db", "--db", "b.db"])

    def test_the_output_options_are_the_functions_own(self):
        for call in (lambda: shapescope.export(db=support.SWEEP, format="csv"),
                     lambda: shapescope.explain(1793, db=support.SWEEP, json=False),
                     lambda: shapescope.sweep(n=4096, out="x.json")):
            with self.assertRaises(TypeError):
                call()


class Refusals(support.WithStoreCopies):
    """Bad input: the tool's one line and exit code, and no file touched."""

    def assert_refused(self, call, code, message):
        stores = list(support.STORES) + [self.stores[s] for s in support.STORES]
        before = support.digests(stores)
        with self.assertRaises(ShapescopeError) as caught:
            call()
        e = caught.exception
        self.assertEqual(e.exit_code, code, e.stderr)
        self.assertEqual(e.message, message)
        self.assertEqual(str(e), f"{message} (exit {code})")
        self.assertEqual(e.command[0], support.BIN)
        self.assertIn(message, e.stderr)
        self.assertEqual(support.digests(stores), before)
        return e

    def test_a_bad_shape(self):
        self.assert_refused(lambda: shapescope.explain("abc", db=self.stores[support.SWEEP]), 2,
                            "shapescope: SHAPE: 'abc' is not N or MxNxK with positive sizes (e.g. 1793, 4096x1x4096)")

    def test_a_reversed_range(self):
        self.assert_refused(lambda: shapescope.export(db=support.SWEEP, n="5..1"), 2,
                            "shapescope: --n: '5..1' is a reversed range (5 > 1); write '1..5'")

    def test_an_unknown_option(self):
        e = self.assert_refused(
            lambda: shapescope.explain(1793, db=self.stores[support.SWEEP], bogus=1), 2,
            "shapescope: '--bogus' is not an option of explain (see shapescope explain --help)")
        self.assertIn("--bogus", e.command)

    def test_a_missing_trace(self):
        missing = Path(tempfile.gettempdir()) / "shapescope-no-such-trace.json"
        self.assert_refused(lambda: shapescope.profile(trace=missing, db=self.stores[support.PAD]), 2,
                            f"shapescope: --trace: '{missing}' cannot be read (No such file or directory)")

    def test_a_gpu_is_a_model_and_a_name_goes_to_gpu_name(self):
        self.assert_refused(lambda: shapescope.export(db=support.SWEEP, gpu="NVIDIA H200"), 2,
                            "shapescope: --gpu: 'NVIDIA H200' is not a known GPU profile (a100, a10, l4, h100-sxm, "
                            "h100-pcie, h200, b200); a GPU's name as the store records it: --gpu-name 'NVIDIA H200'")

    @support.reads_without_gpu
    def test_no_gpu_and_no_store(self):
        with tempfile.TemporaryDirectory(prefix="shapescope-none-") as folder:
            absent = Path(folder) / "absent.db"
            self.assert_refused(lambda: shapescope.explain(1793, db=absent), 3,
                                f"shapescope: explain: no GPU here and no store '{absent}'; measure it on a GPU "
                                "(shapescope explain 1793), or pass --gpu KEY --tile BMxBN for a model prediction")
            self.assertEqual(os.listdir(folder), [])

    @support.reads_without_gpu
    def test_a_store_that_holds_none_of_the_gemms(self):
        pad = self.stores[support.PAD]
        self.assert_refused(lambda: shapescope.profile(gemms=support.JAX_GEMMS, db=pad), 3,
                            f"shapescope: profile: no GPU here, and the store '{pad}' holds none of the 3 GEMMs "
                            f"of --gemms: '{support.JAX_GEMMS}'; measure them on a GPU with the same command")


if __name__ == "__main__":
    unittest.main()
