"""The Python API: check a step or a model in-process, watch a block, or install the
tracer for a whole notebook. Importing this module imports no TensorFlow; calling any
function does (and fails with a clear message when TensorFlow is missing).
"""

from __future__ import annotations

import atexit
import dataclasses
import inspect
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from gradcheck.findings import FileResult, Finding
from gradcheck.report import GradientFlowError, Report
from gradcheck.trace.run.steps import run_train_step


class TensorFlowMissingError(ImportError):
    """GC904: the trace engine needs TensorFlow."""


def _require_tensorflow() -> None:
    try:
        from gradcheck.trace.record import _tf  # noqa: F401  (imports TensorFlow)
    except ImportError as error:
        raise TensorFlowMissingError(
            f"GC904 gradcheck's trace engine needs TensorFlow, which cannot be imported ({error}); "
            "install tensorflow (or tensorflow-cpu), or use `gradcheck --static`"
        ) from error


def _label(obj: object) -> str:
    try:
        return inspect.getsourcefile(obj) or getattr(obj, "__qualname__", repr(obj))
    except TypeError:
        return getattr(obj, "__qualname__", None) or type(obj).__name__


def _report(label: str, session, extra: list[Finding] = ()) -> Report:
    result = FileResult(_relative(label), steps_checked=session.steps_checked)
    findings = [dataclasses.replace(f, path=_relative(f.path)) for f in [*session.findings, *extra]]
    result.findings = sorted(findings, key=Finding.sort_key)
    return Report([result])


def _relative(path: str) -> str:
    """Paths below the working directory are shown relative to it, as the CLI shows them."""
    if not os.path.isabs(path):
        return path
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _run(fn: Callable[[], Any], allow_none: Iterable[str], check_custom_gradients: bool = False) -> Report:
    """Run ``fn`` checked: every gradient diagnosed, no optimizer update applied."""
    _require_tensorflow()
    from gradcheck.trace.capture.hooks import tracing
    from gradcheck.trace.capture.session import Session
    from gradcheck.trace.diagnose.escape import graph_escape_finding
    from gradcheck.trace.record.errors import StopCheck
    from gradcheck.trace.values import custom_check

    session = Session(steps=None, skip_updates=True, allow_none=allow_none, check_mode=True)
    extra: list[Finding] = []
    try:
        with tracing(session):
            custom_check.configure(session, check_custom_gradients=check_custom_gradients)
            fn()
    except StopCheck:
        pass
    except Exception as error:
        escape = graph_escape_finding(session, error)
        if escape is None:
            raise
        extra.append(escape)
    return _report(_label(fn), session, extra)


def check_step(
    fn: Callable[..., Any],
    *args: Any,
    allow_none: Iterable[str] = (),
    check_custom_gradients: bool = False,
    **kwargs: Any,
) -> Report:
    """Call ``fn(*args, **kwargs)`` once (eager or ``tf.function``) and diagnose every
    ``tape.gradient`` it makes. Optimizer updates are skipped: the weights do not change.
    ``check_custom_gradients``: also compare each ``tf.custom_gradient`` with finite
    differences (GC301, opt-in)."""
    report = _run(lambda: fn(*args, **kwargs), allow_none, check_custom_gradients)
    report.files[0].path = _label(fn)
    return report


def check_model(
    model: Any, batch: Any, *, allow_none: Iterable[str] = (), check_custom_gradients: bool = False
) -> Report:
    """Run one ``train_step`` of a compiled Keras model on ``batch`` (as ``fit`` would, without
    updating the weights) and diagnose every variable that gets no gradient (or a degenerate one)."""
    report = _run(lambda: run_train_step(model, batch), allow_none, check_custom_gradients)
    report.files[0].path = type(model).__name__
    return report


def assert_gradients_flow(
    model_or_step: Any,
    batch: Any = None,
    *,
    allow_none: Iterable[str] = (),
    select: Iterable[str] | None = None,
    allow_zero: bool | Iterable[str] = False,
    allow_nonfinite: bool | Iterable[str] = False,
    check_custom_gradients: bool = False,
) -> Report:
    """Fail with the full text diagnosis (file:line, code frame, variables, op path, fix)
    unless every variable gets a usable gradient. Takes a compiled model and a batch, or a
    zero-argument step function (``batch`` then is a tuple of its positional args).

    ``allow_zero`` / ``allow_nonfinite``: ``True`` accepts every all-zero (GC201) /
    non-finite (GC202) gradient, or glob patterns over variable paths accept those only
    (a frozen branch, a head masked out on purpose)."""
    __tracebackhide__ = True  # pytest shows the diagnosis, not this frame
    options = {"allow_none": allow_none, "check_custom_gradients": check_custom_gradients}
    if hasattr(model_or_step, "train_step") and hasattr(model_or_step, "trainable_variables"):
        report = check_model(model_or_step, batch, **options)
    else:
        args = () if batch is None else batch if isinstance(batch, tuple) else (batch,)
        report = check_step(model_or_step, *args, **options)
    _allow(report, "GC201", allow_zero)
    _allow(report, "GC202", allow_nonfinite)
    if select is not None:
        prefixes = tuple(select)
        for result in report.files:
            result.findings = [f for f in result.findings if f.code.startswith(prefixes)]
    if not report.ok:
        raise GradientFlowError(report.to_text(color=False))
    return report


def _configure(session, check_custom_gradients: bool = False) -> None:
    from gradcheck.trace.values import custom_check

    custom_check.configure(session, check_custom_gradients=check_custom_gradients)


def _allow(report: Report, code: str, allowed: bool | Iterable[str]) -> None:
    """Drop ``code`` findings (``allowed=True``), or the variables of them matching one of
    the glob patterns ``allowed`` (and a finding left with none)."""
    if allowed is False or allowed is None:
        return
    import fnmatch

    patterns = None if allowed is True else tuple([allowed] if isinstance(allowed, str) else allowed)
    for result in report.files:
        kept = []
        for finding in result.findings:
            if finding.code != code:
                kept.append(finding)
                continue
            if patterns is None:
                continue
            left = [v for v in finding.variables if not any(fnmatch.fnmatchcase(v, p) for p in patterns)]
            if left:
                finding.variables = left
                kept.append(finding)
        result.findings = kept


@contextmanager
def watch(*, allow_none: Iterable[str] = ()) -> Iterator[Report]:
    """Diagnose every ``tape.gradient`` made inside the block; the yielded Report fills up
    as it goes. Training is not changed (updates apply, nothing stops)."""
    _require_tensorflow()
    from gradcheck.trace.capture.hooks import tracing
    from gradcheck.trace.capture.session import Session

    report = Report([FileResult("<watch>")])

    def collect(findings: list[Finding]) -> None:
        report.files[0].findings.extend(findings)

    session = Session(steps=None, skip_updates=False, allow_none=allow_none, on_findings=collect)
    with tracing(session):
        _configure(session)
        yield report
    report.files[0].steps_checked = session.steps_checked


_INSTALLED = None


def install(*, allow_none: Iterable[str] = (), stream=None) -> None:
    """From now on (notebooks, scripts), a ``tape.gradient`` that yields None gradients
    prints the diagnosis, and Keras's "No gradients provided" error carries the findings
    that starved the variables of that update."""
    global _INSTALLED
    if _INSTALLED is not None:
        return
    _require_tensorflow()
    from gradcheck.output.text import render_findings
    from gradcheck.trace.capture.hooks import activate
    from gradcheck.trace.capture.session import Session

    out = stream or sys.stderr

    def show(findings: list[Finding]) -> None:
        if findings:
            print(render_findings(findings), file=out)

    session = Session(steps=None, skip_updates=False, allow_none=allow_none, on_findings=show)
    activate(session)
    _configure(session)
    _INSTALLED = session
    atexit.register(_look_at_exit)


def _look_at_exit() -> None:
    """A script that ends while installed: what its last traced steps' value checks found
    (they report when the host next looks) is printed before it exits."""
    if _INSTALLED is not None:
        _INSTALLED.poll_values()


def uninstall() -> None:
    """Undo ``install()``."""
    global _INSTALLED
    if _INSTALLED is not None:
        from gradcheck.trace.capture.hooks import deactivate

        deactivate(_INSTALLED)
        _INSTALLED = None
    atexit.unregister(_look_at_exit)


__all__ = [
    "GradientFlowError",
    "TensorFlowMissingError",
    "assert_gradients_flow",
    "check_model",
    "check_step",
    "install",
    "uninstall",
    "watch",
]
