"""Throughput of the static engine (``gradcheck --static``) in lines per second, against
``ast.parse`` alone and against pylint, on the same files.

Corpora: the Python standard library (``sysconfig.get_paths()["stdlib"]``, everything but
site-packages) and the installed ``keras`` package (training code: many files ask for
gradients). Files that do not decode or parse are skipped. "Lines" are physical lines
(blank and comment lines included), the same count for every tool.

Timed, each over the whole corpus, ``--reps`` times (median):

- ``ast.parse(source)`` alone on sources already in memory (the baseline);
- ``gradcheck.static.check_source(source, path)`` on the same sources (the engine);
- ``gradcheck.static.check_file(path)`` (what ``gradcheck --static`` runs per file: read,
  decode, parse, analyse), against read + ``ast.parse`` of the same files;
- pylint (default checks, ``--jobs=1``, in this process, imports excluded) on a fixed
  subset of the keras files the engine analyses (past its word pre-filter), once, and the
  engine on that subset.

With ``--corpus DIR`` the third-party training code of ``benchmarks/static_corpus.toml``,
extracted under DIR (see ``benchmarks/static_corpus.py``), is a further corpus: its Python
files (notebooks are left out here).

    python benchmarks/bench_static.py [--smoke] [--reps 3] [--[no-]pylint] [--corpus DIR] [--json]
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import gc
import io
import json
import os
import sys
import sysconfig
import time
import tokenize
import warnings
from importlib.util import find_spec
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import Figure, fmt_value, median
from gradcheck.static import check_file, check_source, may_train

PYLINT_LINES = 15_000  # size of the pylint subset (full run)


def corpus_files(name: str, corpus_dir: str | None = None) -> list[str]:
    if name == "training-corpus":
        from benchmarks.static_corpus import corpus_paths, load_manifest

        return [str(p) for s in load_manifest() for p, _ in corpus_paths(Path(corpus_dir), s) if p.suffix == ".py"]
    if name == "stdlib":
        root = sysconfig.get_paths()["stdlib"]
        skip = {"site-packages", "dist-packages", "__pycache__"}
    else:
        spec = find_spec(name)  # no import: keras would import TensorFlow
        if spec is None or not spec.submodule_search_locations:
            return []
        root = next(iter(spec.submodule_search_locations))
        skip = {"__pycache__"}
    out = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in skip)
        out += [os.path.join(directory, f) for f in sorted(files) if f.endswith(".py")]
    return out


def load(paths: list[str]) -> list[tuple[str, str, int]]:
    """(path, source, lines) of every file that decodes and parses."""
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences in old files
        for path in paths:
            try:
                with tokenize.open(path) as fh:
                    source = fh.read()
                ast.parse(source, filename=path)
            except (SyntaxError, UnicodeDecodeError, ValueError, OSError, RecursionError, MemoryError):
                continue
            out.append((path, source, source.count("\n") + 1))
    return out


def _time_all(fn, items, cpu: list[float] | None = None) -> float:
    """Wall seconds of ``fn`` over ``items``; the CPU seconds go to ``cpu``."""
    gc.collect()
    start, cpu_start = time.perf_counter(), time.process_time()
    for item in items:
        fn(item)
    if cpu is not None:
        cpu.append(time.process_time() - cpu_start)
    return time.perf_counter() - start


def _parse(item):
    return ast.parse(item[1], filename=item[0])


def _engine(item):
    return check_source(item[1], item[0])


def _read_parse(item):
    with tokenize.open(item[0]) as fh:
        return ast.parse(fh.read(), filename=item[0])


def _check_file(item):
    return check_file(item[0])


def measure_corpus(items, reps: int) -> dict:
    """Median seconds of each way through ``items``, the passes interleaved."""
    ways = {"parse": _parse, "engine": _engine, "read_parse": _read_parse, "check_file": _check_file}
    times: dict[str, list[float]] = {k: [] for k in ways}
    cpu: dict[str, list[float]] = {k: [] for k in ways}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(reps):
            for name, fn in ways.items():
                times[name].append(_time_all(fn, items, cpu[name]))
        findings = sum(len(check_source(src, path)) for path, src, _ in items)
    return {
        "files": len(items),
        "lines": sum(n for _, _, n in items),
        "analysed_files": sum(1 for _, src, _ in items if may_train(src)),
        "findings": findings,
        **{f"{k}_s": median(v) for k, v in times.items()},
        **{f"{k}_cpu_s": median(v) for k, v in cpu.items()},
        **{f"{k}_all": v for k, v in times.items()},
    }


def run_pylint(paths: list[str]) -> float | None:
    try:
        from pylint.lint import Run
    except ImportError:
        return None
    args = ["--jobs=1", "--persistent=n", "--score=n", "--reports=n", *paths]
    gc.collect()
    sink = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        Run(args, exit=False)
    return time.perf_counter() - start


def subset(items, lines: int):
    """Every k-th file, so the subset spreads over the corpus, up to ``lines`` lines."""
    if not items:
        return []
    total = sum(n for _, _, n in items)
    step = max(1, round(total / lines))
    out, count = [], 0
    for item in items[::step]:
        if count >= lines:
            break
        out.append(item)
        count += item[2]
    return out


def throughput(
    name: str,
    row: dict,
    reps: int,
    *,
    way: str = "engine",
    base: str = "parse",
    base_name: str = "ast.parse alone",
    target: str = "time <= 2x ast.parse",
    notes: str = "",
) -> Figure:
    """Lines per second of one way through a corpus (``measure_corpus``) against another;
    the target is at most twice the baseline's time."""
    lines = row["lines"]
    return Figure(
        name=name,
        value=lines / row[f"{way}_s"],
        unit="lines/s",
        baseline_name=base_name,
        baseline=lines / row[f"{base}_s"],
        ratio=row[f"{way}_s"] / row[f"{base}_s"],
        target=target,
        met=row[f"{way}_s"] <= 2 * row[f"{base}_s"],
        reps=reps,
        spread=[lines / t for t in row[f"{way}_all"]],
        baseline_spread=[lines / t for t in row[f"{base}_all"]],
        cpu_value=lines / row[f"{way}_cpu_s"],
        cpu_baseline=lines / row[f"{base}_cpu_s"],
        cpu_ratio=row[f"{way}_cpu_s"] / row[f"{base}_cpu_s"],
        notes=notes,
    )


def run(smoke: bool, reps: int, pylint: bool, corpus_dir: str | None = None) -> dict:
    corpora = {}
    loaded = {}
    figures: list[Figure] = []
    names = ["stdlib"] if smoke else ["stdlib", "keras"]
    if corpus_dir is not None:
        names.append("training-corpus")
    for name in names:
        paths = corpus_files(name, corpus_dir)
        if smoke:
            paths = paths[:: max(1, len(paths) // 25)][:25]
        items = loaded[name] = load(paths)
        if not items:
            continue
        row = measure_corpus(items, reps)
        corpora[name] = row
        trained = [it for it in items if may_train(it[1])]
        row_trained = measure_corpus(trained, reps) if trained and len(trained) < len(items) else row
        corpora[f"{name} (analysed files only)"] = row_trained
        figures += [
            throughput(
                f"static engine, check_source, {name} ({row['files']} files, {row['lines']:,} lines)",
                row,
                reps,
                notes=f"{row['analysed_files']} of {row['files']} files pass the word pre-filter and are analysed",
            ),
            throughput(
                f"static engine, check_source, {name}, analysed files only "
                f"({row_trained['files']} files, {row_trained['lines']:,} lines)",
                row_trained,
                reps,
            ),
            throughput(
                f"gradcheck --static per file (check_file), {name}",
                row,
                reps,
                way="check_file",
                base="read_parse",
                base_name="read + ast.parse of the same files",
                target="time <= 2x read + ast.parse",
            ),
        ]
    if pylint:
        source = "keras" if loaded.get("keras") else "stdlib"
        # Files the engine analyses (past the word pre-filter), so both tools do real work.
        trained = [it for it in loaded.get(source, []) if may_train(it[1])]
        part = subset(trained, 1_000 if smoke else PYLINT_LINES)
        pylint_s = run_pylint([p for p, _, _ in part])
        if pylint_s is not None:
            lines = sum(n for _, _, n in part)
            engine = median([_time_all(_engine, part) for _ in range(reps)])
            corpora[f"pylint subset of {source}"] = {
                "files": len(part),
                "lines": lines,
                "pylint_s": pylint_s,
                "engine_s": engine,
            }
            figures.append(
                Figure(
                    name=f"static engine vs pylint, {source} files the engine analyses ({len(part)} files, {lines:,} lines)",
                    value=lines / engine,
                    unit="lines/s",
                    baseline_name="pylint (default checks, --jobs=1)",
                    baseline=lines / pylint_s,
                    ratio=engine / pylint_s,
                    target="report",
                    met=None,
                    reps=reps,
                    notes="pylint run once; ratio is time / pylint's time",
                )
            )
    return {"benchmark": "static", "corpora": corpora, "figures": [f.to_json() for f in figures]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="25 files, one pass")
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument(
        "--pylint",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="compare with pylint (default: when installed, and not with --smoke)",
    )
    parser.add_argument(
        "--corpus",
        metavar="DIR",
        help="also time the Python files of benchmarks/static_corpus.toml extracted under DIR",
    )
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    args = parser.parse_args(argv)
    if args.corpus is not None and not os.path.isdir(args.corpus):
        print(f"no corpus at {args.corpus}: timing without it", file=sys.stderr)
        args.corpus = None
    reps = args.reps or (1 if args.smoke else 3)
    pylint = args.pylint if args.pylint is not None else not args.smoke and find_spec("pylint") is not None
    out = run(args.smoke, reps, pylint=pylint, corpus_dir=args.corpus)
    if args.json:
        print(json.dumps(out))
        return
    for fig in out["figures"]:
        print(
            f"{fig['name']}: {fmt_value(fig['value'], fig['unit'])} vs {fig['baseline_name']} "
            f"{fmt_value(fig['baseline'], fig['unit'])}: {fig['ratio']:.3g}x time"
            + (f" (CPU {fig['cpu_ratio']:.3g}x)" if fig.get("cpu_ratio") else "")
            + (
                f"; {1e6 / fig['value']:.1f} vs {1e6 / fig['baseline']:.1f} ms/kloc"
                if fig["unit"] == "lines/s" and fig["value"] and fig["baseline"]
                else ""
            )
        )


if __name__ == "__main__":
    main()
