"""The Python dataclasses and the CLI's JSON are one schema: the committed _fields.py is the one this
build generates from the tables the CLI checks its JSON against, every class of results.py has the
fields of its record and no other, and the commands' JSON on the committed fixtures has a field for
every key while every field is a key some command writes (those only a measuring run writes named
below, and checked to be absent here)."""
import dataclasses
import json
import os
import unittest
from pathlib import Path

import support
from support import shapescope

from shapescope import _fields, _record, results

BUILD = os.environ.get("SHAPESCOPE_BUILD_DIR")

# Keys only a run that measures now writes (paired passes, paired what-ifs, precision and cast controls,
# fp8's causes and casts), per record: no committed fixture holds them, and a CPU build cannot make them.
# (A predicted profile writes its what-ifs, unpaired.)
MEASURED_ONLY = {
    "ExplainResult": {"paired"},
    "ExplainPoint": {"error", "error_outliers", "per_call", "pairing", "paired"},
    "ProfileResult": {"fp8_casts"},
    "WhatIf": {"ratio"},
    "PadCandidate": {"saving_low_pct", "saving_high_pct", "pairs", "cannot_tell"},
    "PadSizeCandidate": {"saving_low_pct", "saving_high_pct", "pairs", "cannot_tell"},
}
MEASURED_ONLY_RECORDS = {"PairedRatio", "NumericalError", "PairedRun", "PairedRatioRecord", "Fp8Casts", "Fp8Cause",
                         "PadPairedRun"}
BASES = {"Saving"}  # no object of its own: its keys are those of the candidates that derive from it


def json_keys(cls):
    return [_record.key_of(f) for f in dataclasses.fields(cls) if f.name != "extra"]


def record_classes():
    """results.py's classes made from a record, by name."""
    return {name: cls for name, cls in vars(results).items()
            if isinstance(cls, type) and issubclass(cls, _record.Record) and name in _fields.RECORDS}


class Tables(unittest.TestCase):
    @unittest.skipIf(BUILD is None, "run by CTest, which names the build folder")
    def test_the_committed_fields_are_the_builds(self):
        built = Path(BUILD) / "generated" / "_fields.py"
        committed = Path(_fields.__file__)
        self.assertEqual(committed.read_text(), built.read_text(),
                         f"{committed} is not what the build generated from src/report/json_records.cpp: "
                         f"cp {built} {committed}")

    def test_every_record_is_a_class_with_its_fields(self):
        classes = record_classes()
        self.assertEqual(sorted(classes), sorted(_fields.RECORDS))
        for name, cls in classes.items():
            with self.subTest(record=name):
                self.assertEqual(sorted(json_keys(cls)), sorted(key for key, _ in _fields.RECORDS[name]))

    def test_every_record_class_is_made_from_the_table(self):
        """No dataclass of results.py declares JSON fields by hand (the points list is no record)."""
        for name, cls in vars(results).items():
            if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == results.__name__:
                with self.subTest(cls=name):
                    self.assertTrue(name in _fields.RECORDS or issubclass(cls, (results.PointsResult,
                                                                                results.SweepPlan)))


def walk(record, seen):
    """Adds, per record name, the keys its JSON objects had (everywhere inside `record`)."""
    seen.setdefault(type(record).__name__, set()).update(getattr(record, "_json_keys", []))
    for f in dataclasses.fields(record):
        value = getattr(record, f.name)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, _record.Record):
                walk(item, seen)


class Fixtures(support.WithStoreCopies):
    """The commands on the committed stores, traces and GEMM lists, and predictions."""

    def trace_with_an_unmapped_op(self):
        """GPT-2's trace with one aten::mm in double, which no GEMM backend takes (an unmapped op)."""
        trace = json.loads(support.GPT2_TRACE.read_text())
        mm = next(e for e in trace["traceEvents"] if e.get("name") == "aten::mm")
        mm["args"]["Input type"] = ["double", "double"]
        path = self.stores.path / "gpt2-double.json"
        path.write_text(json.dumps(trace))
        return path

    def results(self):
        s = self.stores
        yield from (shapescope.export(db=store) for store in support.STORES)
        for shape, store in ((1793, support.EXPLAIN_H200), (3080, support.EXPLAIN_H100), (2616, support.EXPLAIN_H100),
                             (4096, support.SWEEP), (100, support.SWEEP)):
            yield shapescope.explain(shape, db=s[store])
        yield shapescope.explain(1793, gpu="a100", tile="256x128")
        yield shapescope.explain("8192x1x4096", dtype="fp8", layout="nt", backend="cublaslt", gpu="h100-sxm",
                                 tile="128x128")
        yield shapescope.explain(1793, db=[support.EXPLAIN_H100, support.SWEEP, support.LADDER])
        yield shapescope.profile(trace=support.GPT2_TRACE, db=s[support.PAD])
        yield shapescope.profile(model="gpt2", tokens=12288, train=True, db=s[support.PAD])
        yield shapescope.profile(trace=self.trace_with_an_unmapped_op(), db=s[support.PAD])
        yield shapescope.pad(model="gpt2", tokens=12288, train=True, db=s[support.PAD])
        yield shapescope.pad(model="gpt2", tokens=[4096, 12288], train=True, dry_run=True)
        yield shapescope.pad(trace=support.GPT2_TRACE, db=s[support.PAD])
        yield shapescope.pad(trace=support.GPT2_TRACE, dry_run=True)
        # Predicted by the shipped performance models: nothing stored, no GPU needed.
        none = self.stores.path / "none.db"
        yield shapescope.explain(1793, gpu="h100-sxm", predict=True, db=none)
        yield shapescope.explain("4096x4096x20000", gpu="h200", db=none)
        yield shapescope.pad(model="gpt2", tokens=4096, train=True, gpu="h100-sxm", predict=True)
        yield shapescope.pad(trace=support.GPT2_TRACE, gpu="h100-sxm", predict=True)
        yield shapescope.profile(trace=support.GPT2_TRACE, gpu="h100-sxm", predict=True)
        yield shapescope.profile(model="gpt2", tokens=12288, train=True, gpu="h100-sxm", predict=True)

    @support.reads_without_gpu
    def test_every_key_is_a_field_and_every_field_a_key(self):
        seen = {}
        for result in self.results():
            with self.subTest(command=" ".join(result.command[1:])):
                self.assertEqual(_record.unknown_keys(result) if not isinstance(result, results.PointsResult)
                                 else [k for p in result for k in _record.unknown_keys(p)], [])
            for record in result.points if isinstance(result, results.PointsResult) else [result]:
                walk(record, seen)
        for name, fields in _fields.RECORDS.items():
            if name in BASES:
                continue
            with self.subTest(record=name):
                keys = {key for key, _ in fields}
                measured = keys if name in MEASURED_ONLY_RECORDS else MEASURED_ONLY.get(name, set())
                self.assertEqual(keys - seen.get(name, set()) - measured, set(),
                                 f"{name}: fields no command wrote on the fixtures")
                self.assertEqual(seen.get(name, set()) & measured, set(),
                                 f"{name}: written here after all: not only by a measuring run")


if __name__ == "__main__":
    unittest.main()
