"""The ``gradcheck`` command. Diagnostics go to stdout, the summary and progress to stderr.

Exit codes: 0 clean, 1 findings, 2 a file could not be checked or the command was misused,
130 stopped by SIGINT (Ctrl-C), 143 stopped by SIGTERM.
Importing this module (``--help``, ``--version``, ``--static``) imports no TensorFlow.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gradcheck._version import __version__
from gradcheck.report import EXIT_ERROR

if TYPE_CHECKING:
    from gradcheck.check import Options
    from gradcheck.config import Config
    from gradcheck.report import Report


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
        raise click.BadParameter(f"unknown rule code or name {value!r}; see --list-rules") from None
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


# Options, defined once as reusable decorators, grouped as --help lists them. Each carries,
# besides its --help text, its row of docs/cli.md (``doc``, and ``doc_name`` when the
# metavar is not what the docs call it): ``python -m gradcheck.docs_tables`` writes the table.


class DocOption(click.Option):
    """A click option that also knows its row of the docs' option table."""

    def __init__(self, *args: Any, doc: str, doc_name: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.doc = doc
        self.doc_name = doc_name


def _option(*decls: str, doc: str, doc_name: str | None = None, **kwargs: Any) -> Callable:
    return click.option(*decls, cls=DocOption, doc=doc, doc_name=doc_name, **kwargs)


def _group(*options: Callable) -> Callable:
    """Apply ``options`` in the order given, which is their order in --help."""

    def decorate(function: Callable) -> Callable:
        for option in reversed(options):
            function = option(function)
        return function

    return decorate


what_to_check = _group(
    _option(
        "-m",
        "module",
        metavar="MODULE",
        default=None,
        help="Check a module as `python -m MODULE` runs it (relative imports work), instead of a PATH.",
        doc="Check the program `python -m MODULE` runs (`gradcheck -m pkg.train -- --epochs 1`): the module runs as "
        "`__main__` with the working directory first on `sys.path`, so its relative imports work. It is found "
        "as Python finds it (the working directory, then `PYTHONPATH`), without importing anything; findings "
        "name its file relative to the working directory (`pkg/train.py:12:5`). Takes no PATH.",
    ),
    _option(
        "--static",
        is_flag=True,
        help="Static analysis only: read the code, never run it (no TensorFlow).",
        doc="Static analysis only: read the code with `ast`, never run it, never import TensorFlow.",
    ),
    _option(
        "--training-only",
        is_flag=True,
        help="Trace only files that read as training code, even when named directly (for pre-commit).",
        doc="Trace only files that read as training code, even when named directly (the `gradcheck-trace` "
        "pre-commit hook passes every changed file).",
    ),
    _option(
        "--steps",
        metavar="N",
        type=click.IntRange(min=1),
        default=None,
        help="Training steps to check before stopping (default 1).",
        doc_name="--steps N",
        doc="Training steps to check before the script is stopped (default 1, or `steps` in the configuration). "
        "In eager mode a step ends when a checked `tape.gradient` call site is about to run again; in graph mode "
        "when a traced function holding a checked gradient is about to run again. An inner `tape.gradient` "
        "repeated under an outer tape that still records (MAML's inner steps) runs on, unchecked, until the outer "
        "gradient is asked. An eager request for no sources at all (`model.trainable_variables` read before the "
        "model's first call, so empty at the first update only) checks nothing and is not a step.",
    ),
    _option(
        "--timeout",
        metavar="SECONDS",
        type=click.FloatRange(min=0, min_open=True),
        default=None,
        help="Seconds per file (default 120).",
        doc_name="--timeout SECONDS",
        doc="Per file (default 120, or `timeout`). Findings made before the limit are kept; with none, the file "
        "ends as GC903.",
    ),
)

how_to_report = _group(
    _option(
        "--format",
        "fmt",
        type=click.Choice(FORMAT_CHOICES),
        default="full",
        show_default=True,
        help="Output format.",
        doc_name="--format " + "\\|".join(FORMAT_CHOICES),
        doc="Output format (default `full`); see [output-formats.md](output-formats.md).",
    ),
    _option(
        "--graph",
        "graph_path",
        type=click.Path(dir_okay=False, writable=True),
        default=None,
        metavar="FILE.dot|FILE.svg|FILE.png",
        help="Draw each cut: the subgraph from the starved variables to the loss (.svg, .png need Graphviz).",
        doc_name="--graph FILE.dot\\|FILE.svg\\|FILE.png",
        doc="Draw each cut: the subgraph from the starved variables through the cut (highlighted) to the loss, ops "
        "labelled with `file:line`, other inputs collapsed. `.dot` (or `.gv`) is DOT text; `.svg` and `.png` are "
        "rendered with Graphviz's `dot` (`dot -Tsvg`, `dot -Tpng`): without `dot` on `PATH` the command stops "
        "at once (exit 2) before checking anything. Any other suffix is refused the same way.",
    ),
)

what_to_report = _group(
    _option(
        "--select",
        metavar="CODES",
        multiple=True,
        help="Report only these codes or prefixes (e.g. GC101,GC11).",
        doc_name="--select CODES",
        doc="Report only these codes or prefixes, comma-separated or repeated (`--select GC101,GC11`).",
    ),
    _option(
        "--ignore",
        metavar="CODES",
        multiple=True,
        help="Do not report these codes or prefixes.",
        doc_name="--ignore CODES",
        doc="Do not report these codes or prefixes.",
    ),
    _option(
        "--allow-none",
        multiple=True,
        metavar="PATTERN",
        help="Glob over variable paths allowed to get no gradient.",
        doc="A glob over variable paths that may get no gradient (repeatable), e.g. a GAN's frozen `discriminator/*`.",
    ),
)

how_to_run = _group(
    _option(
        "-j",
        "--jobs",
        metavar="N",
        type=click.IntRange(min=1),
        default=None,
        help="Files checked in parallel (default: CPUs).",
        doc_name="-j, --jobs N",
        doc="Files checked in parallel (default: the number of CPUs). Results are printed as they come, and the "
        "output order does not depend on it.",
    ),
    _option(
        "--exit-zero",
        is_flag=True,
        help="Exit 0 even when there are findings.",
        doc="Exit 0 even when there are findings (files that could not be checked still exit 2).",
    ),
    _option(
        "--check-custom-gradients",
        is_flag=True,
        help="GC301: the full finite-difference comparison of every tf.custom_gradient call on the path "
        "(six directions; scaled gradients and library custom gradients too).",
        doc="GC301: the full comparison of every call of every `tf.custom_gradient` on the path from the variables "
        "to the loss with finite differences of its own forward function (six directions each; a constant-factor "
        "error and a library's custom gradient are compared too). By default a cheap comparison runs on the first "
        "call of each of the user's custom gradients and reports only what cannot be deliberate (docs/rules/GC301.md); "
        "or `check-custom-gradients = true` in the configuration.",
    ),
)

patches = _group(
    _option(
        "--diff",
        "show_diff",
        is_flag=True,
        help="Show a verified patch for each finding that has one (never writes).",
        doc="Show a verified patch (a unified diff) under each finding that has one, or why there is none; never "
        "writes. Each patch is checked by checking the patched copy first, so the output comes once every file "
        "and its patches are checked ([fixes.md](fixes.md)).",
    ),
    _option(
        "--fix",
        is_flag=True,
        help="Apply the verified patches, after showing them (committed, saved, UTF-8 files only).",
        doc="Show the verified patches, then write them. Refuses (one line on stderr, exit 2) a file with "
        "uncommitted changes or not in git, unsaved in Vim or Emacs, or not UTF-8. With `--fix` the exit code "
        "counts the findings that remain.",
    ),
    _option(
        "--force",
        is_flag=True,
        help="With --fix: also write uncommitted, unsaved or non-UTF-8 files.",
        doc="With `--fix`: write those files too.",
    ),
)

how_to_print = _group(
    _option(
        "--color/--no-color",
        default=None,
        help="Colour the output, even into a pipe (default: NO_COLOR, FORCE_COLOR, else when stdout is a terminal).",
        doc_name="--color / --no-color",
        doc="Colour the output (`--color`: also into a pipe or a file), or not. By default: no colour when `NO_COLOR` "
        "is set (and not empty), colour when `FORCE_COLOR` is, else colour only when stdout is a terminal.",
    ),
    _option(
        "-q",
        "--quiet",
        is_flag=True,
        help="No summary or progress on stderr.",
        doc="No summary and no progress on stderr.",
    ),
    _option(
        "-v",
        "--verbose",
        is_flag=True,
        help="Show the script's own output when a file cannot be checked.",
        doc="When a file cannot be checked, also show the last lines the script printed; note files still running "
        "with no gradient yet (as on a terminal).",
    ),
)

# Eager options: they answer and exit before anything is checked (and import no TensorFlow).
answer_and_exit = _group(
    _option(
        "--explain",
        metavar="CODE|NAME",
        callback=_explain,
        expose_value=False,
        is_eager=True,
        help="Explain a rule (GC101 or integer-index-op) and exit.",
        doc_name="--explain CODE\\|NAME",
        doc="Print a rule's page (what it does, why it is bad, example, fix) and exit. The rule is named by its code "
        "(`GC101`) or its name (`integer-index-op`), as `--list-rules` shows them.",
    ),
    _option(
        "--list-rules",
        is_flag=True,
        callback=_list_rules,
        expose_value=False,
        is_eager=True,
        help="List every rule and exit.",
        doc="List every code with its name and summary, and exit.",
    ),
    _option(
        "--version",
        is_flag=True,
        callback=_print_version,
        expose_value=False,
        is_eager=True,
        help="Show versions and exit.",
        doc="Print gradcheck's, Python's, TensorFlow's and Keras's versions (without importing TensorFlow), and "
        "exit. The Keras named is the one `tf.keras` is: tf_keras (Keras 2) when `TF_USE_LEGACY_KERAS` is `1` or "
        "`true`, else Keras 3.",
    ),
)


@dataclass(frozen=True)
class Settings:
    """What one ``gradcheck`` run was asked to do: the command line merged with
    ``[tool.gradcheck]`` (options win; ``--ignore`` and ``--allow-none`` add to the file's).
    Built once by :meth:`from_command_line` and kept on the click context (``ctx.obj``)."""

    paths: tuple[str, ...]
    module: str | None  # -m MODULE: ``paths`` is its file
    config: Config
    fmt: str
    static: bool
    training_only: bool
    steps: int
    timeout: float
    timeout_given: float | None  # --timeout as typed (the progress note's delay follows it)
    allow_none: tuple[str, ...]
    jobs: int
    graph_path: Path | None
    check_custom_gradients: bool
    show_diff: bool
    fix: bool
    force: bool
    exit_zero: bool
    color: bool
    quiet: bool
    verbose: bool
    progress: bool  # the progress line and notes' leading newline: only on a terminal
    script_args: tuple[str, ...]

    @classmethod
    def from_command_line(cls, params: dict[str, Any], script_args: list[str]) -> Settings:
        """Raises ``click.UsageError`` for a misused command, ``ConfigError`` for a bad
        ``[tool.gradcheck]`` or code prefix (in that order, as the checks always ran)."""
        from gradcheck import config as config_mod

        paths = tuple(params["paths"])
        if params["module"] is not None:
            if paths:
                raise click.UsageError("-m MODULE takes no PATH: the module is the program (its arguments go after --)")
            paths = (_module_file(params["module"]),)
        if not paths:
            raise click.UsageError("give at least one PATH (a script, or a directory), or -m MODULE")
        if params["force"] and not params["fix"]:
            raise click.UsageError("--force only goes with --fix")
        cfg = config_mod.load().with_command_line(
            _codes(params["select"]) if params["select"] else [], _codes(params["ignore"]) if params["ignore"] else []
        )
        for prefix in (*cfg.select, *cfg.ignore):
            config_mod.validate_code_prefix(prefix, "--select/--ignore")
        graph = params["graph_path"]
        return cls(
            paths=paths,
            module=params["module"],
            config=cfg,
            fmt=params["fmt"],
            static=params["static"],
            training_only=params["training_only"],
            steps=params["steps"] or cfg.steps,
            timeout=params["timeout"] or cfg.timeout,
            timeout_given=params["timeout"],
            allow_none=(*cfg.allow_none, *params["allow_none"]),
            jobs=params["jobs"] or os.cpu_count() or 1,
            graph_path=Path(graph) if graph is not None else None,
            check_custom_gradients=params["check_custom_gradients"] or cfg.check_custom_gradients,
            show_diff=params["show_diff"],
            fix=params["fix"],
            force=params["force"],
            exit_zero=params["exit_zero"],
            color=wants_color(params["color"]),
            quiet=params["quiet"],
            verbose=params["verbose"],
            progress=not params["quiet"] and sys.stderr.isatty(),
            script_args=tuple(script_args),
        )

    @property
    def patches(self) -> bool:
        """--diff or --fix: suggested patches, each verified by checking the patched copy."""
        return self.show_diff or self.fix

    @property
    def streamed(self) -> bool:
        """Each file's diagnosis is printed as soon as it is done (patches come after every check)."""
        return self.fmt in STREAMED_FORMATS and not self.patches

    @cached_property
    def check_options(self) -> Options:
        """The checker's options (one object for the checks and the patches' checks)."""
        from gradcheck.check import Options

        # a file with no gradient yet gets a note, for whoever watches: a terminal, or -v
        watched = not self.quiet and (self.verbose or sys.stderr.isatty())
        return Options(
            steps=self.steps,
            timeout=self.timeout,
            allow_none=list(self.allow_none),
            jobs=self.jobs,
            verbose=self.verbose,
            static=self.static,
            training_only=self.training_only,
            graph=self.graph_path is not None,
            check_custom_gradients=self.check_custom_gradients,
            argv=list(self.script_args),
            module=self.module,
            note_after=min(30.0, (self.timeout_given or self.config.timeout) / 4) if watched else None,
            note=lambda text: click.echo(("\n" if self.progress else "") + text, err=True),
        )


def _module_file(name: str) -> str:
    """``-m pkg.train``: its file, relative to the working directory when under it."""
    from gradcheck.modules import ModuleNotFound, find

    try:
        found = find(name)
    except ModuleNotFound as error:
        click.echo(f"gradcheck: -m {name}: {error}", err=True)
        sys.exit(EXIT_ERROR)
    relative = os.path.relpath(found)
    return found if relative.startswith("..") else relative


def wants_color(flag: bool | None) -> bool:
    """``--color``/``--no-color`` win; then ``NO_COLOR`` and ``FORCE_COLOR`` when set and not
    empty (no-color.org, force-color.org; NO_COLOR first); else whether stdout is a terminal."""
    if flag is not None:
        return flag
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


class _Command(click.Command):
    """``gradcheck train.py -- --epochs 1``: what follows ``--`` is each script's ``sys.argv[1:]``.
    ``gradcheck lsp`` is the language server (a path named ``lsp`` is checked as ``./lsp``)."""

    def main(self, args=None, *rest, **kwargs):  # type: ignore[override]
        argv = list(sys.argv[1:] if args is None else args)
        if argv[:1] == ["lsp"]:
            from gradcheck.lsp import main as lsp_main

            sys.exit(lsp_main(argv[1:]))
        return super().main(args, *rest, **kwargs)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            at = args.index("--")
            ctx.meta["gradcheck.script_args"] = args[at + 1 :]
            args = args[:at]
        return super().parse_args(ctx, args)


@click.command(cls=_Command, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, metavar="PATH[::FUNCTION]... [-- SCRIPT_ARGS...]")
@what_to_check
@how_to_report
@what_to_report
@how_to_run
@patches
@how_to_print
@answer_and_exit
@click.pass_context
def main(ctx: click.Context, **params: Any) -> None:
    """Find why variables get no gradient in TensorFlow / Keras training code.

    Runs each script (as `python PATH` would) until its first training step, checks every
    `tape.gradient` and `model.fit` step, and explains each None gradient: the op that cut
    the path, your line, the variables it starves, and the fix. `PATH::build` checks what
    `build()` returns instead: a `(model, batch)` pair or a train-step function. A
    notebook (`.ipynb`) runs its code cells in order. Arguments after `--` are passed to
    each script: `gradcheck train.py -- --epochs 1`.
    """
    with _signals_stop_the_check():
        settings = ctx.obj = _settings(params, ctx.meta.get("gradcheck.script_args", []))
        _refuse_what_cannot_be_written(settings)
        report, printed = _check(settings)
        fixing = _prepare_patches(settings, report)
        _print_report(settings, report, printed)
        _write_graph(settings, report)
        sys.exit(_exit_code(settings, report, fixing))


class Interrupted(KeyboardInterrupt):
    """SIGINT (Ctrl-C) or SIGTERM reached gradcheck: the check stops at once."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _signals_stop_the_check():
    """The first SIGINT or SIGTERM stops everything at once: the running checks' processes
    (and every process their scripts started) are killed, the temporary files removed, and
    gradcheck exits 130 (SIGINT) or 143 (SIGTERM), as a shell reports a process those
    signals ended. A second signal while that happens is ignored."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers belong to the main thread (CliRunner in a thread, say)
        return
    from gradcheck import processes

    processes.become_subreaper()  # a daemon a script double-forks stays ours to end
    received: list[int] = []

    def handler(signum: int, _frame) -> None:
        if received:
            return
        received.append(signum)
        raise Interrupted(signum)

    wanted = [signal.SIGINT, *([signal.SIGTERM] if hasattr(signal, "SIGTERM") else [])]
    previous = {sig: signal.signal(sig, handler) for sig in wanted}
    try:
        yield
    except Interrupted as stopped:
        name = signal.Signals(stopped.signum).name
        sys.stdout.flush()
        lead = "\n" if sys.stderr.isatty() else ""  # past a progress line
        click.echo(f"{lead}gradcheck: stopped by {name}; the checks were ended and nothing more was checked", err=True)
        sys.exit(128 + stopped.signum)
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _settings(params: dict[str, Any], script_args: list[str]) -> Settings:
    from gradcheck.config import ConfigError
    from gradcheck.output import FORMATS

    try:
        settings = Settings.from_command_line(params, script_args)
    except ConfigError as error:
        click.echo(f"gradcheck: {error}", err=True)
        sys.exit(EXIT_ERROR)
    if settings.fmt not in FORMATS:
        raise click.UsageError(f"--format {settings.fmt} is not available in this version")
    return settings


def _refuse_what_cannot_be_written(settings: Settings) -> None:
    """A --graph file that cannot be written is refused now, not after minutes of checking."""
    if settings.graph_path is None:
        return
    import shutil

    from gradcheck.output.dot import needs_graphviz, unsupported_suffix

    problem = unsupported_suffix(settings.graph_path)
    missing = needs_graphviz(settings.graph_path) and shutil.which("dot") is None
    if problem is None and missing and not settings.static:
        suffix = settings.graph_path.suffix.lower()
        problem = f"--graph FILE{suffix} needs Graphviz's `dot` on PATH; install Graphviz or ask for FILE.dot instead"
    if problem is not None:
        click.echo(f"gradcheck: {problem} (nothing was checked)", err=True)
        sys.exit(EXIT_ERROR)


def _check(settings: Settings) -> tuple[Report, list[str]]:
    """Check every path; text formats stream: each file's diagnosis is printed once it and
    the files before it are done, so the order is the same for any -j. Returns the report
    and the files already printed."""
    from gradcheck.check import check_targets
    from gradcheck.output import render
    from gradcheck.report import Report

    printed: list[str] = []
    status = None
    options = settings.check_options
    if settings.progress and not settings.static:
        import dataclasses

        from gradcheck.status import Status

        # signs of life on a terminal: the file being checked, for how long, its last output line
        status = Status()
        options = dataclasses.replace(options, running=status.running)

    def progress(done: int, total: int, path: str) -> None:
        if status is not None:
            status.done, status.total = done, total

    def print_result(result) -> None:
        text = render(Report([result]), settings.fmt, color=settings.color)
        if text:
            if status is not None:
                status.clear()
            click.echo(
                ("\n" if printed and settings.fmt == "full" else "") + text,
                nl=not text.endswith("\n"),
                color=settings.color,  # click strips colour from a pipe unless told
            )
            sys.stdout.flush()
            printed.append(result.path)

    try:
        report = check_targets(
            list(settings.paths),
            settings.config,
            options,
            progress=progress,
            on_result=print_result if settings.streamed else None,
            total=(lambda n: setattr(status, "total", n)) if status is not None else None,
        )
    finally:
        if status is not None:
            status.stop()
    if not report.files:
        from gradcheck.report import EXIT_NOTHING

        where = ", ".join(settings.paths) or "."
        click.echo(f"gradcheck: nothing to check: no Python file or notebook in {where}", err=True)
        sys.exit(EXIT_NOTHING)
    return report, printed


def _prepare_patches(settings: Settings, report: Report):
    """--diff/--fix: the suggested patches, each verified by checking the patched copy (docs/fixes.md)."""
    if not settings.patches:
        return None
    from gradcheck.fix.command import Fixing

    echo = lambda text: click.echo(text, err=True)  # noqa: E731
    fixing = Fixing(
        report,
        settings.config,
        settings.check_options,
        targets=list(settings.paths),
        write=settings.fix,
        force=settings.force,
        fmt=settings.fmt,
        echo=echo,
    )
    fixing.prepare()
    return fixing


def _print_report(settings: Settings, report: Report, printed: list[str]) -> None:
    """The diagnoses not streamed yet (JSON, SARIF, patches), then the summary on stderr."""
    from gradcheck.output import render

    output = bool(printed)
    if not settings.streamed:
        text = render(report, settings.fmt, color=settings.color)
        if text:
            click.echo(text if text.endswith("\n") else text + "\n", nl=False, color=settings.color)
        output = bool(text)
    sys.stdout.flush()  # the summary on stderr must come after the last diagnostic line
    if not settings.quiet:
        # after a full diagnosis, a blank line: the summary is not one more line of the fix
        click.echo(("\n" if output and settings.fmt == "full" else "") + report.summary(), err=True)


def _exit_code(settings: Settings, report: Report, fixing) -> int:
    """0 clean, 1 findings, 2 could not check; with --fix, what the fixing left."""
    if fixing is not None:
        return fixing.finish(settings.exit_zero, settings.quiet)
    return report.exit_code(settings.exit_zero)


def _write_graph(settings: Settings, report: Report) -> None:
    if settings.graph_path is None:
        return
    from gradcheck.output.dot import GraphvizMissing, write_graph

    try:
        written = write_graph(report.findings, settings.graph_path)
    except GraphvizMissing as error:
        click.echo(f"gradcheck: {error}", err=True)
        sys.exit(EXIT_ERROR)
    if not settings.quiet:
        click.echo(f"cut graph written to {written}", err=True)


if __name__ == "__main__":  # pragma: no cover
    main()
