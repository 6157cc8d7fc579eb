"""The training entry points of a script, read from its source: the calls that start a
training or ask for a gradient (``model.fit(...)``, ``tape.gradient(...)``,
``optimizer.minimize(...)``).

The trace engine checks the first step of every training a script reaches and, at the end,
names the entry points it never reached, so a file whose second training was not checked
is never called clean (GC905). Reading them needs ``ast`` only (no TensorFlow): the trace
engine and the static engine can both use it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

#: Methods that ask for a gradient, and methods that run a training (and so ask for one).
GRADIENT_METHODS = frozenset({"gradient", "jacobian", "batch_jacobian"})
TRAINING_METHODS = frozenset({"fit", "fit_generator", "train_on_batch", "minimize"})

#: Packages whose ``fit``/``minimize``/``gradient`` are no TensorFlow training (``np.gradient``,
#: ``scipy.optimize.minimize``, a scikit-learn scaler's ``fit``).
_OTHER_PACKAGES = frozenset(
    {
        "numpy",
        "scipy",
        "sklearn",
        "pandas",
        "xgboost",
        "lightgbm",
        "catboost",
        "statsmodels",
        "umap",
        "hdbscan",
        "gensim",
        "torch",
        "jax",
        "optax",
    }
)
_TF_PACKAGES = frozenset({"tensorflow", "keras", "tf_keras"})
#: Keras classes with a ``fit`` that trains nothing (it computes data statistics).
_NOT_TRAINING = frozenset({"ImageDataGenerator"})


@dataclass(frozen=True)
class EntryPoint:
    """One call of the file that trains or asks for a gradient."""

    line: int
    column: int  # 1-based
    end_line: int
    call: str  # ``model.fit``, ``tape.gradient``

    def label(self, path: str) -> str:
        return f"{path}:{self.line} ({self.call})"

    def to_json(self) -> dict:
        return {"line": self.line, "column": self.column, "call": self.call}

    @classmethod
    def from_json(cls, data: dict) -> EntryPoint:
        return cls(data["line"], data.get("column", 1), data.get("end_line", data["line"]), data["call"])


def entry_points(source: str) -> list[EntryPoint]:
    """Every training entry point of ``source``, in source order; [] when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    try:
        origins = _origins(tree)
        found = []
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            method = node.func.attr
            if method not in GRADIENT_METHODS and method not in TRAINING_METHODS:
                continue
            if _other_package(node.func.value, origins):
                continue
            receiver = _dotted(node.func.value) or "…"
            found.append(
                EntryPoint(node.lineno, node.col_offset + 1, node.end_lineno or node.lineno, f"{receiver}.{method}")
            )
    except RecursionError:
        return []
    return sorted(found, key=lambda e: (e.line, e.column))


def _origins(tree: ast.Module) -> dict[str, set[str]]:
    """name -> what it may come from: the root package of an import (``np`` -> numpy), or
    the last name of the callee of an assignment (``scaler = StandardScaler()`` ->
    StandardScaler and, through its import, sklearn)."""
    origins: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                origins.setdefault(alias.asname or alias.name.split(".")[0], set()).add(alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                origins.setdefault(alias.asname or alias.name, set()).add(node.module.split(".")[0])
    assigned: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            callee = node.value.func
            names = set()
            last = (
                callee.attr
                if isinstance(callee, ast.Attribute)
                else callee.id
                if isinstance(callee, ast.Name)
                else None
            )
            if last is not None:
                names.add(last)
            root = _root(callee)
            if root is not None:
                names |= origins.get(root, set())
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, set()).update(names)
    for name, names in assigned.items():
        origins.setdefault(name, set()).update(names)
    return origins


def _other_package(receiver: ast.expr, origins: dict[str, set[str]]) -> bool:
    """The receiver comes from another package (and never from TensorFlow or Keras), or is
    a Keras object whose ``fit`` trains nothing."""
    root = _root(receiver)
    names = origins.get(root, set()) if root is not None else set()
    return bool(names & _NOT_TRAINING) or (bool(names & _OTHER_PACKAGES) and not names & _TF_PACKAGES)


def _root(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    if isinstance(node, ast.Call):
        inner = _dotted(node.func)
        return f"{inner}()" if inner else None
    return None
