"""Time to verdict: ``gradcheck examples/dqn_broken.py`` (spawn to exit, the finding
printed) against ``python -c "import tensorflow"``, both fresh processes, ``--reps``
times interleaved; medians. Also measured, for the breakdown: importing TensorFlow and
Keras and leaving with ``os._exit`` as gradcheck's child does (no interpreter teardown),
and running the broken script plainly up to Keras's error.

    python benchmarks/bench_verdict.py [--smoke] [--reps 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import PYTHON, Figure, byte_compile_gradcheck, fmt_seconds, median, wall_time

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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="gradcheck and the import only, once")
    parser.add_argument("--reps", type=int, default=None, help="runs of each command (default 5)")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    args = parser.parse_args(argv)
    byte_compile_gradcheck()
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
