"""What GC301's default comparison costs: the checked step (the first call of a train step
under the tracer, set up as the CLI checks a script: one step, no update) with the default
finite-difference comparison of each custom gradient on, against the same checked step
with it off (``custom_check.quick_enabled = False``; the default "does the gradient use
``dy``" check runs in both), each in a fresh process, ``--reps`` times, the modes
alternating; medians of wall and CPU time, and the process's peak resident memory after
the step.

Programs: an MLP whose hidden layers each use a ``tf.custom_gradient`` activation (a
softplus with its hand-written derivative), with 0 (plain ReLU), 1, 5 and 20 such layers,
each layer its own function (20 distinct custom gradients: each is compared), and 20
layers sharing one function (compared once); graph mode (``tf.function``, as ``fit``
runs a step), and the 5-function MLP in an eager loop too.

    python benchmarks/bench_custom_gradient.py [--smoke] [--reps 5] [--json]
    python benchmarks/bench_custom_gradient.py --worker CASE MODE    (one measurement, one JSON line)
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import PYTHON, Figure, byte_compile_gradcheck, fmt_seconds, median, run_json

#: case -> (custom-gradient layers, distinct functions, eager)
CASES = {
    "none": (0, True, False),
    "custom1": (1, True, False),
    "custom5": (5, True, False),
    "custom20": (20, True, False),
    "shared20": (20, False, False),
    "eager5": (5, True, True),
}
SMOKE_CASES = ("none", "custom1", "eager5")
LABELS = {
    "none": "MLP, no custom gradient (ReLU)",
    "custom1": "MLP, 1 custom-gradient activation",
    "custom5": "MLP, 5 custom-gradient activations (5 functions)",
    "custom20": "MLP, 20 custom-gradient activations (20 functions)",
    "shared20": "MLP, 20 layers sharing one custom-gradient activation",
    "eager5": "eager loop, 5 custom-gradient activations (5 functions)",
}

_ACTIVATION = """
@tf.custom_gradient
def softplus_{i}(x):
    e = tf.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))

    return tf.math.log1p(e), grad
"""


def _activations(count: int, distinct: bool) -> list:
    """``count`` activations; distinct ones are separate functions (their own code)."""
    import tensorflow as tf

    made = []
    for i in range(count if distinct else min(count, 1)):
        namespace = {"tf": tf}
        # each exec'd source is its own code object, the user's (a "<string>" file)
        exec(compile(_ACTIVATION.format(i=i), "<string>", "exec"), namespace)
        made.append(namespace[f"softplus_{i}"])
    return made if distinct else made * count


def worker(case: str, mode: str, smoke: bool) -> dict:
    import numpy as np
    import tensorflow as tf

    @tf.function
    def warm(x):  # start the runtime: not timed, the same in every mode
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(x * x)
        return tape.gradient(y, x)

    warm(tf.ones([2]))
    import keras

    count, distinct, eager = CASES[case]
    width, batch = (8, 4) if smoke else (128, 64)
    activations = _activations(count, distinct) or ["relu"] * (5 if smoke else 20)
    layers = [keras.Input((32,))] + [keras.layers.Dense(width, activation=a) for a in activations]
    model = keras.Sequential([*layers, keras.layers.Dense(10)])
    optimizer = keras.optimizers.SGD(1e-3)
    x = np.random.rand(batch, 32).astype("float32")
    y = np.random.rand(batch, 10).astype("float32")

    def step_body(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    step = step_body if eager else tf.function(step_body)
    from gradcheck.trace.capture.hooks import activate
    from gradcheck.trace.capture.session import Session
    from gradcheck.trace.values import custom_check

    custom_check.quick_enabled = mode == "on"
    session = Session(steps=1, skip_updates=True, check_mode=True)  # as the CLI checks a script
    activate(session)
    custom_check.configure(session, check_custom_gradients=False)
    wall, cpu = time.perf_counter(), time.process_time()
    step(x, y)
    first_wall, first_cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    findings = sorted({f.code for f in session.findings})
    compared = len(session.__dict__.get("custom_gradients_compared", ()))
    return {
        "first_call_s": first_wall,
        "first_call_cpu_s": first_cpu,
        "peak_mb": peak_mb,
        "findings": findings,
        "compared": compared,
    }


# -- the driver --------------------------------------------------------------------------
def measure(case: str, reps: int, smoke: bool) -> dict:
    modes = ("off", "on")
    runs: dict[str, list[dict]] = {m: [] for m in modes}
    for rep in range(reps):
        for mode in modes if rep % 2 == 0 else tuple(reversed(modes)):
            cmd = [PYTHON, __file__, "--worker", case, mode] + (["--smoke"] if smoke else [])
            runs[mode].append(run_json(cmd))
    return runs


def figures_for(case: str, runs: dict, reps: int) -> list[Figure]:
    on, off = runs["on"], runs["off"]
    value, baseline = [r["first_call_s"] for r in on], [r["first_call_s"] for r in off]
    cpu, cpu_base = median([r["first_call_cpu_s"] for r in on]), median([r["first_call_cpu_s"] for r in off])
    ratio = median(value) / median(baseline)
    notes = (
        f"functions compared: {on[-1]['compared']}; findings on: {', '.join(on[-1]['findings']) or 'none'}, "
        f"off: {', '.join(off[-1]['findings']) or 'none'}; extra {fmt_seconds(median(value) - median(baseline))}"
    )
    time_figure = Figure(
        name=f"checked step: {LABELS[case]}",
        value=median(value),
        unit="s",
        baseline_name="the same checked step, the default comparison off",
        baseline=median(baseline),
        ratio=ratio,
        target="<= 1.10x",
        met=ratio <= 1.10,
        reps=reps,
        spread=value,
        baseline_spread=baseline,
        cpu_value=cpu,
        cpu_baseline=cpu_base,
        cpu_ratio=cpu / cpu_base,
        notes=notes,
    )
    mem, mem_base = [r["peak_mb"] for r in on], [r["peak_mb"] for r in off]
    memory_figure = Figure(
        name=f"peak memory: {LABELS[case]}",
        value=median(mem),
        unit="MB",
        baseline_name="the same checked step, the default comparison off",
        baseline=median(mem_base),
        ratio=median(mem) / median(mem_base),
        target="report",
        reps=reps,
        spread=mem,
        baseline_spread=mem_base,
    )
    return [time_figure, memory_figure]


def run(cases: list[str], reps: int, smoke: bool) -> dict:
    figures, raw = [], {}
    for case in cases:
        runs = measure(case, reps, smoke)
        raw[case] = runs
        figures += figures_for(case, runs, reps)
    return {"benchmark": "custom_gradient", "figures": [f.to_json() for f in figures], "raw": raw}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one run each")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--cases", help=f"comma-separated subset of {','.join(CASES)}")
    parser.add_argument("--worker", nargs=2, metavar=("CASE", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(*args.worker, args.smoke)))
        return 0
    byte_compile_gradcheck()
    cases = args.cases.split(",") if args.cases else list(SMOKE_CASES if args.smoke else CASES)
    result = run(cases, 1 if args.smoke else args.reps, args.smoke)
    if args.json:
        print(json.dumps(result))
        return 0
    for f in result["figures"]:
        if f["unit"] == "s":
            print(
                f"{f['name']}: {fmt_seconds(f['value'])} vs {fmt_seconds(f['baseline'])} off, "
                f"{f['ratio']:.2f}x (CPU {f['cpu_ratio']:.2f}x) [{f['notes']}]"
            )
        else:
            print(f"{f['name']}: {f['value']:.0f} MB vs {f['baseline']:.0f} MB off, {f['ratio']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
