"""explain, sweep, profile, pad and export: the tool's commands with --format json, as result dataclasses.

Keyword arguments are the command's options (`lt_algos=8` is `--lt-algos 8`, True a flag, a list
comma-joined, a `range` written as the tool's range: range(1, 4097, 8) is 1..4096:8); the tool
checks them, and a bad one raises ShapescopeError with its one line and exit code 2. `binary`
chooses the binary (find_binary says how it is found otherwise).
"""
import numbers
import os

from . import _binary
from .results import (ExplainResult, ExportResult, GpuComparison, PadResult, PadSizesResult, ProfileResult,
                      SweepPlan, SweepResult)

# Options each function sets itself: the output must be the command's JSON on standard output.
_OWN = {"json", "format", "out", "wide"}
# The selection options `plot` shares with sweep, export and explain: a figure of the same points.
_PLOT_SELECTION = ("gpu", "gpu_name", "cublas", "dtype", "layout", "backend", "algo", "kernel", "m", "n", "k", "batch",
                   "ld_pad", "offset", "hot", "clocks")


def _check(function, opts):
    taken = sorted(_OWN & set(opts))
    if taken:
        raise TypeError(f"{function}() sets the output format itself; it takes no {', '.join(taken)}")


def _shape_text(shape):
    if isinstance(shape, (tuple, list)):
        if len(shape) != 3:
            raise ValueError(f"shape: {shape!r} is not (m, n, k)")
        # int(1793.9) would be 1793: a size that is not a whole number is the caller's mistake to see.
        for d in shape:
            if isinstance(d, bool) or not isinstance(d, numbers.Integral):
                raise TypeError(f"shape: {d!r} in {shape!r} is not an integer")
        return "x".join(str(int(d)) for d in shape)
    if isinstance(shape, bool) or not isinstance(shape, (numbers.Integral, str)):
        raise TypeError(f"shape: {shape!r} is not an integer, a 'MxNxK' string or (m, n, k)")
    return str(shape)


def _finish(result, command, stderr, plot=None, binary=None, table=None):
    result._ran(command, stderr)
    result._plot = (binary, plot) if plot else None
    if table:  # points: their text is export's table of the same selection (see PointsResult.text)
        result._table = (binary, ["export", "--format", "table", "--wide"] + table)
    return result


def _plot_selection(opts):
    return _binary.options(**{k: v for k, v in opts.items() if k in _PLOT_SELECTION})


def _db_args(db):
    return ["--db", os.fspath(db)] if db is not None else []


def explain(shape, *, db=None, binary=None, **options):
    """`shapescope explain SHAPE --format json`: why one shape is fast or slow, and what size to use.

    shape: 1793, "4096x1x4096" or (m, n, k). db: a store, or a list of stores (each one's GPUs side
    by side: a GpuComparison). Without a GPU the store is read; with `gpu="a100", tile="256x128"`
    the model predicts. Returns ExplainResult or GpuComparison."""
    _check("explain", options)
    args = ["explain", _shape_text(shape)] + _binary.options(repeated=("db",), db=db, **options) + ["--format", "json"]
    command, doc, stderr = _binary.run_json(args, binary)
    if isinstance(doc, dict) and "gpus" in doc:
        return _finish(GpuComparison.from_json(doc), command, stderr)
    plot = None
    if not isinstance(db, (list, tuple)):
        selection = {k: v for k, v in options.items() if k in ("dtype", "layout", "backend", "gpu", "tile", "batch",
                                                               "ld_pad", "offset", "clocks")}
        plot = ["plot", "tilegrid", _shape_text(shape)] + _db_args(db) + _binary.options(**selection)
    return _finish(ExplainResult.from_json(doc), command, stderr, plot, binary)


def sweep(*, m=None, n=None, k=None, db=None, dry_run=False, binary=None, **options):
    """`shapescope sweep --format json`: measure the ranges' product on a GPU into the store (points
    already stored are reused). Returns SweepResult; with dry_run=True, SweepPlan (the plan as the
    tool prints it: the points, memory and estimated time; no GPU needed)."""
    _check("sweep", options)
    args = ["sweep"] + _binary.options(m=m, n=n, k=k, db=db, **options)
    if dry_run:
        command, stdout, stderr = _binary.run(args + ["--dry-run"], binary)
        return _finish(SweepPlan(summary=stderr, plan=stdout), command, stderr)
    command, doc, stderr = _binary.run_json(args + ["--format", "json"], binary)
    selection = _db_args(db) + _plot_selection(dict(options, m=m, n=n, k=k))
    return _finish(SweepResult.from_json(doc), command, stderr, ["plot", "flops"] + selection, binary, selection)


def export(*, db=None, binary=None, **selection):
    """`shapescope export --format json`: a store's points with every annotation (no GPU needed).
    The selection options are plot's (n=range(1, 4097), backend="cublas", kernel="nvjet", ...)."""
    _check("export", selection)
    options = _binary.options(db=db, **selection)
    command, doc, stderr = _binary.run_json(["export", "--format", "json"] + options, binary)
    plot = ["plot", "flops"] + _db_args(db) + _plot_selection(selection)
    return _finish(ExportResult.from_json(doc), command, stderr, plot, binary, options)


def profile(*, trace=None, gemms=None, model=None, config=None, tokens=None, train=False, db=None, binary=None,
            **options):
    """`shapescope profile --format json`: every distinct GEMM of one step (a PyTorch trace, a GEMM list or
    a model's step), measured (with a GPU), read from the store, or predicted (`gpu="h100-sxm", predict=True`:
    the GPU's shipped performance model, no GPU needed), ranked by its time per step."""
    _check("profile", options)
    args = ["profile"] + _binary.options(trace=trace, gemms=gemms, model=model, config=config, tokens=tokens,
                                         train=train, db=db, **options) + ["--format", "json"]
    command, doc, stderr = _binary.run_json(args, binary)
    return _finish(ProfileResult.from_json(doc), command, stderr)


def pad(*, model=None, config=None, trace=None, gemms=None, tokens=None, train=False, db=None, dry_run=False,
        binary=None, **options):
    """`shapescope pad --format json`: pad-or-not for every dimension of a model's GEMMs (model/config),
    or for every size of a trace's or GEMM list's GEMMs. Returns PadResult or PadSizesResult."""
    _check("pad", options)
    args = ["pad"] + _binary.options(model=model, config=config, trace=trace, gemms=gemms, tokens=tokens, train=train,
                                     db=db, dry_run=dry_run, **options) + ["--format", "json"]
    command, doc, stderr = _binary.run_json(args, binary)
    cls = PadSizesResult if isinstance(doc, dict) and "sizes" in doc else PadResult
    return _finish(cls.from_json(doc), command, stderr)
