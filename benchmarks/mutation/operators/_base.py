"""The operator machinery: one site counter, one mutant per site, a benign twin per operator.

An operator is a libcst transformer that meets candidate sites in a fixed traversal order;
it mutates only the site whose index it was given, so running it once per index yields one
mutant per site. The nodes it writes are kept (``marked``) and their lines, looked up in the
final module, are the expected lines of the finding.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import libcst as cst

from benchmarks.mutation.cstutil import (
    BUILTINS,
    NOT_FORWARD_ATTRS,
    dotted,
    imported_names,
    is_graph_function,
    is_tape_with,
    positions,
)


@dataclass
class Mutation:
    """One mutant (or twin): its source, the lines a finding should point at, and what changed."""

    source: str
    lines: list[int]
    site: int
    detail: str = ""


@dataclass
class Context:
    """What an operator needs to know about the whole module."""

    module: cst.Module
    imports: dict[str, str] = field(default_factory=dict)
    tf: str | None = None
    np: str | None = None
    gradient_models: list[str] = field(default_factory=list)
    source_names: set[str] = field(default_factory=set)  # names passed as sources to `.gradient`

    @classmethod
    def of(cls, module: cst.Module) -> Context:
        imports = imported_names(module)
        tf = next((k for k, v in imports.items() if v == "tensorflow"), None)
        np_ = next((k for k, v in imports.items() if v == "numpy"), None)
        ctx = cls(module, imports, tf, np_)
        ctx.gradient_models = _models_with_variables(module)
        ctx.source_names = _gradient_source_names(module)
        return ctx


def _gradient_source_names(module: cst.Module) -> set[str]:
    names: set[str] = set()

    class V(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if dotted(node.func).endswith(".gradient") and len(node.args) > 1:
                n = dotted(node.args[1].value)
                if n:
                    names.add(n)

    module.visit(V())
    return names


def in_sources(ctx: Context, node: cst.CSTNode) -> int:
    """1 for a `.gradient(...)` call or an assignment of a list later passed as its sources."""
    if isinstance(node, cst.Call):
        return int(dotted(node.func).endswith(".gradient"))
    if isinstance(node, cst.Assign):
        return int(any(dotted(t.target) in ctx.source_names for t in node.targets))
    return 0


def _models_with_variables(module: cst.Module) -> list[str]:
    """Dotted owners of ``X.trainable_variables`` / ``X.trainable_weights`` anywhere, in order."""
    seen: list[str] = []

    class V(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            if node.attr.value in {"trainable_variables", "trainable_weights"}:
                owner = dotted(node.value)
                if owner and owner not in seen:
                    seen.append(owner)

    module.visit(V())
    return seen


class SiteTransformer(cst.CSTTransformer):
    """Counts sites in traversal order and mutates the one numbered ``target`` (-1: count only)."""

    def __init__(self, ctx: Context, target: int, twin: bool) -> None:
        super().__init__()
        self.ctx = ctx
        self.target = target
        self.twin = twin
        self.count = 0
        self.marked: list[cst.CSTNode] = []
        self.detail = ""
        self.tapes: list[list[str]] = []  # names bound by each enclosing tape `with`
        self.graph: list[bool] = []  # enclosing defs: traced by TensorFlow?
        self.after_with: list[list[cst.BaseStatement]] = []  # statements to put after each tape `with`
        self.before_with: list[list[cst.BaseStatement]] = []
        self.module_stmts: list[cst.BaseStatement] = []  # helpers to put after `import tensorflow`
        self.loss_fns = 0  # depth inside a `def ...loss...(...)`: its body runs on the caller's tape

    # -- site bookkeeping -------------------------------------------------------------------
    def hit(self) -> bool:
        """Count one site; True when it is the one to mutate."""
        self.count += 1
        return self.count - 1 == self.target

    @property
    def in_tape(self) -> bool:
        return bool(self.tapes) or self.loss_fns > 0

    @property
    def in_graph(self) -> bool:
        return any(self.graph)

    def tape_names(self) -> list[str]:
        return [n for names in self.tapes for n in names if n]

    # -- context tracking -------------------------------------------------------------------
    def visit_With(self, node: cst.With) -> None:
        names = is_tape_with(node)
        if names:
            self.tapes.append(names)
            self.after_with.append([])
            self.before_with.append([])

    def leave_With(self, original: cst.With, updated: cst.With) -> cst.BaseStatement | cst.FlattenSentinel:
        if not is_tape_with(original):
            return updated
        self.tapes.pop()
        after = self.after_with.pop()
        before = self.before_with.pop()
        if after or before:
            return cst.FlattenSentinel([*before, updated, *after])
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.graph.append(is_graph_function(node))
        self.loss_fns += "loss" in node.name.value.lower()

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.BaseStatement:
        self.graph.pop()
        self.loss_fns -= "loss" in original.name.value.lower()
        return updated

    # -- helpers ----------------------------------------------------------------------------
    def is_forward_call(self, value: cst.BaseExpression) -> bool:
        """A call that reads as a model's forward pass: ``model(x)``, ``self.encoder(x)``, ``self(x)``."""
        if not isinstance(value, cst.Call):
            return False
        if isinstance(value.func, cst.Call):  # Dense(3)(x)
            return True
        name = dotted(value.func)
        if not name:
            return False
        root, last = name.split(".")[0], name.split(".")[-1]
        if root in self.ctx.imports or root in BUILTINS or last in NOT_FORWARD_ATTRS:
            return False
        return "loss" not in name.lower()

    def mark(self, node: cst.CSTNode, detail: str = "") -> cst.CSTNode:
        self.marked.append(node)
        if detail:
            self.detail = detail
        return node

    def stmt(self, code: str) -> cst.BaseStatement:
        node = cst.parse_statement(code)
        self.marked.append(node)
        return node

    def finish(self, module: cst.Module) -> cst.Module | None:
        """Put module-level helpers after the top-level ``import tensorflow``; None when impossible."""
        if not self.module_stmts:
            return module
        body = list(module.body)
        for i, s in enumerate(body):
            if isinstance(s, cst.SimpleStatementLine) and any(
                isinstance(x, cst.Import) and any(dotted(a.name) == "tensorflow" for a in x.names) for x in s.body
            ):
                return module.with_changes(body=[*body[: i + 1], *self.module_stmts, *body[i + 1 :]])
        return None


_PARSED: dict[str, tuple[cst.Module, Context]] = {}


def parsed(source: str) -> tuple[cst.Module, Context]:
    """The module and its context, parsed once per source (libcst trees are immutable)."""
    if source not in _PARSED:
        if len(_PARSED) > 8:
            _PARSED.clear()
        module = cst.parse_module(source)
        _PARSED[source] = (module, Context.of(module))
    return _PARSED[source]


class Operator:
    """One bug shape. Subclasses set the metadata and ``transformer``."""

    name: ClassVar[str]
    codes: ClassVar[tuple[str, ...]]
    summary: ClassVar[str]
    twin_summary: ClassVar[str]
    # What TensorFlow must show for the mutant to count: "starve" (a source newly None or
    # all-zero), "zero", "nonfinite", or "change" (gradients differ from the original's).
    effect: ClassVar[str] = "starve"
    # The bug may show as an exception under plain python (e.g. `.numpy()` in a graph).
    crash_ok: ClassVar[bool] = False
    #: the mutant removes a ``tf.stop_gradient``: valid only where the original's probe saw it
    #: stop a value a tape was recording (``score.stop_was_live``)
    live_stop: ClassVar[bool] = False
    needs_tf: ClassVar[bool] = True
    transformer: ClassVar[type[SiteTransformer]]

    def applicable(self, ctx: Context) -> bool:
        return ctx.tf is not None or not self.needs_tf

    def _generate(self, source: str, twin: bool, limit: int | None = None) -> list[Mutation]:
        module, ctx = parsed(source)
        if not self.applicable(ctx):
            return []
        counter = self.transformer(ctx, -1, twin)
        module.visit(counter)
        out = []
        for k in range(counter.count if limit is None else min(limit, counter.count)):
            t = self.transformer(ctx, k, twin)
            new = t.finish(module.visit(t))
            if new is None or new.code == source:
                continue
            out.append(Mutation(new.code, positions(new, t.marked), k, t.detail))
        return out

    def count_sites(self, source: str) -> int:
        """How many mutants ``mutants`` would make (one counting pass, no mutant written)."""
        module, ctx = parsed(source)
        if not self.applicable(ctx):
            return 0
        counter = self.transformer(ctx, -1, False)
        module.visit(counter)
        return counter.count

    def mutants(self, source: str, limit: int | None = None) -> list[Mutation]:
        """One mutant per site where the bug shape fits (the first ``limit`` sites)."""
        return self._generate(source, twin=False, limit=limit)

    def twins(self, source: str, limit: int | None = 1) -> list[Mutation]:
        """The benign look-alike, at the first ``limit`` sites."""
        return self._generate(source, twin=True, limit=limit)


class AfterForward(SiteTransformer):
    """Sites: each name bound by a forward call inside a tape. Subclasses write the inserted line.

    ``mutant_line(name)`` is put right after the forward statement; ``twin_line(name)`` goes
    inside the tape too unless ``twin_outside`` (then right after the tape's ``with``).
    """

    twin_outside: ClassVar[bool] = False
    twin_eager_only: ClassVar[bool] = False  # the twin needs values (`.numpy()`), so not in a graph
    mutant_eager_only: ClassVar[bool] = False

    def mutant_line(self, name: str) -> str:
        raise NotImplementedError

    def twin_line(self, name: str) -> str:
        raise NotImplementedError

    def bound_names(self, stmt: cst.Assign) -> list[str]:
        names = []
        for t in stmt.targets:
            tgt = t.target
            elems = tgt.elements if isinstance(tgt, cst.Tuple | cst.List) else [tgt]
            for e in elems:
                node = e.value if isinstance(e, cst.Element) else e
                if isinstance(node, cst.Name) and "loss" not in node.value.lower():
                    names.append(node.value)
        return names

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel:
        if not self.in_tape or len(original.body) != 1 or not isinstance(original.body[0], cst.Assign):
            return updated
        assign = original.body[0]
        if not self.is_forward_call(assign.value):
            return updated
        eager_only = self.twin_eager_only if self.twin else self.mutant_eager_only
        if eager_only and self.in_graph:
            return updated
        extra: list[cst.BaseStatement] = []
        for name in self.bound_names(assign):
            if not self.hit():
                continue
            if self.twin:
                new = self.stmt(self.twin_line(name))
                if self.twin_outside and self.tapes:
                    self.after_with[-1].append(new)
                else:
                    extra.append(new)
            else:
                extra.append(self.stmt(self.mutant_line(name)))
            self.detail = f"{name} = {dotted(assign.value.func) or '...'}(...)"
        return cst.FlattenSentinel([updated, *extra]) if extra else updated
