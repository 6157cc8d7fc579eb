"""Install and remove the tracer's hooks on TensorFlow, Keras and NumPy (see ``session``):
``with tracing(session):`` runs the user's code with them.

The hooks are installed in named steps, each a module with ``install(session, patches)``;
a step's ``uninstall`` puts back what it patched (and, for the op callback, removes it).
Adding a hook point is adding a step to ``STEPS``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from gradcheck.trace.capture.hooks import distribute, escapes, functions, keras, optimizers, pyfunc, tape, threads
from gradcheck.trace.capture.patches import Patches
from gradcheck.trace.capture.session import Session
from gradcheck.trace.record import _tf

# Importing the check packages registers their checks (``record.registry``).
from gradcheck.trace import diagnose as _diagnose  # noqa: F401  isort: skip
from gradcheck.trace import values as _values  # noqa: F401  isort: skip


def _restore(session: Session, patches: Patches) -> None:
    patches.restore()


def _add_op_callback(session: Session, patches: Patches) -> None:
    """Every eager op the user's code runs, recorded (registering a callback also turns
    off the eager fast path, so no op is missed)."""
    session.recorder.passed_variables = _tf.passed_variables
    _tf.add_op_callback(session.recorder.callback)


def _remove_op_callback(session: Session, patches: Patches) -> None:
    try:
        _tf.remove_op_callback(session.recorder.callback)
    except (KeyError, ValueError):
        pass


@dataclass(frozen=True)
class Step:
    name: str
    install: Callable[[Session, Patches], None]
    uninstall: Callable[[Session, Patches], None] = _restore


STEPS: tuple[Step, ...] = (
    Step("tape", tape.install),
    Step("escapes", escapes.install, escapes.uninstall),
    Step("functions", functions.install),
    Step("keras", keras.install),
    Step("optimizers", optimizers.install, optimizers.uninstall),
    Step("distribute", distribute.install),
    Step("py_function", pyfunc.install),
    Step("op-callback", _add_op_callback, _remove_op_callback),
    Step("threads", threads.install, threads.uninstall),
)

_ACTIVE: Session | None = None


def activate(session: Session) -> None:
    """Install the hooks for ``session`` (one session at a time)."""
    global _ACTIVE
    if _ACTIVE is not None:
        raise RuntimeError("a gradcheck session is already active")
    try:
        install(session)
    except BaseException:
        uninstall(session)  # no step half in: the program goes on as under python
        raise
    _ACTIVE = session


def deactivate(session: Session) -> None:
    global _ACTIVE
    if _ACTIVE is session:
        session.poll_values()  # what a traced step delivered since the last look
        _ACTIVE = None
        uninstall(session)


@contextmanager
def tracing(session: Session) -> Iterator[Session]:
    activate(session)
    try:
        yield session
    finally:
        deactivate(session)


def install(session: Session) -> None:
    for step in STEPS:
        patches = Patches()
        session.installed.append((step, patches))
        step.install(session, patches)


def uninstall(session: Session) -> None:
    """Undo the steps, the last installed first, then what was patched after them."""
    while session.installed:
        step, patches = session.installed.pop()
        step.uninstall(session, patches)
    session.restore()
