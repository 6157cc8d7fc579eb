"""Which files to check: expand directories, skip excluded paths, and pick training code.

Pure text, path and ``ast`` work: no TensorFlow, and no user code is executed.
"""

from __future__ import annotations

import fnmatch
import os
import tokenize
from pathlib import Path

from gradcheck.config import Config


def split_target(target: str) -> tuple[str, str | None]:
    """``train.py::build`` -> (``train.py``, ``build``)."""
    if "::" in target:
        path, function = target.rsplit("::", 1)
        return path, function or None
    return target, None


def expand(paths: list[str], config: Config) -> tuple[list[str], list[str]]:
    """Files named directly are kept as given; directories recurse into ``*.py`` files.
    Returns (files, missing paths)."""
    files: list[str] = []
    missing: list[str] = []
    for raw in paths:
        path, function = split_target(raw)
        p = Path(path)
        if p.is_dir():
            for root, dirs, names in os.walk(p):
                root_path = Path(root)
                dirs[:] = sorted(d for d in dirs if not config.is_excluded(root_path / d))
                for name in sorted(names):
                    child = root_path / name
                    if name.endswith(".py") and not config.is_excluded(child):
                        files.append(str(child))
        elif p.exists():
            files.append(raw if function else path)
        else:
            missing.append(raw)
    return list(dict.fromkeys(files)), missing


def is_training_script(path: str, config: Config) -> bool:
    """Whether a file should be traced: it matches a ``scripts`` glob, or (by default) the
    static pre-filter reads it as a script that trains a TensorFlow/Keras model."""
    if config.scripts:
        rel = config.relative(path)
        return any(fnmatch.fnmatch(rel, g) or fnmatch.fnmatch(os.path.basename(path), g) for g in config.scripts)
    from gradcheck.static import is_training_code

    try:
        with tokenize.open(path) as fh:  # honours a BOM and a coding cookie, as Python does
            text = fh.read()
    except (OSError, SyntaxError, UnicodeDecodeError):
        return False
    return is_training_code(text)
