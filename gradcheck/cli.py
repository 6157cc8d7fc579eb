"""The ``gradcheck`` command. Diagnostics go to stdout, the summary and progress to stderr.

Exit codes: 0 clean, 1 findings, 2 a file could not be checked or the command was misused.
Importing this module (``--help``, ``--version``, ``--static``) imports no TensorFlow.
"""

from __future__ import annotations

import os
import sys
from importlib import metadata
from pathlib import Path

import click

from gradcheck._version import __version__
from gradcheck.report import EXIT_ERROR


def _dist_version(*names: str) -> str | None:
    for name in names:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def version_text() -> str:
    tf = _dist_version("tensorflow", "tensorflow-cpu", "tensorflow-macos", "tf-nightly") or "not installed"
    py = ".".join(map(str, sys.version_info[:3]))
    return f"gradcheck {__version__} (Python {py}, TensorFlow {tf}, {_keras_in_use()})"


def _keras_in_use() -> str:
    """The Keras that ``tf.keras`` is: tf_keras (Keras 2) under ``TF_USE_LEGACY_KERAS``, as
    TensorFlow decides it, else Keras 3."""
    keras = _dist_version("keras")
    if os.environ.get("TF_USE_LEGACY_KERAS") in ("true", "True", "1"):
        legacy = _dist_version("tf-keras", "tf_keras")
        also = f"; Keras {keras} is also installed" if keras else ""
        if legacy is None:
            return f"Keras: TF_USE_LEGACY_KERAS is set but tf_keras is not installed{also}"
        return f"Keras {legacy} (tf_keras, as TF_USE_LEGACY_KERAS is set){also}"
    return f"Keras {keras or 'not installed'}"


def _print_version(ctx: click.Context, _param, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(version_text())
        ctx.exit(0)


def _explain(ctx: click.Context, _param, value: str | None) -> None:
    if not value or ctx.resilient_parsing:
        return
    from gradcheck.rules import get_rule

    try:
        click.echo(get_rule(value).explanation(), nl=False)
    except KeyError:
        raise click.BadParameter(f"unknown rule code {value!r}; see --list-rules") from None
    ctx.exit(0)


def _list_rules(ctx: click.Context, _param, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from gradcheck.rules import all_rules

    for rule in all_rules():
        status = "" if rule.implemented else "  (reserved)"
        click.echo(f"{rule.code}  {rule.name:<28} {rule.summary}{status}")
    ctx.exit(0)


def _codes(values: tuple[str, ...]) -> list[str]:
    out = []
    for value in values:
        out += [c.strip().upper() for c in value.split(",") if c.strip()]
    return out


FORMAT_CHOICES = ("full", "concise", "json", "sarif", "github")
#: Formats printed file by file as each file is done (JSON and SARIF are one document).
STREAMED_FORMATS = ("full", "concise", "github")


class _Command(click.Command):
    """``gradcheck train.py -- --epochs 1``: what follows ``--`` is each script's ``sys.argv[1:]``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            at = args.index("--")
            ctx.meta["gradcheck.script_args"] = args[at + 1 :]
            args = args[:at]
        return super().parse_args(ctx, args)


@click.command(cls=_Command, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, metavar="PATH[::FUNCTION]... [-- SCRIPT_ARGS...]")
@click.option("--static", is_flag=True, help="Static analysis only: read the code, never run it (no TensorFlow).")
@click.option(
    "--training-only",
    is_flag=True,
    help="Trace only files that read as training code, even when named directly (for pre-commit).",
)
@click.option(
    "--steps", type=click.IntRange(min=1), default=None, help="Training steps to check before stopping (default 1)."
)
@click.option(
    "--timeout", type=click.FloatRange(min=0, min_open=True), default=None, help="Seconds per file (default 120)."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMAT_CHOICES),
    default="full",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--graph",
    "graph_path",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    metavar="FILE.dot|FILE.svg",
    help="Draw each cut: the subgraph from the starved variables to the loss (.svg needs Graphviz).",
)
@click.option("--select", multiple=True, help="Report only these codes or prefixes (e.g. GC101,GC11).")
@click.option("--ignore", multiple=True, help="Do not report these codes or prefixes.")
@click.option(
    "--allow-none", multiple=True, metavar="PATTERN", help="Glob over variable paths allowed to get no gradient."
)
@click.option(
    "-j", "--jobs", type=click.IntRange(min=1), default=None, help="Files checked in parallel (default: CPUs)."
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option(
    "--check-custom-gradients",
    is_flag=True,
    help="GC301: compare each tf.custom_gradient on the path with finite differences (costs extra evaluations).",
)
@click.option(
    "--diff", "show_diff", is_flag=True, help="Show a verified patch for each finding that has one (never writes)."
)
@click.option(
    "--fix", is_flag=True, help="Apply the verified patches, after showing them (committed, saved, UTF-8 files only)."
)
@click.option("--force", is_flag=True, help="With --fix: also write uncommitted, unsaved or non-UTF-8 files.")
@click.option("--color/--no-color", default=None, help="Colour the output (default: when stdout is a terminal).")
@click.option("-q", "--quiet", is_flag=True, help="No summary or progress on stderr.")
@click.option("-v", "--verbose", is_flag=True, help="Show the script's own output when a file cannot be checked.")
@click.option(
    "--explain", metavar="CODE", callback=_explain, expose_value=False, is_eager=True, help="Explain a rule and exit."
)
@click.option(
    "--list-rules",
    is_flag=True,
    callback=_list_rules,
    expose_value=False,
    is_eager=True,
    help="List every rule and exit.",
)
@click.option(
    "--version",
    is_flag=True,
    callback=_print_version,
    expose_value=False,
    is_eager=True,
    help="Show versions and exit.",
)
def main(
    paths,
    static,
    training_only,
    steps,
    timeout,
    fmt,
    graph_path,
    select,
    ignore,
    allow_none,
    jobs,
    exit_zero,
    color,
    quiet,
    verbose,
    show_diff=False,
    fix=False,
    force=False,
    check_custom_gradients=False,
) -> None:
    """Find why variables get no gradient in TensorFlow / Keras training code.

    Runs each script (as `python PATH` would) until its first training step, checks every
    `tape.gradient` and `model.fit` step, and explains each None gradient: the op that cut
    the path, your line, the variables it starves, and the fix. `PATH::build` checks what
    `build()` returns instead: a `(model, batch)` pair or a train-step function. A
    notebook (`.ipynb`) runs its code cells in order. Arguments after `--` are passed to
    each script: `gradcheck train.py -- --epochs 1`.
    """
    from gradcheck import config as config_mod
    from gradcheck.check import Options, check_targets
    from gradcheck.output import FORMATS, render

    if not paths:
        raise click.UsageError("give at least one PATH (a script, or a directory)")
    if force and not fix:
        raise click.UsageError("--force only goes with --fix")
    try:
        cfg = config_mod.load()
        if select:
            cfg.select = _codes(select)
        if ignore:
            cfg.ignore = cfg.ignore + _codes(ignore)
        for prefix in (*cfg.select, *cfg.ignore):
            config_mod.validate_code_prefix(prefix, "--select/--ignore")
    except config_mod.ConfigError as error:
        click.echo(f"gradcheck: {error}", err=True)
        sys.exit(EXIT_ERROR)
    if fmt not in FORMATS:
        raise click.UsageError(f"--format {fmt} is not available in this version")
    if graph_path is not None and Path(graph_path).suffix.lower() == ".svg" and not static:
        import shutil

        if shutil.which("dot") is None:  # say so now, not after minutes of checking
            click.echo(
                "gradcheck: --graph FILE.svg needs Graphviz's `dot` on PATH; install Graphviz or ask for FILE.dot "
                "instead (nothing was checked)",
                err=True,
            )
            sys.exit(EXIT_ERROR)
    options = Options(
        steps=steps or cfg.steps,
        timeout=timeout or cfg.timeout,
        allow_none=[*cfg.allow_none, *allow_none],
        jobs=jobs or os.cpu_count() or 1,
        verbose=verbose,
        static=static,
        training_only=training_only,
        graph=graph_path is not None,
        check_custom_gradients=check_custom_gradients or cfg.check_custom_gradients,
        argv=list(click.get_current_context().meta.get("gradcheck.script_args", [])),
        # a file with no gradient yet gets a note, for whoever watches: a terminal, or -v
        note_after=None if quiet or not (verbose or sys.stderr.isatty()) else min(30.0, (timeout or cfg.timeout) / 4),
        note=lambda text: click.echo(("\n" if show_progress else "") + text, err=True),
    )
    use_color = sys.stdout.isatty() if color is None else color
    show_progress = not quiet and sys.stderr.isatty()

    def progress(done: int, total: int, path: str) -> None:
        if show_progress:
            click.echo(f"\r[{done}/{total}] {path}"[:100].ljust(100), err=True, nl=done == total)

    # Text formats stream: each file's diagnosis is printed once it and the files before it
    # are done, so the order is the same for any -j.
    printed = []

    def print_result(result) -> None:
        from gradcheck.report import Report

        text = render(Report([result]), fmt, color=use_color)
        if text:
            if show_progress:
                click.echo("\r" + " " * 100 + "\r", err=True, nl=False)
            click.echo(("\n" if printed and fmt == "full" else "") + text, nl=not text.endswith("\n"))
            sys.stdout.flush()
            printed.append(result.path)

    streamed = fmt in STREAMED_FORMATS and not (show_diff or fix)  # patches come after every check
    report = check_targets(list(paths), cfg, options, progress=progress, on_result=print_result if streamed else None)
    if not report.files:
        click.echo(f"gradcheck: no Python files to check in {', '.join(paths)}", err=True)
        sys.exit(EXIT_ERROR)
    fixing = None
    if show_diff or fix:  # suggested patches, each verified by checking the patched copy (docs/fixes.md)
        from gradcheck.fix.command import Fixing

        echo = lambda text: click.echo(text, err=True)  # noqa: E731
        fixing = Fixing(report, cfg, options, targets=list(paths), write=fix, force=force, fmt=fmt, echo=echo)
        fixing.prepare()
    output = bool(printed)
    if not streamed:
        text = render(report, fmt, color=use_color)
        if text:
            click.echo(text if text.endswith("\n") else text + "\n", nl=False)
        output = bool(text)
    sys.stdout.flush()  # the summary on stderr must come after the last diagnostic line
    if not quiet:
        # after a full diagnosis, a blank line: the summary is not one more line of the fix
        click.echo(("\n" if output and fmt == "full" else "") + report.summary(), err=True)
    if graph_path is not None:
        from gradcheck.output.dot import GraphvizMissing, write_graph

        try:
            written = write_graph(report.findings, Path(graph_path))
        except GraphvizMissing as error:
            click.echo(f"gradcheck: {error}", err=True)
            sys.exit(EXIT_ERROR)
        if not quiet:
            click.echo(f"cut graph written to {written}", err=True)
    sys.exit(fixing.finish(exit_zero, quiet) if fixing is not None else report.exit_code(exit_zero))


if __name__ == "__main__":  # pragma: no cover
    main()
