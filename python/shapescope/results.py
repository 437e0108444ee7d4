"""The results of shapescope's commands as dataclasses: one field per key of the command's JSON.

`explain` gives ExplainResult (or GpuComparison with several stores), `sweep` SweepResult (or
SweepPlan for a dry run), `profile` ProfileResult, `pad` PadResult (a model's config) or
PadSizesResult (a trace's or a GEMM list's sizes), `export` ExportResult. Each has `.to_pandas()`
(where pandas is installed), a `repr` that is the CLI's text table and `_repr_html_` for notebooks;
`command` holds the arguments that ran and `stderr` what the tool wrote there.
"""
import dataclasses
from typing import List, Optional

from . import _binary, _text
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
        return _text.html_page(self)

    def text(self):
        """The CLI's text table for this result (see docs/python.md for what it shows): the CLI's own
        text where its JSON carries it, else rendered here from the result."""
        cli_text = getattr(self, "cli_text", None)
        return cli_text if cli_text is not None else _text.render(self)

    def figure(self):
        """The SVG the CLI's `plot` draws for these points (sweep, export: flops; explain: the
        target's tile grid), None where there is none; raises ShapescopeError where plot refuses
        (no gnuplot: exit 7)."""
        return _binary.figure_of(self)


# --- a stored or measured point: sweep, export, and inside explain's and compare's results ---

@dataclasses.dataclass
class Kernel(Record):
    """One kernel a call launched, with its launch configuration."""
    name: Optional[str] = None
    grid_x: Optional[int] = None
    grid_y: Optional[int] = None
    grid_z: Optional[int] = None
    block_x: Optional[int] = None
    block_y: Optional[int] = None
    block_z: Optional[int] = None
    cluster_x: Optional[int] = None
    cluster_y: Optional[int] = None
    cluster_z: Optional[int] = None
    registers: Optional[int] = None
    static_smem: Optional[int] = None
    dynamic_smem: Optional[int] = None
    duration_us: Optional[float] = None


@dataclasses.dataclass
class Point(Record):
    """A measured point with its annotations: the fields of `export --format csv`'s columns
    (docs/method.md says what each means); in a model prediction only the annotations are set."""
    id: Optional[int] = None
    backend: Optional[str] = None
    algo: Optional[str] = None
    dtype: Optional[str] = None
    layout: Optional[str] = None
    m: Optional[int] = None
    n: Optional[int] = None
    k: Optional[int] = None
    batch: Optional[int] = None
    lda: Optional[int] = None
    ldb: Optional[int] = None
    ldc: Optional[int] = None
    off_a: Optional[int] = None
    off_b: Optional[int] = None
    off_c: Optional[int] = None
    mode: Optional[str] = None
    clocks: Optional[str] = None
    recipe: Optional[str] = None            # fp8's recipe ("tensor", "block", ...); "" for other dtypes
    cast: Optional[str] = None              # a cast point's operand ("a", "b"); "" for a GEMM
    gpu_name: Optional[str] = None
    gpu_uuid: Optional[str] = None
    driver: Optional[str] = None
    cuda_runtime: Optional[str] = None
    cublas: Optional[str] = None
    cublaslt: Optional[str] = None
    median_us: Optional[float] = None
    min_us: Optional[float] = None
    max_us: Optional[float] = None
    q1_us: Optional[float] = None
    q3_us: Optional[float] = None
    samples: Optional[int] = None
    noise: Optional[float] = None
    noisy: Optional[bool] = None
    sm_clock_mhz: Optional[float] = None
    throttle_reasons: Optional[int] = None
    throttled: Optional[bool] = None
    stop: Optional[str] = None
    median_ci: Optional[float] = None
    sentinel_drift: Optional[float] = None
    reruns: Optional[int] = None
    drifted: Optional[bool] = None
    tflops: Optional[float] = None
    # cuBLASLt: the algorithm and its configuration (None for other backends)
    lt_algo_id: Optional[int] = None
    lt_tile_id: Optional[int] = None
    lt_tile: Optional[str] = None
    lt_stages_id: Optional[int] = None
    lt_stages: Optional[str] = None
    lt_splitk: Optional[int] = None
    lt_reduction_scheme: Optional[int] = None
    lt_reduction: Optional[str] = None
    lt_swizzle: Optional[int] = None
    lt_custom_option: Optional[int] = None
    lt_cluster_shape_id: Optional[int] = None
    lt_cluster: Optional[str] = None
    lt_inner_shape_id: Optional[int] = None
    lt_waves_count: Optional[float] = None
    lt_workspace_bytes: Optional[int] = None
    # the annotations: alignment, kernel, tile grid, slots, waves, roofline, regret
    measured_at: Optional[str] = None
    command: Optional[str] = None
    annotated: Optional[bool] = None
    align_m: Optional[int] = None
    align_n: Optional[int] = None
    align_k: Optional[int] = None
    lda_align_bytes: Optional[int] = None
    ldb_align_bytes: Optional[int] = None
    ldc_align_bytes: Optional[int] = None
    a_base_align_bytes: Optional[int] = None
    b_base_align_bytes: Optional[int] = None
    c_base_align_bytes: Optional[int] = None
    aligned_16b: Optional[int] = None
    kernel: Optional[str] = None
    kernel_family: Optional[str] = None
    kernel_says: Optional[str] = None
    tile_source: Optional[str] = None
    tile_m: Optional[int] = None
    tile_n: Optional[int] = None
    tile_k: Optional[int] = None
    stages: Optional[int] = None
    splits: Optional[int] = None
    split_source: Optional[str] = None
    tiles_m: Optional[int] = None
    tiles_n: Optional[int] = None
    tiles: Optional[int] = None
    tile_efficiency: Optional[float] = None
    launched_ctas: Optional[int] = None
    cluster_size: Optional[int] = None
    ctas_per_sm: Optional[int] = None
    occupancy_limiter: Optional[str] = None
    data_parallel_slots: Optional[int] = None
    persistent: Optional[int] = None
    slots: Optional[int] = None
    waves: Optional[float] = None
    wave_rounds: Optional[int] = None
    wave_efficiency: Optional[float] = None
    waves_over: Optional[str] = None
    flops: Optional[int] = None
    min_bytes: Optional[int] = None
    intensity: Optional[float] = None
    bound: Optional[str] = None
    peak_tflops: Optional[float] = None
    peak_source: Optional[str] = None
    bandwidth_gbs: Optional[float] = None
    bandwidth_source: Optional[str] = None
    attainable_tflops: Optional[float] = None
    pct_peak: Optional[float] = None
    pct_roof: Optional[float] = None
    regret: Optional[float] = None
    best_algo: Optional[str] = None
    kernels: Optional[List[Kernel]] = None


def _point_row(point):
    row = point.to_dict()
    row["kernels"] = ";".join(k.name or "" for k in point.kernels or [])
    return row


@dataclasses.dataclass(repr=False)
class PointsResult(_Result, Record):
    """Points, as `sweep --format json` and `export --format json` print them (a JSON array)."""
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

    def __len__(self):
        return len(self.points or [])

    def __iter__(self):
        return iter(self.points or [])

    def __getitem__(self, i):
        return self.points[i]


@dataclasses.dataclass(repr=False)
class SweepResult(PointsResult):
    """The points a sweep measured (or found in its store)."""


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

    def to_pandas(self):
        raise TypeError("a dry run's plan is text; run the sweep for its points")


# --- explain ---

@dataclasses.dataclass
class Verdict(Record):
    text: Optional[str] = None
    against: Optional[str] = None
    time_ratio: Optional[float] = None
    work_ratio: Optional[float] = None
    throughput_ratio: Optional[float] = None
    gap_us: Optional[float] = None
    unexplained_us: Optional[float] = None
    threshold: Optional[float] = None
    bound: Optional[str] = None
    roof_us: Optional[float] = None


@dataclasses.dataclass
class Effect(Record):
    effect: Optional[str] = None
    cost_us: Optional[float] = None
    measured: Optional[bool] = None
    evidence: Optional[List[int]] = None
    detail: Optional[str] = None


@dataclasses.dataclass
class PairedRatio(Record):
    """A point measured again in the same passes as the target: its time over the target's."""
    time_us: Optional[float] = None
    ratio: Optional[float] = None
    low: Optional[float] = None
    high: Optional[float] = None
    pairs: Optional[int] = None
    verdict: Optional[str] = None


@dataclasses.dataclass
class NumericalError(Record):
    """A precision control's output against an fp64 reference of the same random inputs."""
    dtype: Optional[str] = None
    recipe: Optional[str] = None            # fp8: its recipe ("block"); "" for other dtypes
    data: Optional[str] = None              # "gaussian" or "outliers" (a few channels of A 100x the rest)
    relative: Optional[float] = None        # normwise relative error
    max_abs: Optional[float] = None
    reference_max: Optional[float] = None   # the reference output's largest magnitude
    non_finite: Optional[int] = None        # elements that overflowed (inf or NaN)
    elements: Optional[int] = None
    measured_at: Optional[str] = None       # the shape the error was measured at


@dataclasses.dataclass
class ExplainPoint(Record):
    index: Optional[int] = None
    role: Optional[str] = None
    label: Optional[str] = None
    why: Optional[str] = None
    size: Optional[int] = None
    of: Optional[int] = None
    supports: Optional[List[str]] = None
    point: Optional[Point] = None
    error: Optional[NumericalError] = None  # a precision control's (or the target's) error against fp64
    error_outliers: Optional[NumericalError] = None  # the same on inputs with outlier channels
    per_call: Optional[bool] = None         # a cast: every call pays it (False: once per step, a weight's)
    paired: Optional[PairedRatio] = None

    @property
    def time_us(self):
        """The time explain compares: the paired run's where there is one, else the point's median."""
        if self.paired is not None and self.paired.time_us is not None:
            return self.paired.time_us
        return self.point.median_us if self.point is not None else None


@dataclasses.dataclass
class Fix(Record):
    text: Optional[str] = None
    point: Optional[str] = None
    copy: Optional[str] = None
    time_us: Optional[float] = None
    speedup: Optional[float] = None
    extra_flops: Optional[float] = None
    extra_bytes: Optional[float] = None
    casts_us: Optional[float] = None        # fp8: the casts every call pays (in time_us)
    per_step_us: Optional[float] = None     # fp8: a weight's cast, once per step (not in time_us)


@dataclasses.dataclass
class Fp8Cause(Record):
    """An fp8 target's shape against its recipe's 128 blocks."""
    cause: Optional[str] = None             # "small M", "partial block", "scale layout padding"
    dim: Optional[str] = None
    value: Optional[int] = None
    block_size: Optional[int] = None
    evidence: Optional[int] = None          # the point that shows it
    cost_us: Optional[float] = None
    text: Optional[str] = None


@dataclasses.dataclass
class Fp8Explain(Record):
    causes: Optional[List[Fp8Cause]] = None
    over_max_error: Optional[int] = None    # precision fixes left out by --max-error


@dataclasses.dataclass
class PairedRun(Record):
    """How the paired passes ran: passes, seconds, the SM clock and power they saw."""
    text: Optional[str] = None
    passes: Optional[int] = None
    seconds: Optional[float] = None
    clock_low_mhz: Optional[float] = None
    clock_median_mhz: Optional[float] = None
    clock_high_mhz: Optional[float] = None
    power_w: Optional[float] = None
    min_effect: Optional[float] = None


@dataclasses.dataclass
class NotMeasured(Record):
    """A point of an explanation with no measurement: what, and why."""
    what: Optional[str] = None
    why: Optional[str] = None


@dataclasses.dataclass(repr=False)
class ExplainResult(_Result, Record):
    """`explain SHAPE --json`: the verdict, the effects that add up to the gap, every point (target,
    neighbours, controls) and the fixes."""
    shape: Optional[str] = None
    mode: Optional[str] = None
    source: Optional[str] = None
    verdict: Optional[Verdict] = None
    effects: Optional[List[Effect]] = None
    points: Optional[List[ExplainPoint]] = None
    regret: Optional[float] = None
    fixed_kernel: Optional[str] = None
    fixed_kernel_loss: Optional[float] = None
    fixes: Optional[List[Fix]] = None
    fp8: Optional[Fp8Explain] = None
    not_measured: Optional[List[NotMeasured]] = None
    paired: Optional[PairedRun] = None
    wall_s: Optional[float] = None

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


@dataclasses.dataclass
class GpuRow(Record):
    gpu: Optional[str] = None
    store: Optional[str] = None
    time_us: Optional[float] = None
    tflops: Optional[float] = None
    kernel: Optional[str] = None
    tile: Optional[str] = None
    tiles: Optional[str] = None
    waves: Optional[float] = None
    sm_clock_mhz: Optional[float] = None
    point: Optional[Point] = None


@dataclasses.dataclass(repr=False)
class GpuComparison(_Result, Record):
    """`explain SHAPE --db a.db --db b.db --json`: the shape's newest point on each GPU of the stores."""
    shape: Optional[str] = None
    dtype: Optional[str] = None
    layout: Optional[str] = None
    backend: Optional[str] = None
    algo: Optional[str] = None
    gpus: Optional[List[GpuRow]] = None
    missing: Optional[List[str]] = None

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

@dataclasses.dataclass
class GemmProblem(Record):
    m: Optional[int] = None
    n: Optional[int] = None
    k: Optional[int] = None
    batch: Optional[int] = None
    layout: Optional[str] = None
    lda: Optional[int] = None
    ldb: Optional[int] = None
    ldc: Optional[int] = None


@dataclasses.dataclass
class ProfileGemm(Record):
    """One distinct GEMM of the step (a grouped call: one problem per group)."""
    shape: Optional[str] = None
    dtype: Optional[str] = None
    origin: Optional[str] = None
    problems: Optional[List[GemmProblem]] = None
    grouped: Optional[bool] = None
    group_rows_estimated: Optional[bool] = None
    usually_fused: Optional[bool] = None
    in_total: Optional[bool] = None
    backend: Optional[str] = None
    count: Optional[int] = None
    calls_per_step: Optional[float] = None
    median_us: Optional[float] = None
    noise: Optional[float] = None
    step_us: Optional[float] = None
    share: Optional[float] = None
    trace_kernels: Optional[int] = None
    trace_kernel_us: Optional[float] = None
    trace_step_us: Optional[float] = None
    trace_kernel_names: Optional[List[str]] = None
    kernel: Optional[str] = None
    grouped_call_us: Optional[float] = None
    per_group_loop_us: Optional[float] = None
    our_grouped_kernel_us: Optional[float] = None
    tiles: Optional[str] = None
    waves: Optional[str] = None
    verdict: Optional[str] = None
    fix: Optional[str] = None
    verdict_shape: Optional[str] = None
    no_verdict: Optional[str] = None


@dataclasses.dataclass
class ProfileTotals(Record):
    calls_per_step: Optional[float] = None
    measured_us: Optional[float] = None
    measured_gemms: Optional[int] = None
    missing_gemms: Optional[int] = None
    outside_gemms: Optional[int] = None
    trace_us: Optional[float] = None
    compared_gemms: Optional[int] = None
    compared_measured_us: Optional[float] = None
    compared_trace_us: Optional[float] = None
    ratio: Optional[float] = None
    unmapped_ops: Optional[int] = None
    unmapped_trace_us: Optional[float] = None
    trace_all_kernels_us: Optional[float] = None    # the trace's GPU kernels per step, of every op
    trace_other_kernels_us: Optional[float] = None  # of them, the kernels of ops that are not GEMMs


@dataclasses.dataclass
class UnmappedOp(Record):
    op: Optional[str] = None
    reason: Optional[str] = None
    count: Optional[int] = None
    kernel_us: Optional[float] = None


@dataclasses.dataclass
class PairedRatioRecord(Record):
    """A paired ratio: its median, 95 % interval and number of pairs."""
    median: Optional[float] = None
    low: Optional[float] = None
    high: Optional[float] = None
    pairs: Optional[int] = None


@dataclasses.dataclass
class WhatIf(Record):
    """One measured change to a GEMM of the step (explain's fix, or a grouped call as a loop), priced
    with what it adds (a copy, casts), and what it saves per step; saving_low_us/saving_high_us: the
    paired 95 % interval (None unpaired); ratio: the changed step's GEMM time over the step's."""
    number: Optional[int] = None
    kind: Optional[str] = None
    change: Optional[str] = None
    calls_per_step: Optional[float] = None
    now_us: Optional[float] = None
    after_us: Optional[float] = None
    saving_us: Optional[float] = None
    saving_low_us: Optional[float] = None
    saving_high_us: Optional[float] = None
    paired: Optional[bool] = None
    changes_dtype: Optional[bool] = None
    ratio: Optional[PairedRatioRecord] = None


@dataclasses.dataclass
class ChangedStep(Record):
    """Several what-ifs applied at once (a list's, or --what-if N's), measured against the step as a
    step: replayed at the step's clock, or its GEMMs paired."""
    name: Optional[str] = None
    what_ifs: Optional[int] = None
    replayed: Optional[bool] = None
    before_us: Optional[float] = None
    after_us: Optional[float] = None
    text: Optional[str] = None
    why_not: Optional[str] = None
    ratio: Optional[PairedRatioRecord] = None


@dataclasses.dataclass
class WhatIfList(Record):
    """One list of what-ifs (those that keep the dtype, or those that change it), and all of them at
    once measured as a step."""
    ranked: Optional[List[WhatIf]] = None
    all: Optional[ChangedStep] = None


@dataclasses.dataclass
class WhatIfs(Record):
    """What would make the step faster: both lists' what-ifs ranked and numbered together, each list,
    the changed steps measured, the step's GEMM time, and the lines about the measurement."""
    ranked: Optional[List[WhatIf]] = None
    same_dtype: Optional[WhatIfList] = None
    precision: Optional[WhatIfList] = None
    changed_steps: Optional[List[ChangedStep]] = None
    step_us: Optional[float] = None
    lines: Optional[List[str]] = None


@dataclasses.dataclass
class Fp8Casts(Record):
    """The casts of a step's fp8 GEMMs (amax, scale, cast of both operands of every call)."""
    us_per_step: Optional[float] = None
    casts: Optional[int] = None
    measured: Optional[int] = None
    text: Optional[str] = None


@dataclasses.dataclass(repr=False)
class ProfileResult(_Result, Record):
    """`profile --json`: every distinct GEMM of one step, ranked by its time per step, with the
    totals against the trace's own kernel time."""
    source: Optional[str] = None
    recorded_on: Optional[str] = None
    recorded_on_sms: Optional[int] = None
    measured_on: Optional[str] = None       # the GPU of the times: measured now, or the store's
    gpu_match: Optional[str] = None         # the trace's GPU against measured_on
    other_gpu: Optional[str] = None         # the line saying the trace ran on another GPU, if it did
    outside: Optional[str] = None           # the line saying what of the trace is in no total
    steps: Optional[int] = None
    mode: Optional[str] = None
    numbers: Optional[str] = None
    backend: Optional[str] = None
    samples: Optional[int] = None
    db: Optional[str] = None
    gemms: Optional[List[ProfileGemm]] = None
    totals: Optional[ProfileTotals] = None
    total_text: Optional[str] = None
    unmapped: Optional[List[UnmappedOp]] = None
    notes: Optional[List[str]] = None
    skipped: Optional[List[str]] = None
    fused_note: Optional[str] = None
    clocks_note: Optional[str] = None       # the clock the step's GEMMs were measured at, and how
    what_ifs: Optional[WhatIfs] = None      # measured on a GPU only
    fp8_casts: Optional[Fp8Casts] = None    # a step with fp8 GEMMs: their casts per step, beside the GEMM time
    cli_text: Optional[str] = json_field("text")  # the CLI's own text of this result (what text() returns)

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

@dataclasses.dataclass
class PadModel(Record):
    name: Optional[str] = None
    description: Optional[str] = None
    source: Optional[str] = None
    model_type: Optional[str] = None
    layout: Optional[str] = None
    vocab_size: Optional[int] = None
    hidden_size: Optional[int] = None
    intermediate_size: Optional[int] = None
    num_attention_heads: Optional[int] = None
    num_key_value_heads: Optional[int] = None
    head_dim: Optional[int] = None
    num_hidden_layers: Optional[int] = None
    tied_embeddings: Optional[bool] = None
    weight_parameters: Optional[int] = None


@dataclasses.dataclass
class PadPairedRun(Record):
    """One paired run of pad: the step and its candidates measured again together (one dtype)."""
    dtype: Optional[str] = None
    calls: Optional[int] = None
    comparisons: Optional[int] = None
    passes: Optional[int] = None
    seconds: Optional[float] = None
    clock_low_mhz: Optional[float] = None
    clock_median_mhz: Optional[float] = None
    clock_high_mhz: Optional[float] = None
    power_w: Optional[float] = None
    settled: Optional[bool] = None
    warmup_s: Optional[float] = None


@dataclasses.dataclass
class PadNumbers(Record):
    """Where pad's times come from: the GPU, how many GEMMs were measured now and reused."""
    gpu: Optional[str] = None
    gpu_uuid: Optional[str] = None
    driver: Optional[str] = None
    cublas: Optional[str] = None
    measured: Optional[int] = None
    reused: Optional[int] = None
    db: Optional[str] = None
    samples: Optional[int] = None
    clock_state: Optional[str] = None
    clocks: Optional[str] = None
    copy_bandwidth_gbs: Optional[float] = None
    paired: Optional[List[PadPairedRun]] = None
    not_paired: Optional[List[str]] = None


@dataclasses.dataclass
class PadGemm(Record):
    linear: Optional[str] = None
    pass_: Optional[str] = json_field("pass")
    layout: Optional[str] = None
    m: Optional[int] = None
    n: Optional[int] = None
    k: Optional[int] = None
    count: Optional[int] = None
    gflop: Optional[float] = None
    median_us: Optional[float] = None
    noise: Optional[float] = None


@dataclasses.dataclass
class Saving(Record):
    """A measured candidate's GEMM time per step before and after, and whether its saving counts
    (above 2 % and the measured noise); None in a dry run."""
    before_us: Optional[float] = None
    after_us: Optional[float] = None
    saving_us: Optional[float] = None
    saving_pct: Optional[float] = None
    threshold_pct: Optional[float] = None
    significant: Optional[bool] = None
    saving_low_pct: Optional[float] = None    # paired: the saving's 95 % interval
    saving_high_pct: Optional[float] = None
    pairs: Optional[int] = None
    cannot_tell: Optional[bool] = None        # paired: the interval straddles 2 %


@dataclasses.dataclass
class PadCandidate(Saving):
    value: Optional[int] = None
    gemm_size: Optional[int] = None
    why: Optional[str] = None
    touched: Optional[int] = None
    extra_params: Optional[int] = None
    extra_params_pct: Optional[float] = None
    extra_gflop: Optional[float] = None
    extra_flops_pct: Optional[float] = None
    copy_bytes: Optional[int] = None
    copy_us: Optional[float] = None


@dataclasses.dataclass
class Recommendation(Record):
    action: Optional[str] = None
    value: Optional[int] = None
    text: Optional[str] = None


@dataclasses.dataclass
class PadDimension(Record):
    name: Optional[str] = None
    value: Optional[int] = None
    gemm_size: Optional[int] = None
    where: Optional[str] = None
    note: Optional[str] = None
    candidates: Optional[List[PadCandidate]] = None
    recommendation: Optional[Recommendation] = None


@dataclasses.dataclass
class PadStep(Record):
    tokens: Optional[int] = None
    tflop_per_step: Optional[float] = None
    gemm_time_us: Optional[float] = None
    noise: Optional[float] = None
    gemms: Optional[List[PadGemm]] = None
    dimensions: Optional[List[PadDimension]] = None


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


@dataclasses.dataclass(repr=False)
class PadResult(_Result, Record):
    """`pad --model/--config --json`: per step (tokens), the GEMMs and, per dimension a model author
    chooses, the candidates and the recommendation."""
    mode: Optional[str] = None
    model: Optional[PadModel] = None
    train: Optional[bool] = None
    tp: Optional[int] = None
    dtype: Optional[str] = None
    backend: Optional[str] = None
    left_out: Optional[str] = None
    copy_note: Optional[str] = None
    source: Optional[PadNumbers] = None
    steps: Optional[List[PadStep]] = None

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


@dataclasses.dataclass
class PadSizeCandidate(Saving):
    value: Optional[int] = None
    why: Optional[str] = None
    touched: Optional[int] = None
    extra_gflop: Optional[float] = None


@dataclasses.dataclass
class PadSize(Record):
    value: Optional[int] = None
    uses: Optional[str] = None
    calls: Optional[int] = None
    gflop: Optional[float] = None
    where: Optional[str] = None
    note: Optional[str] = None
    candidates: Optional[List[PadSizeCandidate]] = None
    recommendation: Optional[Recommendation] = None


@dataclasses.dataclass(repr=False)
class PadSizesResult(_Result, Record):
    """`pad --trace/--gemms --json`: every distinct M, N and K of the GEMMs as a size to pad."""
    mode: Optional[str] = None
    source: Optional[str] = None
    recorded_on: Optional[str] = None
    backend: Optional[str] = None
    numbers: Optional[PadNumbers] = None
    tflop_per_step: Optional[float] = None
    gemm_time_us: Optional[float] = None
    noise: Optional[float] = None
    sizes: Optional[List[PadSize]] = None
    notes: Optional[List[str]] = None

    def recommendations(self):
        """{size: Recommendation}."""
        return {s.value: s.recommendation for s in self.sizes or []}

    def to_pandas(self):
        """A row per candidate of each size, with `recommended`."""
        owners = [({"size": s.value, "uses": s.uses}, s) for s in self.sizes or []]
        return _pandas().DataFrame(_candidate_rows(owners))
