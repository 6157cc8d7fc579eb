"""What keeping a step's values for a same-step diagnosis costs, on TensorFlow alone: a
``tf.function`` of 40 elementwise layers, run plain and with an unlowered ``If`` at its end
whose branch (taken only when the output is bad, never here) reads ``held`` of the layers'
outputs, as ``install()``'s guard reads the values its diagnosis needs. Every variant runs in
blocks of 200 calls, alternating, in one process.

    python benchmarks/bench_held_values.py [--rounds 30] [--json]

The ``If`` whose branch is never taken costs a function call; each value it holds costs
on top of that, because a tensor with one more reader is never overwritten in place: the
op after it allocates a new buffer instead of reusing the input's (TensorFlow's
``forward_input``), and a variable whose read value is still held is copied before its
update. This is the floor under ``install()``'s graph-mode guard (docs/performance.md).
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

LAYERS = 40
HELD = (1, 10, 40)
BLOCK = 200


def _step(tf, held: int | None):
    """The step; ``held`` None: no branch at all."""
    from tensorflow.python.ops import resource_variable_ops

    from gradcheck.trace.values.degenerate import _unlowered as unlowered

    flag = resource_variable_ops.ResourceVariable(False)

    @tf.function
    def step(x):
        outs = []
        y = x
        for _ in range(LAYERS):
            y = tf.nn.relu(y * 1.01 + 0.1)
            outs.append(y)
        total = tf.reduce_sum(y)
        if held is None:
            return total
        kept = outs[:held]

        def diagnose():  # never runs: the sum is finite
            flag.assign(tf.add_n([tf.reduce_sum(t) for t in kept]) > 0)
            return tf.constant(True)

        unlowered(
            tf.cond(tf.math.is_finite(total), lambda: tf.constant(False), diagnose)
        )  # a function call, as the guard's
        return total

    return step


def run(rounds: int) -> dict:
    import tensorflow as tf

    x = tf.random.normal([64, 128], seed=0)
    variants = {"plain": _step(tf, None), **{f"held {n}": _step(tf, n) for n in HELD}}
    for step in variants.values():
        step(x)
    times: dict[str, list[float]] = {name: [] for name in variants}
    names = list(variants)
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            t0 = time.perf_counter()
            for _ in range(BLOCK):
                variants[name](x)
            times[name].append((time.perf_counter() - t0) / BLOCK)
    plain = median(times["plain"])
    rows = {name: {"us": median(ts) * 1e6, "ratio": median(ts) / plain} for name, ts in times.items()}
    base = rows[f"held {HELD[0]}"]["us"]
    per_value = (rows[f"held {HELD[-1]}"]["us"] - base) / (HELD[-1] - HELD[0])
    return {"benchmark": "held_values", "rows": rows, "us_per_held_value": per_value, "load": os.getloadavg()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.rounds)
    if args.json:
        print(json.dumps(result))
        return
    for name, row in result["rows"].items():
        print(f"{name:>10}: {row['us']:7.1f} µs per call, {row['ratio']:.3f}x plain")
    print(f"each held value: {result['us_per_held_value']:.2f} µs (from held {HELD[0]} to {HELD[-1]})")


if __name__ == "__main__":
    main()
