"""``python -m benchmarks.mutation``: the mutation benchmark (see benchmarks/README.md)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from benchmarks.mutation import manifest, report, sources
from benchmarks.mutation.bench import benchmark
from benchmarks.mutation.operators import OPERATORS


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.mutation", description=__doc__)
    ap.add_argument("-j", "--jobs", type=int, default=2, help="children run at once (default 2)")
    ap.add_argument("--programs", nargs="*", help="program names (default: all in the manifest)")
    ap.add_argument("--operators", nargs="*", help="operator names (default: all)")
    ap.add_argument("--manifest", type=Path, default=manifest.PROGRAMS, help="programs.toml (or smoke.toml)")
    ap.add_argument("--sources", type=Path, help="directory of git mirrors / checkouts (owner+name/...)")
    ap.add_argument("--static", action="store_true", help="score `gradcheck --static` instead of the trace engine")
    ap.add_argument("--json", type=Path, help="write every mutant's record here")
    ap.add_argument("--markdown", type=Path, help="write the tables and the grid here (markdown)")
    ap.add_argument("--workdir", type=Path, help="keep the generated files here (default: a temp dir)")
    ap.add_argument(
        "--max-sites",
        type=int,
        help="at most this many mutants per operator and program (default: every site); with --sample, "
        "the sites a sampled operator tries one after another (those the original reached first) until "
        "TensorFlow finds its mutant valid (default 1)",
    )
    ap.add_argument("--twins", type=int, default=1, help="twins per operator and program (default 1)")
    ap.add_argument(
        "--sample",
        type=int,
        help="at most N operators per program, the no-gradient and degenerate families in turn, "
        "rotated over programs; one valid mutant each (see --max-sites)",
    )
    ap.add_argument("--sample-twins", type=int, help="at most N twins per program (rotated like --sample)")
    ap.add_argument(
        "--cached-truth",
        action="store_true",
        help="use only ground truth an earlier run cached (run no probe; skip what is not cached)",
    )
    ap.add_argument(
        "--resume",
        type=Path,
        metavar="JSON",
        help="an earlier run's --json (same settings): keep what it measured, run only the rest",
    )
    ap.add_argument(
        "--phase",
        choices=("first", "later"),
        help="score only the mutants whose bug shows first in the first training (first) or in a "
        "second or later one (later); needs programs with `phases = true`",
    )
    ap.add_argument(
        "--engine",
        type=Path,
        help="the checkout whose gradcheck is scored (default: this one), e.g. a worktree of an older commit",
    )
    ap.add_argument("--list", action="store_true", help="list the programs and operators, then exit")
    args = ap.parse_args(argv)

    programs = manifest.load(args.manifest)
    if args.programs:
        unknown = set(args.programs) - {p.name for p in programs}
        if unknown:
            ap.error(f"unknown programs: {sorted(unknown)}")
        programs = [p for p in programs if p.name in args.programs]
    names = args.operators or list(OPERATORS)
    unknown = set(names) - set(OPERATORS)
    if unknown:
        ap.error(f"unknown operators: {sorted(unknown)}")
    operators = [OPERATORS[n] for n in names]
    if args.list:
        for p in programs:
            print(f"program  {p.name:32} {','.join(p.shapes)}{'  (phases)' if p.phases else ''}")
        for op in operators:
            print(f"operator {op.name:32} {','.join(op.codes)}  {op.summary}")
        return 0

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from benchmarks.mutation import bench

    bench.CACHED_ONLY = args.cached_truth
    bench.PHASE = args.phase
    if args.engine:
        from benchmarks.mutation import run

        if not (args.engine / "gradcheck" / "__init__.py").is_file():
            ap.error(f"--engine {args.engine}: no gradcheck package there")
        run.ENGINE = args.engine.resolve()
    resume = {}
    if args.resume:
        for r in json.loads(args.resume.read_text(encoding="utf-8"))["records"]:
            resume[f"{r['program']}/{r['kind']}/{r['operator']}/{r['site']}"] = r
    start = time.monotonic()
    command = "python -m benchmarks.mutation " + " ".join(argv if argv is not None else sys.argv[1:])

    def summarize(states: list) -> dict:
        summary = report.summarize(states, operators)
        summary.update(command=command, elapsed_s=round(time.monotonic() - start, 1))
        summary["mode"] = "static" if args.static else "trace"
        summary["engine"] = str(args.engine.resolve()) if args.engine else "this checkout"
        summary["phase"] = args.phase or "all"
        return summary

    def write(states: list, partial: bool = True) -> None:
        """The figures so far (also called during the run: a stopped run keeps what it measured)."""
        summary = summarize(states)
        summary["partial"] = partial
        if args.markdown:
            args.markdown.write_text(report.render_markdown(summary), encoding="utf-8")
        if args.json:
            records = report.records(states)
            args.json.write_text(json.dumps({"summary": summary, "records": records}, indent=1), encoding="utf-8")

    with Progress(
        TextColumn("mutants"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), transient=False, console=None
    ) as bar:
        task = bar.add_task("run", total=None)

        def progress(kind: str, n: int) -> None:
            if kind == "total":
                bar.update(task, total=n)
            elif kind == "more":
                bar.update(task, total=(bar.tasks[0].total or 0) + n)
            else:
                bar.advance(task, n)

        states = benchmark(
            programs,
            operators,
            sources.default_roots(args.sources),
            args.jobs,
            args.static,
            args.workdir,
            progress,
            log=lambda m: bar.console.print(m),
            max_sites=args.max_sites,
            twins=args.twins,
            sample=args.sample,
            sample_twins=args.sample_twins,
            checkpoint=write if (args.json or args.markdown) else None,
            resume=resume,
        )
    write(states, partial=False)
    print(report.render_text(summarize(states)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
