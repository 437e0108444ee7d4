"""The CLI's text for a result, rendered from its JSON fields, and the same as HTML.

Rendered here rather than by running the command a second time without --json: a second run would
measure again where the first one measured (explain's paired passes, a sweep's missing points) and
could print other numbers than the result holds. The tables follow the CLI's writers
(src/report/table.cpp and the command's report file) cell for cell; the CPU tests compare them with
the CLI's own output for the committed stores. What each result shows:

Every table is the CLI's with --wide: every column, every name whole (the CLI fits its tables to
the terminal, src/report/table.hpp; a notebook scrolls).

- sweep, export: the whole points table;
- profile: the whole output, as the CLI wrote it into its JSON ("text"): not rendered here;
- explain: the verdict, source, effects, heuristic regret, controls, precision, neighbours, the not-measured
  and cannot-tell lines and the fixes (not the target's evidence block);
- a GPU comparison: the whole output;
- pad: per step, its GEMM table and the recommendations (not the model block or the candidates,
  which to_pandas("candidates") lists); for a trace or GEMM list the size notes and recommendations.
"""
import html
import math

KERNEL_CELL_WIDTH = 48  # src/report/output.hpp: kKernelCellWidth
MAX_KERNEL_NAME_CHARS = 72  # src/model/kernel_name.cpp: kMaxKernelNameChars


class Table:
    """Rows (the header first) with the columns that are right-aligned; printed as write_table does."""

    def __init__(self, rows, right=(), indent="", header=True):
        self.rows = rows
        self.right = list(right)
        self.indent = indent
        self.header = header  # the first row is a header (for HTML)

    def lines(self):
        widths = []
        for row in self.rows:
            widths += [0] * (len(row) - len(widths))
            for i, cell in enumerate(row):
                widths[i] = max(widths[i], len(cell))
        out = []
        for row in self.rows:
            line = self.indent
            for i, cell in enumerate(row):
                if i > 0:
                    line += "  "
                if i < len(self.right) and self.right[i]:
                    line += cell.rjust(widths[i])
                elif i + 1 < len(row):
                    line += cell.ljust(widths[i])
                else:
                    line += cell
            out.append(line.rstrip(" "))
        return out


# --- the units, as src/common/units.cpp writes them ---

def finite(value):
    return value is not None and not isinstance(value, bool) and math.isfinite(value)


def fixed(value, decimals):
    return f"{value:.{decimals}f}" if finite(value) else "-"


def us_or_ms(us):
    return f"{us / 1e3:.2f} ms" if us >= 1e4 else f"{us:.1f} us"


def percent(fraction, decimals):
    return f"{fraction * 100:.{decimals}f} %"


def scientific(value):
    """"4.1e-3": an error that spans decades, the exponent without its padding."""
    if not finite(value):
        return "-"
    if value == 0:
        return "0"
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def us_text(value):
    """explain's "112.2 us" / "24.82 us"."""
    return f"{value:.1f} us" if value >= 100 else f"{value:.2f} us"


def times(ratio):
    return f"{ratio:.0f}x" if ratio >= 10 else f"{ratio:.1f}x"


def share(part, whole):
    return percent(part / whole, 0) if whole > 0 else "-"


def table_cell(text):
    """One table cell per line: control characters become blanks."""
    return "".join(" " if ord(c) < 0x20 or ord(c) == 0x7F else c for c in text)


def short_kernel_name(name):
    """src/model/kernel_name.cpp: short_kernel_name."""
    text = name[5:] if name.startswith("void ") else name
    cut = min((i for i in (text.find("<"), text.find("(")) if i >= 0), default=-1)
    if cut > 0:
        outer = text[:cut]
        if text[cut] == "<" and outer in ("cutlass::Kernel", "cutlass::Kernel2", "cutlass::device_kernel"):
            inner = text[cut + 1:]
            ends = [i for i in (inner.find(c) for c in "<,>(") if i >= 0]
            end = min(ends) if ends else -1
            if end > 0:
                inner = inner[:end]
            inner = inner.rstrip(" ")
            if inner:
                return inner[:MAX_KERNEL_NAME_CHARS]
        text = outer
    return text.rstrip(" ")[:MAX_KERNEL_NAME_CHARS]


def shorten_middle(name, width=KERNEL_CELL_WIDTH):
    tail = 17  # the end of a library kernel's name says its tile and alignment
    if len(name) <= width or width < 3 + tail + 1:
        return name
    return name[:width - 3 - tail] + "..." + name[-tail:]


# --- a point's cells (src/report/annotation_text.cpp) ---

def has_waves(p):
    return p.waves is not None


def tile_cell(p):
    return f"{p.tile_m}x{p.tile_n}" if p.tiles else "-"


def grid_cell(p):
    if not p.tiles:
        return "-"
    if p.tiles_m is None:  # a grouped call: its tiles are no rectangle
        return f"{p.tiles}:?g"
    cell = f"{p.tiles_m}x{p.tiles_n}"
    if p.batch and p.batch > 1:
        cell += f"x{p.batch}b"
    if p.splits and p.splits > 1:
        cell += f"x{p.splits}k"
    return cell


def waves_cell(p):
    return f"{p.waves:.2f}{'p' if p.persistent else ''}" if has_waves(p) else "-"


def rule_cell(p):
    failing = "".join(name for name, ld, base in (("A", p.lda_align_bytes, p.a_base_align_bytes),
                                                  ("B", p.ldb_align_bytes, p.b_base_align_bytes),
                                                  ("C", p.ldc_align_bytes, p.c_base_align_bytes))
                      if not (ld >= 16 and base >= 16))
    return failing or "ok"


def aligned(p):
    return rule_cell(p) == "ok"


def kernel_cell(p, wide=False):
    if not p.annotated or not p.kernels:
        return "-"
    cell = short_kernel_name(p.kernels[0].name or "") or "?"
    if not wide:
        cell = shorten_middle(cell)
    if len(p.kernels) > 1:
        cell += f" +{len(p.kernels) - 1}"
    return cell


POINT_COLUMNS = [("backend", False), ("algo", False), ("dtype", False), ("layout", False), ("M", True), ("N", True),
                 ("K", True), ("batch", True), ("median [us]", True), ("min [us]", True), ("noise [%]", True),
                 ("n", True), ("TFLOP/s", True), ("peak [%]", True), ("clock [MHz]", True), ("flags", False),
                 ("align M/N/K", True), ("16B", False), ("tile", True), ("tiles", True), ("waves", True),
                 ("w.eff [%]", True), ("kernel", False)]


def point_row(p, wide=False):
    flags = ("N" if p.noisy else "") + ("T" if p.throttled else "") + ("C" if p.stop == "cap" else "") + \
            ("D" if p.drifted else "")
    return [table_cell(p.backend), table_cell(p.algo), p.dtype, p.layout, str(p.m), str(p.n), str(p.k), str(p.batch),
            fixed(p.median_us, 2), fixed(p.min_us, 2), fixed(p.noise * 100 if finite(p.noise) else None, 1),
            str(p.samples), fixed(p.tflops, 1), fixed(p.pct_peak, 1), fixed(p.sm_clock_mhz, 0), flags or "-",
            f"{p.align_m}/{p.align_n}/{p.align_k}", rule_cell(p), tile_cell(p), grid_cell(p), waves_cell(p),
            fixed(p.wave_efficiency * 100, 0) if has_waves(p) else "-", table_cell(kernel_cell(p, wide))]


def points_blocks(result):
    rows = [[h for h, _ in POINT_COLUMNS]] + [point_row(p, wide=True) for p in result.points or []]
    return [Table(rows, [r for _, r in POINT_COLUMNS])]


# --- profile: the CLI's own text (its JSON's "text"), line for line ---

def profile_blocks(r):
    if r.cli_text is None:
        raise ValueError("this profile result carries no text (its JSON has no \"text\": a binary older than "
                         "this package)")
    return r.cli_text.rstrip("\n").split("\n")


# --- explain (src/report/explain_report.cpp) ---

def point_tflops(p):
    time = p.time_us
    return p.point.flops / time / 1e6 if time and p.point is not None and p.point.flops else None


def time_cell(p):
    return fixed(p.time_us, 2) if p.time_us is not None else "-"


def paired_cell(p):
    if p.paired is None or p.role == "target":
        return "1 (reference)" if p.paired is not None else "-"
    return f"{p.paired.ratio:.3f} ({p.paired.low:.3f}-{p.paired.high:.3f})"


def waves_eff_cell(pt):
    return f"{waves_cell(pt)} ({pt.wave_efficiency * 100:.0f} %)" if has_waves(pt) else "-"


def explain_blocks(r):
    points = r.points or []
    t = points[0]
    paired = any(p.paired is not None for p in points)
    blocks = [r.verdict.text, r.source]
    if r.paired is not None:
        blocks.append(r.paired.text)
    if r.effects:
        blocks.append("")
        gap = r.verdict.gap_us
        blocks.append(f"effects, adding up to the gap of {us_text(gap)} ({share(gap, t.time_us)} of the target's time)"
                      if t.time_us is not None else "effects (model)")
        rows = []
        for i, x in enumerate(r.effects, 1):
            cost = f"{us_text(x.cost_us)} ({share(x.cost_us, gap)} of the gap)" \
                if x.cost_us > 0 and t.time_us is not None else "-"
            rows.append([f"{i}.", x.effect, cost, "measured" if x.measured else "computed", x.detail])
        blocks.append(Table(rows, indent="  ", header=False))
    alternatives = [p for p in points if p.role == "alternative" and p.time_us is not None]
    if r.regret is not None and alternatives:
        best = min(alternatives, key=lambda p: p.time_us)  # the first of equal times, as the model picks
        blocks += ["", f"heuristic regret: cuBLASLt's first choice takes {percent(r.regret, 1)} longer than its best, "
                   f"{best.label}"]
    controls = [["control", "of", "time [us]", "TFLOP/s", "vs target", "kernel"]]
    if paired:
        controls[0].insert(-1, "time / target (95 %)")
    for p in points:
        if p.role in ("target", "neighbour", "fixed kernel", "precision"):
            continue
        gemm = p.role not in ("copy", "launch floor")
        tf = point_tflops(p)
        row = [p.role, p.label, time_cell(p), f"{tf:.1f}" if gemm and tf else "-",
               f"{t.time_us / p.time_us:.2f}x" if p.time_us and t.time_us else "-", p.point.kernel or "-"]
        if paired:
            row.insert(-1, paired_cell(p))
        controls.append(row)
    if len(controls) > 1:
        blocks += ["", "controls (the same GEMM with one thing changed)", Table(controls, indent="  ")]
    if any(p.role == "precision" for p in points):
        rows = [["dtype", "time [us]", "TFLOP/s", "vs target", "rel. error", "max abs error", "kernel"]]
        if paired:
            rows[0].insert(4, "time / target (95 %)")
        for p in points:
            if p.role not in ("target", "precision"):
                continue
            tf = point_tflops(p)
            dtype = p.point.dtype if p.point is not None and p.point.dtype else ""
            row = [dtype + (" (target)" if p.role == "target" else ""), time_cell(p), f"{tf:.1f}" if tf else "-",
                   f"{t.time_us / p.time_us:.2f}x" if p.time_us and t.time_us else "-",
                   scientific(p.error.relative) if p.error is not None else "-",
                   scientific(p.error.max_abs) if p.error is not None else "-",
                   (p.point.kernel if p.point is not None else None) or "-"]
            if paired:
                row.insert(4, paired_cell(p))
            rows.append(row)
        blocks += ["", "precision (the same GEMM in another dtype; error: its output against an fp64 reference of "
                   "the same random inputs)", Table(rows, indent="  ")]
    fixed_measured = any(p.role == "fixed kernel" for p in points)
    header = ["size", "why", "time [us]", "TFLOP/s", "per FLOP", "16B", "tile", "tiles", "waves (eff)",
              "fixed [us]" if fixed_measured else "", "kernel"]
    if paired:
        header.insert(5, "time / target (95 %)")
    rows = [header]
    target_tflops = point_tflops(t)
    for i, p in enumerate(points):
        if p.role not in ("target", "neighbour"):
            continue
        tf = point_tflops(p)
        fixed_time = "-"
        for q in points:
            if q.role == "fixed kernel" and q.of == i and q.time_us is not None:
                fixed_time = f"{q.time_us:.2f}"
                break
        pt = p.point
        row = [p.label, p.why or "target", time_cell(p), f"{tf:.1f}" if tf else "-",
               f"{tf / target_tflops:.2f}x" if tf and target_tflops else "-", "ok" if aligned(pt) else "no",
               tile_cell(pt), f"{pt.tiles_m}x{pt.tiles_n}" if pt.tiles else "-", waves_eff_cell(pt),
               fixed_time if fixed_measured else "", pt.kernel or "-"]
        if paired:
            row.insert(5, paired_cell(p))
        rows.append(row)
    blocks += ["", "neighbours" + (f" (fixed: our {r.fixed_kernel})" if fixed_measured else ""),
               Table(rows, indent="  ")]
    reasons = {}  # one line per reason, in the order they come, as the CLI writes them
    for m in r.not_measured or []:
        reasons.setdefault(m.why, []).append(m.what)
    # More than three: how many, the first two and the last.
    blocks += [f"  not measured ({why}): " + (f"{len(what)} problems: {what[0]}, {what[1]}, ..., {what[-1]}"
                                              if len(what) > 3 else ", ".join(what))
               for why, what in reasons.items()]
    for p in points:
        q = p.paired
        if q is None or p.role in ("target", "launch floor", "copy") or q.verdict != "cannot tell" or q.ratio >= 1:
            continue
        blocks.append(f"cannot tell: {p.label} ({p.role}) takes {percent(1 - q.ratio, 1)} less time at the median, "
                      f"95 % interval {100 * (1 - q.high):.1f}..{100 * (1 - q.low):.1f} %, {q.pairs} pairs, against "
                      f"the {percent(r.paired.min_effect, 0) if r.paired else '2 %'} minimum effect: more pairs "
                      "(--pair-seconds) or --clocks burst would tell")
    fixes = r.fixes or []
    if fixes:
        first = fixes[0].text
    elif "cannot be judged" in (r.verdict.text or ""):
        first = "none known until a neighbour is measured"
    else:
        first = "leave it"
    blocks += ["", f"fix: {first}"] + [f"or:  {f.text}" for f in fixes[1:]]
    if r.wall_s and r.wall_s > 0:
        blocks.append(f"explained in {r.wall_s:.2f} s")
    return blocks


def comparison_blocks(c):
    gpus = c.gpus or []
    plural = "" if len(gpus) == 1 else "s"
    blocks = [f"{c.shape} {c.dtype} {c.layout} ({c.backend} {c.algo}) on {len(gpus)} GPU{plural}, "
              "from the stores (measured earlier; nothing is measured now)", ""]
    fastest = min(g.point.median_us for g in gpus) if gpus else 0
    rows = [["GPU", "store", "time [us]", "TFLOP/s", "vs fastest", "kernel", "tile", "tiles", "waves", "clock [MHz]",
             "measured"]]
    for g in gpus:
        p = g.point
        rows.append([g.gpu, g.store, fixed(p.median_us, 2), fixed(g.tflops, 1), f"{p.median_us / fastest:.2f}x",
                     g.kernel, tile_cell(p), grid_cell(p), waves_cell(p), fixed(p.sm_clock_mhz, 0),
                     (p.measured_at or "")[:10]])
    blocks.append(Table(rows, [False, False, True, True, True, False, False, False, True, True, False], "  "))
    for store in c.missing or []:
        blocks += ["", f"not in {store} (no point of this shape there)"]
    return blocks


# --- pad (src/report/pad_report.cpp) ---

def pad_blocks(r):
    measured = r.mode == "measured"
    blocks = []
    for s in r.steps or []:
        header = ["linear", "pass", "layout", "M", "N", "K", "count", "GFLOP/step"]
        if measured:
            header += ["median [us]", "noise [%]", "share [%]"]
        rows = [header]
        for g in s.gemms or []:
            row = [g.linear, g.pass_, g.layout, str(g.m), str(g.n), str(g.k), str(g.count), f"{g.gflop:.1f}"]
            if measured:
                timed = g.median_us is not None
                row += [f"{g.median_us:.2f}" if timed else "-", f"{g.noise * 100:.1f}" if timed else "-",
                        f"{g.count * g.median_us / s.gemm_time_us * 100:.1f}" if timed and s.gemm_time_us else "-"]
            rows.append(row)
        calls = sum(g.count for g in s.gemms or [])
        time = f", GEMM time {us_or_ms(s.gemm_time_us)} (noise {s.noise * 100:.1f} %)" \
            if s.gemm_time_us is not None else ""
        blocks += ["", f"step of {s.tokens} tokens: {len(s.gemms or [])} GEMMs, {calls} calls, "
                   f"{s.tflop_per_step:.2f} TFLOP per rank{time}",
                   Table(rows, [i > 2 for i in range(len(header))])]
        if measured:
            blocks += ["", f"recommendation for {s.tokens} tokens (a saving counts above 2 % of the step's GEMM time "
                       "and above the measured noise)"]
            blocks += [f"  {d.recommendation.text}" for d in s.dimensions or [] if d.recommendation is not None]
    return blocks[1:] if blocks and blocks[0] == "" else blocks


def pad_sizes_blocks(r):
    time = f", GEMM time {us_or_ms(r.gemm_time_us)} (noise {r.noise * 100:.1f} %)" if r.gemm_time_us is not None else ""
    blocks = [f"GEMMs of one step: {r.tflop_per_step:.2f} TFLOP{time}", ""]
    blocks += [f"  {s.value} is {s.uses}" + (f"; {s.note}" if s.note else "") for s in r.sizes or []]
    blocks += [f"note: {n}" for n in r.notes or []]
    if r.mode == "measured":
        blocks += ["", "recommendation (a saving counts above 2 % of the step's GEMM time and above the measured "
                   "noise)"]
        blocks += [f"  {s.recommendation.text}" for s in r.sizes or [] if s.recommendation is not None]
    return blocks


def plan_blocks(plan):
    return (plan.summary + plan.plan).rstrip("\n").split("\n")


_BLOCKS = {"SweepPlan": plan_blocks, "PointsResult": points_blocks, "ProfileResult": profile_blocks,
           "ExplainResult": explain_blocks,
           "GpuComparison": comparison_blocks, "PadResult": pad_blocks, "PadSizesResult": pad_sizes_blocks}


def blocks_of(result):
    for cls in type(result).__mro__:
        if cls.__name__ in _BLOCKS:
            return _BLOCKS[cls.__name__](result)
    raise TypeError(f"no text for {type(result).__name__}")


def render(result):
    lines = []
    for block in blocks_of(result):
        lines += block.lines() if isinstance(block, Table) else [block]
    return "\n".join(lines) + "\n"


# --- HTML ---

_STYLE = ("<style>.shapescope table{border-collapse:collapse;font-family:monospace;font-size:12px}"
          ".shapescope td,.shapescope th{padding:1px 8px;border-bottom:1px solid #ddd;white-space:nowrap}"
          ".shapescope td.r,.shapescope th.r{text-align:right}.shapescope th{text-align:left}"
          ".shapescope p{font-family:monospace;font-size:12px;margin:2px 0}</style>")


def html_table(table):
    out = ["<table>"]
    for n, row in enumerate(table.rows):
        tag = "th" if n == 0 and table.header else "td"
        cells = []
        for i, cell in enumerate(row):
            cls = ' class="r"' if i < len(table.right) and table.right[i] else ""
            cells.append(f"<{tag}{cls}>{html.escape(cell)}</{tag}>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return "".join(out)


def html_page(result):
    """The result's blocks as HTML: lines as paragraphs, tables as tables, and first the figure the
    CLI draws for it where there is one (result.figure(): an SVG, shown as an image through a data
    URI, so that none of its scripts runs and its ids clash with nothing on the page)."""
    parts = ['<div class="shapescope">', _STYLE]
    figure, why_not = None, None
    if hasattr(result, "figure"):
        from ._binary import ShapescopeError
        try:
            figure = result.figure()
        except ShapescopeError as e:
            why_not = e.message
    if why_not:
        parts.append(f"<p>no figure: {html.escape(why_not)}</p>")
    if figure:
        import base64
        data = base64.b64encode(figure.encode("utf-8")).decode("ascii")
        parts.append(f'<img src="data:image/svg+xml;base64,{data}" style="max-width:100%">')
    for block in blocks_of(result):
        if isinstance(block, Table):
            parts.append(html_table(block))
        elif block:
            parts.append(f"<p>{html.escape(block)}</p>")
    parts.append("</div>")
    return "".join(parts)
