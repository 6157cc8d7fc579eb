"""Where the check may end the user's program: only at a host point, in a thread of the
user's own, never inside a Python callback TensorFlow's runtime runs.

A ``StopCheck`` raised inside a ``tf.py_function`` / ``tf.numpy_function`` body (a host
callback of the value checks, a ``tf.data`` map, a step the user runs through one) does not
reach the user's code as itself: TensorFlow turns it into an ``UnknownError ...
EagerPyFunc`` that crashes the program's ``fit``. There the stop is deferred: it is raised
when the traced function whose run called the callback is called again from the user's
thread (``Session.stop_pending``), so the step that ran it did run and was checked. A
callback no such call ran (a ``tf.data`` map prefetching on its own) defers nothing: its
later requests run on unchecked, and the training loop's own budget ends the program.

Gradcheck's own work (``own_work``: the diagnosis and the value checks, which differentiate
the shadow tape again and may call a custom gradient again) is no step of the user's: the
hooks let its gradient requests and function calls through, neither counted nor checked,
and in a replica it never synchronises the replicas (``capture.hooks.distribute``)."""

from __future__ import annotations

import os
import sys
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

from gradcheck.trace.record.errors import StopCheck

__all__ = [
    "at_host_point",
    "defer_stop",
    "deferring_stop",
    "in_own_work",
    "in_runtime_callback",
    "own_work",
    "stop_due",
    "thread_key",
]


class _Local(threading.local):
    depth = 0  # a class default: no AttributeError to catch in a thread that never set it


_local = _Local()

#: The module whose ``FuncRegistry`` calls the body of every ``py_function``,
#: ``numpy_function`` and ``tf.data`` generator.
_CALLBACK_FILE = os.path.join("ops", "script_ops.py")


@contextmanager
def own_work() -> Iterator[None]:
    """Gradcheck's own computation in this thread (not the user's)."""
    _local.depth += 1
    try:
        yield
    finally:
        _local.depth -= 1


def in_own_work() -> bool:
    return _local.depth > 0


def in_runtime_callback() -> bool:
    """Whether this thread runs a Python callback of TensorFlow's runtime now (a frame of
    ``script_ops`` below: the call of a ``py_function``'s body). A stack walk: asked only
    when a stop is due."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename.endswith(_CALLBACK_FILE):
            return True
        frame = frame.f_back
    return False


def at_host_point() -> bool:
    """Whether a ``StopCheck`` raised here reaches the user's program as itself."""
    return not in_own_work() and not in_runtime_callback()


def thread_key() -> int:
    """Which thread a per-thread count belongs to: each Python thread (a MirroredStrategy's
    replicas run the same call once a step each) is its own; the threads of TensorFlow's
    pools, which run ``py_function`` bodies in turn, are one."""
    if isinstance(threading.current_thread(), threading._DummyThread):  # a thread Python did not start
        return 0
    return threading.get_ident()


def defer_stop(session) -> None:
    """Keep a stop called for in a runtime callback for the next call of the traced function
    the user's thread is running now (none: the stop is dropped, see the module docstring)."""
    calls = session.host_calls
    if calls:
        session.stop_pending = weakref.ref(calls[-1])


def stop_due(session, concrete) -> bool:
    """Whether the deferred stop is to be raised now, before ``concrete`` runs again."""
    pending = session.stop_pending
    return pending is not None and pending() is concrete and at_host_point()


@contextmanager
def deferring_stop(session) -> Iterator[None]:
    """Gradcheck's own work in a runtime callback: a stop raised inside is deferred
    (``defer_stop``), never raised into TensorFlow's runtime."""
    try:
        with own_work():
            yield
    except StopCheck:
        defer_stop(session)
