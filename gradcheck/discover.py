"""Which files to check: expand directories, skip excluded paths, and pick training code.

Pure text, path and ``ast`` work: no TensorFlow, and no user code is executed.
"""

from __future__ import annotations

import fnmatch
import os
import tokenize
from pathlib import Path
from typing import NamedTuple

from gradcheck import sourcefile
from gradcheck.config import Config


def split_target(target: str) -> tuple[str, str | None]:
    """``train.py::build`` -> (``train.py``, ``build``)."""
    if "::" in target:
        path, function = target.rsplit("::", 1)
        return path, function or None
    return target, None


class Expansion(NamedTuple):
    files: list[str]
    missing: list[str]
    #: Paths that cannot be walked or read (an unreadable folder, a symlink loop), each with
    #: its one-line reason: said, never skipped silently.
    unreadable: dict[str, str]


def expand(paths: list[str], config: Config) -> Expansion:
    """Files named directly are kept as given; directories recurse into ``*.py`` files."""
    files: list[str] = []
    missing: list[str] = []
    unreadable: dict[str, str] = {}

    def walk_error(error: OSError) -> None:
        where = error.filename or "?"
        unreadable[str(where)] = f"cannot read the directory: {error.strerror or error} (its files were not checked)"

    for raw in paths:
        path, function = split_target(raw)
        p = Path(path)
        if p.is_dir():
            for root, dirs, names in os.walk(p, onerror=walk_error):
                root_path = Path(root)
                dirs[:] = sorted(d for d in dirs if not _excluded(config, root_path / d, unreadable))
                for name in sorted(names):
                    child = root_path / name
                    if name.endswith(".py") and not _excluded(config, child, unreadable):
                        files.append(str(child))
        elif p.exists():
            files.append(raw if function else path)
        elif p.is_symlink():  # a loop, or a link to nothing: exists() says False for both
            unreadable[path] = sourcefile.problem(path) or "a symbolic link to nothing"
        else:
            missing.append(raw)
    return Expansion(list(dict.fromkeys(files)), missing, unreadable)


def _excluded(config: Config, path: Path, unreadable: dict[str, str]) -> bool:
    """``config.is_excluded``, or True (and the reason noted) for a path that cannot be
    resolved: a symlink loop makes ``Path.resolve`` raise."""
    try:
        return config.for_path(path).is_excluded(path)
    except (OSError, RuntimeError) as error:
        unreadable[str(path)] = sourcefile.problem(str(path)) or f"cannot resolve the path: {error}"
        return True


def is_training_script(path: str, config: Config) -> bool:
    """Whether a file should be traced: it matches a ``scripts`` glob, or (by default) the
    static pre-filter reads it as a script that trains a TensorFlow/Keras model."""
    config = config.for_path(path)
    if config.scripts:
        rel = config.relative(path)
        return any(fnmatch.fnmatch(rel, g) or fnmatch.fnmatch(os.path.basename(path), g) for g in config.scripts)
    from gradcheck.static import is_training_code

    if sourcefile.problem(path) is not None:  # a FIFO would block the read below forever
        return False
    try:
        with tokenize.open(path) as fh:  # honours a BOM and a coding cookie, as Python does
            text = fh.read()
    except (OSError, SyntaxError, UnicodeDecodeError):
        return False
    return is_training_code(text)
