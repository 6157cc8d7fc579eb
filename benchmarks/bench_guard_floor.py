"""The floor under any same-step guard of ``install()`` in graph mode, on the issue's step:
``fit``'s ``train_step`` of a fresh 5-layer MLP in a ``tf.function`` (as ``bench_install.py``
runs it), plain and with hand-built guards of increasing reach, each added by TensorFlow
alone to a model of its own while its step is traced, and gradcheck's own guard; every
variant runs in blocks of ``BLOCK`` steps, the order rotating each round, in one process.

    python benchmarks/bench_guard_floor.py [--rounds 30] [--batch 64] [--json]

The guards, each one doing more than the one before:

- ``detect``: one ``L2Loss`` per gradient, and the verdict ("every gradient is finite and not
  all zero") assigned to a variable. It can say that a step went wrong, not where.
- ``branch``: the same verdict decides an unlowered ``If`` (a function call, as
  ``install()``'s); the branch that would diagnose reads nothing.
- ``branch+grads``: that branch reads the gradients.
- ``branch+grads+weights``: it also reads the weights' values before the step's update, which
  a same-step diagnosis needs to send a gradient back through a ``MatMul``. A variable whose
  read value is still held is copied before its update.
- ``gradcheck``: ``install()``'s guard, whose branch also reads the forward values.

A diagnosis of the step that went wrong (a transient NaN is gone, or has spread into the
weights, by the next one) needs at least ``branch+grads+weights``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import median
from benchmarks.bench_install import BATCH, BLOCK, _model

GUARDS = ("detect", "branch", "branch+grads", "branch+grads+weights")


def _guarded_gradient(tf, original, guard: str):
    """``GradientTape.gradient`` that adds ``guard`` to the graph being traced."""
    from gradcheck.trace.values.degenerate import _unlowered as unlowered

    flag = tf.Variable(True, trainable=False)

    def gradient(tape, target, sources, *args, **kwargs):
        grads = original(tape, target, sources, *args, **kwargs)
        if tf.executing_eagerly():
            return grads
        present = [g for g in tf.nest.flatten(grads) if g is not None]
        sums = tf.stack([tf.nn.l2_loss(g) for g in present])
        healthy = tf.reduce_all(tf.logical_and(sums > 0, sums < float("inf")))
        if guard == "detect":
            flag.assign(healthy)
            return grads
        held = []
        if guard.startswith("branch+grads"):
            held += present
        if guard == "branch+grads+weights":
            held += [tf.convert_to_tensor(v) for v in tf.nest.flatten(sources)]

        def diagnose():  # never taken here: every gradient is healthy
            flag.assign(tf.add_n([tf.reduce_sum(t) for t in held]) > 0 if held else False)
            return tf.constant(True)

        unlowered(tf.cond(healthy, lambda: tf.constant(False), diagnose))  # a function call, as install()'s
        return grads

    return gradient


def _variants(tf, keras, data) -> tuple[dict, object]:
    """Each variant's step, traced and run once; and the gradcheck session (whose hooks are
    in place only during gradcheck's own blocks, as ``bench_install.py`` does)."""
    import gradcheck
    from gradcheck import api
    from gradcheck.trace.capture import hooks

    steps = {}
    plain = tf.function(_model(keras, False).train_step)
    plain(data)
    steps["plain"] = plain
    original = tf.GradientTape.gradient
    for guard in GUARDS:
        tf.GradientTape.gradient = _guarded_gradient(tf, original, guard)
        try:
            step = tf.function(_model(keras, False).train_step)
            step(data)
        finally:
            tf.GradientTape.gradient = original
        steps[guard] = step
    gradcheck.install(stream=open(os.devnull, "w"))  # noqa: SIM115
    session = api._INSTALLED
    step = tf.function(_model(keras, False).train_step)
    step(data)  # the first (checked) step
    hooks.deactivate(session)
    steps["gradcheck"] = step
    return steps, session


def run(rounds: int, batch: int = BATCH) -> dict:
    import keras
    import numpy as np
    import tensorflow as tf

    import gradcheck
    from gradcheck.trace.capture import hooks

    tf.get_logger().setLevel("ERROR")  # each variant's model traces its own step: not a retrace to warn of
    rng = np.random.default_rng(0)
    data = (
        tf.constant(rng.normal(size=(batch, 32)).astype("float32")),
        tf.constant(rng.integers(0, 10, size=(batch,)).astype("int32")),
    )
    steps, session = _variants(tf, keras, data)
    names = list(steps)
    times: dict[str, list[float]] = {name: [] for name in names}
    try:
        for r in range(rounds):
            k = r % len(names)
            for name in names[k:] + names[:k]:
                if name == "gradcheck":
                    hooks.activate(session)
                for _ in range(BLOCK):
                    t0 = time.perf_counter()
                    float(steps[name](data)["loss"])
                    times[name].append(time.perf_counter() - t0)
                if name == "gradcheck":
                    hooks.deactivate(session)
    finally:
        hooks.activate(session)
        gradcheck.uninstall()
    base = median(times["plain"])
    return {
        "benchmark": "guard_floor",
        "batch": batch,
        "rounds": rounds,
        "step": {name: median(t) for name, t in times.items()},
        "ratio": {name: median(t) / base for name, t in times.items()},
        "load": os.getloadavg(),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help=f"rounds of {BLOCK} steps per variant (default 30)")
    parser.add_argument("--batch", type=int, default=BATCH, help=f"batch size (default {BATCH}, the issue's)")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    args = parser.parse_args(argv)
    out = run(args.rounds, args.batch)
    if args.json:
        print(json.dumps(out))
        return
    for name, ratio in out["ratio"].items():
        print(f"{name:22s} {out['step'][name] * 1e6:7.1f} µs  {ratio:.3f}x")
    print(f"batch {out['batch']}, {out['rounds']} rounds of {BLOCK}; load average {out['load']}")


if __name__ == "__main__":
    main()
