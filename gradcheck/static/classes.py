"""What the file's classes say, read from their text: which are Keras models or layers
(``model_like``, ``analysable``), their methods through their bases, what each method
assigns to ``self.<attr>``, the weights their constructors make, and which attributes they
build or call. A mixin of ``Program`` (its caches live there)."""

from __future__ import annotations

import ast
import re

from gradcheck.static import catalog
from gradcheck.static.names import Aliases, dotted
from gradcheck.static.walk import statements


class Classes:
    """The class queries of ``Program``."""

    def model_like(self, cls: ast.ClassDef) -> bool:
        """A Keras model or layer (or ``tf.Module``) by its bases, as far as the file says."""
        known = self._model_like.get(cls)
        if known is not None:
            return known
        self._model_like[cls] = False  # cycles
        result = False
        for base in cls.bases:
            parts = dotted(base)
            if parts is None:
                continue
            qual = self.aliases.resolve(parts)
            leaf = parts[-1]
            if qual is not None and (
                (catalog.is_keras(qual) and leaf in ("Model", "Sequential", "Layer", "Functional"))
                or qual == "tensorflow.Module"
            ):
                result = True
            elif len(parts) == 1 and leaf in self.classes and self.classes[leaf] is not cls:
                result = self.model_like(self.classes[leaf])
            elif qual is None and leaf.endswith(("Model", "Layer")):
                result = True
            if result:
                break
        self._model_like[cls] = result
        return result

    def analysable(self, cls: ast.ClassDef, _seen: set | None = None) -> bool:
        """A Keras model or layer whose every base is known: Keras's own classes or classes
        of this file that are themselves analysable (so every attribute is visible)."""
        seen = _seen or set()
        if cls in seen:
            return False
        seen.add(cls)
        for base in cls.bases:
            parts = dotted(base)
            if parts is None:
                return False
            if len(parts) == 1 and parts[0] in self.classes:
                if not self.analysable(self.classes[parts[0]], seen):
                    return False
                continue
            qual = self.aliases.resolve(parts)
            if qual is None:
                return False
            leaf = parts[-1]
            if not (
                (catalog.is_keras(qual) and leaf in ("Model", "Layer"))
                or qual in ("tensorflow.Module", "builtins.object")
                or leaf == "object"
            ):
                return False
        return self.model_like(cls)

    def dynamic(self, cls: ast.ClassDef) -> bool:
        """Whether the class reaches its attributes in ways not followed (``getattr(self, n)``,
        ``self.__dict__``, ``self.layers``, ``self.trainable_weights``...)."""
        known = self._dynamic.get(cls)
        if known is None:
            # By spelling (cheaper than a walk of the class): a false alarm here only means
            # a class left unjudged (no GC108), never a finding.
            text = "\n".join(self.source_lines[cls.lineno - 1 : cls.end_lineno or cls.lineno])
            known = _DYNAMIC.search(text) is not None
            self._dynamic[cls] = known
        return known

    def weight_assignments(self, cls: ast.ClassDef) -> list[tuple[str, ast.Call, ast.AST]]:
        """``(attribute, call, method)`` for each ``self.<attribute> = self.add_weight(...)`` (or
        ``add_variable``, ``tf.Variable``) in the class's ``__init__`` and ``build``."""
        out = []
        for attr, assignments in self._all_self_assignments(cls).items():
            for value, method in assignments:
                if getattr(method, "name", "") not in ("__init__", "build"):
                    continue
                if isinstance(value, ast.Call) and _creates_variable(value, self.aliases):
                    out.append((attr, value, method))
        return out

    def lazily_built(self, origin: str, weights: bool = False) -> bool:
        """A layer whose variables are made by its first call (not built when constructed,
        nor explicitly, nor called outside a ``tf.function`` anywhere)."""
        if not weights and self.model_kind(origin) != "model":
            return False
        if origin in self.eager_built or origin in self.eager_births or origin in self.guessed:
            return False
        if origin.rpartition(".")[2] in self.explicit_builds():
            return False
        return not any(origin.startswith(b + ".") for b in self.eager_built)

    def explicit_builds(self) -> set[str]:
        """Attribute names of layers built explicitly somewhere (``self.dense.build(shape)``)."""
        if self._builds is None:
            self._builds = {m.group(1) for line in self.source_lines for m in _BUILD_CALL.finditer(line)}
        return self._builds

    def _all_self_assignments(self, cls: ast.ClassDef) -> dict[str, list[tuple[ast.AST, ast.AST | None]]]:
        out: dict[str, list[tuple[ast.AST, ast.AST | None]]] = {}
        seen: set[ast.ClassDef] = set()
        classes = [cls]
        while classes:
            current = classes.pop()
            seen.add(current)
            for attr, values in self._self_assignments(current).items():
                out.setdefault(attr, []).extend(values)
            for base in current.bases:
                if isinstance(base, ast.Name) and base.id in self.classes and self.classes[base.id] not in seen:
                    classes.append(self.classes[base.id])
        return out

    def called_in_build(self, cls: ast.ClassDef) -> set[str]:
        """Attributes called as ``self.<attr>(...)`` in the class's ``build`` (to build them)."""
        out: set[str] = set()
        for method in cls.body:
            if isinstance(method, ast.FunctionDef) and method.name == "build":
                text = "\n".join(self.source_lines[method.lineno - 1 : method.end_lineno or method.lineno])
                out.update(_SELF_CALL.findall(text))
        return out

    def called_sub_model(self, cls: ast.ClassDef, attr: str) -> bool:
        """An attribute of a Keras model class, set from what the constructor was given,
        that the class both calls (``self.student(x, training=True)``) and asks the variables
        of (``self.student.trainable_variables``): a model whatever its name (``student``,
        ``head``), unless the name says it is a loss, a metric or another helper. One only
        called (a distiller's ``teacher``) stays unknown: whether running it before the tape
        is meant, this reading cannot tell."""
        if _HELPER_WORD.search(attr):
            return False
        text = "\n".join(self.source_lines[cls.lineno - 1 : cls.end_lineno or cls.lineno])
        asked = re.search(rf"\bself\.{re.escape(attr)}\.(?:trainable_|)(?:variables|weights)\b", text)
        return asked is not None and attr in _SELF_CALL.findall(text)

    def self_attributes(self, cls: ast.ClassDef) -> set[str]:
        return set(self._all_self_assignments(cls))

    def find_method(self, cls: ast.ClassDef, name: str, _seen: set | None = None) -> ast.FunctionDef | None:
        for stmt in cls.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
                return stmt
        seen = _seen or set()
        seen.add(cls)
        for base in cls.bases:
            if isinstance(base, ast.Name) and base.id in self.classes and self.classes[base.id] not in seen:
                found = self.find_method(self.classes[base.id], name, seen)
                if found is not None:
                    return found
        return None

    def attribute_assignments(self, cls: ast.ClassDef, name: str) -> list[tuple[ast.AST, ast.AST | None]]:
        """``(value, method)`` for each ``self.<name> = value`` in ``cls`` and its bases."""
        found: list[tuple[ast.AST, ast.AST | None]] = []
        seen: set[ast.ClassDef] = set()
        classes = [cls]
        while classes:
            current = classes.pop()
            seen.add(current)
            found += self._self_assignments(current).get(name, ())
            for base in current.bases:
                if isinstance(base, ast.Name) and base.id in self.classes and self.classes[base.id] not in seen:
                    classes.append(self.classes[base.id])
        return found

    def _self_assignments(self, cls: ast.ClassDef) -> dict[str, list[tuple[ast.AST, ast.AST | None]]]:
        index = self._assignments.get(cls)
        if index is None:
            index = {}
            for method in cls.body:
                if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for node in statements(method.body):
                    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                            for attr, value in _self_targets(target, node.value, method):
                                index.setdefault(attr, []).append((value, method))
            self._assignments[cls] = index
        return index


def _self_targets(target: ast.AST, value: ast.expr, method: ast.AST) -> list[tuple[str, ast.expr]]:
    """The ``self.<attr>`` an assignment binds, each with its value: ``self.x = v``; ``self.a,
    self.b = A(), B()`` element by element; ``self.a, self.b = pair`` in a constructor (whose
    whole run says what each holds, the value itself is not read)."""
    if isinstance(target, ast.Attribute):
        if isinstance(target.value, ast.Name) and target.value.id == "self":
            return [(target.attr, value)]
        return []
    if not isinstance(target, (ast.Tuple, ast.List)):
        return []
    if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
        return [
            found
            for elt, part in zip(target.elts, value.elts, strict=True)
            for found in _self_targets(elt, part, method)
        ]
    if getattr(method, "name", "") not in ("__init__", "build"):
        return []
    return [found for elt in target.elts for found in _self_targets(elt, value, method)]


#: A class that reaches its layers or variables by iteration or by computed names.
_DYNAMIC = re.compile(
    r"\b(?:getattr|setattr|vars)\(\s*self\b|\bself\.(?:__dict__|layers|submodules|_layers|_flatten_layers|"
    r"trainable_weights|weights|trainable_variables|variables|_trainable_weights|_self_tracked_trackables|"
    r"_tracked)\b"
)
#: Words in an attribute's name that say it is no model, although it is called.
_HELPER_WORD = re.compile(
    r"loss|metric|optimi[sz]er|fn|func|activation|schedule|callback|token|augment|preprocess|"
    r"sampler|noise|transform|reg(?:ulari[sz]er)?|initiali[sz]er|constraint|distance|similarity|"
    r"tracker|logger|writer|env|buffer|memory|process|scheduler|rng|seed",
    re.IGNORECASE,
)
#: ``self.<attr>(`` (a layer called, so built).
_SELF_CALL = re.compile(r"\bself\.(\w+)\s*\(")
#: ``<name>.build(`` (a layer built explicitly, by its attribute or variable name).
_BUILD_CALL = re.compile(r"(\w+)\s*\.\s*build(?:_from_config)?\s*\(")


def _creates_variable(node: ast.Call, aliases: Aliases) -> bool:
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in ("add_weight", "add_variable"):
        return True
    parts = dotted(func)
    qual = aliases.resolve(parts) if parts else None
    api = catalog.lookup(qual) if qual else None
    return api is not None and api.kind == catalog.VARIABLE
