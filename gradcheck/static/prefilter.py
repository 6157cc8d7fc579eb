"""Is a file training code worth tracing? The pre-filter of the trace engine and its hook.

A file qualifies when it imports TensorFlow or Keras and, run as a script, would train:
either its top-level code (the ``__main__`` block included) visibly reaches a training step
(opens a ``GradientTape``, asks a tape for a gradient, calls ``.fit``/``.train_on_batch`` on
a Keras model, directly or through functions and methods of the same file), or it contains
training code (a tape, a ``train_step``, a ``.fit`` on a model) and runs something at top
level (a ``__main__`` block, a call), through paths too indirect to follow
(``step = tf.function(agent.train_step)``). A module that only defines a ``train_step`` and
runs nothing is left to the static engine: tracing it would end with "the script ran to
its end without computing any gradient".
"""

from __future__ import annotations

import ast
import re
import warnings
from collections import defaultdict

from gradcheck.static import catalog
from gradcheck.static.interp import model_name
from gradcheck.static.names import Aliases, dotted

#: Cheap first test: a file without any of these words cannot train.
_HINT = re.compile(r"GradientTape|\bfit|train_step|train_on_batch|gradient|minimize")
#: When the file does not parse, the same words as a whole decide.
_TEXT = re.compile(r"\bGradientTape\b|\.fit\s*\(|\btrain_step\b|\.train_on_batch\s*\(")
_FRAMEWORKS = frozenset(("tensorflow", "keras", "tensorflow_hub"))
_FIT = frozenset(("fit", "train_on_batch", "fit_generator"))


def is_training_code(source: str) -> bool:
    """Whether running ``source`` as a script would train a TensorFlow/Keras model."""
    if not _HINT.search(source):
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return bool(_TEXT.search(source))
    return _Prefilter(tree).trains()


class _Prefilter:
    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.aliases = Aliases(tree)
        self.functions: dict[str, list[ast.AST]] = defaultdict(list)
        self.classes: dict[str, ast.ClassDef] = {}
        self.bindings: dict[str, list[ast.AST]] = defaultdict(list)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[node.name].append(node)
            elif isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    for name in _target_names(target):
                        self.bindings[name].append(node.value)
        self._verdicts: dict[int, bool] = {}

    def trains(self) -> bool:
        if not _FRAMEWORKS & self.aliases.roots():
            return False
        if self._block_trains(self.tree.body):
            return True
        return self._runs_something() and self._has_training_code()

    def _runs_something(self) -> bool:
        for stmt in self.tree.body:
            if isinstance(stmt, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)):
                return True
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, (ast.Call, ast.Await)):
                return True
        return False

    def _has_training_code(self) -> bool:
        if any(self._methods(name) for name in ("train_step",)):
            return True
        return any(self._function_trains(fn) for fns in self.functions.values() for fn in fns)

    # --- reachability ------------------------------------------------------------

    def _block_trains(self, body: list[ast.stmt]) -> bool:
        """Whether executing ``body`` (not the bodies of the defs in it) trains."""
        stack: list[ast.AST] = list(body)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(node, (ast.With, ast.AsyncWith)) and any(self._is_tape(i.context_expr) for i in node.items):
                return True
            if isinstance(node, ast.Call) and self._call_trains(node):
                return True
            stack.extend(ast.iter_child_nodes(node))
        return False

    def _call_trains(self, node: ast.Call) -> bool:
        func = node.func
        if isinstance(func, ast.Attribute):
            if func.attr in catalog.GRADIENT_METHODS or func.attr == "minimize":
                return True
            if func.attr in _FIT and self._is_model(func.value):
                return True
            return any(self._function_trains(fn) for fn in self._methods(func.attr))
        if isinstance(func, ast.Name):
            if self.aliases.resolve([func.id]) == "tensorflow.gradients":
                return True
            if func.id in self.classes:
                init = self._methods("__init__", self.classes[func.id])
                return any(self._function_trains(fn) for fn in init)
            return any(self._function_trains(fn) for fn in self.functions.get(func.id, ()))
        return False

    def _function_trains(self, fn: ast.AST) -> bool:
        verdict = self._verdicts.get(id(fn))
        if verdict is None:
            self._verdicts[id(fn)] = False  # recursion
            verdict = self._block_trains(fn.body)
            self._verdicts[id(fn)] = verdict
        return verdict

    def _methods(self, name: str, cls: ast.ClassDef | None = None) -> list[ast.AST]:
        classes = [cls] if cls is not None else list(self.classes.values())
        return [
            stmt
            for c in classes
            for stmt in c.body
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name
        ]

    # --- what things are ---------------------------------------------------------

    def _is_tape(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Call):
            parts = dotted(node.func)
            qual = self.aliases.resolve(parts) if parts else None
            return (qual is not None and qual.endswith("GradientTape")) or (
                parts is not None and parts[-1] == "GradientTape"
            )
        parts = dotted(node)
        if parts is None:
            return False
        return "tape" in parts[-1].lower() or any(self._is_tape(v) for v in self.bindings.get(parts[-1], ()))

    def _is_model(self, node: ast.AST) -> bool:
        parts = dotted(node)
        if parts is None:
            return isinstance(node, ast.Call) and self._builds_model(node)
        if parts == ["self"]:
            return True  # ``self.fit`` inside a model class
        values = self.bindings.get(parts[-1], [])
        if any(isinstance(v, ast.Call) and self._builds_model(v) for v in values):
            return True
        foreign = any(isinstance(v, ast.Call) and self._foreign(v) for v in values)
        return not foreign and model_name(parts[-1])

    def _builds_model(self, call: ast.Call) -> bool:
        parts = dotted(call.func)
        if parts is None:
            return False
        qual = self.aliases.resolve(parts)
        if qual is not None:
            api = catalog.lookup(qual)
            return api is not None and api.kind in (catalog.MODEL, catalog.LAYER)
        name = parts[-1]
        if name in self.classes:
            return _subclasses_keras(self.classes[name], self.classes, self.aliases)
        for fn in self.functions.get(name, ()):
            for inner in ast.walk(fn):
                if isinstance(inner, ast.Call) and inner is not call and self._direct_model(inner):
                    return True
        return False

    def _direct_model(self, call: ast.Call) -> bool:
        parts = dotted(call.func)
        if parts is None:
            return False
        qual = self.aliases.resolve(parts)
        if qual is not None:
            api = catalog.lookup(qual)
            return api is not None and api.kind == catalog.MODEL
        return parts[-1] in self.classes and _subclasses_keras(self.classes[parts[-1]], self.classes, self.aliases)

    def _foreign(self, call: ast.Call) -> bool:
        """Built by a library that is not Keras (``sklearn.linear_model.LinearRegression()``)."""
        parts = dotted(call.func)
        qual = self.aliases.resolve(parts) if parts else None
        return qual is not None and qual.split(".", 1)[0] not in _FRAMEWORKS


def _target_names(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Attribute):
        return [target.attr]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _target_names(elt)]
    return []


def _subclasses_keras(cls: ast.ClassDef, classes: dict[str, ast.ClassDef], aliases: Aliases, depth: int = 0) -> bool:
    for base in cls.bases:
        parts = dotted(base)
        if parts is None:
            continue
        qual = aliases.resolve(parts)
        if qual is not None and (catalog.is_keras(qual) or qual == "tensorflow.Module"):
            return True
        inherited = len(parts) == 1 and parts[0] in classes and depth < 8 and classes[parts[0]] is not cls
        if inherited and _subclasses_keras(classes[parts[0]], classes, aliases, depth + 1):
            return True
    return False
