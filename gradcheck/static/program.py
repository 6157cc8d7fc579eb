"""What the interpreter knows about a whole file: its imports, classes, the names given to
models and variables, and what the runs found (gradient calls, compiled losses, functional
models). One ``Program`` per file; several interpreter runs share it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from gradcheck.static import catalog
from gradcheck.static.names import Aliases, dotted
from gradcheck.static.values import FRESH, Site, Value

#: Names that are Keras models by convention when the file does not say what they are
#: (a function parameter ``model``, ``self.critic`` set from a constructor argument...).
MODEL_NAME = re.compile(
    r"(?:.*_)?(?:model|net|network|[a-z]*net|actor|critic|generator|discriminator|encoder|decoder|policy|"
    r"agent|classifier|regressor|autoencoder|vae|backbone)(?:_.*)?",
    re.IGNORECASE,
)
TAPE_NAME = re.compile(r".*tape.*", re.IGNORECASE)

#: Evaluation steps one file may take before the engine gives up on it (no finding).
BUDGET = 400_000


class _NewVariable:
    """Marks the value of a variable constructor, so the assignment names the variable."""

    ident = ("new-variable",)


NEW_VARIABLE = _NewVariable()


class BudgetExceeded(Exception):
    """The file is too large or too tangled to analyse within the budget."""


@dataclass
class Check:
    """A gradient request: ``tape.gradient(target, sources)`` or a compiled loss."""

    node: ast.AST
    target: Value
    sources: Value
    tape: ast.With | None = None
    births: dict[str, ast.AST] = field(default_factory=dict)  # origin -> its first call in this region


@dataclass
class Program:
    tree: ast.Module
    source_lines: list[str]
    aliases: Aliases = field(init=False)
    regions: list[ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=list)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    owner: dict[ast.AST, ast.AST] = field(default_factory=dict)  # def/class -> enclosing def/class/module
    kinds: dict[str, str] = field(default_factory=dict)  # origin -> "model" | "variable" | "tensor"
    labels: dict[str, str] = field(default_factory=dict)  # fresh token -> how to call it in a message
    births: dict[str, ast.AST] = field(default_factory=dict)  # model origin -> its first call
    renames: dict[str, set[str]] = field(default_factory=dict)  # fresh token -> names it was given
    frozen: set[str] = field(default_factory=set)  # models and layers set ``trainable = False``
    guessed: set[str] = field(default_factory=set)  # models known only by their name (``model``)
    opaque: set[str] = field(default_factory=set)  # parameters passed as gradient sources
    trained: set[str] = field(default_factory=set)  # receivers of fit / compile / train_on_batch
    compiled: list[tuple[ast.Call, Value, frozenset]] = field(default_factory=list)  # (compile call, loss, models)
    functional: dict[ast.Call, tuple[str, Value]] = field(default_factory=dict)  # keras.Model(i, o) -> (token, o)
    module_scope: object = None  # interp.Scope: the module's names once its body has run
    scopes: dict[ast.AST, object] = field(default_factory=dict)  # def -> its names, run on its own
    steps: int = 0
    _sites: dict[tuple, Site] = field(default_factory=dict)
    class_attrs: dict[tuple, Value | None] = field(default_factory=dict)  # (class, attribute, owner) -> value
    _model_like: dict[ast.ClassDef, bool] = field(default_factory=dict)
    _assignments: dict[ast.ClassDef, dict[str, list[tuple[ast.AST, ast.AST | None]]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._index()

    def _index(self) -> None:
        """One walk over the statements (expressions are not visited: that walk would cost
        more than parsing): who owns each def and class, the imports, and the regions, the
        functions whose own body mentions a tape or a gradient request."""
        imports: list[ast.Import | ast.ImportFrom] = []
        functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        stack: list[tuple[list, ast.AST]] = [(self.tree.body, self.tree)]
        while stack:
            body, owner = stack.pop()
            for stmt in body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    self.owner[stmt] = owner
                    if isinstance(stmt, ast.ClassDef):
                        self.classes.setdefault(stmt.name, stmt)
                    else:
                        functions.append(stmt)
                    stack.append((stmt.body, stmt))
                elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                    imports.append(stmt)
                else:
                    stack.extend((block, owner) for block in _blocks(stmt))
        self.aliases = Aliases(imports=imports)
        self.regions = _regions(functions, self.source_lines)

    def tick(self) -> None:
        self.steps += 1
        if self.steps > BUDGET:
            raise BudgetExceeded

    # --- names of models and variables -------------------------------------------------

    def fresh(self, node: ast.AST, kind: str, label: str) -> str:
        token = f"{FRESH}{kind[0]}:{node.lineno}:{node.col_offset}"
        self.labels.setdefault(token, label)
        self.kinds.setdefault(token, kind)
        return token

    def rename(self, value: Value, name: str) -> Value:
        """Give the fresh models/variables in ``value`` the name they are assigned to."""
        if not _has_fresh(value):
            return value
        return self._renamed(value, name)

    def _renamed(self, value: Value, name: str) -> Value:
        def new(key: str) -> str:
            if not key.startswith(FRESH):
                return key
            self.renames.setdefault(key, set()).add(name)
            self.kinds.setdefault(name, self.kinds.get(key, "model"))
            if key in self.frozen:
                self.frozen.add(name)
            return name

        # A variable is named where it is created (``w = tf.Variable(...)``); the output of a
        # fresh layer's call keeps its layer's name (``x = Dense(4, name="feature")(x)``).
        flow = {new(k): c for k, c in value.flow.items()} if value.ref is NEW_VARIABLE else value.flow
        return Value(
            flow=flow,
            models=frozenset(new(m) for m in value.models),
            items=tuple(self.rename(i, name) for i in value.items) if value.items is not None else None,
            fields=value.fields,
            element=self.rename(value.element, name) if value.element is not None else None,
            ref=None if value.ref is NEW_VARIABLE else value.ref,
            qual=value.qual,
            container=value.container,
        )

    def label(self, origin: str) -> str:
        """How a message names an origin: its variable name, or a layer's ``name=``."""
        if origin.startswith(FRESH):
            label = self.labels.get(origin, "a layer")
            return label if label.isidentifier() else f"{label} (line {origin.split(':')[1]})"
        return origin

    def describe_call(self, node: ast.AST) -> str:
        """``model(...)``, or ``the layer feature`` for ``Dense(4, name="feature")(x)``."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Call):
            token = f"{FRESH}m:{node.func.lineno}:{node.func.col_offset}"
            return f"the layer {self.label(token)}"
        return f"{callee_text(node)}(...)"

    def note_birth(self, origin: str, node: ast.AST) -> None:
        self.births.setdefault(origin, node)

    def model_kind(self, origin: str) -> str:
        return self.kinds.get(origin) or self.kinds.get(origin.split(".", 1)[0], "model")

    # --- classes ---------------------------------------------------------------------

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
                for node in ast.walk(method):
                    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                            if (
                                isinstance(target, ast.Attribute)
                                and isinstance(target.value, ast.Name)
                                and target.value.id == "self"
                            ):
                                index.setdefault(target.attr, []).append((node.value, method))
            self._assignments[cls] = index
        return index

    # --- sites -----------------------------------------------------------------------

    def site(self, node: ast.AST, code: str, when: str = "", via: int = 0) -> Site:
        key = (id(node), code, when, via)
        site = self._sites.get(key)
        if site is None:
            site = Site(
                node.lineno,
                node.col_offset,
                node.end_lineno or node.lineno,
                node.end_col_offset or node.col_offset,
                code,
                callee_text(node),
                first_argument(node),
                when,
                isinstance(node, ast.Call),
                via,
            )
            self._sites[key] = site
        return site


#: Words on a line that make its function worth analysing (a tape, a gradient request).
_REGION_WORDS = re.compile(r"tape|Tape|\.(?:gradient|jacobian|batch_jacobian|minimize)\s*\(|\bgradients\s*\(")


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists nested in a compound statement."""
    blocks = [getattr(stmt, name) for name in ("body", "orelse", "finalbody") if getattr(stmt, name, None)]
    blocks += [handler.body for handler in getattr(stmt, "handlers", ())]
    blocks += [case.body for case in getattr(stmt, "cases", ())]
    return blocks


def _regions(functions: list[ast.AST], lines: list[str]) -> list[ast.AST]:
    """Functions whose own lines (not those of a nested def) mention a tape or ask for a
    gradient. By spelling: aliases are resolved later, a function found here for nothing
    only costs its analysis, and one missed is only left unanalysed."""
    marked = [n for n, text in enumerate(lines, start=1) if _REGION_WORDS.search(text)]
    if not marked:
        return []
    found: set[ast.AST] = set()
    spans = sorted(((fn.lineno, fn.end_lineno or fn.lineno, fn) for fn in functions), key=lambda t: t[0])
    for line in marked:
        innermost = None
        for start, end, fn in spans:
            if start > line:
                break
            if end >= line:
                innermost = fn  # later starts are nested deeper
        if innermost is not None:
            found.add(innermost)
    return sorted(found, key=lambda fn: (fn.lineno, fn.col_offset))


def _has_fresh(value: Value) -> bool:
    return (
        (value.ref is NEW_VARIABLE and any(k.startswith(FRESH) for k in value.flow))
        or any(m.startswith(FRESH) for m in value.models)
        or (value.items is not None and any(_has_fresh(i) for i in value.items))
        or (value.element is not None and _has_fresh(value.element))
    )


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def callee_text(node: ast.AST) -> str:
    """What the user wrote for the culprit: the callee of a call, else the expression."""
    if isinstance(node, ast.Call):
        return _short(ast.unparse(node.func))
    return _short(ast.unparse(node))


def first_argument(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        if node.args:
            return _short(ast.unparse(node.args[0]), 40)
        if node.keywords:
            return _short(ast.unparse(node.keywords[0].value), 40)
        if isinstance(node.func, ast.Attribute):
            return _short(ast.unparse(node.func.value), 40)
    if isinstance(node, ast.Compare):
        return _short(ast.unparse(node.left), 40)
    if isinstance(node, ast.BinOp):
        return _short(ast.unparse(node.left), 40)
    if isinstance(node, ast.UnaryOp):
        return _short(ast.unparse(node.operand), 40)
    return "x"
