"""Fast walks over a syntax tree.

``ast.walk`` goes through ``ast.iter_child_nodes``, a generator over ``iter_fields`` that
asks every field of every node (the ``ctx`` of each name, the ``op`` of each operator)
whether it holds a node: over a whole file that costs as much as parsing it. These walks
ask each node class once which of its fields can hold nodes, and never visit the context
and operator singletons (``Load``, ``Add``...), which no caller looks at.
"""

from __future__ import annotations

import ast

#: Fields that never hold a node worth visiting (strings, numbers, and the context and
#: operator singletons).
_NEVER = frozenset(
    (
        *("ctx", "op", "ops", "id", "arg", "attr", "module", "level", "kind", "type_comment"),
        *("asname", "is_async", "conversion", "simple", "tag", "kwd_attrs", "rest"),
    )
)
#: Fields that hold nodes in these classes only (strings elsewhere: ``FunctionDef.name``,
#: ``Global.names``).
_NODES_ONLY_IN = {
    "name": frozenset(c for c in (getattr(ast, "TypeAlias", None),) if c is not None),
    "names": frozenset((ast.Import, ast.ImportFrom)),
}
#: Classes whose ``value`` is a Python constant, not a node.
_VALUE_NOT_NODE = frozenset((ast.Constant, ast.MatchSingleton))

CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def child_fields(cls: type) -> tuple[str, ...]:
    """The fields of ``cls`` that may hold a node or a list of nodes (or ``None``)."""
    found = CHILD_FIELDS.get(cls)
    if found is None:
        fields = []
        for name in getattr(cls, "_fields", ()):
            if name in _NEVER:
                continue
            if name == "value" and cls in _VALUE_NOT_NODE:
                continue
            only = _NODES_ONLY_IN.get(name)
            if only is not None and cls not in only:
                continue
            fields.append(name)
        found = CHILD_FIELDS[cls] = tuple(fields)
    return found


def descendants(node: ast.AST) -> list[ast.AST]:
    """``node`` and every node under it (not the ``ctx``/``op`` singletons), in no
    particular order: what ``ast.walk`` yields, for callers that collect, not search in
    order."""
    out: list[ast.AST] = []
    stack: list = [node]
    fields = CHILD_FIELDS
    while stack:
        sub = stack.pop()
        if sub is None:  # ``Dict.keys`` of a ``**`` entry, a missing ``kw_defaults``
            continue
        out.append(sub)
        cls = type(sub)
        names = fields.get(cls)
        if names is None:
            names = child_fields(cls)
        for name in names:
            value = getattr(sub, name, None)
            if value is None:
                continue
            if type(value) is list:
                stack.extend(value)
            else:
                stack.append(value)
    return out


__all__ = ["CHILD_FIELDS", "child_fields", "descendants"]


def blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists nested in a compound statement."""
    fields = BLOCK_FIELDS.get(type(stmt))
    if fields is None:
        return []
    blocks = [block for block in (getattr(stmt, name) for name in fields) if block]
    if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
        blocks += [handler.body for handler in stmt.handlers]
    elif isinstance(stmt, ast.Match):
        blocks += [case.body for case in stmt.cases]
    return blocks


#: The statement-list fields of each compound statement (simple statements have none).
BLOCK_FIELDS: dict[type, tuple[str, ...]] = {
    ast.If: ("body", "orelse"),
    ast.For: ("body", "orelse"),
    ast.AsyncFor: ("body", "orelse"),
    ast.While: ("body", "orelse"),
    ast.With: ("body",),
    ast.AsyncWith: ("body",),
    ast.Try: ("body", "orelse", "finalbody"),
    ast.Match: (),
    ast.FunctionDef: ("body",),
    ast.AsyncFunctionDef: ("body",),
    ast.ClassDef: ("body",),
}
if hasattr(ast, "TryStar"):
    BLOCK_FIELDS[ast.TryStar] = ("body", "orelse", "finalbody")


def statements(body: list[ast.stmt]):
    """Every statement in ``body`` and the blocks nested in it (expressions are not visited)."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(reversed(stmt.body))
        else:
            for block in blocks(stmt):
                stack.extend(reversed(block))
