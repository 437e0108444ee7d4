"""Record a PyTorch step with the profiler and profile its GEMMs: record, Recording, record_model.

torch (and transformers, for record_model) are imported when one of these runs, never when the
package is imported: the rest of shapescope needs only the standard library.

The trace is what `shapescope profile --trace` reads: torch.profiler with the CPU and CUDA
activities and record_shapes=True, written with export_chrome_trace. Steps are marked with the
profiler's step() (ProfilerStep#N), so profile divides the counts and times by their number. While
the steps run, the GPU's SM clock, power and utilization are sampled through NVML (_clocks.py) and
kept in the trace ("shapescopeClocks"): the clock the step ran at.
"""
import json
import os
import tempfile
import time
import warnings
from pathlib import Path

from . import _clocks, _steps, commands


def _torch():
    try:
        import torch
    except ImportError:
        raise ImportError("shapescope.record needs PyTorch (import torch failed); the rest of shapescope does "
                          "not") from None
    return torch


class Recording:
    """A context manager that records its body with torch.profiler and profiles the trace on exit.

        with shapescope.Recording(db="step.db") as rec:
            train_step()
        rec.result            # a ProfileResult

    Call rec.step() between steps to record several (the profile is per step). trace: where to write
    the Chrome trace (kept); by default a temporary file, removed once profiled. db, binary and
    options (a dict of profile's options, e.g. {"no_verdict": True}) go to shapescope.profile. An
    exception in the body is passed on and nothing is profiled.

    clocks: sample the GPU's SM clock, power and utilization through NVML every 20 ms while the body
    runs and keep them in the trace (its "shapescopeClocks"); rec.clocks_line then says what they
    read. Without NVML the trace has none and a RuntimeWarning says why.
    """

    def __init__(self, trace=None, db=None, binary=None, options=None, clocks=True, _settling=False):
        self.trace = os.fspath(trace) if trace is not None else None
        # record()'s settling steps: traced as the others (ProfilerStep#0..), then left out of the trace;
        # the clocks are sampled from the first recorded step (_settled()).
        self._settling = _settling
        self._settle_steps = 0
        self._steps = 0
        self.db = db
        self.binary = binary
        self.options = dict(options or {})
        self.clocks = clocks
        self.clocks_line = None
        self.result = None
        self._profiler = None
        self._sampler = None

    def __enter__(self):
        torch = _torch()
        from torch.profiler import ProfilerAction, ProfilerActivity, profile
        activities = [ProfilerActivity.CPU]
        if torch.cuda.is_available():
            activities.append(ProfilerActivity.CUDA)
        # Without acc_events, step() clears the events of the steps before it (torch >= 2.4 warns):
        # the trace would hold the last step only.
        import inspect
        keep = {"acc_events": True} if "acc_events" in inspect.signature(profile).parameters else {}
        # A schedule that records every step: without one torch writes no ProfilerStep#N marks, and
        # the trace's steps could not be counted.
        self._profiler = profile(activities=activities, record_shapes=True,
                                 schedule=lambda _step: ProfilerAction.RECORD, **keep)
        if self.clocks and torch.cuda.is_available():
            self._sampler = _clocks.ClockSampler.for_torch_device(torch)
            if not self._settling:
                self._sampler.start()
        self._profiler.__enter__()
        return self

    def step(self):
        """Ends one step and starts the next (torch.profiler's step())."""
        _synchronize()
        self._profiler.step()
        self._steps += 1

    def _settled(self):
        """Ends the settling steps (a step of them just ran): the next steps are recorded and sampled."""
        self.step()
        self._settling = False
        self._settle_steps = self._steps
        if self._sampler is not None:
            self._sampler.start()

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            _synchronize()
        if self._sampler is not None:
            self._sampler.stop()
        self._profiler.__exit__(exc_type, exc, tb)
        if exc_type is not None:
            return False
        if self.trace is not None:
            self._export(self.trace)
            self.result = commands.profile(trace=self.trace, db=self.db, binary=self.binary, **self.options)
            return False
        with tempfile.TemporaryDirectory(prefix="shapescope-trace-") as folder:
            path = os.path.join(folder, "trace.json")
            self._export(path)
            self.result = commands.profile(trace=path, db=self.db, binary=self.binary, **self.options)
        return False

    def _export(self, path):
        """The Chrome trace, with the clock samples of the recorded steps where there are some; the
        settling steps (ProfilerStep#0 to #settle_steps-1) left out."""
        self._profiler.export_chrome_trace(path)
        if self._settle_steps:
            with open(path, encoding="utf-8") as f:
                whole = json.load(f)
            _, recorded = _steps.split_by_steps(whole, 2, self._part_of)
            with open(path, "w", encoding="utf-8") as f:
                json.dump(recorded, f)
        if self._sampler is None:
            return
        self.clocks_line = self._sampler.attach(path)
        if not self._sampler.available or not self._sampler.samples:
            warnings.warn(f"shapescope: {self.clocks_line}", RuntimeWarning, stacklevel=3)

    def _part_of(self, name):
        """0 for a settling step's range, 1 for a recorded one's, None for any other."""
        if not name.startswith("ProfilerStep#") or not name[len("ProfilerStep#"):].isdigit():
            return None
        return 0 if int(name[len("ProfilerStep#"):]) < self._settle_steps else 1


def _synchronize():
    torch = _torch()
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def record(fn, *args, steps=1, warmup=1, settle_seconds=1.0, trace=None, db=None, binary=None, options=None,
           clocks=True, **kwargs):
    """Runs fn(*args, **kwargs) `warmup` times, then for `settle_seconds` or more under torch.profiler
    (traced, then left out of the trace), then `steps` times recorded (shapes too), and returns
    shapescope.profile's result for the trace: every GEMM of one step with its count, time (measured
    on this GPU, or read from `db` without one) and verdict. The settling steps bring the GPU back to
    the clock and power its steps hold it at after the profiler's start has idled it (0: none).

    trace: keep the Chrome trace at this path (by default it is removed once profiled); options:
    profile's options as a dict ({"no_verdict": True} skips the verdicts' neighbour measurements);
    clocks: sample the GPU's clock and power through NVML while the recorded steps run, kept in the
    trace (see Recording)."""
    if steps < 1:
        raise ValueError(f"steps: {steps} must be at least 1")
    if not 0 <= settle_seconds <= 60:  # also NaN; the settling steps are traced in full
        raise ValueError(f"settle_seconds: {settle_seconds} is not a number of seconds (0 to 60)")
    _torch()  # before running anything of the caller's
    for _ in range(warmup):
        fn(*args, **kwargs)
    _synchronize()
    settling = settle_seconds > 0
    with Recording(trace=trace, db=db, binary=binary, options=options, clocks=clocks,
                   _settling=settling) as recording:
        if settling:
            start = time.monotonic()
            while True:
                fn(*args, **kwargs)
                if time.monotonic() - start >= settle_seconds:
                    break
                recording.step()
            recording._settled()
        for i in range(steps):
            fn(*args, **kwargs)
            if i + 1 < steps:
                recording.step()
    return recording.result


# --- a transformers model from its config ---

def _preset(name, binary):
    """models/NAME.json where the binary reads its presets: $SHAPESCOPE_DATA, the install prefix's
    share/shapescope, the source tree."""
    from ._binary import find_binary
    places = []
    if os.environ.get("SHAPESCOPE_DATA"):
        places.append(Path(os.environ["SHAPESCOPE_DATA"]) / "models")
    places.append(Path(find_binary(binary)).resolve().parent.parent / "share" / "shapescope" / "models")
    places.append(Path(__file__).resolve().parent.parent.parent / "models")
    for folder in places:
        if (folder / f"{name}.json").is_file():
            return folder / f"{name}.json"
    raise ValueError(f"config: '{name}' is no file and no preset (looked in {', '.join(str(p) for p in places)})")


def load_config(config, binary=None):
    """A transformers config from a config object (as it is), a dict of config.json's keys, a path to
    a config.json, or a preset name of `shapescope pad --model` ("gpt2", "mixtral-8x7b", ...). Keys
    that start with "_" (the presets' notes) are left out."""
    import transformers
    if isinstance(config, transformers.PretrainedConfig):
        return config
    if isinstance(config, (str, os.PathLike)):
        path = Path(os.fspath(config))
        if not path.is_file():
            path = _preset(os.fspath(config), binary)
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
    if not isinstance(config, dict):
        raise TypeError(f"config: a transformers config, a dict, a config.json or a preset name, not "
                        f"{type(config).__name__}")
    values = {k: v for k, v in config.items() if not k.startswith("_")}
    if "model_type" not in values:
        raise ValueError("config: no model_type: transformers cannot tell which model it describes")
    return transformers.AutoConfig.for_model(values.pop("model_type"), **values)


def build_model(config, layers=None, device="cuda", dtype="bfloat16", binary=None):
    """A causal-LM transformers model from its config with random weights (nothing downloaded),
    built on `device` in `dtype`; `layers` overrides the number of layers. Returns (model, config)."""
    torch = _torch()
    import transformers
    config = load_config(config, binary)
    if layers is not None:
        config.num_hidden_layers = layers
    dtype = getattr(torch, dtype) if isinstance(dtype, str) else dtype
    default = torch.get_default_dtype()
    torch.set_default_dtype(dtype)  # built in its dtype on the GPU directly: large models initialise in seconds
    try:
        with torch.device(device):
            model = transformers.AutoModelForCausalLM.from_config(config)
    finally:
        torch.set_default_dtype(default)
    return model.to(device=device, dtype=dtype), config


def _sequence(config, tokens, sequence):
    if sequence is None:
        limit = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
        sequence = min(tokens, limit) if limit else tokens
    if sequence < 1 or tokens % sequence != 0:
        raise ValueError(f"tokens: {tokens} is not a multiple of the sequence length {sequence}; pass sequence=")
    return sequence


def record_model(config, tokens, *, sequence=None, train=True, layers=None, steps=1, warmup=2, settle_seconds=1.0,
                 device="cuda", dtype="bfloat16", trace=None, db=None, binary=None, options=None, seed=0, clocks=True):
    """One step of a transformers causal LM built from `config` (see load_config) with random weights,
    recorded and profiled as scripts/record_trace.py records it: `tokens` = batch x sequence random
    token ids (sequence: the model's longest by default, at most `tokens`), a training step
    (forward with the labels, backward, zero_grad) or with train=False a forward pass without
    gradients; settle_seconds, clocks: as record's. Returns the ProfileResult; its `model_config` is the
    config the model was built from."""
    torch = _torch()
    torch.manual_seed(seed)
    model, built = build_model(config, layers=layers, device=device, dtype=dtype, binary=binary)
    sequence = _sequence(built, tokens, sequence)
    ids = torch.randint(0, built.vocab_size, (tokens // sequence, sequence), device=device)
    if train:
        model.train()

        def step():
            model(input_ids=ids, labels=ids).loss.backward()
            model.zero_grad(set_to_none=True)
    else:
        model.eval()

        def step():
            with torch.no_grad():
                model(input_ids=ids)
    result = record(step, steps=steps, warmup=warmup, settle_seconds=settle_seconds, trace=trace, db=db,
                    binary=binary, options=options, clocks=clocks)
    result.model_config = built
    return result
