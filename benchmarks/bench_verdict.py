"""Time to verdict: ``gradcheck examples/dqn_broken.py`` (spawn to exit, the finding
printed) against ``python -c "import tensorflow"``, both fresh processes, ``--reps``
times interleaved; medians. Also measured, for the breakdown: importing TensorFlow and
Keras and leaving with ``os._exit`` as gradcheck's child does (no interpreter teardown),
and running the broken script plainly up to Keras's error.

    python benchmarks/bench_verdict.py [--smoke] [--reps 5] [--json]

``--programs N``: time to a verdict on the first N real third-party programs of the mutation
benchmark (``benchmarks/mutation/programs.toml``, read from ``--sources`` or the mirrors its
``sources.default_roots`` knows): ``gradcheck original.py`` (spawn to exit) against plain
``python original.py`` stopped at the end of its first training step by
``benchmarks/first_step/sitecustomize.py`` (no gradcheck), alternating, ``--reps`` pairs per
program; wall time and peak memory (the largest single process, ``wait4``'s maxrss).

    python benchmarks/bench_verdict.py --programs 16 --reps 2
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

from benchmarks._common import (
    BENCH_DIR,
    CHILD_ENV,
    PYTHON,
    ROOT,
    Figure,
    byte_compile_gradcheck,
    fmt_seconds,
    median,
    wall_time,
)

SCRIPT = "examples/dqn_broken.py"
COMMANDS = {
    "gradcheck": [PYTHON, "-m", "gradcheck", "--no-color", SCRIPT],
    "import_tf": [PYTHON, "-c", "import tensorflow"],
    # gradcheck's child leaves with os._exit (no interpreter teardown): the same here.
    "import_tf_keras_exit": [PYTHON, "-c", "import os, tensorflow, keras; os._exit(0)"],
    "plain_script": [PYTHON, SCRIPT],
}
SMOKE = ("gradcheck", "import_tf")


def run(reps: int, smoke: bool) -> dict:
    names = SMOKE if smoke else tuple(COMMANDS)
    times: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    codes: dict[str, int] = {}
    for rep in range(reps):
        order = names if rep % 2 == 0 else names[::-1]
        for name in order:
            seconds, cpu_seconds, code = wall_time(COMMANDS[name])
            times[name].append(seconds)
            cpu[name].append(cpu_seconds)
            codes[name] = code
    if codes["gradcheck"] != 1:
        raise RuntimeError(f"gradcheck {SCRIPT} exited {codes['gradcheck']}, expected 1 (a finding)")
    verdict, baseline = median(times["gradcheck"]), median(times["import_tf"])
    notes = [f"gradcheck exit code {codes['gradcheck']} (findings)"]
    if "import_tf_keras_exit" in times:
        notes.append(f"import tensorflow + keras, then os._exit {fmt_seconds(median(times['import_tf_keras_exit']))}")
    if "plain_script" in times:
        notes.append(f"python {SCRIPT} (plain, to Keras's error) {fmt_seconds(median(times['plain_script']))}")
    figure = Figure(
        name=f"time to verdict: gradcheck {SCRIPT}",
        value=verdict,
        unit="s",
        baseline_name='python -c "import tensorflow"',
        baseline=baseline,
        ratio=verdict / baseline,
        target="<= import time + 1 s",
        met=verdict <= baseline + 1.0,
        reps=reps,
        spread=times["gradcheck"],
        baseline_spread=times["import_tf"],
        cpu_value=median(cpu["gradcheck"]),
        cpu_baseline=median(cpu["import_tf"]),
        cpu_ratio=median(cpu["gradcheck"]) / median(cpu["import_tf"]),
        notes="; ".join(notes) + f"; margin over import {verdict - baseline:+.2f} s",
    )
    return {"benchmark": "verdict", "times": times, "cpu": cpu, "figures": [figure.to_json()]}


def _measured(cmd: list[str], cwd: Path, env: dict, timeout: float) -> tuple[float, float, int | None]:
    """(wall seconds, peak RSS in MB of the largest process, exit code) of one process."""
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
            return time.perf_counter() - start, usage.ru_maxrss / 1024, None
        time.sleep(0.01)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - start, usage.ru_maxrss / 1024, proc.returncode


def run_programs(count: int, reps: int, sources: Path | None) -> dict:
    """Time and memory to a verdict on real programs (see the module docstring)."""
    from benchmarks.mutation import bench as mutation_bench
    from benchmarks.mutation import manifest
    from benchmarks.mutation import sources as mutation_sources

    roots = mutation_sources.default_roots(sources)
    workdir = Path(tempfile.mkdtemp(prefix="gradcheck-verdict-"))
    rows, skipped = [], []
    for program in manifest.load():
        if len(rows) >= count:
            break
        state = mutation_bench.prepare(program, roots, workdir)
        if state.original is None:
            skipped.append(f"{program.name}: {state.skipped}")
            continue
        path = state.original.path
        env = {**CHILD_ENV, **program.env, "MPLBACKEND": "Agg", "CUDA_VISIBLE_DEVICES": ""}
        env.pop("PYTHONPATH", None)
        mark = path.with_suffix(".first-step")
        plain_env = {**env, "PYTHONPATH": str(BENCH_DIR / "first_step"), "FIRST_STEP_MARK": str(mark)}
        check_env = {**env, "PYTHONPATH": str(ROOT)}
        commands = {
            "gradcheck": (
                [PYTHON, "-m", "gradcheck", "--no-color", "--timeout", str(program.timeout), path.name],
                check_env,
            ),
            "plain": ([PYTHON, path.name], plain_env),
        }
        times: dict[str, list[float]] = {"gradcheck": [], "plain": []}
        memory: dict[str, list[float]] = {"gradcheck": [], "plain": []}
        codes: dict[str, int | None] = {}
        for rep in range(reps):
            for name in ("gradcheck", "plain") if rep % 2 == 0 else ("plain", "gradcheck"):
                cmd, cmd_env = commands[name]
                seconds, peak, code = _measured(cmd, path.parent, cmd_env, program.timeout + 60)
                times[name].append(seconds)
                memory[name].append(peak)
                codes[name] = code
        ended = mark.read_text() if mark.is_file() else "the program's end (no optimizer update)"
        ratios = [g / p for g, p in zip(times["gradcheck"], times["plain"], strict=False)]
        rows.append(
            {
                "program": program.name,
                "repo": f"{program.repo}:{program.path}",
                "gradcheck_s": median(times["gradcheck"]),
                "plain_s": median(times["plain"]),
                "ratio": median(ratios),
                "ratios": ratios,
                "gradcheck_mb": max(memory["gradcheck"]),
                "plain_mb": max(memory["plain"]),
                "memory_ratio": max(memory["gradcheck"]) / max(memory["plain"]),
                "exit": codes,
                "plain_ended_at": ended,
            }
        )
        print(
            f"{program.name:34s} {fmt_seconds(rows[-1]['gradcheck_s']):>8s} vs {fmt_seconds(rows[-1]['plain_s']):>8s}"
            f" {rows[-1]['ratio']:.2f}x  memory {rows[-1]['gradcheck_mb']:.0f} vs {rows[-1]['plain_mb']:.0f} MB"
            f" {rows[-1]['memory_ratio']:.2f}x  exit {codes}  plain ended at {ended}",
            file=sys.stderr,
            flush=True,
        )
    ratios = sorted(r["ratio"] for r in rows)
    mem = sorted(r["memory_ratio"] for r in rows)
    figures = []
    if rows:
        figures.append(
            Figure(
                name=f"time to verdict, {len(rows)} real programs (median of per-program ratios)",
                value=median([r["gradcheck_s"] for r in rows]),
                unit="s",
                baseline_name="python to the end of the first training step",
                baseline=median([r["plain_s"] for r in rows]),
                ratio=median(ratios),
                target="median <= 1.3x, worst <= 2x",
                met=median(ratios) <= 1.3 and ratios[-1] <= 2.0,
                reps=reps,
                notes=f"worst {ratios[-1]:.2f}x; peak memory median {median(mem):.2f}x, worst {mem[-1]:.2f}x",
            ).to_json()
        )
    return {
        "benchmark": "verdict-programs",
        "rows": rows,
        "skipped": skipped,
        "figures": figures,
        "load": os.getloadavg(),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="gradcheck and the import only, once")
    parser.add_argument("--reps", type=int, default=None, help="runs of each command (default 5)")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    parser.add_argument("--programs", type=int, default=0, help="time N real programs (see the docstring)")
    parser.add_argument("--sources", type=Path, default=None, help="the mutation benchmark's sources directory")
    args = parser.parse_args(argv)
    byte_compile_gradcheck()
    if args.programs:
        out = run_programs(args.programs, args.reps or 2, args.sources)
        if args.json:
            print(json.dumps(out))
        else:
            for fig in out["figures"]:
                print(f"{fig['name']}: {fig['ratio']:.2f}x; {fig['notes']}")
            for line in out["skipped"]:
                print("skipped:", line)
        return
    out = run(args.reps or (1 if args.smoke else 5), args.smoke)
    if args.json:
        print(json.dumps(out))
        return
    for name, values in out["times"].items():
        print(
            f"{name:16s} median {fmt_seconds(median(values))}  ({', '.join(fmt_seconds(v) for v in values)}); "
            f"CPU {fmt_seconds(median(out['cpu'][name]))}"
        )
    fig = out["figures"][0]
    print(f"verdict - import = {fig['value'] - fig['baseline']:+.2f} s (target <= +1 s)")


if __name__ == "__main__":
    main()
