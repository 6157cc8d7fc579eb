"""Steady-step overhead of ``gradcheck.install()``: the training step of a fresh 5-layer MLP
(``train_step``, as ``fit`` runs it: in a ``tf.function`` in graph mode, plainly with
``run_eagerly=True``), plain and checked steps alternating in blocks of ``BLOCK`` in one
process, after the checked model's first (checked, traced) step; ``--reps`` rounds of
``--steps`` each, the figure the median checked step over the median plain step. Short
alternating blocks are what survives a shared machine: a whole ``fit`` against another
(``_fit``, kept for the profile) drifts with the load by more than the overhead measured.

    python benchmarks/bench_install.py [--smoke] [--reps 9] [--steps 40] [--batch 64] [--json] [--profile MODE]

``--profile graph|eager`` runs the checked mode once under cProfile and prints the top
functions by cumulative time (steps 2-N only).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import Figure, byte_compile_gradcheck, fmt_seconds, median

MODES = ("graph", "eager")
#: Steps of each kind in a row. Putting the hooks in and taking them out around every single
#: step costs the next step about 5% by itself (the patched classes' method caches are
#: refilled), which no user pays: install() stays on. Blocks of 20 keep the alternation.
BLOCK = 20
TARGETS = {"graph": 1.05, "eager": 1.15}
#: The issue's batch. A larger ``--batch`` makes a longer step for the same per-step cost.
BATCH = 64


def _model(keras, eager: bool):
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [keras.Input((32,))] + [keras.layers.Dense(128, activation="relu") for _ in range(4)] + [keras.layers.Dense(10)]
    )
    model.compile(
        optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), run_eagerly=eager
    )
    return model


def _fit(keras, np, eager: bool, steps: int, batch: int = 64) -> list[float]:
    """Per-step wall times of steps 2..steps of one ``fit``."""
    model = _model(keras, eager)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(steps * batch, 32)).astype("float32")
    y = rng.integers(0, 10, size=(steps * batch,)).astype("int32")
    stamps: list[float] = []

    class Stamp(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            stamps.append(time.perf_counter())

    model.fit(x, y, batch_size=batch, epochs=1, verbose=0, shuffle=False, callbacks=[Stamp()])
    return [b - a for a, b in itertools.pairwise(stamps)]


def _interleaved(keras, np, mode: str, steps: int, batch: int = BATCH) -> dict:
    """Plain and checked steps alternating one by one in one process: two fresh models, the
    plain one traced (graph) or run (eager) without gradcheck, the checked one after
    ``install()``; gradcheck's hooks are in place exactly during the checked steps. Each
    step is ``train_step`` on one batch, called as ``fit`` calls it (graph mode: in a
    ``tf.function``), and its loss read back (the step is done)."""
    import tensorflow as tf

    import gradcheck
    from gradcheck import api
    from gradcheck.trace.capture import hooks

    eager = mode == "eager"
    rng = np.random.default_rng(0)
    data = (
        tf.constant(rng.normal(size=(batch, 32)).astype("float32")),
        tf.constant(rng.integers(0, 10, size=(batch,)).astype("int32")),
    )

    def step_of(model):
        return model.train_step if eager else tf.function(model.train_step)

    plain = step_of(_model(keras, eager))
    plain(data)
    gradcheck.install(stream=open(os.devnull, "w"))  # noqa: SIM115
    session = api._INSTALLED
    try:
        checked = step_of(_model(keras, eager))
        checked(data)  # the first (checked) step
        hooks.deactivate(session)
        times: dict[bool, list[float]] = {False: [], True: []}
        cpu: dict[bool, list[float]] = {False: [], True: []}
        for i in range(max(1, steps // BLOCK)):
            for is_checked in (False, True) if i % 2 == 0 else (True, False):
                if is_checked:
                    hooks.activate(session)
                for _ in range(BLOCK):
                    c0, t0 = time.process_time(), time.perf_counter()
                    out = (checked if is_checked else plain)(data)
                    float(out["loss"])
                    times[is_checked].append(time.perf_counter() - t0)
                    cpu[is_checked].append(time.process_time() - c0)
                if is_checked:
                    hooks.deactivate(session)
        codes = sorted({f.code for f in session.findings})
    finally:
        if api._INSTALLED is session:
            hooks.activate(session)
            gradcheck.uninstall()
    return {
        "plain": times[False],
        "checked": times[True],
        "cpu_plain": cpu[False],
        "cpu_checked": cpu[True],
        "codes": codes,
    }


def run(reps: int, steps: int, modes: tuple[str, ...], batch: int = BATCH) -> dict:
    import keras
    import numpy as np

    figures, raw = [], {}
    for mode in modes:
        plain, checked, ratios, cpu_p, cpu_c, found = [], [], [], [], [], set()
        for _ in range(reps):
            one = _interleaved(keras, np, mode, steps, batch)
            plain.append(median(one["plain"]))
            checked.append(median(one["checked"]))
            cpu_p.append(sum(one["cpu_plain"]))
            cpu_c.append(sum(one["cpu_checked"]))
            ratios.append(checked[-1] / plain[-1])
            found.update(one["codes"])
        ratio = median(checked) / median(plain)
        raw[mode] = {"plain": plain, "checked": checked, "ratios": ratios}
        spread = f"{min(ratios):.3f}-{max(ratios):.3f}"
        figures.append(
            Figure(
                name=f"install() steady step ({mode}): train_step of a 5-layer MLP, batch {batch}, {steps} steps "
                "each, interleaved",
                value=median(checked),
                unit="s",
                baseline_name="the same step without install()",
                baseline=median(plain),
                ratio=ratio,
                target=f"<= {TARGETS[mode]:.2f}x",
                met=ratio <= TARGETS[mode],
                reps=reps,
                spread=checked,
                baseline_spread=plain,
                cpu_value=median(cpu_c),
                cpu_baseline=median(cpu_p),
                cpu_ratio=median(cpu_c) / median(cpu_p),
                notes=f"{reps} rounds of {steps} plain and {steps} checked steps alternating; per-round ratio "
                f"{spread}; findings under install(): {', '.join(found) or 'none'}",
            ).to_json()
        )
    return {"benchmark": "install", "figures": figures, "raw": raw, "load": os.getloadavg()}


def profile(mode: str, steps: int) -> None:
    import cProfile
    import pstats

    import keras
    import numpy as np

    import gradcheck

    _fit(keras, np, mode == "eager", 3)
    gradcheck.install(stream=open(os.devnull, "w"))  # noqa: SIM115
    model = _model(keras, mode == "eager")
    x = np.random.default_rng(0).normal(size=(steps * 64, 32)).astype("float32")
    y = np.zeros((steps * 64,), "int32")
    model.fit(x[:64], y[:64], batch_size=64, verbose=0)  # the first (checked, traced) step
    prof = cProfile.Profile()
    prof.enable()
    model.fit(x, y, batch_size=64, verbose=0, shuffle=False)
    prof.disable()
    gradcheck.uninstall()
    pstats.Stats(prof).sort_stats("cumulative").print_stats(45)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="one pair of short runs per mode")
    parser.add_argument("--reps", type=int, default=None, help="rounds per mode (default 3)")
    parser.add_argument("--steps", type=int, default=None, help="steps of each kind per round (default 300)")
    parser.add_argument("--modes", default="graph,eager")
    parser.add_argument("--batch", type=int, default=BATCH, help=f"batch size (default {BATCH}, the issue's)")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    parser.add_argument("--profile", choices=MODES, default=None)
    args = parser.parse_args(argv)
    steps = args.steps or (6 if args.smoke else 300)
    if args.profile:
        profile(args.profile, steps)
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
