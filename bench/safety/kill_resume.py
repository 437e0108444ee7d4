#!/usr/bin/env python3
"""SIGKILL a sweep half way, run it again, and check that nothing was lost or measured twice.

    python3 bench/safety/kill_resume.py build/shapescope --n 1..4096 --after 5
"""
import argparse
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import os


def rows(db):
    con = sqlite3.connect(db)
    out = {r[0]: r[1:] for r in con.execute(
        "select id, m, n, k, backend, algo, measured_at, median_us from points")}
    con.close()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--n", default="1..4096")
    ap.add_argument("--after", type=float, default=5.0)
    args = ap.parse_args()
    db = os.path.join(tempfile.mkdtemp(), "kill.db")
    cmd = [args.binary, "sweep", "--n", args.n, "--db", db, "--format", "csv", "--out", os.devnull]
    proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
    time.sleep(args.after)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = rows(db)
    lo, hi = (int(x) for x in args.n.split(".."))
    total = hi - lo + 1
    print(f"killed after {args.after} s: {len(before)} of {total} points stored")
    start = time.time()
    subprocess.run(cmd, check=True, stderr=sys.stderr)
    after = rows(db)
    keys = [v[:5] for v in after.values()]
    con = sqlite3.connect(db)
    integrity = con.execute("pragma integrity_check").fetchone()[0]
    unannotated = con.execute("select count(*) from points where annotated = 0").fetchone()[0]
    con.close()
    kept = all(after.get(i) == v for i, v in before.items())
    ok = (len(after) == total and len(set(keys)) == len(keys) and kept and integrity == "ok"
          and 0 < len(before) < total and unannotated == 0)
    print(f"resumed in {time.time() - start:.1f} s: {len(after)} points, {len(set(keys))} distinct keys, "
          f"every point stored before the kill unchanged: {kept}, not annotated: {unannotated}, "
          f"integrity_check: {integrity} -> {'PASS' if ok else 'FAIL'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
