"""Which files to check: expand directories, skip excluded paths, and pick training code.

Pure text and path work: no TensorFlow, and no user code is executed.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

from gradcheck.config import Config

#: What marks a file as training code when no ``scripts`` globs say otherwise.
_TRAINING = re.compile(r"\bGradientTape\b|\.fit\s*\(|\btrain_step\b")
_MAIN_GUARD = re.compile(r"""^if\s+__name__\s*==\s*['"]__main__['"]\s*:""", re.MULTILINE)


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
    """Whether a file found by walking a directory should be traced: it matches a
    ``scripts`` glob, or (by default) mentions GradientTape / ``.fit(`` / ``train_step``."""
    if config.scripts:
        rel = config.relative(path)
        return any(fnmatch.fnmatch(rel, g) or fnmatch.fnmatch(os.path.basename(path), g) for g in config.scripts)
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return False
    return bool(_TRAINING.search(text))
