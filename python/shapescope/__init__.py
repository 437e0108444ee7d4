"""shapescope from Python: why is this matmul shape slow, and what shape should I use?

    import shapescope
    r = shapescope.explain(1793, db="h200.db")      # ExplainResult: r.verdict.text, r.fixes, r.to_pandas()
    p = shapescope.profile(trace="step.json")       # every GEMM of a PyTorch step, ranked
    p = shapescope.record(train_step)               # record the step with torch.profiler, then profile it

Each command runs the shapescope binary with --format json and returns a dataclass with the JSON's
fields; repr() is the CLI's table, and notebooks show it as HTML. A refusal or failure of the tool
raises ShapescopeError with its one-line message and exit code. docs/python.md has the whole API.
"""
from ._binary import ShapescopeError, find_binary
from .commands import explain, export, pad, profile, sweep
from ._recording import Recording, build_model, load_config, record, record_model
from .results import (Effect, ExplainPoint, ExplainResult, ExportResult, Fix, GemmProblem, GpuComparison, GpuRow,
                      Kernel, NotMeasured, NotPredicted, NumericalError, PadCandidate, PadDimension, PadGemm, PadModel, PadNumbers, PadResult, PadSize,
                      PadSizeCandidate, PadSizesResult, PadStep, PairedRatio, PairedRun, Point, PredictedTime,
                      Prediction, ProfileGemm,
                      ProfileResult, ProfileTotals, Recommendation, Saving, SweepPlan, SweepResult, UnmappedOp, Verdict,
                      WhatIf, WhatIfs)

recording = Recording  # `with shapescope.recording() as rec:`, as torch.profiler.profile reads

__all__ = [
    "ShapescopeError", "find_binary", "explain", "sweep", "profile", "pad", "export", "record", "Recording",
    "recording", "record_model", "build_model", "load_config", "Effect", "ExplainPoint", "ExplainResult",
    "ExportResult", "Fix", "GemmProblem", "GpuComparison", "GpuRow", "Kernel", "NotMeasured", "NotPredicted", "NumericalError", "PadCandidate", "PadDimension",
    "PadGemm", "PadModel", "PadNumbers", "PadResult", "PadSize", "PadSizeCandidate", "PadSizesResult", "PadStep",
    "PairedRatio", "PairedRun", "Point", "PredictedTime", "Prediction", "ProfileGemm", "ProfileResult", "ProfileTotals", "Recommendation", "Saving",
    "SweepPlan", "SweepResult", "UnmappedOp", "Verdict", "WhatIf", "WhatIfs",
]
