"""Trace-engine overhead: the first call of a train step checked vs plain, each in a fresh
process (``trace_worker.py``), ``--reps`` times, plain and checked alternating; medians.

Graph mode (``tf.function(model.train_step)``, as ``fit`` and ``check_model`` run it):
the DQN of examples/dqn_broken.py (broken: hooks + diagnosis) and its one-hot fixed
variant (clean: hooks only), ``keras.applications.ResNet50(weights=None)`` and a 12-layer
Transformer encoder. Eager mode: a custom loop (``GradientTape`` + ``apply_gradients``)
over an MLP and a 4-layer Transformer encoder, first step and steady state.

    python benchmarks/bench_trace.py [--smoke] [--reps 5] [--models dqn_fixed,...] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import BENCH_DIR, PYTHON, Figure, byte_compile_gradcheck, fmt_seconds, median, run_json

GRAPH_MODELS = ("dqn_fixed", "dqn_broken", "resnet50", "transformer")
EAGER_MODELS = ("eager_mlp", "eager_transformer")
#: The large models in eager mode (issue 26's scale figures): not in the default set.
LARGE_EAGER_MODELS = ("eager_resnet50", "eager_transformer12")
SMOKE_MODELS = ("dqn_fixed", "dqn_broken", "eager_mlp")
LABELS = {
    "dqn_fixed": "DQN, clean (one-hot fixed variant): hooks only",
    "dqn_broken": "DQN, broken (examples/dqn_broken.py): hooks + diagnosis",
    "resnet50": "ResNet50(weights=None), clean",
    "transformer": "12-layer Transformer encoder, clean",
    "eager_mlp": "eager loop, MLP",
    "eager_transformer": "eager loop, 4-layer Transformer encoder",
    "eager_resnet50": "eager loop, ResNet50(weights=None)",
    "eager_transformer12": "eager loop, 12-layer Transformer encoder",
}


def measure(model: str, reps: int, smoke: bool, steps: int, preload: bool = False) -> dict:
    runs: dict[str, list[dict]] = {"plain": [], "checked": []}
    for rep in range(reps):
        order = ("plain", "checked") if rep % 2 == 0 else ("checked", "plain")
        for mode in order:
            cmd = [PYTHON, str(BENCH_DIR / "trace_worker.py"), model, mode, "--steps", str(steps)]
            if smoke:
                cmd.append("--smoke")
            if preload and mode == "checked":
                cmd.append("--preload")
            runs[mode].append(run_json(cmd))
    return runs


def ratio_interval(checked: list[float], plain: list[float], n: int = 2000) -> tuple[float, float]:
    """A 90% bootstrap interval of median(checked) / median(plain): how far noise alone
    moves the ratio on this machine."""
    rng = random.Random(0)
    ratios = sorted(
        median(rng.choices(checked, k=len(checked))) / median(rng.choices(plain, k=len(plain))) for _ in range(n)
    )
    return ratios[int(0.05 * n)], ratios[int(0.95 * n) - 1]


def versus(
    name: str, runs: dict, key: str, baseline_name: str, reps: int, target: str = "report", met=None, notes: str = ""
) -> Figure:
    """The checked runs' ``{key}_s`` (wall) and ``{key}_cpu_s`` against the plain runs'."""
    checked = [r[f"{key}_s"] for r in runs["checked"]]
    plain = [r[f"{key}_s"] for r in runs["plain"]]
    checked_cpu = median([r[f"{key}_cpu_s"] for r in runs["checked"]])
    plain_cpu = median([r[f"{key}_cpu_s"] for r in runs["plain"]])
    return Figure(
        name=name,
        value=median(checked),
        unit="s",
        baseline_name=baseline_name,
        baseline=median(plain),
        ratio=median(checked) / median(plain),
        target=target,
        met=met,
        reps=reps,
        spread=checked,
        baseline_spread=plain,
        cpu_value=checked_cpu,
        cpu_baseline=plain_cpu,
        cpu_ratio=checked_cpu / plain_cpu,
        notes=notes,
    )


def summarize(model: str, runs: dict, reps: int) -> list[Figure]:
    plain = [r["first_call_s"] for r in runs["plain"]]
    checked = [r["first_call_s"] for r in runs["checked"]]
    low, high = ratio_interval(checked, plain)
    last = runs["checked"][-1]
    info = [f"90% bootstrap interval of the ratio {low:.2f}-{high:.2f}"]
    if last.get("preload_s") is not None:
        preload = median([r["preload_s"] for r in runs["checked"]])
        info.append(f"importing the diagnosis modules took {fmt_seconds(preload)} before the step")
    if "graph_ops" in runs["plain"][-1]:
        info.append(f"{runs['plain'][-1]['graph_ops']:,} ops in the traced step")
    info.append(f"{last['trainable_variables']} trainable variables")
    info.append(f"findings: {', '.join(last.get('findings') or []) or 'none'}")
    if last.get("error"):
        info.append("both modes end in Keras's 'No gradients provided' error, as the script does")
    if last.get("internal_errors"):
        info.append(f"internal errors: {last['internal_errors']}")
    info.append(
        f"model construction {fmt_seconds(median([r['build_s'] for r in runs['checked']]))} checked vs "
        f"{fmt_seconds(median([r['build_s'] for r in runs['plain']]))} plain (not in the figure)"
    )
    eager = model.startswith("eager")
    ratio = median(checked) / median(plain)
    figures = [
        versus(
            f"{'first step' if eager else 'first call (trace + run)'}: {LABELS[model]}",
            runs,
            "first_call",
            "the same first call, plain",
            reps,
            target="report" if eager else "<= 1.10x",
            met=None if eager else ratio <= 1.10,
            notes="; ".join(info),
        )
    ]
    if eager:
        figures.append(
            versus(
                f"steady step (median of the next steps): {LABELS[model]}", runs, "steady", "the same step, plain", reps
            )
        )
    return figures


#: Fresh processes per mode: a first call of tens of milliseconds needs more of them to
#: see through the noise of process start-up than one of seconds.
DEFAULT_REPS = {"dqn_fixed": 15, "dqn_broken": 15, "eager_mlp": 9}


def run(models: list[str], reps: int | None, smoke: bool, steps: int, preload: bool = False) -> dict:
    figures, raw = [], {}
    for model in models:
        n = reps or (1 if smoke else DEFAULT_REPS.get(model, 5))
        runs = measure(model, n, smoke, steps, preload)
        raw[model] = runs
        new = summarize(model, runs, n)
        if preload:
            for fig in new:
                fig.name += " [diagnosis modules imported before the step]"
        figures += new
    return {"benchmark": "trace", "runs": raw, "figures": [f.to_json() for f in figures]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny models, the DQN and the eager MLP only, one run")
    parser.add_argument(
        "--reps", type=int, default=None, help="processes per mode and model (default: 15 for the DQN, 9 MLP, 5 others)"
    )
    parser.add_argument(
        "--models",
        default=None,
        help=f"comma-separated, of {', '.join(GRAPH_MODELS + EAGER_MODELS + LARGE_EAGER_MODELS)}",
    )
    parser.add_argument("--steps", type=int, default=None, help="eager loop: steady-state steps (default 10)")
    parser.add_argument(
        "--preload",
        action="store_true",
        help="checked runs import gradcheck's diagnosis modules before the timed step (a what-if)",
    )
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    args = parser.parse_args(argv)
    byte_compile_gradcheck()
    models = (
        args.models.split(",") if args.models else list(SMOKE_MODELS if args.smoke else GRAPH_MODELS + EAGER_MODELS)
    )
    reps = args.reps
    steps = args.steps or (2 if args.smoke else 10)
    out = run(models, reps, args.smoke, steps, args.preload)
    if args.json:
        print(json.dumps(out))
        return
    for fig in out["figures"]:
        print(
            f"{fig['name']}: {fmt_seconds(fig['value'])} vs {fmt_seconds(fig['baseline'])} plain = "
            f"{fig['ratio']:.2f}x (CPU {fig['cpu_ratio']:.2f}x; target {fig['target']})"
        )


if __name__ == "__main__":
    main()
