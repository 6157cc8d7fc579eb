"""Render a results file of ``run.py --out`` as the Markdown tables of docs/performance.md.

python benchmarks/report.py benchmarks/results/2026-12-02.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import fmt_value

MET = {True: "**met**", False: "**missed**", None: "(reported)"}


def machine_table(info: dict) -> str:
    rows = [
        ("CPU", f"{info['cpu']}, {info['nproc']} cores (nproc)"),
        ("RAM", f"{info['ram_gib']} GiB"),
        ("OS", info["os"]),
        ("Python", info["python"]),
        ("TensorFlow / Keras", f"{info['tensorflow']} / {info['keras']}"),
        ("pylint", info.get("pylint") or "not installed"),
        ("load average at start", ", ".join(map(str, info.get("load_average_at_start") or [])) or "?"),
    ]
    return "| | |\n|---|---|\n" + "\n".join(f"| {k} | {v} |" for k, v in rows)


def figures_table(figures: list[dict]) -> str:
    lines = [
        "| figure | value | baseline | ratio (CPU) | target | |",
        "|---|---|---|---|---|---|",
    ]
    for fig in figures:
        unit = fig["unit"]
        cpu = f" ({fig['cpu_ratio']:.2f}×)" if fig.get("cpu_ratio") is not None else ""
        lines.append(
            f"| {fig['name']} | {fmt_value(fig['value'], unit)} | {fmt_value(fig['baseline'], unit)} "
            f"({fig['baseline_name']}) | {fig['ratio']:.3g}×{cpu} | {fig.get('target') or ''} | {MET[fig.get('met')]} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="results JSON files (figures of later files are appended)")
    args = parser.parse_args(argv)
    data = [json.loads(Path(p).read_text(encoding="utf-8")) for p in args.results]
    print(machine_table(data[0]["machine"]))
    print()
    for part in data:
        by_bench: dict[str, list[dict]] = {}
        for fig in part["figures"]:
            by_bench.setdefault(fig["benchmark"], []).append(fig)
        for name, figs in by_bench.items():
            print(f"### {name} ({part['started']})\n")
            print(figures_table(figs))
            for fig in figs:
                if fig.get("notes"):
                    print(f"\n- {fig['name']}: {fig['notes']}")
            print()


if __name__ == "__main__":
    main()
