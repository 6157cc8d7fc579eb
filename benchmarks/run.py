"""Run gradcheck's benchmarks and print every figure against its same-run baseline.

    python benchmarks/run.py                      # everything, full sizes (about 20 min)
    python benchmarks/run.py --smoke -j 2         # tiny sizes, one run each (CI: about 30 s)
    python benchmarks/run.py --only scaling,static --out benchmarks/results/mine.json

Benchmarks (each its own script, run here in a fresh process with ``--json``):
``trace`` (graph-mode first call, checked vs plain), ``eager`` (custom eager loop,
checked vs plain), ``verdict`` (``gradcheck examples/dqn_broken.py`` vs importing
TensorFlow), ``install`` (``gradcheck.install()``'s steady step in ``fit``), ``static`` (lines/s vs ``ast.parse`` and pylint), ``scaling`` (the cut walk
on synthetic graphs of 1k-100k ops). See benchmarks/README.md and docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import BENCH_DIR, PYTHON, fmt_value, machine, run_json

BENCHMARKS = ("trace", "eager", "install", "verdict", "static", "scaling")


def command(name: str, smoke: bool, reps: int | None) -> list[str]:
    script = {"trace": "bench_trace.py", "eager": "bench_trace.py"}.get(name, f"bench_{name}.py")
    cmd = [PYTHON, str(BENCH_DIR / script), "--json"]
    if name == "trace":
        cmd += ["--models", "dqn_broken" if smoke else "dqn_fixed,dqn_broken,resnet50,transformer"]
    elif name == "eager":
        cmd += ["--models", "eager_mlp" if smoke else "eager_mlp,eager_transformer"]
    if smoke:
        cmd.append("--smoke")
    if reps is not None:
        cmd += ["--reps", str(reps)]
    return cmd


def _ratio_text(fig: dict) -> str:
    text = f"{fig['ratio']:.3g}x" if fig.get("ratio") is not None else "-"
    if fig.get("cpu_ratio") is not None:
        text += f" (CPU {fig['cpu_ratio']:.3g}x)"
    return text


def table(figures: list[dict]) -> str:
    rows = [("figure", "value", "baseline", "ratio", "target", "met")]
    for fig in figures:
        met = {True: "yes", False: "NO", None: "-"}[fig.get("met")]
        baseline = f"{fmt_value(fig['baseline'], fig['unit'])} ({fig['baseline_name']})" if fig.get("baseline") else "-"
        rows.append(
            (
                f"[{fig['benchmark']}] {fig['name']}",
                fmt_value(fig["value"], fig["unit"]),
                baseline,
                _ratio_text(fig),
                fig.get("target") or "-",
                met,
            )
        )
    return "\n".join(" | ".join(cells) for cells in rows)


def well_formed(figure: dict) -> bool:
    """Every figure is a positive, finite number, and so are its baseline and ratio."""
    numbers = [figure.get(k) for k in ("value", "baseline", "ratio") if figure.get(k) is not None]
    return bool(numbers) and all(isinstance(x, int | float) and math.isfinite(x) and x > 0 for x in numbers)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one repetition (CI)")
    parser.add_argument("--only", default=None, help=f"comma-separated subset of {', '.join(BENCHMARKS)}")
    parser.add_argument("--reps", type=int, default=None, help="repetitions (default: each benchmark's own)")
    parser.add_argument("--out", default=None, help="write all results as JSON here")
    parser.add_argument(
        "-j", "--jobs", type=int, default=1, help="benchmarks run at once (only to check they run: figures get noisy)"
    )
    args = parser.parse_args(argv)
    names = args.only.split(",") if args.only else list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")

    started = time.time()
    info = machine()

    def one(name: str) -> dict:
        t0 = time.perf_counter()
        print(f"running {name} ...", file=sys.stderr, flush=True)
        result = run_json(command(name, args.smoke, args.reps), timeout=7200)
        result["duration_s"] = time.perf_counter() - t0
        return result

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = dict(zip(names, pool.map(one, names), strict=True))
    figures = [dict(fig, benchmark=name) for name in names for fig in results[name]["figures"]]
    out = {
        "smoke": args.smoke,
        "started": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started)),
        "duration_s": time.time() - started,
        "machine": info,
        "results": results,
        "figures": figures,
    }
    print(table(figures))
    print(f"\n{len(figures)} figures in {out['duration_s']:.0f} s", file=sys.stderr)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    bad = [f["name"] for f in figures if not well_formed(f)]
    if bad:
        print(f"malformed figures: {bad}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
