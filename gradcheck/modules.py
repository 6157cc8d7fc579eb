"""``gradcheck -m pkg.train``: the file ``python -m pkg.train`` would run, found the way
Python's path search finds it (the working directory first, then ``PYTHONPATH``), without
importing anything: finding it must not run the package's ``__init__``.
"""

from __future__ import annotations

import os
import sys


class ModuleNotFound(Exception):
    """The one-line reason, worded as Python words it."""


def search_path(cwd: str) -> list[str]:
    """Where ``python -m`` looks first: the working directory, then ``PYTHONPATH``."""
    extra = [] if sys.flags.ignore_environment else os.environ.get("PYTHONPATH", "").split(os.pathsep)
    return [cwd, *(os.path.abspath(p) for p in extra if p)]


def find(name: str, cwd: str | None = None) -> str:
    """The file that runs for ``python -m name``: ``pkg/train.py``, or ``pkg/__main__.py``
    for a package. Raises :class:`ModuleNotFound`."""
    parts = name.split(".")
    if not name or not all(part.isidentifier() for part in parts):
        raise ModuleNotFound(f"No module named {name!r}")
    for root in search_path(cwd or os.getcwd()):
        base = os.path.join(root, *parts)
        if not all(os.path.isdir(os.path.join(root, *parts[:k])) for k in range(1, len(parts))):
            continue  # a parent is not a package folder here
        if os.path.isfile(base + ".py"):
            return base + ".py"
        if os.path.isdir(base):
            main = os.path.join(base, "__main__.py")
            if os.path.isfile(main):
                return main
            raise ModuleNotFound(
                f"No module named {name}.__main__; {name!r} is a package and cannot be directly executed"
            )
    raise ModuleNotFound(f"No module named {name!r}")
