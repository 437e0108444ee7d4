#!/usr/bin/env python3
"""How long `pad --gemms LIST --dry-run` and `profile --gemms LIST` (no GPU: from a store) take as a
GEMM list grows: N distinct sizes for pad, N rows (all distinct, or one GEMM repeated) for profile.
Exit 3 is profile's "the store holds none of them", after reading and matching the whole list.
No GPU needed; each command runs once, timed as wall and user CPU seconds (a shared machine's wall
time includes waiting for a core: the user time is the work). Prints a Markdown table last.

    python3 bench/inputs/list_scaling.py build-cpu/shapescope > out/list-scaling.md
"""
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
STORE = ROOT / "tests" / "data" / "h200-2026-11-21-final" / "pad.db"
SQUARES = ROOT / "tests" / "data" / "h200-2026-11-21" / "sweep_bf16_nn_1-4096.db"  # n = 1..4096, cuBLAS
HEADER = "m,n,k,layout,dtype,batch,count\n"


def distinct_sizes(path, sizes):
    """`sizes` distinct M values (101, 102, ...) against N = K = 4096: sizes + 1 knobs for pad."""
    with open(path, "w") as f:
        f.write(HEADER)
        for i in range(sizes):
            f.write(f"{101 + i},4096,4096,nt,bf16,1,1\n")


def rows(path, count, distinct, squares=False):
    """`count` rows: random shapes (nearly all distinct), one GEMM repeated, or (squares) random square
    nn GEMMs of 1..4096, every one of which the committed H200 sweep holds."""
    rng = random.Random(1)
    with open(path, "w") as f:
        f.write(HEADER)
        for _ in range(count):
            if squares:
                n = rng.randint(1, 4096)
                f.write(f"{n},{n},{n},nn,bf16,1,1\n")
            elif distinct:
                f.write(f"{rng.randint(1, 8192)},{rng.choice([1024, 2048, 3072, 4096])},{rng.randint(1, 8192)},nt,bf16,1,1\n")
            else:
                f.write("4096,4096,4096,nt,bf16,1,1\n")


def timed(args):
    """(wall s, user s, exit code) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    code = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime, code


def main():
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build-cpu/shapescope")
    results = []
    with tempfile.TemporaryDirectory(prefix="shapescope-lists-") as folder:
        for sizes in (1000, 2000, 4000):
            path = Path(folder, f"sizes-{sizes}.csv")
            distinct_sizes(path, sizes)
            wall, user, code = timed([binary, "pad", "--gemms", str(path), "--dry-run", "--db", str(Path(folder, "none.db"))])
            results.append((f"pad --gemms --dry-run", f"{sizes} distinct sizes", wall, user, code))
        for count, distinct in ((10_000, True), (100_000, True), (200_000, True), (200_000, False)):
            path = Path(folder, f"rows-{count}-{distinct}.csv")
            rows(path, count, distinct)
            wall, user, code = timed([binary, "profile", "--gemms", str(path), "--db", str(STORE)])
            what = f"{count} rows, " + ("nearly all distinct" if distinct else "one GEMM repeated")
            results.append(("profile --gemms (from a store)", what + ", none stored", wall, user, code))
        path = Path(folder, "squares.csv")
        rows(path, 200_000, True, squares=True)
        wall, user, code = timed([binary, "profile", "--gemms", str(path), "--db", str(SQUARES)])
        results.append(("profile --gemms (from a store)", "200000 rows of 4096 stored GEMMs, each explained",
                        wall, user, code))
    print("| command | list | wall [s] | user [s] | exit |")
    print("|---|---|---:|---:|---:|")
    for command, what, wall, user, code in results:
        print(f"| `{command}` | {what} | {wall:.2f} | {user:.2f} | {code} |")


if __name__ == "__main__":
    main()
