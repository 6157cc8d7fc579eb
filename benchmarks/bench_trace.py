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
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import BENCH_DIR, PYTHON, Figure, fmt_seconds, median, run_json

GRAPH_MODELS = ("dqn_fixed", "dqn_broken", "resnet50", "transformer")
EAGER_MODELS = ("eager_mlp", "eager_transformer")
SMOKE_MODELS = ("dqn_fixed", "dqn_broken", "eager_mlp")
LABELS = {
    "dqn_fixed": "DQN, clean (one-hot fixed variant): hooks only",
    "dqn_broken": "DQN, broken (examples/dqn_broken.py): hooks + diagnosis",
    "resnet50": "ResNet50(weights=None), clean",
    "transformer": "12-layer Transformer encoder, clean",
    "eager_mlp": "eager loop, MLP",
    "eager_transformer": "eager loop, 4-layer Transformer encoder",
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


def summarize(model: str, runs: dict, reps: int) -> list[Figure]:
    plain = [r["first_call_s"] for r in runs["plain"]]
    checked = [r["first_call_s"] for r in runs["checked"]]
    plain_cpu = median([r["first_call_cpu_s"] for r in runs["plain"]])
    checked_cpu = median([r["first_call_cpu_s"] for r in runs["checked"]])
    last = runs["checked"][-1]
    info = []
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
    figures = [
        Figure(
            name=f"{'first step' if eager else 'first call (trace + run)'}: {LABELS[model]}",
            value=median(checked),
            unit="s",
            baseline_name="the same first call, plain",
            baseline=median(plain),
            ratio=median(checked) / median(plain),
            target="report" if eager else "<= 1.10x",
            met=None if eager else median(checked) / median(plain) <= 1.10,
            reps=reps,
            spread=checked,
            baseline_spread=plain,
            cpu_value=checked_cpu,
            cpu_baseline=plain_cpu,
            cpu_ratio=checked_cpu / plain_cpu,
            notes="; ".join(info),
        )
    ]
    if eager:
        plain_steady = [r["steady_s"] for r in runs["plain"]]
        checked_steady = [r["steady_s"] for r in runs["checked"]]
        plain_steady_cpu = median([r["steady_cpu_s"] for r in runs["plain"]])
        checked_steady_cpu = median([r["steady_cpu_s"] for r in runs["checked"]])
        figures.append(
            Figure(
                name=f"steady step (median of the next steps): {LABELS[model]}",
                value=median(checked_steady),
                unit="s",
                baseline_name="the same step, plain",
                baseline=median(plain_steady),
                ratio=median(checked_steady) / median(plain_steady),
                target="report",
                met=None,
                reps=reps,
                spread=checked_steady,
                baseline_spread=plain_steady,
                cpu_value=checked_steady_cpu,
                cpu_baseline=plain_steady_cpu,
                cpu_ratio=checked_steady_cpu / plain_steady_cpu,
            )
        )
    return figures


def run(models: list[str], reps: int, smoke: bool, steps: int, preload: bool = False) -> dict:
    figures, raw = [], {}
    for model in models:
        runs = measure(model, reps, smoke, steps, preload)
        raw[model] = runs
        figures += summarize(model, runs, reps)
        if preload:
            for fig in figures:
                fig.name += " [diagnosis modules imported before the step]"
    return {"benchmark": "trace", "runs": raw, "figures": [f.to_json() for f in figures]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny models, the DQN and the eager MLP only, one run")
    parser.add_argument("--reps", type=int, default=None, help="fresh processes per mode and model (default 5)")
    parser.add_argument("--models", default=None, help=f"comma-separated, of {', '.join(GRAPH_MODELS + EAGER_MODELS)}")
    parser.add_argument("--steps", type=int, default=None, help="eager loop: steady-state steps (default 10)")
    parser.add_argument(
        "--preload",
        action="store_true",
        help="checked runs import gradcheck's diagnosis modules before the timed step (a what-if)",
    )
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    args = parser.parse_args(argv)
    models = (
        args.models.split(",") if args.models else list(SMOKE_MODELS if args.smoke else GRAPH_MODELS + EAGER_MODELS)
    )
    reps = args.reps or (1 if args.smoke else 5)
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
