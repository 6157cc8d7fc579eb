"""What guarding every step against a non-finite loss costs: ``gradcheck.install()`` (whose
guards on a healthy step are GC201/GC202's reduction per gradient and GC204's ``is_finite``
of the loss) against ``tf.debugging.enable_check_numerics()``, TensorFlow's own answer (a
``CheckNumerics`` op after every op), on the same workload in the same run: the training step
of ``bench_install``'s 5-layer MLP (graph: ``train_step`` in a ``tf.function``, as ``fit``
runs it; eager: ``run_eagerly=True``), each as a ratio over the plain step.

``install()`` is measured as ``bench_install`` measures it (plain and checked steps
alternating in blocks, one process). ``enable_check_numerics()`` cannot be turned off
cleanly (a function traced under it keeps its checks; the eager callback stays for the
process), so it runs in a process of its own: a block of plain steps, then the same number
with the checks on, on a fresh model traced under them.

    python benchmarks/bench_nonfinite.py [--smoke] [--reps 3] [--steps 200] [--batch 64] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import CHILD_ENV, Figure, byte_compile_gradcheck, fmt_seconds, median

MODES = ("graph", "eager")
#: The issue's goal for install()'s guard, and TensorFlow's figures it quotes.
TARGETS = {"graph": 1.10, "eager": 1.15}
BATCH = 64


def _numerics_worker(mode: str, steps: int, batch: int) -> dict:
    """In a process of its own: ``steps`` plain steps, then ``steps`` under check_numerics."""
    import keras
    import numpy as np
    import tensorflow as tf

    from benchmarks.bench_install import _model

    eager = mode == "eager"
    rng = np.random.default_rng(0)
    data = (
        tf.constant(rng.normal(size=(batch, 32)).astype("float32")),
        tf.constant(rng.integers(0, 10, size=(batch,)).astype("int32")),
    )

    def step_of(model):
        return model.train_step if eager else tf.function(model.train_step)

    def timed(step) -> tuple[list[float], list[float]]:
        step(data)  # traced (graph), or the first eager step: not timed
        wall, cpu = [], []
        for _ in range(steps):
            c0, t0 = time.process_time(), time.perf_counter()
            float(step(data)["loss"])
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        return wall, cpu

    plain, cpu_plain = timed(step_of(_model(keras, eager)))
    tf.debugging.enable_check_numerics()
    checked, cpu_checked = timed(step_of(_model(keras, eager)))
    return {"plain": plain, "checked": checked, "cpu_plain": cpu_plain, "cpu_checked": cpu_checked}


def _numerics(mode: str, steps: int, batch: int) -> dict:
    proc = subprocess.run(
        [sys.executable, __file__, "--numerics-worker", mode, "--steps", str(steps), "--batch", str(batch)],
        env=CHILD_ENV,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _figure(name: str, mode: str, batch: int, steps: int, runs: list[dict], target: float | None, notes: str):
    plain = [median(r["plain"]) for r in runs]
    checked = [median(r["checked"]) for r in runs]
    ratios = [c / p for c, p in zip(checked, plain, strict=True)]
    cpu_p = [sum(r["cpu_plain"]) for r in runs]
    cpu_c = [sum(r["cpu_checked"]) for r in runs]
    ratio = median(checked) / median(plain)
    return Figure(
        name=f"{name} ({mode}): train_step of a 5-layer MLP, batch {batch}, {steps} steps each",
        value=median(checked),
        unit="s",
        baseline_name="the same step, plain",
        baseline=median(plain),
        ratio=ratio,
        target=f"<= {target:.2f}x" if target else "report",
        met=(ratio <= target) if target else None,
        reps=len(runs),
        spread=checked,
        baseline_spread=plain,
        cpu_value=median(cpu_c),
        cpu_baseline=median(cpu_p),
        cpu_ratio=median(cpu_c) / median(cpu_p),
        notes=f"{notes}; per-round ratio {min(ratios):.3f}-{max(ratios):.3f}",
    ).to_json()


def run(reps: int, steps: int, modes: tuple[str, ...], batch: int = BATCH) -> dict:
    import keras
    import numpy as np

    from benchmarks.bench_install import _interleaved

    figures, raw = [], {}
    for mode in modes:
        installed, numerics = [], []
        for _ in range(reps):  # the two measurements alternate: the same load for both
            installed.append(_interleaved(keras, np, mode, steps, batch))
            numerics.append(_numerics(mode, steps, batch))
        found = sorted({c for r in installed for c in r["codes"]})
        figures.append(
            _figure(
                "install() on a healthy step",
                mode,
                batch,
                steps,
                installed,
                TARGETS[mode],
                f"plain and checked alternating in blocks, one process; findings: {', '.join(found) or 'none'}",
            )
        )
        figures.append(
            _figure(
                "tf.debugging.enable_check_numerics()",
                mode,
                batch,
                steps,
                numerics,
                None,
                "a process of its own per round: plain steps, then the checks on",
            )
        )
        raw[mode] = {
            "install": [(median(r["plain"]), median(r["checked"])) for r in installed],
            "check_numerics": [(median(r["plain"]), median(r["checked"])) for r in numerics],
        }
    return {"benchmark": "nonfinite", "figures": figures, "raw": raw, "load": os.getloadavg()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="one short round per mode")
    parser.add_argument("--reps", type=int, default=None, help="rounds per mode (default 3)")
    parser.add_argument("--steps", type=int, default=None, help="steps of each kind per round (default 200)")
    parser.add_argument("--modes", default="graph,eager")
    parser.add_argument("--batch", type=int, default=BATCH, help=f"batch size (default {BATCH})")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    parser.add_argument("--numerics-worker", choices=MODES, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    steps = args.steps or (6 if args.smoke else 200)
    if args.numerics_worker:
        print(json.dumps(_numerics_worker(args.numerics_worker, steps, args.batch)))
        return
    byte_compile_gradcheck()
    out = run(args.reps or (1 if args.smoke else 3), steps, tuple(args.modes.split(",")), args.batch)
    if args.json:
        print(json.dumps(out))
        return
    for fig in out["figures"]:
        print(
            f"{fig['name']}: {fmt_seconds(fig['value'])} vs {fmt_seconds(fig['baseline'])} -> "
            f"{fig['ratio']:.3f}x (CPU {fig['cpu_ratio']:.3f}x), target {fig['target']}; {fig['notes']}"
        )
    print(f"load average {out['load']}")


if __name__ == "__main__":
    main()
