"""FP8 Linear layers for a recorded training step, and torch._scaled_mm with each recipe's scales.

Used by scripts/record_trace.py (--fp8-linears RECIPE) and bench/fp8/fp8_evidence.py. Every Linear's
three GEMMs (forward x @ W^T, input gradient dY @ W, weight gradient dY^T @ X) run through
torch._scaled_mm, their operands quantized in the step (amax, scale, cast; transposed where the GEMM
reads them K-contiguous, the only fp8 form on Hopper) inside record_function("shapescope_fp8_cast"),
so that a trace tells the casts' kernels from the GEMMs'. The recipes are shapescope's
(model/fp8_steps.hpp's gemm_recipe):

  tensor  one scale per tensor; gradients e5m2, the rest e4m3 (Transformer Engine's HYBRID)
  row     a scale per row of A and per column of B, e4m3 (torchao's rowwise)
  block   1x128 tiles along K for activations and gradients, 128x128 blocks for weights, e4m3
          (DeepSeek-V3); the weight gradient's two operands both 1x128

The scales are what _scaled_mm multiplies by (amax / 448 for e4m3, amax / 57344 for e5m2), shaped as
PyTorch dispatches each recipe by them (ScaledBlas.cpp), for mat_a [M, K] and mat_b [K, N] (mat_b
column-major: the transpose of a contiguous [N, K]), L = K / 128, L4 = L rounded up to 4:
  tensor       scale_a [], scale_b []
  row          scale_a [M, 1], scale_b [1, N]
  1x128 (A)    scale_a [M, L] with strides (1, M)
  128x128 (B)  scale_b [L, N / 128] with strides (1, L4): cuBLASLt reads the K blocks padded to 4
  1x128 (B)    scale_b [L, N], contiguous
"""
import json
import sys
from pathlib import Path

import torch
from torch.profiler import record_function

sys.path.insert(0, str(Path(__file__).resolve().parent))
import step_trace  # noqa: E402  (beside this file: a trace's kernels without PyTorch)

CAST_RANGE = "shapescope_fp8_cast"
E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2
FMAX = {E4M3: 448.0, E5M2: 57344.0}


def _scale_of(amax, fmt):
    return amax.float().clamp(min=1e-12) / FMAX[fmt]


def _cast(x, scale, fmt):
    return (x.float() / scale).clamp(-FMAX[fmt], FMAX[fmt]).to(fmt)


def quantize_a(x, grain, fmt):
    """mat_a [M, K] (contiguous) -> (fp8 [M, K], scale_a) for grain tensor, row or 1x128."""
    m, k = x.shape
    if grain == "tensor":
        s = _scale_of(x.abs().amax(), fmt)
        return _cast(x, s, fmt), s
    if grain == "row":
        s = _scale_of(x.abs().amax(dim=1, keepdim=True), fmt)  # [M, 1]
        return _cast(x, s, fmt), s
    assert grain == "1x128" and k % 128 == 0, (grain, x.shape)
    blocks = x.view(m, k // 128, 128)
    s = _scale_of(blocks.abs().amax(dim=2), fmt)  # [M, L]
    q = _cast(blocks, s.unsqueeze(-1), fmt).view(m, k)
    return q, s.t().contiguous().t()  # strides (1, M): rows fastest


def quantize_b(w, grain, fmt):
    """mat_b given as its contiguous transpose w [N, K] -> (fp8 [N, K] whose .t() is mat_b, scale_b)."""
    n, k = w.shape
    if grain == "tensor":
        s = _scale_of(w.abs().amax(), fmt)
        return _cast(w, s, fmt), s
    if grain == "row":
        s = _scale_of(w.abs().amax(dim=1, keepdim=True), fmt)  # [N, 1]
        return _cast(w, s, fmt), s.reshape(1, n).contiguous()
    if grain == "1x128":
        blocks = w.view(n, k // 128, 128)
        s = _scale_of(blocks.abs().amax(dim=2), fmt)  # [N, L]
        return _cast(blocks, s.unsqueeze(-1), fmt).view(n, k), s.t().contiguous()  # [L, N]
    assert grain == "128x128" and n % 128 == 0 and k % 128 == 0, (grain, w.shape)
    blocks = w.view(n // 128, 128, k // 128, 128)
    s = _scale_of(blocks.abs().amax(dim=(1, 3)), fmt)  # [N/128, L]
    q = _cast(blocks, s[:, None, :, None], fmt).view(n, k)
    if _PADDED_128x128 is False:
        return q, s.contiguous().t()  # [L, N/128], strides (1, L)
    nb, lb = s.shape
    storage = torch.ones(nb, (lb + 3) // 4 * 4, dtype=torch.float32, device=w.device)
    storage[:, :lb] = s
    return q, storage[:, :lb].t()  # [L, N/128], strides (1, L4)


# Whether this torch takes a 128x128 weight's scales with cuBLASLt's padded stride (K blocks rounded up
# to 4); None until a call with K/128 not a multiple of 4 tells. torch 2.11 refuses the padded stride
# ("Invalid scaling configuration") and wants K/128; later versions check the padded one. Once it is
# known, quantize_b lays the scales out so, inside the cast's range.
_PADDED_128x128 = None


def scaled_mm(aq, sa, bq, sb, out_dtype=torch.bfloat16):
    """aq [M, K] @ bq.t() (bq [N, K]) with their scales, as torch._scaled_mm dispatches them."""
    global _PADDED_128x128
    padded = sb.dim() == 2 and sb.stride(0) == 1 and sb.stride(1) != sb.shape[0] and sb.shape[0] > 1
    try:
        out = torch._scaled_mm(aq, bq.t(), scale_a=sa, scale_b=sb, out_dtype=out_dtype)
    except RuntimeError as error:
        if not padded or _PADDED_128x128 is not None or "Invalid scaling configuration" not in str(error):
            raise
        _PADDED_128x128 = False
        print("fp8: this torch takes a 128x128 weight's scales unpadded (stride K/128)", flush=True)
        return scaled_mm(aq, sa, bq, sb.t().contiguous().t(), out_dtype)  # this once; then quantize_b
    if padded:
        _PADDED_128x128 = True
    return out


# Per recipe and pass: (A's grain, A's format, B's grain, B's format). Forward: A an activation, B the
# weight; input gradient: A a gradient, B the weight (transposed); weight gradient: A a gradient
# (transposed), B an activation (transposed).
RECIPES = {
    "tensor": {"fwd": ("tensor", E4M3, "tensor", E4M3), "dgrad": ("tensor", E5M2, "tensor", E4M3),
               "wgrad": ("tensor", E5M2, "tensor", E4M3)},
    "row": {"fwd": ("row", E4M3, "row", E4M3), "dgrad": ("row", E4M3, "row", E4M3),
            "wgrad": ("row", E4M3, "row", E4M3)},
    "block": {"fwd": ("1x128", E4M3, "128x128", E4M3), "dgrad": ("1x128", E4M3, "128x128", E4M3),
              "wgrad": ("1x128", E4M3, "1x128", E4M3)},
}


class ShapescopeCasts:
    """quantize_a and quantize_b through shapescope's own cast kernels (bench/fp8/cast_lib.cu, built as
    libshapescope_casts.so): the kernels profile and explain price an fp8 what-if's casts with, so that
    a step recorded with them tests profile's changed-step measurement apart from how fast a
    framework's casts are. They read a transposed operand in place (one read, one write), where the
    eager quantizers copy it contiguous first."""

    GRAINS = {"tensor": 0, "row": 1, "1x128": 2, "128x128": 3}

    def __init__(self, path):
        import ctypes
        torch.cuda.init()  # torch's CUDA runtime first: the lib's libcudart.so.13 resolves to it
        self.lib = ctypes.CDLL(path)
        f = self.lib.shapescope_cast
        i64, ptr = ctypes.c_int64, ctypes.c_void_p
        f.argtypes = [ptr, i64, i64, i64, ctypes.c_int, ctypes.c_int, ptr, i64, ptr, ctypes.c_int, i64, i64, i64,
                      ptr, ptr]
        f.restype = ctypes.c_char_p

    def cast(self, x, grain, fmt):
        """x [rows, K] (row- or column-major) -> (fp8 [rows, K] contiguous, the scales' buffer, k_blocks, L4)."""
        if x.stride(1) != 1 and x.stride(0) != 1:
            x = x.contiguous()
        rows, k = x.shape
        transposed = x.stride(1) != 1
        ld_source = x.stride(1) if transposed else x.stride(0)
        kb = -(-k // 128)
        l4 = -(-kb // 4) * 4
        count = {"tensor": 1, "row": rows, "1x128": rows * kb, "128x128": -(-rows // 128) * l4}[grain]
        ld = {"1x128": rows, "128x128": l4}.get(grain, 1)
        out = torch.empty(rows, k, dtype=fmt, device=x.device)
        scales = torch.empty(count, dtype=torch.float32, device=x.device)
        amax = torch.empty(count, dtype=torch.float32, device=x.device) if grain in ("tensor", "row") else None
        why = self.lib.shapescope_cast(x.data_ptr(), rows, k, ld_source, int(transposed), int(fmt == E5M2),
                                       out.data_ptr(), k, scales.data_ptr(), self.GRAINS[grain],
                                       kb if grain in ("1x128", "128x128") else 1, ld, count,
                                       amax.data_ptr() if amax is not None else None,
                                       torch.cuda.current_stream().cuda_stream)
        if why:
            raise RuntimeError(why.decode())
        return out, scales, kb, l4

    def quantize_a(self, x, grain, fmt):
        m, _ = x.shape
        q, s, kb, _ = self.cast(x, grain, fmt)
        if grain == "tensor":
            return q, s.reshape(())
        if grain == "row":
            return q, s.view(m, 1)
        return q, s.as_strided((m, kb), (1, m))  # 1x128: [M, L], rows fastest

    def quantize_b(self, w, grain, fmt):
        n, _ = w.shape
        q, s, kb, l4 = self.cast(w, grain, fmt)
        if grain == "tensor":
            return q, s.reshape(())
        if grain == "row":
            return q, s.view(1, n)
        if grain == "1x128":
            return q, s.view(kb, n)
        scales = s.as_strided((kb, n // 128), (1, l4))  # 128x128: [L, N/128], cuBLASLt's padded stride
        return q, (scales.t().contiguous().t() if _PADDED_128x128 is False and kb != l4 else scales)


def _relative(x, reference):
    """|x - reference| / |reference| (Frobenius), both as fp32."""
    reference = reference.float()
    return ((x.float() - reference).norm() / reference.norm()).item()


def check_casts(quantize, device="cuda"):
    """Each recipe's three passes, quantized by `quantize` and by the eager quantizers, multiplied by
    _scaled_mm (the gradient passes reading transposed views, as the step's do): both products must be
    within fp8's error of the exact one (1e-1; they read 3-6e-2) and within 2e-2 of each other. K / 128
    is a multiple of 4 here; a 128x128 weight whose K / 128 is not is probed apart (the line says how
    this torch fares: its scales' stride is what PyTorch and cuBLASLt have disagreed on). Returns the
    line; raises where the casts are wrong."""
    torch.manual_seed(1)

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=torch.bfloat16)

    def exact(a, b_t):
        return a.float() @ b_t.float().t()

    x, w, g = randn(512, 512), randn(1024, 512), randn(512, 1024)  # every K / 128 a multiple of 4
    operands = {"fwd": (x, w), "dgrad": (g, w.t()), "wgrad": (g.t(), x.t())}
    worst, between = 0.0, 0.0
    for recipe in RECIPES:
        for gemm, (a, b_t) in operands.items():
            ours_out, eager_out = fp8_gemm(a, b_t, recipe, gemm, quantize), fp8_gemm(a, b_t, recipe, gemm)
            reference = exact(a, b_t)
            ours, eager = _relative(ours_out, reference), _relative(eager_out, reference)
            diff = _relative(ours_out, eager_out)
            worst, between = max(worst, ours, eager), max(between, diff)
            if not (ours < 1e-1 and eager < 1e-1 and diff < 2e-2):
                raise SystemExit(f"fp8 casts: {recipe} {gemm}: relative error {ours:.2e} with these casts, {eager:.2e} "
                                 f"with the eager ones, {diff:.2e} apart: not used")
    w3 = randn(512, 384)  # the forward's B: N 512, K 384
    x3 = randn(256, 384)
    probe = [_relative(fp8_gemm(x3, w3, "block", "fwd", q), exact(x3, w3)) for q in (quantize, None)]
    return (f"fp8 casts checked against the eager quantizers and the exact product: every recipe's three passes "
            f"within {worst:.1e} of it and {between:.1e} of each other; a 128x128 weight with K / 128 = 3 "
            f"(stride {'padded' if _PADDED_128x128 else 'K / 128'}): {probe[0]:.1e} with these casts, "
            f"{probe[1]:.1e} eager")


def fp8_gemm(a, b_t, recipe, gemm, quantize=None):
    """a [M, K] @ b_t.t() (b_t [N, K], any strides): both operands cast in the step, then the fp8 GEMM.
    shapescope's casts read a transposed operand in place; the others are handed it contiguous.
    recipe: a name for every pass, or {pass: name or None} (None: that pass stays a bf16 mm)."""
    if isinstance(recipe, dict):
        recipe = recipe.get(gemm)
        if recipe is None:
            return a @ b_t.t()
    ga, fa, gb, fb = RECIPES[recipe][gemm]
    qa, qb = (quantize or (quantize_a, quantize_b))
    in_place = isinstance(getattr(qa, "__self__", None), ShapescopeCasts)
    with record_function(CAST_RANGE):
        aq, sa = qa(a if in_place else a.contiguous(), ga, fa)
        bq, sb = qb(b_t if in_place else b_t.contiguous(), gb, fb)
    return scaled_mm(aq, sa, bq, sb, out_dtype=torch.bfloat16)


class Fp8LinearFn(torch.autograd.Function):
    """y = x @ W^T with its three GEMMs in fp8 under the recipe (a name, or one per pass); the casts in
    every call."""

    @staticmethod
    def forward(ctx, x, w, recipe, quantize):
        ctx.save_for_backward(x, w)
        ctx.recipe, ctx.quantize = recipe, quantize
        x2 = x.reshape(-1, x.shape[-1])
        return fp8_gemm(x2, w, recipe, "fwd", quantize).reshape(*x.shape[:-1], w.shape[0])

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        g2 = g.reshape(-1, g.shape[-1])
        x2 = x.reshape(-1, x.shape[-1])
        dx = fp8_gemm(g2, w.t(), ctx.recipe, "dgrad", ctx.quantize)        # [T, in]
        dw = fp8_gemm(g2.t(), x2.t(), ctx.recipe, "wgrad", ctx.quantize)   # [out, in]
        return dx.reshape(x.shape), dw.to(w.dtype), None, None


def read_plan(path):
    """A plan of fp8 passes per Linear (bench/workloads/changed_steps.py writes it from profile's
    what-ifs): {"linears": [{"out": N, "in": K, "fwd": recipe or null, "dgrad": ..., "wgrad": ...}]}
    -> {(out, in): {pass: recipe or None}}."""
    with open(path) as f:
        linears = json.load(f)["linears"]
    plan = {}
    for entry in linears:
        passes = {p: entry.get(p) for p in ("fwd", "dgrad", "wgrad")}
        for p, r in passes.items():
            if r is not None and r not in RECIPES:
                raise SystemExit(f"--fp8-plan: {path}: {p} recipe {r!r} is none of {sorted(RECIPES)}")
        plan[(int(entry["out"]), int(entry["in"]))] = passes
    return plan


def patch_linears(model, recipe, compiled=False, casts_lib=None, plan=None):
    """Every nn.Linear of the model through Fp8LinearFn (with `plan`, {(out, in): {pass: recipe}},
    only the Linears it names, each pass as it says); returns how many. compiled: the quantizers
    through torch.compile (fused kernels, as Transformer Engine's and torchao's casts are); casts_lib:
    shapescope's cast kernels from that shared library (ShapescopeCasts)."""
    quantize = None
    if casts_lib:
        casts = ShapescopeCasts(casts_lib)
        quantize = (casts.quantize_a, casts.quantize_b)
        print(check_casts(quantize), flush=True)
    elif compiled:
        # One compiled graph per operand shape and grain (a step has a few dozen): above dynamo's
        # default of 8 recompilations the rest ran eager (seen on torch 2.11: 41 ms of casts per step).
        import torch._dynamo as dynamo  # not `import torch._dynamo`: that makes torch a local name here
        dynamo.config.recompile_limit = max(dynamo.config.recompile_limit, 128)
        quantize = (torch.compile(quantize_a, dynamic=False), torch.compile(quantize_b, dynamic=False))
    count = 0
    for module in model.modules():
        if isinstance(module, torch.nn.Linear):
            passes = recipe if plan is None else plan.get((module.out_features, module.in_features))
            if passes is None:
                continue
            if module.bias is not None:
                raise SystemExit("fp8 Linears: a Linear with a bias (this recipe's step has none)")
            module.forward = (lambda m, r: lambda x: Fp8LinearFn.apply(x, m.weight, r, quantize) if ENABLED[0]
                              else torch.nn.functional.linear(x, m.weight))(module, passes)
            count += 1
    return count


# Whether the patched Linears run in fp8 (set_enabled): record_trace.py --alternate-baseline records
# steps without fp8 (the Linears as they were, in bf16) between the fp8 ones, in one process.
ENABLED = [True]


def set_enabled(on):
    ENABLED[0] = bool(on)


def cast_kernel_us(events):
    """The GPU time of the kernels launched inside record_function(CAST_RANGE) (step_trace.cast_kernel_us)."""
    return step_trace.cast_kernel_us(events, CAST_RANGE)
