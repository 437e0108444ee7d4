"""What the Python tests share: the binary and the committed data they run against, and checks.

CTest (label cpu) runs each test_*.py with PYTHONPATH=python, SHAPESCOPE_BIN the built binary and
SHAPESCOPE_TEST_DATA tests/data; by hand, from the repository root:

    PYTHONPATH=python SHAPESCOPE_BIN=build-cpu/shapescope python3 -m unittest discover -s tests/python
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "python"))

import shapescope  # noqa: E402  (after the path above)

DATA = Path(os.environ.get("SHAPESCOPE_TEST_DATA", ROOT / "tests" / "data"))
BIN = shapescope.find_binary()

SWEEP = DATA / "h200-2026-11-21" / "sweep_bf16_nn_1-4096.db"    # H200, cuBLAS, n = 1..4096
LADDER = DATA / "h200-2026-11-21-ladder" / "ladder.db"           # H200, our kernels and cuBLAS
EXPLAIN_H200 = DATA / "h200-2026-11-21-final" / "explain.db"     # explain 1793's points
EXPLAIN_H100 = DATA / "h100-2026-11-25-explain" / "explain.db"   # explain's points with every control
PAD = DATA / "h200-2026-11-21-final" / "pad.db"                  # pad --model gpt2 --tokens 12288 --train
GPT2_TRACE = DATA / "traces" / "gpt2.json"                       # a GPT-2 training step, PyTorch profiler
JAX_GEMMS = DATA / "gemms" / "jax-step.json"

STORES = (SWEEP, LADDER, EXPLAIN_H200, EXPLAIN_H100, PAD)


def pandas_or_none():
    try:
        import pandas
        return pandas
    except ImportError:
        return None


def cli(args):
    """The binary's own run: (exit code, stdout, stderr)."""
    p = subprocess.run([BIN] + [str(a) for a in args], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr


def text_command(result):
    """The result's command as it prints text: without --json, --format table instead of json, and
    --wide (every column: what repr renders)."""
    args = list(result.command[1:])
    if "--json" in args:
        args.remove("--json")
    if "--format" in args:
        args[args.index("--format") + 1] = "table"
    return args + ["--wide"]


def digests(paths):
    """{path: sha256} of each path and of any -wal/-shm beside it (absent ones as None)."""
    out = {}
    for path in paths:
        for p in (Path(path), Path(f"{path}-wal"), Path(f"{path}-shm")):
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else None
    return out


def _gpu_present():
    """Whether the binary can measure here (`shapescope info` exits 0 only with a usable GPU)."""
    return cli(["info"])[0] == 0


GPU = _gpu_present()
# A test of reading a store through a command that measures where it can (explain, profile, pad):
# with a GPU it would measure instead, so it is skipped, as the C++ CLI tests skip theirs.
reads_without_gpu = unittest.skipIf(
    GPU, "a GPU is present: the command would measure instead of reading the store")


class StoreCopies:
    """Copies of the committed stores in a temporary folder: what a test hands to a command that
    could write (tests/data stays as committed even if a GPU appears). Remove with cleanup()."""

    def __init__(self):
        self._folder = tempfile.TemporaryDirectory(prefix="shapescope-stores-")
        for store in STORES:
            copy = Path(self._folder.name) / store.parent.name / store.name
            copy.parent.mkdir(exist_ok=True)
            shutil.copyfile(store, copy)
        self.path = Path(self._folder.name)

    def __getitem__(self, store):
        return self.path / store.parent.name / store.name

    def cleanup(self):
        self._folder.cleanup()


def load_script(path):
    """A script of the repository as a module (its main() does not run)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kernels_per_shape(events):
    """The trace's GEMM kernels per shape, counted from the kernel side (scripts/trim_trace.py):
    {(m, n, k, batch, groups): [kernels, time in us]}."""
    return load_script(ROOT / "scripts" / "trim_trace.py").gemm_kernels_per_shape(events)


def calls_per_shape(profile):
    """profile's calls per shape, keyed as kernels_per_shape keys them (bench/workloads/workload_check.py)."""
    shape_key = load_script(ROOT / "bench" / "workloads" / "workload_check.py").shape_key
    calls = {}
    for g in profile.gemms:
        key = shape_key(g.to_dict())
        calls[key] = calls.get(key, 0) + g.count
    return calls


class WithStoreCopies(unittest.TestCase):
    """A test class whose tests get `self.stores`, copies of the committed stores (StoreCopies)."""

    @classmethod
    def setUpClass(cls):
        cls.stores = StoreCopies()

    @classmethod
    def tearDownClass(cls):
        cls.stores.cleanup()
