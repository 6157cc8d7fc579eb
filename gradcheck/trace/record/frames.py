"""Which Python frame is the user's, and where exactly in it an op came from.

The user's line is the innermost frame that is not framework code (TensorFlow, Keras,
gradcheck, the standard library...), as TensorFlow's ``error_interpolation`` does. This
module imports no TensorFlow; it decides by file path, cached per code object because the
eager recorder asks for every op.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from importlib.util import find_spec
from types import CodeType, FrameType


@dataclass(frozen=True)
class Location:
    path: str
    line: int
    column: int = 1
    end_line: int | None = None
    end_column: int | None = None


_FRAMEWORK_PACKAGES = (
    "tensorflow",
    "keras",
    "tf_keras",
    "gradcheck",
    "absl",
    "numpy",
    "ml_dtypes",
    "optree",
    "h5py",
    "tree",
    "wrapt",
    "google",
    "_pytest",
    "pytest",
    "pluggy",
    "click",
    "hypothesis",
)


def _framework_roots() -> tuple[str, ...]:
    roots = []
    for name in _FRAMEWORK_PACKAGES:
        try:
            spec = find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.submodule_search_locations:
            roots.extend(os.path.realpath(p) + os.sep for p in spec.submodule_search_locations)
    # the standard library, where ``os`` lives: ``sysconfig.get_paths()`` would import
    # ``_sysconfigdata_*`` on Python 3.10, a module the program itself never imports
    roots.append(os.path.realpath(os.path.dirname(os.__file__)) + os.sep)
    # The gradcheck package itself, even when run from a checkout.
    roots.append(os.path.realpath(os.path.dirname(os.path.dirname(os.path.dirname(__file__)))) + os.sep)
    return tuple(dict.fromkeys(roots))


_ROOTS: tuple[str, ...] | None = None
_USER_CODE: dict[CodeType, bool] = {}
_USER_FILE: dict[str, bool] = {}


def is_user_file(filename: str) -> bool:
    """True for the user's own source: not installed packages, not the standard library."""
    cached = _USER_FILE.get(filename)
    if cached is not None:
        return cached
    global _ROOTS
    if _ROOTS is None:
        _ROOTS = _framework_roots()
    if filename.startswith("<"):
        # exec'd code and classic IPython cells are the user's; <frozen ...> modules are not
        result = filename in ("<string>", "<stdin>") or filename.startswith("<ipython-input")
    elif "__autograph_generated_file" in filename:
        result = False
    else:
        real = os.path.realpath(filename)
        installed = f"{os.sep}site-packages{os.sep}" in real or f"{os.sep}dist-packages{os.sep}" in real
        result = not installed and not real.startswith(_ROOTS)
    _USER_FILE[filename] = result
    return result


def _is_user_code(code: CodeType) -> bool:
    cached = _USER_CODE.get(code)
    if cached is None:
        cached = _USER_CODE[code] = is_user_file(code.co_filename)
    return cached


def user_frame(start: FrameType | None = None) -> FrameType | None:
    """The innermost user frame at or above ``start`` (default: the caller's caller)."""
    frame = start if start is not None else sys._getframe(2)
    while frame is not None:
        if _is_user_code(frame.f_code):
            return frame
        frame = frame.f_back
    return None


_POSITIONS: dict[CodeType, tuple] = {}


def frame_site(frame: FrameType) -> tuple[CodeType, int]:
    """A cheap, hashable handle on the instruction a frame is executing."""
    return (frame.f_code, frame.f_lasti)


def site_location(site: tuple[CodeType, int], hints: tuple[str, ...] = ()) -> Location:
    """Resolve a ``frame_site`` to file, line and the 1-based column span (Python 3.11+
    knows the exact expression being executed; on 3.10 the span comes from the line's AST,
    a call named in ``hints`` first, as for graph tracebacks)."""
    location = _site_location(site, hints)
    if "__autograph_generated_file" in location.path:  # a converted copy of the user's code
        mapped = AUTOGRAPH_LINES.get((location.path, location.line))
        if mapped is not None:
            return line_location(mapped[0], mapped[1], hints)
    return location


def _site_location(site: tuple[CodeType, int], hints: tuple[str, ...] = ()) -> Location:
    code, lasti = site
    positions = _POSITIONS.get(code)
    if positions is None and hasattr(code, "co_positions"):
        positions = _POSITIONS[code] = tuple(code.co_positions())
    if positions and 0 <= lasti // 2 < len(positions):
        line, end_line, col, end_col = positions[lasti // 2]
        if line is not None:
            return Location(
                code.co_filename,
                line,
                (col or 0) + 1,
                end_line,
                end_col + 1 if end_col is not None else None,
            )
    import dis

    # Python 3.10: no column positions; the line is that of the last line start at or
    # before the instruction (f_lasti counts bytes there, as dis offsets do)
    line = code.co_firstlineno
    for offset, start in dis.findlinestarts(code):
        if offset > lasti:
            break
        if start is not None:
            line = start
    return line_location(code.co_filename, line, hints)


def line_location(path: str, line: int, hints: tuple[str, ...] = ()) -> Location:
    """A file and line, with the column span of the line's expression (a call named in
    ``hints`` first) when the source has one."""
    from gradcheck import sourcemap

    expr = sourcemap.expression_at(path, line, hints=hints)
    if expr is not None and expr.line == line:
        return Location(path, line, expr.column, expr.end_line, expr.end_column)
    return Location(path, line)


def current_user_site(converted: bool = False) -> tuple[CodeType, int] | None:
    """The innermost user frame's site; with ``converted``, autograph's generated copy of
    the user's own code counts as the user's (a loss function tf_keras converts even when
    run eagerly: the ``.numpy()`` in it is the user's line, not ``model.fit``'s)."""
    frame = sys._getframe(1)
    while frame is not None:
        if _is_user_code(frame.f_code) or (converted and _converted_user_code(frame)):
            return frame_site(frame)
        frame = frame.f_back
    return None


def creation_site(obj: object) -> tuple[CodeType, int] | None:
    """Where the user created ``obj``: the innermost user frame that is not one of its own
    methods (a custom layer's ``super().__init__(**kwargs)`` is inside the layer; the line
    that made it, ``ABCDense(32)``, is the user's)."""
    frame = user_frame(sys._getframe(1))
    while frame is not None and frame.f_locals.get("self") is obj:
        frame = user_frame(frame.f_back)
    return frame_site(frame) if frame is not None else None


Sites = tuple[tuple[CodeType, int], ...]


def numpy_function_caller(start: FrameType | None, depth: int = 60) -> tuple[CodeType, int] | None:
    """When running inside the Python function of an eager ``tf.numpy_function``: the
    user's site that called ``tf.numpy_function``."""
    frame = start
    while frame is not None and depth:
        code = frame.f_code
        if code.co_name in ("numpy_function", "py_func") and code.co_filename.endswith("script_ops.py"):
            caller = user_frame(frame)
            return frame_site(caller) if caller is not None else None
        frame, depth = frame.f_back, depth - 1
    return None


def stack(start: FrameType | None):
    """The frames from ``start`` outwards."""
    while start is not None:
        yield start
        start = start.f_back


def in_keras_metric(filenames) -> bool:
    """Whether one of ``filenames`` (a stack) is a module of Keras's metrics."""
    return any(
        f"{os.sep}metrics{os.sep}" in name and (f"{os.sep}keras{os.sep}" in name or f"{os.sep}tf_keras{os.sep}" in name)
        for name in filenames
    )


def layer_site(start: FrameType | None):
    """The site where the user applied (else created) the innermost Keras layer running
    now, when no user code runs inside that layer (a ``Lambda(ops.argmax)``, a built-in layer): inside
    ``model.fit`` the op otherwise has no user line but the ``fit`` call."""
    frame = start
    while frame is not None:
        code = frame.f_code
        if _is_user_code(code) or _converted_user_code(frame):
            return None
        # `tf____call__`: autograph's conversion of it (TF 2.16 converts tf_keras's layers in `fit`)
        if code.co_name in ("__call__", "tf____call__"):
            layer = frame.f_locals.get("self")
            site = getattr(layer, "_gc_call_site", None) or getattr(layer, "_gc_site", None)
            if site is not None:
                return site
        frame = frame.f_back
    return None


def _converted_user_code(frame: FrameType) -> bool:
    """Autograph's generated copy of the user's own code (a custom layer's ``call`` that
    tf_keras converts inside ``fit``): user code runs there, though the file is generated."""
    filename = frame.f_code.co_filename
    if "__autograph_generated_file" not in filename:
        return False
    mapped = AUTOGRAPH_LINES.get((filename, frame.f_lineno))
    return mapped is not None and is_user_file(mapped[0])


def current_user_sites(limit: int = 8) -> Sites | None:
    """The user frames of the current stack, innermost first (at most ``limit``): the
    innermost is where an op came from, an outer one where the user's code at the level
    of the tape called into it (``self(x)`` in a ``train_step``)."""
    frame = sys._getframe(1)
    out = []
    is_user = _is_user_code
    while frame is not None:
        if is_user(frame.f_code):
            out.append((frame.f_code, frame.f_lasti))
            if len(out) == limit:
                break
        frame = frame.f_back
    return tuple(out) or None


@dataclass(frozen=True)
class UserFrame:
    """One user frame of an op's stack: where, and in which function (file and name)."""

    path: str
    line: int
    function: str
    site: tuple[CodeType, int] | None = None  # eager: the exact instruction

    @property
    def scope(self) -> tuple[str, str]:
        return (self.path, self.function)

    def location(self, hints: tuple[str, ...] = ()) -> Location:
        return site_location(self.site, hints) if self.site is not None else Location(self.path, self.line)


def sites_frames(sites: Sites | None) -> list[UserFrame]:
    """User frames (innermost first) of an eager op's recorded sites."""
    out = []
    for code, lasti in sites or ():
        out.append(UserFrame(code.co_filename, site_location((code, lasti)).line, code.co_name, (code, lasti)))
    return out


#: Autograph's generated code -> the user's: (generated file, line) -> (file, line, function),
#: from every function autograph converted while the tracer was active. TensorFlow maps
#: tracebacks only in the thread that converted (its source map is thread-local), so an op
#: traced in a replica thread of ``strategy.run`` would otherwise have no user frame.
AUTOGRAPH_LINES: dict[tuple[str, int], tuple[str, int, str]] = {}


def stack_frames(stack) -> list[UserFrame]:
    """User frames (innermost first) of a TensorFlow stack (``op.traceback``, outermost first)."""
    out = []
    for f in reversed(list(stack)):
        filename, lineno, name = f.filename, f.lineno, f.name
        if "__autograph_generated_file" in filename:
            filename, lineno, name = AUTOGRAPH_LINES.get((filename, lineno), (filename, lineno, name))
        if is_user_file(filename):
            out.append(UserFrame(filename, lineno, name))
    return out


def stack_user_location(stack) -> Location | None:
    """Innermost user frame of a TensorFlow ``op.traceback`` (a list of StackFrame objects,
    outermost first). Graph tracebacks carry no column: the caller refines it from the AST."""
    for frame in reversed(list(stack)):
        if is_user_file(frame.filename):
            return Location(frame.filename, frame.lineno)
    return None
