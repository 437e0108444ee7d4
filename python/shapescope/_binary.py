"""Finding the shapescope binary, turning keyword arguments into its options, and running it.

The package drives the installed command-line tool rather than binding its library: every command
already prints its whole result as JSON (`--format json`), refuses bad input in one line
with a documented exit code, and keeps the files it reads untouched; a subprocess inherits all of
that, needs no compiler or ABI match with the Python in use, and cannot take the interpreter down
with it when CUDA or a driver misbehaves.
"""
import json
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

# Where an installed copy of this package finds the installed binary: written by `cmake --install`
# (_layout.py holds the bin folder relative to this package's folder); absent in the source tree.
try:
    from ._layout import BINDIR_FROM_PACKAGE as _BINDIR_FROM_PACKAGE
except ImportError:  # the source tree
    _BINDIR_FROM_PACKAGE = None

_PACKAGE_DIR = Path(__file__).resolve().parent


class ShapescopeError(Exception):
    """The tool refused or failed: `message` is its one line, `exit_code` its exit code.

    Exit codes are the tool's (2 bad option or value, 3 no usable GPU, 4 not enough GPU memory,
    5 result store unusable, 6 output not written, 7 no gnuplot, 130 interrupted); the package adds
    127 when it finds no binary and 1 when the binary's output is not what the command promises.
    `command` is the argument list that ran, `stderr` everything the tool wrote there.
    """

    def __init__(self, message, exit_code, command=None, stderr=""):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.command = list(command) if command else []
        self.stderr = stderr

    def __str__(self):
        return f"{self.message} (exit {self.exit_code})"


ShapescopeError.__module__ = "shapescope"  # as users name it: shapescope.ShapescopeError


def _executable(path):
    return path.is_file() and os.access(path, os.X_OK)


def _source_tree_binaries():
    """The build trees of the source tree this package was imported from (python/shapescope)."""
    root = _PACKAGE_DIR.parent.parent
    if not (root / "CMakeLists.txt").is_file() or not (root / "src" / "cli").is_dir():
        return []
    return [root / "build" / "shapescope", root / "build-cpu" / "shapescope"]


def _installed_binary():
    if _BINDIR_FROM_PACKAGE is None:
        return None
    return (_PACKAGE_DIR / _BINDIR_FROM_PACKAGE / "shapescope").resolve()


def find_binary(binary=None):
    """The shapescope binary to run: `binary` if given, else $SHAPESCOPE_BIN, else the build tree
    beside this package (build/, then build-cpu/; for an installed package: the bin folder it was
    installed with), else `shapescope` on PATH. Raises ShapescopeError (exit 127) naming what it
    tried when none is an executable file."""
    tried = []
    for origin, value in (("binary=", binary), ("$SHAPESCOPE_BIN", os.environ.get("SHAPESCOPE_BIN"))):
        if value is None or value == "":
            continue
        text = os.fspath(value)
        if not _executable(Path(text)):
            raise ShapescopeError(f"shapescope: {origin} '{text}' is not an executable file", 127)
        # A name without a folder ("./shapescope" is "shapescope" to Path) would be looked up on PATH
        # by subprocess: the file that was checked is the one to run.
        return text if os.sep in text else os.path.join(os.curdir, text)
    candidates = _source_tree_binaries()
    installed = _installed_binary()
    if installed is not None:
        candidates.append(installed)
    for path in candidates:
        if _executable(path):
            return str(path)
        tried.append(str(path))
    on_path = shutil.which("shapescope")
    if on_path:
        return on_path
    tried.append("shapescope on PATH")
    raise ShapescopeError("shapescope: no binary found (tried " + ", ".join(tried) +
                          "): build it (scripts/build.sh, or --cpu-only) or set SHAPESCOPE_BIN", 127)


def _refuse(option, message):
    """A value the tool could not be given: refused as the tool refuses one (exit 2), naming the option."""
    raise ShapescopeError(f"shapescope: {option}: {message}", 2)


def option_value(value, option="value"):
    """One option's text: ranges as the tool writes them, lists comma-joined, paths as paths.
    A range the tool's ranges cannot write (empty, counting down) or a NUL (no argument can hold
    one) raises ShapescopeError (exit 2) naming `option`; a flag inside a list raises TypeError."""
    if isinstance(value, range):
        if value.step < 0:
            _refuse(option, f"{value!r} counts down; the tool's ranges count up")
        if len(value) == 0:
            _refuse(option, f"{value!r} is empty")
        last = value[-1]
        return f"{value.start}..{last}" + (f":{value.step}" if value.step != 1 else "")
    if isinstance(value, (list, tuple)):
        return ",".join(option_value(v, option) for v in value)
    if isinstance(value, bool):
        raise TypeError(f"{option}: {value!r} inside a list: a flag is True or False on its own")
    text = os.fspath(value) if isinstance(value, os.PathLike) else str(value)
    if "\0" in text:
        _refuse(option, f"{text!r} holds a NUL character, which no command-line argument can")
    return text


def options(repeated=(), **kwargs):
    """Keyword arguments as command-line options: `lt_algos=8` is `--lt-algos 8`, True a flag,
    None and False leave the option out; options named in `repeated` are given once per item of a
    list (several --db), the others take a list comma-joined (`backend=["cublas", "cublaslt"]`)."""
    args = []
    for name, value in kwargs.items():
        if value is None or value is False:
            continue
        flag = "--" + name.replace("_", "-")
        if value is True:
            args.append(flag)
        elif name in repeated and isinstance(value, (list, tuple)):
            for item in value:
                args += [flag, option_value(item, flag)]
        else:
            args += [flag, option_value(value, flag)]
    return args


def _one_line(stderr):
    """The tool's message: its last non-empty line on stderr (it writes one line per refusal)."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    return lines[-1] if lines else "shapescope: failed without a message"


def run(args, binary=None):
    """Runs the binary with `args`: (the command, its stdout, its stderr). A non-zero exit raises
    ShapescopeError with the tool's message and exit code.

    The tool runs in a session of its own, so that a ^C reaches it once, from here: on
    KeyboardInterrupt (a terminal's ^C, a notebook's interrupt) it gets one SIGINT and stops at its
    next safe point, keeping what it measured; a second one ends it at once, a third kills it. The
    KeyboardInterrupt is raised again once it has exited."""
    command = [find_binary(binary)] + [str(a) for a in args]
    for arg in command[1:]:
        if "\0" in arg:
            _refuse(repr(arg), "holds a NUL character, which no command-line argument can")
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, encoding="utf-8", errors="replace", start_new_session=True)
    interrupts = 0
    while True:
        try:
            stdout, stderr = process.communicate()
            break
        except KeyboardInterrupt:
            interrupts += 1
            if interrupts < 3:
                process.send_signal(signal.SIGINT)
            else:
                process.kill()
    if interrupts:
        raise KeyboardInterrupt
    if process.returncode != 0:
        code = process.returncode if process.returncode > 0 else 128 - process.returncode
        raise ShapescopeError(_one_line(stderr), code, command, stderr)
    return command, stdout, stderr


def run_json(args, binary=None):
    """Runs the binary and parses its standard output as JSON: (command, document, stderr)."""
    command, stdout, stderr = run(args, binary)
    try:
        return command, json.loads(stdout), stderr
    except json.JSONDecodeError as e:
        raise ShapescopeError(f"shapescope: the output of '{' '.join(command[1:])}' is not JSON ({e})", 1,
                              command, stderr) from None


def figure_of(result):
    """The SVG the CLI's `plot` draws for this result's points (gnuplot needed), or None where the
    result has no figure. Drawn once, into a temporary folder removed afterwards."""
    plot = getattr(result, "_plot", None)
    if plot is None:
        return None
    if getattr(result, "_figure", None) is None:
        binary, args = plot
        with tempfile.TemporaryDirectory(prefix="shapescope-figure-") as folder:
            run(args + ["--out", os.path.join(folder, "figure")], binary)
            result._figure = Path(folder, "figure.svg").read_text(encoding="utf-8")
    return result._figure
