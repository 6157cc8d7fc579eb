"""Peak memory of a check against plain python on the programs of ``benchmarks/programs/``
(a WGAN-GP with nested tapes, a DCGAN, the attention U-Net), in both modes each: ``gradcheck
PROGRAM`` (spawn to exit) against plain ``python PROGRAM`` stopped right after its first
optimizer update by ``benchmarks/first_step/sitecustomize.py``, alternating, ``--reps``
pairs; peak memory is ``wait4``'s maxrss (the largest process: gradcheck's child). Also
reported: wall and CPU time, spawn to exit (gradcheck's time to a verdict against plain
python's first step; CPU is the figure to read on a loaded machine).

    python benchmarks/bench_memory.py [--programs wgan_gp_eager,dcgan_graph] [--reps 1] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import BENCH_DIR, CHILD_ENV, PYTHON, ROOT, Figure, median


def _measured(cmd: list[str], cwd: Path, env: dict, timeout: float) -> tuple[float, float, float, int | None]:
    """(wall seconds, CPU seconds of the process and its children, peak RSS in MB of the
    largest process, exit code) of one process. CPU time is the figure to read on a loaded
    machine: the wall clock counts the waits for a core."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = start + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, None
        time.sleep(0.01)
    code = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, code


PROGRAMS_DIR = BENCH_DIR / "programs"
#: name -> (script, its arguments)
PROGRAMS = {
    "wgan_gp_eager": ("wgan_gp.py", ["--eager"]),
    "wgan_gp_fit": ("wgan_gp.py", []),
    "dcgan_eager": ("dcgan.py", []),
    "dcgan_graph": ("dcgan.py", ["--graph"]),
    "unet_fit": ("unet_attention.py", ["--size", "large"]),
}
TARGET = 1.25


def run(names: list[str], reps: int) -> dict:
    env = {**CHILD_ENV, "MPLBACKEND": "Agg", "CUDA_VISIBLE_DEVICES": ""}
    env.pop("PYTHONPATH", None)
    mark = Path(tempfile.mkdtemp(prefix="gradcheck-memory-")) / "first-step"
    plain_env = {**env, "PYTHONPATH": str(BENCH_DIR / "first_step"), "FIRST_STEP_MARK": str(mark)}
    check_env = {**env, "PYTHONPATH": str(ROOT)}
    rows, figures = [], []
    for name in names:
        script, args = PROGRAMS[name]
        commands = {
            "gradcheck": ([PYTHON, "-m", "gradcheck", "--no-color", script, "--", *args], check_env),
            "plain": ([PYTHON, script, *args], plain_env),
        }
        memory: dict[str, list[float]] = {"gradcheck": [], "plain": []}
        seconds: dict[str, list[float]] = {"gradcheck": [], "plain": []}
        cpu: dict[str, list[float]] = {"gradcheck": [], "plain": []}
        codes: dict[str, int | None] = {}
        for rep in range(reps):
            for side in ("gradcheck", "plain") if rep % 2 == 0 else ("plain", "gradcheck"):
                cmd, cmd_env = commands[side]
                wall, used, peak, code = _measured(cmd, PROGRAMS_DIR, cmd_env, 1800)
                memory[side].append(peak)
                seconds[side].append(wall)
                cpu[side].append(used)
                codes[side] = code
        ratio = median(memory["gradcheck"]) / median(memory["plain"])
        time_ratio = median(seconds["gradcheck"]) / median(seconds["plain"])
        cpu_ratio = median(cpu["gradcheck"]) / median(cpu["plain"])
        rows.append(
            {
                "program": name,
                "memory_mb": memory,
                "ratio": ratio,
                "seconds": seconds,
                "time_ratio": time_ratio,
                "cpu_seconds": cpu,
                "cpu_ratio": cpu_ratio,
                "exit": codes,
            }
        )
        print(
            f"{name:16s} {median(memory['gradcheck']):.0f} vs {median(memory['plain']):.0f} MB  {ratio:.2f}x"
            f"  wall {median(seconds['gradcheck']):.1f} vs {median(seconds['plain']):.1f} s  {time_ratio:.2f}x"
            f"  CPU {median(cpu['gradcheck']):.1f} vs {median(cpu['plain']):.1f} s  {cpu_ratio:.2f}x"
            f"  exit {codes}",
            file=sys.stderr,
            flush=True,
        )
        figures.append(
            Figure(
                name=f"peak memory, {name} ({script} {' '.join(args)})".rstrip(),
                value=median(memory["gradcheck"]),
                unit="MB",
                baseline_name="plain python to the end of its first optimizer update",
                baseline=median(memory["plain"]),
                ratio=ratio,
                target=f"<= {TARGET}x",
                met=ratio <= TARGET,
                reps=reps,
                spread=memory["gradcheck"],
                baseline_spread=memory["plain"],
                notes=f"exit codes {codes}",
            ).to_json()
        )
    return {"benchmark": "memory", "rows": rows, "figures": figures}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--programs", default=",".join(PROGRAMS), help=f"comma-separated subset of {', '.join(PROGRAMS)}"
    )
    parser.add_argument("--reps", type=int, default=1, help="pairs of runs per program")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    args = parser.parse_args(argv)
    out = run(args.programs.split(","), args.reps)
    if args.json:
        print(json.dumps(out))


if __name__ == "__main__":
    main()
