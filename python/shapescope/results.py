"""The results of shapescope's commands as dataclasses: one field per key of the command's JSON.

The fields are not written here: each class names a record of _fields.RECORDS, which the build
generates from the tables the CLI checks its JSON against (src/report/json_records.cpp), and
`_from_table` makes the class a dataclass of those fields; what a class adds (a docstring, methods,
to_pandas) is written below. A key that is a Python keyword is spelled with a trailing "_"
(`PadGemm.pass_` is "pass"), and a result's "text" is `cli_text` (`text()` is a method).

`explain` gives ExplainResult (or GpuComparison with several stores), `sweep` SweepResult (or
SweepPlan for a dry run), `profile` ProfileResult, `pad` PadResult (a model's config) or
PadSizesResult (a trace's or a GEMM list's sizes), `export` ExportResult. Each has `.to_pandas()`
(where pandas is installed), a `repr` that is the CLI's text (what it prints with --wide) and
`_repr_html_` for notebooks; `command` holds the arguments that ran and `stderr` what the tool
wrote there.
"""
import dataclasses
import keyword
from typing import List, Optional  # noqa: F401  (the fields' annotations name them)

from . import _binary, _html
from ._fields import RECORDS
from ._record import Record, json_field


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError("to_pandas() needs pandas, which is not installed here (Debian/Ubuntu: "
                          "apt install python3-pandas); the records themselves need nothing") from None
    return pandas


class _Result:
    """What every command's result has beside its JSON fields."""
    command: List[str]
    stderr: str

    def _ran(self, command, stderr):
        self.command = list(command)
        self.stderr = stderr
        return self

    def __repr__(self):
        return self.text().rstrip("\n")

    def _repr_html_(self):
        return _html.page(self)

    def text(self):
        """The CLI's text for this result, as the command prints it with --wide (every column, every
        name whole): the "text" its JSON carries."""
        if self.cli_text is None:
            raise ValueError(f"this {type(self).__name__} carries no text (its JSON has no \"text\": a binary "
                             "older than this package)")
        return self.cli_text

    def figure(self):
        """The SVG the CLI's `plot` draws for these points (sweep, export: flops; explain: the
        target's tile grid), None where there is none; raises ShapescopeError where plot refuses
        (no gnuplot: exit 7)."""
        return _binary.figure_of(self)


def _from_table(cls=None, **renamed):
    """`cls` as a dataclass with one field per key of its record in RECORDS (its class name), in the
    JSON's order, each Optional and None until read: a key that is a Python keyword gets a trailing
    "_", and `renamed` names others ({"text": "cli_text"})."""
    def make(cls):
        annotations = {}
        for key, kind in RECORDS[cls.__name__]:
            name = renamed.get(key, key + "_" if keyword.iskeyword(key) else key)
            annotations[name] = f"Optional[{kind}]"
            setattr(cls, name, json_field(key) if name != key else None)
        cls.__annotations__ = annotations
        return dataclasses.dataclass(repr=not issubclass(cls, _Result))(cls)
    return make(cls) if cls is not None else make


def _result(cls):
    """A command's result: its record's fields, its "text" as cli_text."""
    return _from_table(cls, text="cli_text")


# --- a stored or measured point: sweep, export, and inside explain's and compare's results ---

@_from_table
class Kernel(Record):
    """One kernel a call launched, with its launch configuration."""


@_from_table
class Point(Record):
    """A measured point with its annotations: the fields of `export --format csv`'s columns
    (docs/method.md says what each means); in a model prediction only the annotations are set.
    `recipe` is an fp8 point's recipe ("tensor", "block", ...), "" for other dtypes; `cast` a cast
    point's operand ("a", "b"), "" for a GEMM; the lt_ fields are cuBLASLt's algorithm and its
    configuration (None for other backends)."""


def _point_row(point):
    row = point.to_dict()
    row["kernels"] = ";".join(k.name or "" for k in point.kernels or [])
    return row


@dataclasses.dataclass(repr=False)
class PointsResult(_Result, Record):
    """Points, as `sweep --format json` and `export --format json` print them (a JSON array). Its
    text is the CLI's table of them: `export --format table --wide` of the same selection, run when
    first shown (an array has no room for a "text" member)."""
    points: Optional[List[Point]] = None

    @classmethod
    def from_json(cls, data):
        if not isinstance(data, list):
            raise TypeError(f"{cls.__name__}: expected a JSON array of points, got {type(data).__name__}")
        return cls(points=[Point.from_json(p) for p in data])

    def to_dict(self):
        return [p.to_dict() for p in self.points or []]

    def to_pandas(self):
        """One row per point, a column per field; `kernels` holds the launched kernels' names, ';' apart."""
        return _pandas().DataFrame([_point_row(p) for p in self.points or []])

    def text(self):
        """The CLI's table of these points with every column whole (export --format table --wide of the
        selection that gave them); raises ShapescopeError where export refuses."""
        if getattr(self, "_text", None) is None:
            table = getattr(self, "_table", None)
            if table is None:
                raise ValueError(f"this {type(self).__name__} was not made by a command: no table to ask for")
            binary, args = table
            self._text = _binary.run(args, binary)[1] if self.points else ""
        return self._text

    def __repr__(self):
        try:
            return super().__repr__()
        except _binary.ShapescopeError as e:
            return f"<{type(self).__name__} of {len(self)} points; no table: {e.message}>"

    def __len__(self):
        return len(self.points or [])

    def __iter__(self):
        return iter(self.points or [])

    def __getitem__(self, i):
        return self.points[i]


@dataclasses.dataclass(repr=False)
class SweepResult(PointsResult):
    """The points a sweep measured (or found in its store). Its table is export's of the sweep's
    selection in the store (its sizes, dtype, layout, backends, clocks), the points plot draws for
    it: the sweep's points, and any other point of that selection the store holds."""


@dataclasses.dataclass(repr=False)
class ExportResult(PointsResult):
    """The stored points export selected."""


@dataclasses.dataclass(repr=False)
class SweepPlan(_Result):
    """A dry run's plan. The tool prints plans as text only (`--format` is for measured results):
    `summary` is what it says on stderr (points, GPU memory needed, estimated time), `plan` the
    table of problems it prints on stdout; repr shows both, as a terminal does."""
    summary: str = ""
    plan: str = ""

    def text(self):
        return self.summary + self.plan

    def to_pandas(self):
        raise TypeError("a dry run's plan is text; run the sweep for its points")


# --- explain ---

@_from_table
class Verdict(Record):
    """Fast or slow against what: the ratios of time, work and throughput to the neighbour it is
    compared with, the gap and the part of it no effect explains."""


@_from_table
class Effect(Record):
    """One cause of the gap, with its cost and the points (indices) that show it."""


@_from_table
class PairedRatio(Record):
    """A point measured again in the same passes as the target: its time over the target's."""


@_from_table
class NumericalError(Record):
    """A precision control's output against an fp64 reference of the same random inputs: `relative`
    normwise, `data` "gaussian" or "outliers" (a few channels of A 100x the rest), `non_finite` the
    elements that overflowed, `measured_at` the shape it was measured at; `recipe` fp8's."""


@_from_table
class ExplainPoint(Record):
    """One point of an explanation (target, neighbour, control, precision, cast): `point` its fields,
    `error`/`error_outliers` a precision control's error against fp64, `per_call` whether a cast is
    paid at every call (False: once per step, a weight's), `paired` its paired ratio."""

    @property
    def time_us(self):
        """The time explain compares: the paired run's where there is one, else the point's median."""
        if self.paired is not None and self.paired.time_us is not None:
            return self.paired.time_us
        return self.point.median_us if self.point is not None else None


@_from_table
class Fix(Record):
    """A fix and what it costs; fp8: `casts_us` the casts every call pays (in time_us), `per_step_us`
    a weight's cast, once per step (not in time_us)."""


@_from_table
class Fp8Cause(Record):
    """An fp8 target's shape against its recipe's 128 blocks: "small M", "partial block" or "scale
    layout padding", and the point (`evidence`) that shows it."""


@_from_table
class Fp8Explain(Record):
    """An fp8 target's causes, and how many precision fixes --max-error left out."""


@_from_table
class PairedRun(Record):
    """How the paired passes ran: passes, seconds, the SM clock and power they saw."""


@_from_table
class NotMeasured(Record):
    """A point of an explanation with no measurement: what, and why."""


@_from_table
class Prediction(Record):
    """The performance model a result's times were predicted by (`predict=True`, or explain with
    nothing stored for a named GPU): its GPU, file, what it was fitted on, and why it predicted."""


@_from_table
class PredictedTime(Record):
    """One predicted time with its TFLOP/s, its class (`class_`: dtype, layout, row alignment) and
    that class's held-out error (median, p95), the kernel the model assumed (tile, split-K slices,
    slots, wave rounds), and `outside`: where the problem lies outside the measured range (empty
    inside; the stated error does not cover it there)."""


@_result
class ExplainResult(_Result, Record):
    """`explain SHAPE --json`: the verdict, the effects that add up to the gap, every point (target,
    neighbours, controls) and the fixes."""

    @property
    def target(self):
        return self.points[0] if self.points else None

    def to_pandas(self):
        """One row per point: its role, label and why, the paired ratio where measured, then the
        point's fields."""
        rows = []
        for p in self.points or []:
            row = {"index": p.index, "role": p.role, "label": p.label, "why": p.why, "size": p.size, "of": p.of,
                   "supports": "; ".join(p.supports or []), "time_us": p.time_us}
            for key in ("ratio", "low", "high", "pairs", "verdict"):
                row["paired_" + key] = getattr(p.paired, key) if p.paired is not None else None
            if p.point is not None:
                row.update(_point_row(p.point))
            rows.append(row)
        return _pandas().DataFrame(rows)


@_from_table
class GpuRow(Record):
    """One GPU's row of a comparison, with its point."""


@_result
class GpuComparison(_Result, Record):
    """`explain SHAPE --db a.db --db b.db --json`: the shape's newest point on each GPU of the stores."""

    def to_pandas(self):
        """One row per GPU: the comparison's columns, then the point's fields prefixed `point_`."""
        rows = []
        for g in self.gpus or []:
            row = g.to_dict()
            del row["point"]
            if g.point is not None:
                row.update({"point_" + k: v for k, v in _point_row(g.point).items()})
            rows.append(row)
        return _pandas().DataFrame(rows)


# --- profile ---

@_from_table
class GemmProblem(Record):
    """One problem of a GEMM (a grouped call has one per group)."""


@_from_table
class ProfileGemm(Record):
    """One distinct GEMM of the step (a grouped call: one problem per group); predicted (`predict=True`):
    median_us is the model's time, error_median/error_p95 its class's held-out error, `prediction` the
    rest, `not_predicted` why it has none."""


@_from_table
class ProfileTotals(Record):
    """The step's totals: calls, measured time, and against the trace's own kernels
    (`trace_all_kernels_us` of every op, `trace_other_kernels_us` of the ops that are not GEMMs);
    predicted: measured_us is the predicted total, error_median/error_p95 its expected error (the GEMMs'
    errors weighted by their time), outside_range_* what lies outside the data the model was fitted on."""


@_from_table
class UnmappedOp(Record):
    """An op of the trace that maps to no GEMM, and why."""


@_from_table
class PairedRatioRecord(Record):
    """A paired ratio: its median, 95 % interval and number of pairs."""


@_from_table
class WhatIf(Record):
    """One measured change to a GEMM of the step (explain's fix, or a grouped call as a loop), priced
    with what it adds (a copy, casts), and what it saves per step; saving_low_us/saving_high_us: the
    paired 95 % interval (None unpaired); ratio: the changed step's GEMM time over the step's. Predicted
    (`predicted`): both times the performance model's, `error` the error its saving had to clear."""


@_from_table
class NotPredicted(Record):
    """A kind of what-if the performance model cannot price (`predict=True`): what, why, and the
    GEMMs (their ranks) it would change; none: every GEMM."""


@_from_table
class ChangedStep(Record):
    """Several what-ifs applied at once (a list's, or --what-if N's), measured against the step as a
    step: replayed at the step's clock, or its GEMMs paired; `predicted`: the model's sum instead."""


@_from_table
class WhatIfList(Record):
    """One list of what-ifs (those that keep the dtype, or those that change it), and all of them at
    once measured as a step."""


@_from_table
class WhatIfs(Record):
    """What would make the step faster: both lists' what-ifs ranked (each keeps its number from run to run
    on the same trace and store; predicted ones are numbered by the model's own candidates), each list,
    the changed steps measured, the step's GEMM time, and the lines about the measurement; predicted,
    `not_predicted`: the kinds of change the model cannot price."""


@_from_table
class Fp8Casts(Record):
    """The casts of a step's fp8 GEMMs (amax, scale, cast of both operands of every call)."""


@_from_table
class TraceCasts(Record):
    """A traced step's fp8 casts as it ran them (`found_by`: range, kernel names or none), GEMMs + casts
    against the trace's, and `fused_saving_us`: the what-if of shapescope's cast kernels in their place."""


@_result
class ProfileResult(_Result, Record):
    """`profile --json`: every distinct GEMM of one step, ranked by its time per step, with the
    totals against the trace's own kernel time; `measured_on` is the GPU of the times (measured now,
    or the store's, or the one predicted for), `what_ifs` measured on a GPU or predicted (`predict=True`,
    with `prediction` the model), `fp8_casts` a step's fp8 casts per step as
    shapescope measures them, `trace_casts` a trace's casts as the step ran them."""

    def to_pandas(self):
        """One row per GEMM, ranked; a grouped call's problems as `groups` and the first problem's
        m, n, k, batch and layout; the trace's kernel names ';' apart."""
        rows = []
        for g in self.gemms or []:
            row = g.to_dict()
            problems = g.problems or []
            del row["problems"]
            first = problems[0] if problems else GemmProblem()
            row.update({"m": first.m, "n": first.n, "k": first.k, "batch": first.batch, "layout": first.layout,
                        "groups": len(problems)})
            row["trace_kernel_names"] = ";".join(g.trace_kernel_names or [])
            rows.append(row)
        return _pandas().DataFrame(rows)


# --- pad ---

@_from_table
class PadModel(Record):
    """The model pad read: its config's dimensions."""


@_from_table
class PadPairedRun(Record):
    """One paired run of pad: the step and its candidates measured again together (one dtype)."""


@_from_table
class PadNumbers(Record):
    """Where pad's times come from: the GPU, how many GEMMs were measured now and reused."""


@_from_table
class PadGemm(Record):
    """One GEMM of a step (`pass_` is the JSON's "pass")."""


@_from_table
class Saving(Record):
    """A measured candidate's GEMM time per step before and after, and whether its saving counts
    (above 2 % and the measured noise); None in a dry run. Paired: the saving's 95 % interval
    (saving_low_pct, saving_high_pct), and `cannot_tell` where it straddles 2 %."""


@_from_table
class PadCandidate(Saving):
    """A size a model dimension could take instead, with what it adds and, measured, what it saves."""


@_from_table
class Recommendation(Record):
    """Pad or leave, the value, and the sentence."""


@_from_table
class PadDimension(Record):
    """A dimension a model author chooses, its candidates and the recommendation."""


@_from_table
class PadStep(Record):
    """One step (tokens): its GEMMs and its dimensions."""


def _candidate_rows(owners):
    rows = []
    for owner_fields, owner in owners:
        best = owner.recommendation
        for c in owner.candidates or []:
            row = dict(owner_fields)
            row.update(c.to_dict())
            row["recommended"] = best is not None and best.action == "pad" and best.value == c.value
            rows.append(row)
    return rows


@_result
class PadResult(_Result, Record):
    """`pad --model/--config --json`: per step (tokens), the GEMMs and, per dimension a model author
    chooses, the candidates and the recommendation."""

    def recommendations(self):
        """{(tokens, dimension name): Recommendation} of every step."""
        return {(s.tokens, d.name): d.recommendation for s in self.steps or [] for d in s.dimensions or []}

    def to_pandas(self, table="gemms"):
        """table="gemms": a row per GEMM of each step (with its `tokens`); "candidates": a row per
        candidate of each dimension, with `recommended`."""
        if table == "gemms":
            rows = []
            for s in self.steps or []:
                for g in s.gemms or []:
                    rows.append({"tokens": s.tokens, **g.to_dict()})
            return _pandas().DataFrame(rows)
        if table == "candidates":
            owners = [({"tokens": s.tokens, "dimension": d.name, "now": d.value}, d)
                      for s in self.steps or [] for d in s.dimensions or []]
            return _pandas().DataFrame(_candidate_rows(owners))
        raise ValueError(f"table: '{table}' is not gemms or candidates")


@_from_table
class PadSizeCandidate(Saving):
    """A size a trace's or GEMM list's M, N or K could take instead."""


@_from_table
class PadSize(Record):
    """One distinct size of the GEMMs, where it is used, its candidates and the recommendation."""


@_result
class PadSizesResult(_Result, Record):
    """`pad --trace/--gemms --json`: every distinct M, N and K of the GEMMs as a size to pad."""

    def recommendations(self):
        """{size: Recommendation}."""
        return {s.value: s.recommendation for s in self.sizes or []}

    def to_pandas(self):
        """A row per candidate of each size, with `recommended`."""
        owners = [({"size": s.value, "uses": s.uses}, s) for s in self.sizes or []]
        return _pandas().DataFrame(_candidate_rows(owners))
