"""A stop that user code cannot swallow (section 0: the program ends at its checked step).

gradcheck ends a program by raising ``StopCheck``, a BaseException. A bare ``except:`` (or
``except BaseException:``) in the user's code catches it anyway and would go on training,
or save an "emergency" model. So, while the runner runs a program (``StopGuard``), the
raise (``errors.stop_program``) also arms a trace function that raises ``StopCheck`` again
at the next line of user code (``frames.is_user_file``), until the runner catches it:

- ``sys.settrace`` plus ``frame.f_trace`` on the raising thread's live user frames give the
  line events. Python switches off a trace function that raises, so a profile function
  (``sys.setprofile``: calls, C calls, returns) switches it on again; a handler that
  catches the second stop is stopped at its first call or the next line after one.
- A stop that ends another thread (training in a worker thread) also ends the thread that
  runs the program: when it leaves the thread (``threading.excepthook``), that thread gets
  an asynchronous ``StopCheck`` (``PyThreadState_SetAsyncExc``), whose construction arms
  the re-stop there. It is sent after the dying thread has switched its own tracing off:
  on Python 3.11 a traced thread spins while another thread's asynchronous exception is
  pending, and the program's thread may be waiting for it in ``join()``.
- What Python runs while an exception unwinds runs: ``finally`` blocks, ``with`` exits
  (``__exit__``) and what they call. Only code that caught the stop is stopped.

Leaving the guard disarms it all and puts back the trace and profile functions it found.
Nothing here imports TensorFlow.
"""

from __future__ import annotations

import ast
import ctypes
import linecache
import sys
import threading
from types import FrameType

from gradcheck.trace.record import errors, frames
from gradcheck.trace.record.errors import StopCheck


class _RemoteStop(StopCheck):
    """The stop delivered to the program's thread from another one: Python builds it in the
    receiving thread, so building it arms the re-stop there."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        _arm(sys._getframe(1))


class _Guard:
    def __init__(self) -> None:
        self.owner = threading.get_ident()
        self.armed = False
        self.owner_told = False
        self.saved = (sys.gettrace(), sys.getprofile())
        self.saved_threading = (threading.gettrace(), threading.getprofile(), threading.excepthook)
        #: id(frame) -> (frame, line of the exception last seen in it)
        self.raised_at: dict[int, tuple[FrameType, int]] = {}


_lock = threading.Lock()
_guard: _Guard | None = None


class StopGuard:
    """While a program runs in this thread: a stop raised inside is one it cannot swallow."""

    def __enter__(self) -> StopGuard:
        global _guard
        with _lock:
            _guard = _Guard()
        errors.set_stop_hook(_arm)
        return self

    def __exit__(self, *_exc: object) -> None:
        disarm()


def disarm() -> None:
    """Stop re-stopping (the runner caught the stop, or a ``fit`` cut short lets the program
    go on): trace and profile functions as they were, no stop pending for this thread."""
    global _guard
    with _lock:  # no stop is sent to this thread after this, and one not yet delivered is dropped
        guard, _guard = _guard, None
        if guard is not None and guard.owner_told and threading.get_ident() == guard.owner:
            _set_async_exc(guard.owner, None)
    errors.set_stop_hook(None)
    if guard is None:
        return
    if guard.armed:
        mine = threading.get_ident() == guard.owner
        sys.setprofile(guard.saved[1] if mine else None)
        sys.settrace(guard.saved[0] if mine else None)
        threading.settrace(guard.saved_threading[0])  # type: ignore[arg-type]
        threading.setprofile(guard.saved_threading[1])  # type: ignore[arg-type]
        if threading.excepthook is _thread_ended:
            threading.excepthook = guard.saved_threading[2]
        guard.raised_at.clear()
        _BLOCKS.clear()  # the next program may be an edited copy of the same file


def resume() -> None:
    """The program goes on by gradcheck's own choice (``runner._fit``): disarmed, guard kept."""
    guard = _guard
    if guard is None:
        return
    disarm()
    StopGuard().__enter__()
    if _guard is not None:  # still the program's thread, and what to put back at its end
        _guard.owner, _guard.saved = guard.owner, guard.saved


def _arm(frame: FrameType | None) -> None:
    guard = _guard
    if guard is None:
        return
    with _lock:
        first = not guard.armed
        guard.armed = True
    if first:  # threads the program starts from now on, and the end of those it runs
        threading.settrace(_trace)  # type: ignore[arg-type]
        threading.setprofile(_profile)  # type: ignore[arg-type]
        threading.excepthook = _thread_ended
    _arm_thread(frame)


def _thread_ended(args) -> None:
    """``threading.excepthook`` while armed: a thread the stop ended tells the program's
    thread (quietly: under python there was no stop to print); other errors as before."""
    guard = _guard
    if guard is None or not isinstance(args.exc_value, StopCheck):
        (guard.saved_threading[2] if guard is not None else threading.__excepthook__)(args)
        return
    sys.setprofile(None)  # first: the profile function would switch the trace function on again
    sys.settrace(None)
    with _lock:
        if threading.get_ident() != guard.owner and not guard.owner_told and _guard is guard:
            guard.owner_told = True
            _set_async_exc(guard.owner, _RemoteStop)


def _arm_thread(frame: FrameType | None) -> None:
    sys.settrace(_trace)
    sys.setprofile(_profile)
    while frame is not None:
        if _program_file(frame.f_code.co_filename):
            frame.f_trace = _local
        frame = frame.f_back


def _program_file(filename: str) -> bool:
    """A file of the program's own, where a caught stop is raised again: not code made at run
    time (``<string>``: a dataclass's ``__eq__``/``__hash__``, a namedtuple's ``__new__``, which
    gradcheck's own code calls while it handles the stop)."""
    return not filename.startswith("<") and frames.is_user_file(filename)


def _set_async_exc(ident: int, exc_type: type[BaseException] | None) -> None:
    try:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(ident), ctypes.py_object(exc_type) if exc_type else None
        )
    except (AttributeError, OSError):  # pragma: no cover - not CPython
        pass


def _trace(frame: FrameType, event: str, _arg: object):
    if _guard is None or not _guard.armed:
        sys.settrace(None)  # a thread armed before the runner disarmed
        return None
    if event == "call" and _program_file(frame.f_code.co_filename):
        return _local(frame, event, _arg)
    return None


def _local(frame: FrameType, event: str, arg: object):
    guard = _guard
    if guard is None or not guard.armed:
        return None
    if event == "exception":
        guard.raised_at[id(frame)] = (frame, frame.f_lineno or 0)
    elif event == "line" and not _unwinding(guard, frame):
        guard.raised_at[id(frame)] = (frame, frame.f_lineno or 0)
        sys.setprofile(_profile)  # it switches this trace function on again: Python drops one that raises
        raise StopCheck()
    return _local


def _profile(frame: FrameType, _event: str, _arg: object) -> None:
    if _guard is None or not _guard.armed:
        sys.setprofile(None)
        return
    if sys.gettrace() is not _trace:
        _arm_thread(frame)


def _unwinding(guard: _Guard, frame: FrameType) -> bool:
    """Is ``frame``, or a user frame that called it, at a line Python runs while an
    exception leaves a block (a ``finally`` body, a ``with`` statement's exit)?"""
    while frame is not None:
        if _program_file(frame.f_code.co_filename):
            seen = guard.raised_at.get(id(frame))
            if (
                seen is not None
                and seen[0] is frame
                and frame.f_lineno is not None
                and _cleanup_line(frame.f_code.co_filename, frame.f_lineno, seen[1])
            ):
                return True
        frame = frame.f_back
    return False


_BLOCKS: dict[str, list[tuple[range, range]]] = {}


def _cleanup_line(filename: str, line: int, raised: int) -> bool:
    """``line`` is a cleanup the exception raised at ``raised`` goes through."""
    blocks = _BLOCKS.get(filename)
    if blocks is None:
        blocks = _BLOCKS[filename] = _cleanup_blocks(filename)
    return any(line in cleanup and raised in guarded for cleanup, guarded in blocks)


def _cleanup_blocks(filename: str) -> list[tuple[range, range]]:
    """(cleanup lines, the lines whose exceptions go through them): a ``with`` statement's
    header (where Python reports its exit) for its body, a ``finally`` body for its ``try``."""
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return []
    blocks = []
    for node in ast.walk(tree):
        if not hasattr(node, "lineno"):
            continue
        end = getattr(node, "end_lineno", None) or node.lineno
        if isinstance(node, (ast.With, ast.AsyncWith)) and node.body:
            blocks.append((range(node.lineno, node.body[0].lineno), range(node.body[0].lineno, end + 1)))
        finalbody = getattr(node, "finalbody", None)
        if finalbody:
            start = finalbody[0].lineno
            blocks.append((range(start, end + 1), range(node.lineno, start)))
    return blocks
