"""What a name in the file refers to, from its imports alone.

``tf.math.argmin``, ``tfm.argmin`` (after ``from tensorflow import math as tfm``) and
``argmin`` (after ``from tensorflow.math import argmin``) all resolve to
``tensorflow.math.argmin``. Nothing is imported: this reads import statements.
"""

from __future__ import annotations

import ast
import functools
import json
from pathlib import Path

_STAR_DATA = Path(__file__).resolve().parent / "data" / "star_names.json"

#: Spellings of the same API, folded so that the catalog lists each function once.
_PREFIXES = (
    ("tensorflow.compat.v1.", "tensorflow."),
    ("tensorflow.compat.v2.", "tensorflow."),
    ("tensorflow.python.keras.", "keras."),
    ("tensorflow.keras.", "keras."),
    ("tf_keras.", "keras."),
    ("keras.src.", "keras."),
    ("keras.api.", "keras."),
    ("keras._tf_keras.keras.", "keras."),
)


@functools.lru_cache(maxsize=8192)  # a pure function of a name, asked the same few thousand times per file
def canonical(qualname: str) -> str:
    """``tensorflow.keras.backend.argmax`` -> ``keras.backend.argmax`` (one spelling per API)."""
    changed = True
    while changed:  # ``tensorflow.compat.v1.keras.backend`` folds twice
        changed = False
        for old, new in _PREFIXES:
            if qualname.startswith(old):
                qualname, changed = new + qualname[len(old) :], True
                break
    if qualname in ("tensorflow.keras", "tf_keras", "tensorflow.compat.v1.keras"):
        return "keras"
    return qualname


def dotted(node: ast.AST) -> list[str] | None:
    """``a.b.c`` -> ``["a", "b", "c"]``; None for anything but a chain of names."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    parts.reverse()
    return parts


class Aliases:
    """Local names bound by ``import`` statements anywhere in a module, mapped to the
    dotted path they stand for (a flat map: a module rarely imports one name twice)."""

    def __init__(self, tree: ast.AST | None = None, imports: list[ast.Import | ast.ImportFrom] | None = None) -> None:
        self.names: dict[str, str] = {}
        if imports is None:
            imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))] if tree else []
        for node in imports:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.names[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".", 1)[0]
                        self.names[top] = top
            elif isinstance(node, ast.ImportFrom) and (node.module or node.level):
                # a relative import (``from .model import build``) keeps its dots: a module of
                # the user's own package, unknown here like any other module of theirs, never
                # a name the file leaves unbound (which a model-like name would be taken for)
                module = "." * node.level + (node.module or "")
                sep = "" if module.endswith(".") else "."
                for alias in node.names:
                    if alias.name != "*":
                        self.names[alias.asname or alias.name] = f"{module}{sep}{alias.name}"
                    else:  # the public names of a Keras module (``Input``, ``Dense``, ``Model``)
                        for name in _star_names().get(canonical(module), ()):
                            self.names.setdefault(name, f"{module}.{name}")

    def resolve(self, parts: list[str]) -> str | None:
        """The canonical dotted path of ``parts`` when its head is an imported name."""
        base = self.names.get(parts[0])
        if base is None:
            return None
        return canonical(".".join([base, *parts[1:]]))

    def roots(self) -> set[str]:
        """Top-level packages imported (``tensorflow``, ``keras``, ``numpy``...)."""
        return {canonical(path).split(".", 1)[0] for path in self.names.values() if not path.startswith(".")}


@functools.cache
def _star_names() -> dict[str, list[str]]:
    """Module (canonical) -> the public names ``from module import *`` binds, for the Keras
    modules users star-import (``tools/gen_star_names.py`` dumps them from Keras)."""
    try:
        return json.loads(_STAR_DATA.read_text(encoding="utf-8"))["modules"]
    except (OSError, ValueError, KeyError):
        return {}
