"""The user's file as a libcst tree, and what the patch kinds ask of it: the node at a
finding's span, the statement and block around it, the names the file gives to
TensorFlow, NumPy and Keras, fresh names.

libcst keeps every comment and every space of the code it does not touch, so a patch
changes the culprit and nothing else. Nothing here imports TensorFlow.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import CodeRange, MetadataWrapper, ParentNodeProvider, PositionProvider

if TYPE_CHECKING:
    from gradcheck.findings import Finding

#: Statements that hold a block of statements.
BLOCK_TYPES = (cst.Module, cst.IndentedBlock)


class Unpatchable(Exception):
    """The source does not have the shape a patch kind needs (no patch is proposed)."""


@dataclass(frozen=True)
class Span:
    """A finding's span in libcst terms: 1-based lines, 0-based columns, end exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int | None

    @classmethod
    def of(cls, finding: Finding) -> Span:
        end_line = finding.end_line or finding.line
        end_column = finding.end_column - 1 if finding.end_column else None
        return cls(finding.line, max(finding.column - 1, 0), end_line, end_column)


class Source:
    """One file: its text, its tree, and positions and parents of every node."""

    def __init__(self, text: str, path: str = "<string>") -> None:
        self.path = path
        self.text = text
        try:
            self.module = cst.parse_module(text)
        except cst.ParserSyntaxError as error:
            raise Unpatchable(f"libcst cannot parse the file: {error.message}") from None
        wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
        self.positions: dict[cst.CSTNode, CodeRange] = dict(wrapper.resolve(PositionProvider))
        self.parents: dict[cst.CSTNode, cst.CSTNode] = dict(wrapper.resolve(ParentNodeProvider))
        self._names: set[str] | None = None
        self._aliases: dict[str, str] | None = None

    # -- text -------------------------------------------------------------------------------
    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def range(self, node: cst.CSTNode) -> CodeRange:
        return self.positions[node]

    def line_of(self, node: cst.CSTNode) -> int:
        return self.positions[node].start.line

    # -- finding the culprit ---------------------------------------------------------------
    def nodes_at(self, span: Span, types: tuple[type, ...] = (cst.BaseExpression,)) -> list[cst.CSTNode]:
        """Nodes of ``types`` whose range is the span exactly (outermost first), else those
        that contain it (innermost first)."""
        exact, around = [], []
        for node, where in self.positions.items():
            if not isinstance(node, types):
                continue
            start, end = (where.start.line, where.start.column), (where.end.line, where.end.column)
            want_start = (span.line, span.column)
            want_end = (span.end_line, span.end_column) if span.end_column is not None else None
            if start == want_start and (want_end is None or end == want_end):
                exact.append(node)
            elif start <= want_start and (want_end is None or end >= want_end) and end > want_start:
                around.append(node)
        exact.sort(key=lambda n: self._size(n), reverse=True)
        around.sort(key=self._size)
        return exact + around

    def _size(self, node: cst.CSTNode) -> tuple[int, int]:
        where = self.positions[node]
        return (where.end.line - where.start.line, where.end.column - where.start.column)

    def calls_at(self, span: Span, names: tuple[str, ...] = ()) -> list[cst.Call]:
        """Calls at (or around) the span, those whose callee's last part is one of
        ``names`` first (all calls when ``names`` is empty)."""
        calls = [n for n in self.nodes_at(span, (cst.Call,)) if isinstance(n, cst.Call)]
        if not names:
            return calls
        return [c for c in calls if callee_tail(c) in names]

    def statements_on_line(self, line: int) -> list[cst.CSTNode]:
        return [
            n
            for n, where in self.positions.items()
            if isinstance(n, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) and where.start.line == line
        ]

    # -- structure --------------------------------------------------------------------------
    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        node = self.parents.get(node)
        while node is not None:
            yield node
            node = self.parents.get(node)

    def statement(self, node: cst.CSTNode) -> cst.CSTNode:
        """The statement (a line of small statements, or a compound one) holding ``node``."""
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return node
        for up in self.ancestors(node):
            if isinstance(up, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return up
        raise Unpatchable("the culprit is not inside a statement")

    def small_statement(self, node: cst.CSTNode) -> cst.BaseSmallStatement | None:
        for up in (node, *self.ancestors(node)):
            if isinstance(up, cst.BaseSmallStatement):
                return up
            if isinstance(up, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return None
        return None

    def block(self, statement: cst.CSTNode) -> tuple[cst.CSTNode, int]:
        """The block (Module or IndentedBlock) holding ``statement``, and its index there."""
        parent = self.parents.get(statement)
        if not isinstance(parent, BLOCK_TYPES):
            raise Unpatchable("the statement is not in a block")
        return parent, list(parent.body).index(statement)

    def inside_lambda(self, node: cst.CSTNode) -> cst.Lambda | None:
        for up in self.ancestors(node):
            if isinstance(up, cst.Lambda):
                return up
            if isinstance(up, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return None
        return None

    def in_comprehension(self, node: cst.CSTNode) -> bool:
        for up in self.ancestors(node):
            if isinstance(up, (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
                return True
            if isinstance(up, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return False
        return False

    def function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        for up in self.ancestors(node):
            if isinstance(up, cst.FunctionDef):
                return up
        return None

    def scope_body(self, node: cst.CSTNode) -> cst.CSTNode:
        """The function, or else the module, that ``node`` is in."""
        return self.function(node) or self.module

    def functions_named(self, name: str) -> list[cst.FunctionDef]:
        return [n for n in self.positions if isinstance(n, cst.FunctionDef) and n.name.value == name]

    def walk(self, root: cst.CSTNode, types: tuple[type, ...]) -> Iterator[cst.CSTNode]:
        """Nodes of ``types`` under ``root`` in source order."""
        found = [n for n in self.positions if isinstance(n, types) and (n is root or self._under(n, root))]
        found.sort(key=lambda n: (self.positions[n].start.line, self.positions[n].start.column))
        return iter(found)

    def _under(self, node: cst.CSTNode, root: cst.CSTNode) -> bool:
        return any(up is root for up in self.ancestors(node))

    def contains(self, outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
        return inner is outer or self._under(inner, outer)

    # -- names -------------------------------------------------------------------------------
    @property
    def names(self) -> set[str]:
        """Every identifier the file uses (to pick names it does not)."""
        if self._names is None:
            self._names = {n.value for n in self.positions if isinstance(n, cst.Name) and not self._is_label(n)}
        return self._names

    def _is_label(self, name: cst.Name) -> bool:
        """An attribute's name (``self.kernel``) or a keyword (``axis=1``): not a variable."""
        parent = self.parents.get(name)
        if isinstance(parent, cst.Attribute) and parent.attr is name:
            return True
        return isinstance(parent, cst.Arg) and parent.keyword is name

    def fresh(self, base: str) -> str:
        base = re.sub(r"\W", "_", base).strip("_") or "value"
        if base[0].isdigit():
            base = f"v_{base}"
        name, n = base, 1
        while name in self.names or keyword.iskeyword(name) or name in dir(builtins):
            name, n = f"{base}_{n}", n + 1
        self.names.add(name)
        return name

    @property
    def aliases(self) -> dict[str, str]:
        """Local name -> the module it is bound to by an import (``tf`` -> ``tensorflow``,
        ``K`` -> ``tensorflow.keras.backend``, ``ops`` -> ``keras.ops``)."""
        if self._aliases is None:
            out: dict[str, str] = {}
            for node in self.positions:
                if isinstance(node, cst.Import):
                    for alias in node.names:
                        full = get_full_name_for_node(alias.name) or ""
                        if alias.asname is not None:
                            out[_as_name(alias)] = full
                        else:
                            out.setdefault(full.split(".")[0], full.split(".")[0])
                elif isinstance(node, cst.ImportFrom) and node.module is not None and not node.relative:
                    base = get_full_name_for_node(node.module) or ""
                    if isinstance(node.names, cst.ImportStar):
                        continue
                    for alias in node.names:
                        name = get_full_name_for_node(alias.name) or ""
                        out[_as_name(alias) if alias.asname else name] = f"{base}.{name}"
            self._aliases = out
        return self._aliases

    def alias_for(self, *modules: str) -> str | None:
        """The local name bound to the first of ``modules`` the file imports."""
        for module in modules:
            for local, full in self.aliases.items():
                if full == module:
                    return local
        return None

    @property
    def tf(self) -> str | None:
        return self.alias_for("tensorflow")

    @property
    def np(self) -> str | None:
        return self.alias_for("numpy")

    def resolve(self, dotted: str) -> str:
        """``tf.math.argmax`` -> ``tensorflow.math.argmax`` by the file's imports."""
        head, _, rest = dotted.partition(".")
        full = self.aliases.get(head)
        if full is None:
            return dotted
        return f"{full}.{rest}" if rest else full


def _as_name(alias: cst.ImportAlias) -> str:
    assert alias.asname is not None
    name = alias.asname.name
    return name.value if isinstance(name, cst.Name) else get_full_name_for_node(name) or ""


def callee(call: cst.Call) -> str:
    """``tf.math.argmax`` for ``tf.math.argmax(q)``; ``""`` when the callee is not dotted names."""
    return get_full_name_for_node(call.func) or ""


def callee_tail(call: cst.Call) -> str:
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    if isinstance(func, cst.Name):
        return func.value
    return ""


def arg(call: cst.Call, index: int | None, *keywords: str) -> cst.Arg | None:
    """The argument given by keyword (any of ``keywords``) or at position ``index``."""
    for a in call.args:
        if a.keyword is not None and a.keyword.value in keywords:
            return a
    if index is not None:
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if index < len(positional):
            return positional[index]
    return None


def is_simple(node: cst.BaseExpression) -> bool:
    """A name, attribute or subscript of names and literals: safe to write twice."""
    if isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(node, cst.Attribute):
        return is_simple(node.value)
    if isinstance(node, cst.Subscript):
        return is_simple(node.value) and all(_simple_slice(e.slice) for e in node.slice)
    if isinstance(node, cst.UnaryOperation):
        return is_simple(node.expression)
    return False


def _simple_slice(element: cst.BaseSlice) -> bool:
    if isinstance(element, cst.Index):
        return is_simple(element.value) or isinstance(element.value, cst.Name)
    if isinstance(element, cst.Slice):
        parts = [element.lower, element.upper, element.step]
        return all(p is None or is_simple(p) for p in parts)
    return False


def names_in(node: cst.CSTNode) -> set[str]:
    """The plain names read in ``node`` (not attribute parts)."""
    out: set[str] = set()

    class _Visitor(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            out.add(n.value)

        def visit_Attribute(self, n: cst.Attribute) -> bool:
            n.value.visit(self)
            return False

        def visit_Arg(self, n: cst.Arg) -> bool:  # ``axis=1``: the keyword is not a name read
            n.value.visit(self)
            return False

    node.visit(_Visitor())
    return out


def bound_names(statement: cst.CSTNode) -> set[str]:
    """Names a statement assigns (targets of ``=``, ``+=``, ``for``, ``with ... as``)."""
    out: set[str] = set()

    def targets(t: cst.BaseExpression) -> None:
        if isinstance(t, cst.Name):
            out.add(t.value)
        elif isinstance(t, (cst.Tuple, cst.List)):
            for e in t.elements:
                targets(e.value)
        elif isinstance(t, cst.StarredElement):
            targets(t.value)

    class _Visitor(cst.CSTVisitor):
        def visit_Assign(self, n: cst.Assign) -> None:
            for t in n.targets:
                targets(t.target)

        def visit_AnnAssign(self, n: cst.AnnAssign) -> None:
            targets(n.target)

        def visit_AugAssign(self, n: cst.AugAssign) -> None:
            targets(n.target)

        def visit_For(self, n: cst.For) -> None:
            targets(n.target)

        def visit_WithItem(self, n: cst.WithItem) -> None:
            if n.asname is not None:
                targets(n.asname.name)

        def visit_FunctionDef(self, n: cst.FunctionDef) -> bool:
            out.add(n.name.value)
            return False

    statement.visit(_Visitor())
    return out


def tape_items(with_node: cst.With) -> list[tuple[cst.WithItem, str]]:
    """The ``with`` items that open a GradientTape, with the name each is bound to."""
    out = []
    for item in with_node.items:
        if isinstance(item.item, cst.Call) and callee_tail(item.item) == "GradientTape" and item.asname is not None:
            name = item.asname.name
            if isinstance(name, cst.Name):
                out.append((item, name.value))
    return out
