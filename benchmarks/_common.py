"""Helpers shared by the benchmark scripts: timing, statistics, subprocesses, the machine.

Nothing here imports TensorFlow. Every figure a benchmark reports is a ``Figure``: a value,
the baseline it is compared with (measured in the same run), their ratio and the target.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = Path(__file__).resolve().parent
PYTHON = sys.executable

#: Quiet TensorFlow (C++ logs, oneDNN notice) in every child process.
CHILD_ENV = {
    **os.environ,
    "TF_CPP_MIN_LOG_LEVEL": "3",
    "PYTHONUNBUFFERED": "1",
    "PYTHONHASHSEED": "0",
}
CHILD_ENV.pop("GRADCHECK_STRICT", None)


@dataclass
class Figure:
    """One measured figure and its same-run baseline. ``ratio`` is always a cost ratio,
    this time over the baseline's time (lower is better): value / baseline for seconds,
    baseline / value for a throughput (lines/s)."""

    name: str
    value: float
    unit: str
    baseline_name: str | None = None
    baseline: float | None = None
    ratio: float | None = None
    target: str | None = None
    met: bool | None = None
    reps: int = 1
    spread: list[float] = field(default_factory=list)  # the individual measurements of value
    baseline_spread: list[float] = field(default_factory=list)
    #: The same figure in CPU seconds (user + system, all threads): much less sensitive
    #: than wall time to other processes sharing the machine.
    cpu_value: float | None = None
    cpu_baseline: float | None = None
    cpu_ratio: float | None = None
    notes: str = ""

    def to_json(self) -> dict:
        return asdict(self)


def byte_compile_gradcheck() -> None:
    """Write gradcheck's ``__pycache__`` as ``pip install`` does for an installed package.

    An editable checkout under ``PYTHONDONTWRITEBYTECODE=1`` (set on the machines these
    figures come from) would compile every gradcheck module from source on each import:
    some 20 ms for the diagnosis modules alone, which a user's installation never pays
    after its first run. The flag does not stop Python from reading existing bytecode."""
    import compileall

    compileall.compile_dir(str(ROOT / "gradcheck"), quiet=1)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def timed(fn, *args, **kwargs) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - start, result


def run_json(cmd: list[str], *, timeout: float = 900, cwd: Path | str | None = None) -> dict:
    """Run a worker in a fresh process; it prints one JSON object as its last stdout line."""
    proc = subprocess.run(
        cmd,
        cwd=cwd or ROOT,
        env=CHILD_ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = "\n".join((proc.stderr or proc.stdout).splitlines()[-15:])
        raise RuntimeError(f"{' '.join(cmd)} failed (exit {proc.returncode}):\n{tail}")
    return json.loads(lines[-1])


def wall_time(cmd: list[str], *, timeout: float = 900, cwd: Path | str | None = None) -> tuple[float, float, int]:
    """Wall-clock seconds of a whole process, from spawn to exit, the CPU seconds it and
    its own children used, and its exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        cmd, cwd=cwd or ROOT, env=CHILD_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except OSError:
        return ""


def _dist_version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def machine() -> dict:
    """What the figures were measured on (no TensorFlow import: versions from metadata)."""
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in _read("/proc/cpuinfo").splitlines()
            if line.startswith("model name")
        ),
        platform.processor() or platform.machine(),
    )
    mem_kb = next(
        (int(line.split()[1]) for line in _read("/proc/meminfo").splitlines() if line.startswith("MemTotal:")),
        0,
    )
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "ram_gib": round(mem_kb / 1024 / 1024, 1),
        "os": platform.platform(),
        "python": platform.python_version(),
        "tensorflow": _dist_version("tensorflow") or _dist_version("tensorflow-cpu"),
        "keras": _dist_version("keras"),
        "pylint": _dist_version("pylint"),
        "gradcheck": _dist_version("gradcheck"),
        "load_average_at_start": [round(x, 2) for x in load] if load else None,
        "PYTHONDONTWRITEBYTECODE": os.environ.get("PYTHONDONTWRITEBYTECODE"),
    }


def fmt_seconds(value: float) -> str:
    if value != value:  # NaN
        return "n/a"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.1f} ms"
    return f"{value * 1e6:.0f} µs"


def fmt_value(value: float, unit: str) -> str:
    if unit == "s":
        return fmt_seconds(value)
    if unit == "lines/s":
        return f"{value:,.0f} lines/s"
    return f"{value:.3g} {unit}"
