"""What the GC2xx/GC301 checks cost: the first call of a train step under the tracer with
them, against the same tracer without them (the registry's ``values`` phase a no-op), each
in a fresh process, ``--reps`` times, the modes alternating; medians. Plain (no gradcheck)
is measured too, for scale.

Sessions are set up as the CLI checks a script (one step, no update). Cases: a healthy MLP
and a healthy 4-block Transformer encoder in graph mode (what every check pays: the GC203
walk at trace time and one host callback fed the step's gradients and values), a
graph-mode MLP with a dead ReLU (the diagnosis runs: the backward pass replayed op by op on
the host, and the analysis), a healthy eager loop's first step (one pass over the
gradients), an MLP whose activation is a ``tf.custom_gradient`` with and without
``--check-custom-gradients``, and the healthy MLP under ``gradcheck.watch()`` (in-graph
flags and a ``tf.cond`` branch, so that later steps pay almost nothing).

    python benchmarks/bench_degenerate.py [--smoke] [--reps 5] [--json]
    python benchmarks/bench_degenerate.py --worker MODEL MODE    (one measurement, one JSON line)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import PYTHON, Figure, byte_compile_gradcheck, fmt_seconds, median, run_json

CASES = ("mlp", "transformer", "dead_relu", "eager_mlp", "custom", "mlp_watch")
SMOKE_CASES = ("mlp", "dead_relu", "eager_mlp", "custom", "mlp_watch")
LABELS = {
    "mlp": "graph-mode MLP, healthy (flags + cond + trace-time walk)",
    "transformer": "graph-mode 4-block Transformer encoder, healthy",
    "dead_relu": "graph-mode MLP with a dead ReLU (GC201 diagnosis runs)",
    "eager_mlp": "eager loop, first step, healthy",
    "custom": "graph-mode MLP with a tf.custom_gradient activation, GC301 on vs off",
    "mlp_watch": "graph-mode MLP, healthy, under gradcheck.watch() (flags + a tf.cond branch)",
}


# -- the worker (one process, one measurement) --------------------------------------------
def _model(case: str, smoke: bool):
    import keras
    import tensorflow as tf

    width = 16 if smoke else 256
    if case == "transformer":
        d, seq = (16, 8) if smoke else (128, 32)
        inputs = keras.Input((seq, d))
        h = inputs
        for _ in range(1 if smoke else 4):
            a = keras.layers.MultiHeadAttention(num_heads=2 if smoke else 4, key_dim=d // 4)(h, h)
            h = keras.layers.LayerNormalization()(h + a)
            f = keras.layers.Dense(d * 4, activation="gelu")(h)
            h = keras.layers.LayerNormalization()(h + keras.layers.Dense(d)(f))
        out = keras.layers.Dense(10)(keras.layers.GlobalAveragePooling1D()(h))
        return keras.Model(inputs, out), (8 if not smoke else 2, seq, d)
    activation = "relu"
    bias = "zeros"
    if case == "dead_relu":
        bias = keras.initializers.Constant(-1e4)
    if case == "custom":

        @tf.custom_gradient
        def softplus(x):
            e = tf.exp(x)
            return tf.math.log1p(e), lambda dy: dy * (1 - 1 / (1 + e))

        activation = softplus
    layers = [keras.Input((32,))]
    for _ in range(1 if smoke else 3):
        layers.append(keras.layers.Dense(width, activation=activation, bias_initializer=bias))
    layers.append(keras.layers.Dense(10))
    return keras.Sequential(layers), (64 if not smoke else 8, 32)


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

    model, shape = _model(case, smoke)
    optimizer = keras.optimizers.SGD(1e-3)
    x = np.random.rand(*shape).astype("float32")
    y = np.random.rand(shape[0], 10).astype("float32")

    def step_body(x, y):
        with tf.GradientTape() as tape:
            out = model(x)
            loss = tf.reduce_mean(tf.square(out - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    step = step_body if case == "eager_mlp" else tf.function(step_body)
    session = None
    if mode != "plain":
        from gradcheck.trace.capture.hooks import activate, tape
        from gradcheck.trace.capture.session import Session
        from gradcheck.trace.values import custom_check

        if mode.startswith("no_gc2"):
            tape._values_phase = lambda *args, **kwargs: None
        # as the CLI checks a script: one step, no update (``watch``: every step, updates applied)
        watched = mode.endswith("_watch")
        session = Session(steps=None if watched else 1, skip_updates=not watched, check_mode=not watched)
        activate(session)
        custom_check.configure(session, check_custom_gradients=mode.startswith("gc301"))
    wall, cpu = time.perf_counter(), time.process_time()
    step(x, y)
    first_wall, first_cpu = time.perf_counter() - wall, time.process_time() - cpu
    findings = sorted({f.code for f in session.findings}) if session is not None else []
    return {"first_call_s": first_wall, "first_call_cpu_s": first_cpu, "findings": findings}


# -- the driver --------------------------------------------------------------------------
def measure(case: str, modes: tuple[str, ...], reps: int, smoke: bool) -> dict:
    runs: dict[str, list[dict]] = {m: [] for m in modes}
    for rep in range(reps):
        order = modes if rep % 2 == 0 else tuple(reversed(modes))
        for mode in order:
            cmd = [PYTHON, __file__, "--worker", case, mode] + (["--smoke"] if smoke else [])
            runs[mode].append(run_json(cmd))
    return runs


def figure(name: str, runs: dict, mode: str, base: str, base_name: str, reps: int, target: str, notes: str) -> Figure:
    value = [r["first_call_s"] for r in runs[mode]]
    baseline = [r["first_call_s"] for r in runs[base]]
    cpu, cpu_base = (median([r["first_call_cpu_s"] for r in runs[m]]) for m in (mode, base))
    ratio = median(value) / median(baseline)
    limit = float(target.split()[-1].rstrip("x")) if target.startswith("<=") else None
    return Figure(
        name=name,
        value=median(value),
        unit="s",
        baseline_name=base_name,
        baseline=median(baseline),
        ratio=ratio,
        target=target,
        met=None if limit is None else ratio <= limit,
        reps=reps,
        spread=value,
        baseline_spread=baseline,
        cpu_value=cpu,
        cpu_baseline=cpu_base,
        cpu_ratio=cpu / cpu_base,
        notes=notes,
    )


def run(cases: list[str], reps: int, smoke: bool) -> dict:
    figures, raw = [], {}
    for case in cases:
        if case == "custom":
            runs = measure(case, ("gc2", "gc301"), reps, smoke)
            raw[case] = runs
            notes = f"findings with GC301: {', '.join(runs['gc301'][-1]['findings']) or 'none'}"
            figures.append(
                figure(
                    f"first call: {LABELS[case]}",
                    runs,
                    "gc301",
                    "gc2",
                    "the same first call, GC301 off",
                    reps,
                    "report",
                    notes,
                )
            )
            continue
        if case == "mlp_watch":
            runs = measure("mlp", ("plain", "no_gc2_watch", "gc2_watch"), reps, smoke)
            raw[case] = runs
            figures.append(
                figure(
                    f"first call: {LABELS[case]}",
                    runs,
                    "gc2_watch",
                    "no_gc2_watch",
                    "the same first call under watch() without the GC2xx checks",
                    reps,
                    "report",
                    f"plain {fmt_seconds(median([r['first_call_s'] for r in runs['plain']]))}",
                )
            )
            continue
        runs = measure(case, ("plain", "no_gc2", "gc2"), reps, smoke)
        raw[case] = runs
        notes = (
            f"findings: {', '.join(runs['gc2'][-1]['findings']) or 'none'}; plain {fmt_seconds(median([r['first_call_s'] for r in runs['plain']]))}, "
            f"tracer without GC2xx {fmt_seconds(median([r['first_call_s'] for r in runs['no_gc2']]))}"
        )
        target = "report" if case == "dead_relu" else "<= 1.10x"
        figures.append(
            figure(
                f"first call: {LABELS[case]}",
                runs,
                "gc2",
                "no_gc2",
                "the same first call under the tracer without the GC2xx checks",
                reps,
                target,
                notes,
            )
        )
    return {"benchmark": "degenerate", "runs": raw, "figures": [f.to_json() for f in figures]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=2, metavar=("CASE", "MODE"))
    parser.add_argument("--smoke", action="store_true", help="tiny models, one run each")
    parser.add_argument("--reps", type=int, default=None, help="processes per mode and case (default 5)")
    parser.add_argument("--cases", default=None, help=f"comma-separated, of {', '.join(CASES)}")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(*args.worker, args.smoke)))
        return
    byte_compile_gradcheck()
    cases = args.cases.split(",") if args.cases else list(SMOKE_CASES if args.smoke else CASES)
    reps = args.reps or (1 if args.smoke else 5)
    out = run(cases, reps, args.smoke)
    if args.json:
        print(json.dumps(out))
        return
    for fig in out["figures"]:
        print(
            f"{fig['name']}: {fmt_seconds(fig['value'])} vs {fmt_seconds(fig['baseline'])} "
            f"({fig['baseline_name']}) = {fig['ratio']:.2f}x (CPU {fig['cpu_ratio']:.2f}x; target {fig['target']}); "
            f"{fig['notes']}"
        )


if __name__ == "__main__":
    main()
