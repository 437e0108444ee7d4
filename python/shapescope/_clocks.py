"""The clock a step ran at: the SM clock, board power and GPU utilization sampled through NVML from a
side thread while the step runs, and kept in its trace as the top-level key "shapescopeClocks"
(docs/method.md, "How a step's clock is recorded"; src/model/trace_clocks.hpp reads it).

Standard library only: NVML through ctypes on libnvidia-ml.so.1 (the driver's library; pynvml is not
needed). Where NVML or the GPU cannot be reached nothing is sampled, and `note` says why: a trace
without the key is still a trace.

    sampler = ClockSampler.for_torch_device(torch)   # the GPU torch runs on
    sampler.start(); step(); torch.cuda.synchronize(); sampler.stop()
    sampler.attach(trace_path)                       # writes the samples of the step into the trace
"""
import bisect
import ctypes
import json
import os
import statistics
import tempfile
import threading
import time

KEY = "shapescopeClocks"
VERSION = 1
COLUMNS = ["t_us", "sm_clock_mhz", "power_w", "gpu_util_pct"]
INTERVAL_MS = 20

_NVML_SUCCESS = 0
_NVML_CLOCK_SM = 1


class _Utilization(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


class _Nvml:
    """The few NVML calls the sampler makes; raises OSError with a one-line reason where it cannot."""

    def __init__(self):
        try:
            self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        except OSError as e:
            raise OSError(f"NVML (libnvidia-ml.so.1) cannot be loaded: {e}") from None
        init = getattr(self.lib, "nvmlInit_v2", None)
        if init is None or init() != _NVML_SUCCESS:
            raise OSError("NVML did not initialize (nvmlInit_v2)")

    def handle(self, uuid=None, pci_bus_id=None):
        handle = ctypes.c_void_p()
        if uuid and self.lib.nvmlDeviceGetHandleByUUID(uuid.encode(), ctypes.byref(handle)) == _NVML_SUCCESS:
            return handle
        if pci_bus_id and self.lib.nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id.encode(),
                                                                     ctypes.byref(handle)) == _NVML_SUCCESS:
            return handle
        raise OSError(f"NVML has no GPU with UUID {uuid} or PCI bus id {pci_bus_id}")

    def text(self, function, handle):
        buffer = ctypes.create_string_buffer(96)
        if getattr(self.lib, function)(handle, buffer, ctypes.c_uint(96)) != _NVML_SUCCESS:
            return None
        return buffer.value.decode(errors="replace")

    def unsigned(self, function, handle, *args):
        value = ctypes.c_uint()
        if getattr(self.lib, function)(handle, *args, ctypes.byref(value)) != _NVML_SUCCESS:
            return None
        return value.value

    def utilization(self, handle):
        value = _Utilization()
        if self.lib.nvmlDeviceGetUtilizationRates(handle, ctypes.byref(value)) != _NVML_SUCCESS:
            return None
        return value.gpu

    def shutdown(self):
        self.lib.nvmlShutdown()


def torch_device_ids(torch, device=None):
    """(uuid, pci_bus_id) of the GPU torch runs on, as NVML names them; None where torch does not say."""
    index = None if device is None else torch.device(device).index
    index = torch.cuda.current_device() if index is None else index
    props = torch.cuda.get_device_properties(index)
    uuid = getattr(props, "uuid", None)
    uuid = None if uuid is None else (str(uuid) if str(uuid).startswith("GPU-") else f"GPU-{uuid}")
    pci = None
    if all(hasattr(props, a) for a in ("pci_domain_id", "pci_bus_id", "pci_device_id")):
        pci = f"{props.pci_domain_id:08x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"
    return uuid, pci


class ClockSampler:
    """Samples one GPU every `interval_ms` from a daemon thread between start() and stop(). Where NVML
    or the GPU cannot be reached, `note` says why and start() does nothing."""

    def __init__(self, uuid=None, pci_bus_id=None, interval_ms=INTERVAL_MS, unavailable=None):
        self.interval_ms = interval_ms
        self.samples = []  # [unix time ns, sm MHz, power W or None, utilization % or None]
        self.note = None if unavailable is None else f"no clocks recorded: {unavailable}"
        self.device = self.uuid = None
        self.max_sm_clock_mhz = self.power_limit_w = None
        self._nvml = self._handle = self._thread = None
        self._stop = threading.Event()
        if self.note is not None:
            return
        try:
            self._nvml = _Nvml()
            self._handle = self._nvml.handle(uuid, pci_bus_id)
        except OSError as e:
            self.note = f"no clocks recorded: {e}"
            if self._nvml is not None:
                self._nvml.shutdown()
                self._nvml = None
            return
        self.device = self._nvml.text("nvmlDeviceGetName", self._handle)
        self.uuid = self._nvml.text("nvmlDeviceGetUUID", self._handle)
        self.max_sm_clock_mhz = self._nvml.unsigned("nvmlDeviceGetMaxClockInfo", self._handle, _NVML_CLOCK_SM)
        limit_mw = self._nvml.unsigned("nvmlDeviceGetEnforcedPowerLimit", self._handle)
        self.power_limit_w = None if limit_mw is None else limit_mw / 1000

    @classmethod
    def for_torch_device(cls, torch, device=None, interval_ms=INTERVAL_MS):
        """A sampler of the GPU torch runs on (its current device, or `device`)."""
        try:
            uuid, pci = torch_device_ids(torch, device)
        except (RuntimeError, AssertionError, AttributeError) as e:
            return cls(interval_ms=interval_ms, unavailable=f"torch cannot name its GPU ({e})")
        return cls(uuid=uuid, pci_bus_id=pci, interval_ms=interval_ms)

    @property
    def available(self):
        return self._handle is not None and self.note is None

    def _sample(self):
        mhz = self._nvml.unsigned("nvmlDeviceGetClockInfo", self._handle, _NVML_CLOCK_SM)
        if not mhz:  # a clock NVML could not read is no sample
            return
        mw = self._nvml.unsigned("nvmlDeviceGetPowerUsage", self._handle)
        self.samples.append([time.time_ns(), mhz, None if mw is None else mw / 1000,
                             self._nvml.utilization(self._handle)])

    def _loop(self):
        period = self.interval_ms / 1000
        next_time = time.monotonic()
        while not self._stop.is_set():
            self._sample()
            next_time = max(next_time + period, time.monotonic())  # after a stall, resume from now
            self._stop.wait(next_time - time.monotonic())

    def start(self):
        if not self.available or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name="shapescope-clocks", daemon=True)
        self._thread.start()

    def stop(self):
        """Stops sampling (one last sample) and releases NVML."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
            self._sample()
        if self._nvml is not None:
            self._nvml.shutdown()
            self._nvml = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def record(self, trace):
        """The "shapescopeClocks" value for a trace (a parsed Chrome trace): the samples on the trace's
        timeline (t_us: its events' microseconds after baseTimeNanoseconds), those of the profiled
        step(s) only: from one period before the first kernel to one after the last. Where no sample
        falls there (the clocks disagree), all are kept."""
        base_ns = trace.get("baseTimeNanoseconds", 0) if isinstance(trace, dict) else 0
        rows = [[round((t - base_ns) / 1000), mhz, w, u] for t, mhz, w, u in self.samples]
        spans = kernel_spans(trace)
        if spans:
            margin = self.interval_ms * 1000
            first, last = spans[0][0] - margin, spans[-1][1] + margin
            inside = [r for r in rows if first <= r[0] <= last]
            rows = inside or rows
        return {"version": VERSION, "source": "NVML", "device": self.device, "uuid": self.uuid,
                "interval_ms": self.interval_ms, "max_sm_clock_mhz": self.max_sm_clock_mhz,
                "power_limit_w": self.power_limit_w, "columns": COLUMNS, "samples": rows}

    def attach(self, path):
        """Writes the samples into the Chrome trace at `path` (replaced whole, through a temporary
        file beside it) and returns a one-line summary, or the note saying why there is nothing."""
        if not self.available:
            return self.note
        if not self.samples:
            return "no clocks recorded: NVML gave no sample"
        with open(path, encoding="utf-8") as f:
            trace = json.load(f)
        if not isinstance(trace, dict):
            return "no clocks recorded: the trace is a bare event list, with no place for them"
        trace[KEY] = self.record(trace)
        folder = os.path.dirname(os.path.abspath(path))
        fd, staged = tempfile.mkstemp(prefix=".shapescope-trace-", suffix=".json", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(trace, f)
            os.replace(staged, path)
        except BaseException:
            os.unlink(staged)
            raise
        return summary_line(trace)


def kernel_spans(trace):
    """When the GPU ran the trace's kernels: their [ts, ts + dur] merged, in time order."""
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else trace
    spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                   if isinstance(e, dict) and e.get("ph") == "X" and e.get("cat") in ("kernel", "Kernel")
                   and isinstance(e.get("ts"), (int, float)) and isinstance(e.get("dur"), (int, float)))
    merged = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _well_formed(row):
    """[t_us, sm_clock_mhz, power_w or None, gpu_util_pct or None] as trace_clocks.cpp accepts it."""
    if not isinstance(row, list) or not 2 <= len(row) <= 4 or not _number(row[0]) or not _number(row[1]):
        return False
    if not 0 < row[1] <= 10000:
        return False
    if len(row) >= 3 and row[2] is not None and not (_number(row[2]) and 0 <= row[2] <= 100000):
        return False
    return len(row) < 4 or row[3] is None or (_number(row[3]) and 0 <= row[3] <= 100)


def summary(trace):
    """The recorded clock of a trace as shapescope reads it (src/model/trace_clocks.cpp): over the
    busy samples, those taken while a kernel had run within the samples' median spacing before them
    (all samples when none is). A dict (samples, busy_samples, sm_clock_median_mhz, sm_clock_low_mhz,
    sm_clock_high_mhz, power_median_w, power_max_w), or None without well-formed samples."""
    clocks = trace.get(KEY) if isinstance(trace, dict) else None
    if not isinstance(clocks, dict) or clocks.get("version") != VERSION or not isinstance(clocks.get("samples"), list):
        return None
    rows = sorted((r for r in clocks["samples"] if _well_formed(r)), key=lambda r: r[0])
    if not rows:
        return None
    if len(rows) >= 2:
        window = statistics.median(b[0] - a[0] for a, b in zip(rows, rows[1:]))
    else:
        window = (clocks.get("interval_ms") or 0) * 1000
    spans = kernel_spans(trace)
    ends = [end for _, end in spans]

    def busy_at(t):  # the first span that ends at or after t - window starts at or before t
        i = bisect.bisect_left(ends, t - window)
        return i < len(spans) and spans[i][0] <= t

    busy = [r for r in rows if busy_at(r[0])] or rows
    mhz = [r[1] for r in busy]
    watts = [r[2] for r in busy if len(r) > 2 and r[2] is not None]
    return {"samples": len(rows), "busy_samples": len(busy), "sm_clock_median_mhz": statistics.median(mhz),
            "sm_clock_low_mhz": min(mhz), "sm_clock_high_mhz": max(mhz),
            "power_median_w": statistics.median(watts) if watts else None,
            "power_max_w": max(watts) if watts else None}


def summary_line(trace):
    s = summary(trace)
    if s is None:
        return "no clocks recorded"
    clocks = trace[KEY]
    power = (f", power median {s['power_median_w']:.0f} W (max {s['power_max_w']:.0f} W)"
             if s["power_median_w"] is not None else "")
    return (f"clocks: {s['busy_samples']} of {s['samples']} NVML samples (every {clocks.get('interval_ms')} ms) "
            f"while the step's kernels ran: SM clock median {s['sm_clock_median_mhz']:.0f} MHz "
            f"({s['sm_clock_low_mhz']:.0f}-{s['sm_clock_high_mhz']:.0f}){power}; {clocks.get('device')}")
