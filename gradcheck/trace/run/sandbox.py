"""Nothing on the user's disk is created, changed or deleted during a check (issue 35).

A check runs the user's script, which may save models, checkpoints, logs and metrics over
the files a real training made. For the length of ``runner.run_file`` every write outside
the throwaway places (the system temp directory, ``/dev``, ``/proc``, gradcheck's own
result files) goes to a *shadow*: the same absolute path under a per-check temporary
directory. Later reads of that path in the same check read the shadow, so a script that
saves a model and loads it again still runs. A deletion or rename of a user file is not
done: the path only looks gone for the rest of the check. Each kept-out call is recorded
with the user's file:line (``FileResult.kept_out``).

One mechanism answers "where does this path live during the check" (``Sandbox.read_path``
/ ``write_path``); every wrapper asks it:

- Python's writers: ``builtins.open``/``io.open`` (pathlib, zipfile, NumPy, json, Keras 3's
  local ``file_utils``), ``os.open`` and the path functions of ``os`` and ``shutil``.
- Writers below Python, which Python's audit events never see, wrapped where their path is
  still a Python value: ``tf.io.gfile`` (its pybind module, so TensorFlow's own Python uses
  it too), checkpoint saves and restores (``TrackableSaver``: ``tf.train.Checkpoint``,
  tf_keras's TF-format weights), ``CheckpointManager``'s directory, SavedModel save/load,
  summary writers, ``TFRecordWriter``, ``tf.io.write_file``, ``tf.data``'s cache/save/snapshot
  files and ``h5py.File``.
- A ``sys.addaudithook`` safety net: a write or deletion outside the throwaway places that
  reached Python's own ``open``/``os`` without the redirect (a function bound before the
  check began) raises ``PermissionError`` instead, and is recorded as refused. Audit
  hooks cannot be removed; it is inert once the check ends.

Libraries' own caches and settings (Keras's home, ``~/.cache``, matplotlib's) are written
as under python (``library_caches``). Child processes the script starts are not covered.
"""

from __future__ import annotations

import dataclasses
import errno
import linecache
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable
from typing import Any

from gradcheck.findings import KeptOut
from gradcheck.trace.record import frames  # imports no TensorFlow
from gradcheck.trace.run import sandbox_wrappers

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
#: The kept-out calls a result lists (repeats of one call at one line count once).
MAX_RECORDS = 50

_real_stat = os.stat
_real_lstat = os.lstat
_real_listdir = os.listdir

_ACTIVE: Sandbox | None = None
_MISSING = object()
_AUDIT_INSTALLED = False


def active() -> Sandbox | None:
    return _ACTIVE


def libraries_ready() -> None:
    """Wrap the writers of TensorFlow, Keras and h5py imported since the sandbox went in
    (``runner._Tracer`` calls this when the script's own import of TensorFlow is done)."""
    if _ACTIVE is not None:
        _ACTIVE.wrap_libraries()


class Refused(PermissionError):
    """A write or deletion outside the throwaway places that the redirect did not see."""


class Sandbox:
    """The per-check shadow of the user's disk; ``install`` before the script runs,
    ``remove`` after (run_file is also called in-process, by tests and the Python API)."""

    def __init__(self, *, protect: Iterable[str] = (), allow: Iterable[str] = ()) -> None:
        allow = list(allow)
        # in the first allowed directory (the CLI's per-file one, removed by the parent even
        # when a timeout kills the child), else in the temp directory
        self.root = os.path.realpath(tempfile.mkdtemp(prefix="gradcheck-sandbox-", dir=allow[0] if allow else None))
        temp = os.path.realpath(tempfile.gettempdir())
        self._temps = _with_sep({temp, os.path.abspath(tempfile.gettempdir())})
        # a project that lives in the temp directory (tests, a scratch checkout) stays protected
        self._protected = tuple(
            p for p in _with_sep(_both(protect)) if any(p.startswith(t) and p != t for t in self._temps)
        )
        caches = _with_sep(_both(library_caches()))
        self._free = _with_sep({self.root, "/dev", "/proc", *_both(allow), *caches})
        #: the folders above a cache, which a library may create first (``~/.config``)
        self._above_caches = {os.path.dirname(c.rstrip(os.sep)) for c in caches}
        #: absolute paths whose truth is the shadow (a missing shadow: the path is gone)
        self._covered: set[str] = set()
        #: checkpoint prefixes written during the check (``dir/ckpt`` covers ``dir/ckpt-1.index``)
        self._prefixes: set[str] = set()
        self.records: list[KeptOut] = []
        self._seen: set[tuple] = set()
        self._more = 0
        self._refusals: list[BaseException] = []
        self._local = threading.local()
        self._patches: list[tuple[Any, str, Any]] = []
        self._wrapped: set[str] = set()
        self._saved_bytecode = sys.dont_write_bytecode
        self.active = False

    # -- where a path lives ---------------------------------------------------------------

    def read_path(self, path: Any) -> Any:
        """The path to read ``path`` from: its shadow once the check wrote or deleted it."""
        if not (self._covered or self._prefixes):
            return path
        p = _local_path(path)
        if p is None or self._is_free(p) or not self._is_covered(p):
            return path
        return _like(path, self._shadow(p))

    def write_path(self, path: Any, *, keep: bool, action: str = "written") -> Any:
        """The path to write ``path`` at: its shadow (made on the first write, with the
        original's content when ``keep``: an append, an ``r+``, a checkpoint directory; a
        directory written without ``keep``, a summary writer's, starts empty)."""
        p = _local_path(path)
        if p is None or self._is_free(p):
            return path
        shadow = self._shadow(p)
        with self.bypass():
            self._make_parent(p)  # also after a deletion of p's folder was kept out
            if not self._is_covered(p):
                if keep and os.path.isdir(p) and not os.path.islink(p):
                    shutil.copytree(p, shadow, symlinks=True)
                elif keep and os.path.isfile(p):
                    shutil.copy2(p, shadow)
                self._covered.add(p)
        self.record(p, action)
        return _like(path, shadow)

    def write_prefix(self, prefix: Any, action: str = "written") -> Any:
        """A checkpoint prefix: the files ``prefix*`` beside it live in the shadow from now on."""
        p = _local_path(prefix)
        if p is None or self._is_free(p):
            return prefix
        with self.bypass():
            self._make_parent(p)
        if not self._is_covered(p):
            with self.bypass():
                parent, base = os.path.split(p)
                if os.path.isdir(parent) and not self._is_covered(parent):
                    for name in _real_listdir(parent):
                        if name.startswith(base) and os.path.isfile(os.path.join(parent, name)):
                            shutil.copy2(os.path.join(parent, name), self._shadow(os.path.join(parent, name)))
            self._prefixes.add(p)
        self.record(p, action)
        return _like(prefix, self._shadow(p))

    def _is_free(self, p: str) -> bool:
        if p.startswith(self._free) or p + os.sep in self._free:
            return True
        return (p + os.sep).startswith(self._temps) and not (p + os.sep).startswith(self._protected)

    def _is_covered(self, p: str) -> bool:
        q = p
        while True:
            if q in self._covered:
                return True
            parent = os.path.dirname(q)
            if parent == q:
                break
            q = parent
        if self._prefixes:
            parent = os.path.dirname(p)
            return any(p.startswith(x) and os.path.dirname(x) == parent for x in self._prefixes)
        return False

    def _shadow(self, p: str) -> str:
        return self.root + p

    def _make_parent(self, p: str) -> None:
        """The shadow of ``p``'s directory, where the real one exists (a write into a
        missing directory fails as it would under python)."""
        parent = os.path.dirname(p)
        if self._is_covered(parent) or self._is_free(parent):
            return
        if os.path.isdir(parent):
            os.makedirs(self._shadow(parent), exist_ok=True)

    def exists(self, p: str) -> bool:
        try:
            _real_lstat(self._shadow(p) if self._is_covered(p) else p)
            return True
        except OSError:
            return False

    # -- the operations a wrapper does instead ----------------------------------------------

    def delete(self, path: Any, real: Callable, *args, kind: str = "file", **kwargs) -> Any:
        """``os.remove``/``rmdir``/``shutil.rmtree``/gfile's deletes: done on the shadow; a
        user file is left alone and only looks deleted from now on."""
        p = _local_path(path)
        if p is None or self._is_free(p):
            return real(path, *args, **kwargs)
        if self._is_covered(p):
            return real(_like(path, self._shadow(p)), *args, **kwargs)
        if not os.path.lexists(p):
            with self.bypass():  # nothing there to harm: the real call fails as it would
                return real(path, *args, **kwargs)
        if kind == "file" and os.path.isdir(p) and not os.path.islink(p):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
        if kind == "dir" and _real_listdir(p):
            raise OSError(errno.ENOTEMPTY, os.strerror(errno.ENOTEMPTY), os.fspath(path))
        self._whiteout(p)
        self.record(p, "deleted")
        return None

    def rename(self, src: Any, dst: Any, real: Callable, *args, **kwargs) -> Any:
        """A move into the user's tree lands in the shadow; a user file moved elsewhere is
        copied there and only looks gone."""
        s, d = _local_path(src), _local_path(dst)
        s_ours = s is None or self._is_free(s) or self._is_covered(s)
        if s_ours and (d is None or self._is_free(d)):
            return real(src, dst, *args, **kwargs)
        source = self.read_path(src)
        target = self.write_path(dst, keep=False) if d is not None and not self._is_free(d) else dst
        if s_ours:
            if s is not None and not self._is_free(s):  # an atomic write's temporary file: the target says it
                self.records = [r for r in self.records if r.target != s]
            return real(source, target, *args, **kwargs)
        if not os.path.lexists(s):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), os.fspath(src))
        with self.bypass():
            if os.path.isdir(s):
                shutil.copytree(s, target, symlinks=True, dirs_exist_ok=True)
            else:
                shutil.copy2(s, target)
        self._whiteout(s)
        self.record(s, "moved")
        return None

    def make_dir(self, path: Any, real: Callable, *args, **kwargs) -> Any:
        p = _local_path(path)
        if p is None or self._is_free(p) or (p in self._above_caches and not self._is_covered(p)):
            return real(path, *args, **kwargs)
        if not self._is_covered(p):
            if os.path.lexists(p):
                raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), os.fspath(path))
            self._covered.add(p)
            self.record(p, "created")
        with self.bypass():
            self._make_parent(p)
        return real(_like(path, self._shadow(p)), *args, **kwargs)

    def make_tree(self, path: Any, real: Callable, *args) -> Any:
        """``makedirs``: the topmost missing directory is made in the shadow, with the rest."""
        p = _local_path(path)
        if p is None or self._is_free(p):
            return real(path, *args)
        if self.exists(p):
            return real(self.read_path(path), *args)
        top = p
        while not self.exists(os.path.dirname(top)) and os.path.dirname(top) != top:
            top = os.path.dirname(top)
        self.make_dir(top, lambda *_a, **_k: None)
        return real(self.write_path(path, keep=False, action="created"), *args)

    def listdir(self, path: Any = ".", real: Callable = _real_listdir) -> list:
        """The names in a directory as the check sees it: the real ones not deleted, and the
        shadow's."""
        p = _local_path(path)
        if p is None or self._is_free(p) or not (self._covered or self._prefixes):
            return real(path)
        if self._is_covered(p):
            return real(_like(path, self._shadow(p)))
        names = [n for n in real(path) if not self._gone(os.path.join(p, _text(n)))]
        shadow = self._shadow(p)
        if os.path.isdir(shadow):
            names += [n for n in real(_like(path, shadow)) if n not in names]
        return names

    def scandir(self, path: Any, real: Callable) -> Any:
        """``os.scandir`` (glob, pathlib's rglob, shutil) as ``listdir`` sees it."""
        p = _local_path(path)
        if p is None or self._is_free(p) or not (self._covered or self._prefixes):
            return real(path)
        if self._is_covered(p):
            return real(_like(path, self._shadow(p)))
        with real(path) as it:
            entries = [e for e in it if not self._gone(os.path.join(p, _text(e.name)))]
        shadow = self._shadow(p)
        if os.path.isdir(shadow):
            names = {e.name for e in entries}
            with real(_like(path, shadow)) as it:
                entries += [e for e in it if e.name not in names]
        return _Entries(entries)

    def glob(self, pattern: Any, real: Callable, *args) -> list:
        """gfile's glob: the real matches the check did not replace, and the shadow's."""
        p = _local_path(pattern)
        if p is None or self._is_free(p):
            return real(pattern, *args)
        if self._is_covered(p):
            return real(_like(pattern, self._shadow(p)), *args)
        found = [f for f in real(pattern, *args) if not self._is_covered(os.path.abspath(_text(f)))]
        return found + list(real(_like(pattern, self._shadow(p)), *args))

    def _whiteout(self, p: str) -> None:
        """``p`` is gone for the rest of the check: covered, with no shadow (the files the
        check wrote into it before go too, as they would have)."""
        shadow = self._shadow(p)
        with self.bypass():
            if os.path.isdir(shadow) and not os.path.islink(shadow):
                shutil.rmtree(shadow)
            elif os.path.lexists(shadow):
                os.remove(shadow)
        self._covered.add(p)

    def _gone(self, p: str) -> bool:
        return self._is_covered(p) and not os.path.lexists(self._shadow(p))

    # -- what was kept out --------------------------------------------------------------

    def record(self, p: str, action: str, *, refused: bool = False) -> None:
        frame = frames.user_frame(sys._getframe(1))
        filename, line, call = ("", 0, "") if frame is None else _call_text(frame)
        key = (filename, line, p, action)
        if key in self._seen:
            return
        self._seen.add(key)
        if len(self.records) >= MAX_RECORDS:
            self._more += 1
            return
        self.records.append(KeptOut(filename, line, call, p, action, refused=refused))

    def failed(self, error: BaseException) -> None:
        """The script failed with ``error``: was it a refused write? Then the check ended there."""
        seen = set()
        while error is not None and id(error) not in seen:
            seen.add(id(error))
            if isinstance(error, Refused):
                for record in reversed(self.records):
                    if record.refused and record.target == error.filename:
                        record.ended = True
                        return
            error = error.__cause__ or error.__context__

    def kept_out(self, shown: dict[str, str], start: str) -> list[KeptOut]:
        """The records with the user's paths as given (the checked file) or relative to the
        working directory ``start``."""
        out = []
        for record in self.records:
            path = shown.get(record.path) or (_relative(record.path, start) if record.path else "")
            out.append(dataclasses.replace(record, path=path, target=_relative(record.target, start)))
        return out

    @property
    def more(self) -> int:
        return self._more

    # -- install / remove ---------------------------------------------------------------

    def bypass(self) -> _Bypass:
        return _Bypass(self._local)

    def off(self) -> bool:
        return not self.active or getattr(self._local, "depth", 0) > 0

    def install(self) -> None:
        global _ACTIVE, _AUDIT_INSTALLED
        _ACTIVE = self
        self.active = True
        sys.dont_write_bytecode = True  # no __pycache__ in the user's tree
        sandbox_wrappers.wrap_python(self)
        self.wrap_libraries()
        if not _AUDIT_INSTALLED:
            sys.addaudithook(_audit)
            _AUDIT_INSTALLED = True

    def wrap_libraries(self) -> None:
        sandbox_wrappers.wrap_libraries(self)

    def set(self, owner: Any, name: str, value: Any) -> None:
        """Patch ``owner.name`` until ``remove`` (a class's own attribute, or none)."""
        before = owner.__dict__.get(name, _MISSING) if isinstance(owner, type) else getattr(owner, name)
        self._patches.append((owner, name, before))
        setattr(owner, name, value)

    def remove(self) -> None:
        global _ACTIVE
        self.active = False
        for owner, name, value in reversed(self._patches):
            if value is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, value)
        self._patches.clear()
        if _ACTIVE is self:
            _ACTIVE = None
        sys.dont_write_bytecode = self._saved_bytecode
        shutil.rmtree(self.root, ignore_errors=True)

    def refuse(self, path: Any, event: str) -> None:
        p = _local_path(path)
        self.record(p or str(path), "refused", refused=True)
        error = Refused(
            errno.EACCES,
            f"gradcheck: {event} outside the check's throwaway directory was refused (nothing on "
            "your disk is changed during a check)",
            p or str(path),
        )
        self._refusals.append(error)
        raise error


class _Entries:
    """A finished ``os.scandir`` listing: an iterator and a context manager, as scandir's is
    (``os.walk`` calls ``next`` on it)."""

    def __init__(self, entries: list) -> None:
        self._entries = iter(entries)

    def __iter__(self) -> _Entries:
        return self

    def __next__(self):
        return next(self._entries)

    def __enter__(self) -> _Entries:
        return self

    def __exit__(self, *_exc) -> None:
        pass

    def close(self) -> None:
        pass


class _Bypass:
    """gradcheck's own file operations (making a shadow) pass the wrappers untouched."""

    def __init__(self, local: threading.local) -> None:
        self._local = local

    def __enter__(self) -> None:
        self._local.depth = getattr(self._local, "depth", 0) + 1

    def __exit__(self, *_exc) -> None:
        self._local.depth -= 1


# -- the audit safety net ---------------------------------------------------------------

#: event -> the positions of its path arguments that are written or deleted
_AUDITED: dict[str, tuple[int, ...]] = {
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.mkdir": (0,),
    "os.rename": (0, 1),
    "os.truncate": (0,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.utime": (0,),
    "os.link": (1,),
    "os.symlink": (1,),
    "os.setxattr": (0,),
    "os.removexattr": (0,),
    "shutil.rmtree": (0,),
    "shutil.copyfile": (1,),
    "shutil.copytree": (1,),
    "shutil.move": (0, 1),
}
_DIR_FD = {
    "os.remove": 1,
    "os.rmdir": 1,
    "os.mkdir": 2,
    "os.chmod": 2,
    "os.chown": 3,
    "os.utime": 3,
    "shutil.rmtree": 1,
}


def _audit(event: str, args: tuple) -> None:
    # called for every audit event of the process (sys._getframe, imports ...): the event first
    if event == "open":
        box = _ACTIVE
        if box is None or box.off():
            return
        path, _mode, flags = args
        if not isinstance(path, int) and isinstance(flags, int) and flags & _WRITE_FLAGS:
            _judge(box, path, None, event)
        return
    positions = _AUDITED.get(event)
    if positions is None:
        return
    box = _ACTIVE
    if box is None or box.off():
        return
    dir_fd_at = _DIR_FD.get(event)
    dir_fd = args[dir_fd_at] if dir_fd_at is not None and len(args) > dir_fd_at else None
    for position in positions:
        if position < len(args):
            _judge(box, args[position], dir_fd, event)


def _judge(box: Sandbox, path: Any, dir_fd: int | None, event: str) -> None:
    if isinstance(path, int) or path is None:
        return
    try:
        text = os.fsdecode(os.fspath(path))
    except TypeError:
        return
    if isinstance(dir_fd, int) and not os.path.isabs(text):
        try:
            text = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), text)
        except OSError:
            return
    p = os.path.abspath(text)
    if box._is_free(p) or (event == "os.mkdir" and p in box._above_caches):
        return
    box.refuse(p, f"{event} {text!r}")


# -- helpers ----------------------------------------------------------------------------


def library_caches() -> list[str]:
    """Where libraries keep their own caches and settings, written as under python: Keras's
    home (``keras.json``, downloaded datasets and weights), ``~/.cache`` and matplotlib's
    font cache. Redirected, every check would download MNIST again."""
    home = os.path.expanduser("~")
    keras_home = os.environ.get("KERAS_HOME") or os.path.join(home, ".keras")
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")
    matplotlib = os.environ.get("MPLCONFIGDIR") or os.path.join(home, ".config", "matplotlib")
    return [keras_home, cache, matplotlib] if home not in ("", "/", "~") else []


def _local_path(path: Any) -> str | None:
    """The absolute local path a path-like names; None for a file descriptor, a remote URL
    (``gs://``) or something that is no path."""
    if path is None or isinstance(path, (int, bool)):
        return None
    if hasattr(path, "numpy") and not isinstance(path, (str, bytes)):  # an eager string tensor
        try:
            path = path.numpy()
        except Exception:  # noqa: BLE001 - a symbolic tensor: no value yet
            return None
    try:
        text = os.fsdecode(os.fspath(path))
    except TypeError:
        return None
    if "://" in text:
        if not text.startswith("file://"):
            return None
        text = text[len("file://") :]
    if not text:
        return None
    return os.path.abspath(text)


def _like(original: Any, path: str) -> Any:
    """``path`` as the type the caller gave (bytes stay bytes)."""
    if isinstance(original, bytes):
        return os.fsencode(path)
    return path


def _relative(path: str, start: str) -> str:
    rel = os.path.relpath(path, start)
    return path if rel.startswith("..") else rel


def _text(name: Any) -> str:
    return os.fsdecode(name)


def _both(paths: Iterable[str]) -> set[str]:
    out = set()
    for path in paths:
        if path:
            out.add(os.path.abspath(path))
            out.add(os.path.realpath(path))
    return out


def _with_sep(paths: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted({p.rstrip(os.sep) + os.sep for p in paths}))


def _call_text(frame) -> tuple[str, int, str]:
    """The user's file, line and the text of the call it is executing there."""
    code = frame.f_code
    line = frame.f_lineno or 0
    text = linecache.getline(code.co_filename, line).rstrip("\n")
    try:
        positions = list(code.co_positions())[frame.f_lasti // 2]
    except (AttributeError, IndexError):  # Python 3.10: no positions
        positions = (None, None, None, None)
    start_line, end_line, start, end = positions
    call = text.strip()
    if start_line == line and start is not None:
        call = text[start:end] if end_line == line and end is not None else text[start:].rstrip() + " ...)"
    if len(call) > 60 and "(" in call:  # a long call by its callee: model.fit(...)
        call = call[: call.index("(")] + "(...)"
    elif len(call) > 60:
        call = call[:56] + " ..."
    return code.co_filename, line, call
