"""Map a file:line (and, when known, the exact column span) to the expression in the
user's source: the call whose op cut the gradient, the names of ``tape.gradient``'s
arguments, the line where a name was last bound. Pure ``ast``; no TensorFlow.
"""

from __future__ import annotations

import ast
import linecache
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Expr:
    line: int
    column: int  # 1-based
    end_line: int
    end_column: int  # 1-based, exclusive
    text: str  # the callee for a call (``tf.math.argmin``), else the expression itself
    node: ast.AST


@lru_cache(maxsize=256)
def _parse(path: str) -> ast.Module | None:
    source = "".join(linecache.getlines(path))
    if not source:
        return None
    try:
        return ast.parse(source, filename=path)
    except (SyntaxError, ValueError):
        return None


@lru_cache(maxsize=256)
def _expressions_by_line(path: str) -> dict[int, list[ast.expr]]:
    """Every expression node under each line it spans, in ``ast.walk`` order: a diagnosis
    looks up a dozen lines of one file, and walking the whole tree for each was most of
    its time on a small model."""
    index: dict[int, list[ast.expr]] = {}
    tree = _parse(path)
    if tree is None:
        return index
    for node in ast.walk(tree):
        if isinstance(node, ast.expr) and getattr(node, "lineno", None) is not None:
            for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                index.setdefault(line, []).append(node)
    return index


def source_line(path: str, line: int) -> str:
    return linecache.getline(path, line).rstrip("\n")


def char_column(path: str, line: int, byte_column: int | None) -> int | None:
    """Python reports columns in UTF-8 bytes (``col_offset``, ``co_positions``); findings
    count characters (1-based), as ruff, SARIF and GitHub do. They differ only after a
    non-ASCII character on the line."""
    if byte_column is None:
        return None
    text = source_line(path, line)
    if not text or text.isascii():
        return byte_column
    return len(text.encode("utf-8")[: max(byte_column - 1, 0)].decode("utf-8", errors="ignore")) + 1


def _callee(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        return ast.unparse(node.func)
    if isinstance(node, ast.BinOp):
        return type(node.op).__name__
    return ast.unparse(node)


def _as_expr(node: ast.AST) -> Expr:
    return Expr(
        node.lineno,
        node.col_offset + 1,
        node.end_lineno or node.lineno,
        (node.end_col_offset or node.col_offset) + 1,
        _callee(node),
        node,
    )


def _last_name(func: ast.AST) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def expression_at(
    path: str,
    line: int,
    column: int | None = None,
    end_line: int | None = None,
    end_column: int | None = None,
    hints: tuple[str, ...] = (),
) -> Expr | None:
    """The expression an op came from.

    With an exact span (eager mode knows it) the node with that span wins. Otherwise (graph
    tracebacks carry only a line) the call on that line whose callee's last name is one of
    ``hints`` (``argmin`` for ArgMin), else the outermost call starting on the line.
    """
    on_line: list[ast.AST] = []
    for node in _expressions_by_line(path).get(line, ()):
        if (
            column is not None
            and end_column is not None
            and (
                node.lineno == line
                and node.col_offset + 1 == column
                and node.end_lineno == (end_line or line)
                and (node.end_col_offset or 0) + 1 == end_column
            )
        ):
            return _as_expr(node)
        if isinstance(node, ast.Call):
            on_line.append(node)
    if column is not None:
        # Span not found as one node (e.g. a method call's attribute): innermost call covering it.
        covering = [
            n
            for n in on_line
            if (n.lineno, n.col_offset + 1) <= (line, column)
            and ((n.end_lineno or n.lineno), (n.end_col_offset or 0) + 1) >= (end_line or line, end_column or column)
        ]
        if covering:
            return _as_expr(min(covering, key=_span_size))
        return None
    if not on_line:
        return None
    hinted = [n for n in on_line if _last_name(n.func).lower() in hints]
    if hinted:
        return _as_expr(min(hinted, key=_span_size))
    starting = [n for n in on_line if n.lineno == line] or on_line
    return _as_expr(max(starting, key=_span_size))


def _span_size(node: ast.AST) -> tuple[int, int]:
    return ((node.end_lineno or node.lineno) - node.lineno, (node.end_col_offset or 0) - node.col_offset)


def _method_calls(path: str, line: int, method: str) -> list[ast.Call]:
    """Every ``.method(...)`` call whose span covers ``line``."""
    return [
        node
        for node in _expressions_by_line(path).get(line, ())
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method
    ]


def call_node(path: str, line: int, method: str) -> ast.Call | None:
    """The innermost ``.method(...)`` call spanning ``line``."""
    candidates = _method_calls(path, line, method)
    return min(candidates, key=_span_size) if candidates else None


def call_arguments(path: str, line: int, column: int | None, method: str) -> list[ast.expr] | None:
    """Positional argument nodes of the ``.method(...)`` call at ``line`` (e.g. the target
    and sources of ``tape.gradient``)."""
    candidates = _method_calls(path, line, method)
    if not candidates:
        return None
    if column is not None:
        exact = [n for n in candidates if n.col_offset + 1 == column]
        if exact:
            candidates = exact
    node = min(candidates, key=_span_size)
    args = list(node.args)
    for keyword in node.keywords:
        if keyword.arg in ("target", "sources") and len(args) < 2:
            args.insert(0 if keyword.arg == "target" else len(args), keyword.value)
    return args


def element_names(node: ast.expr | None, count: int) -> list[str]:
    """Readable names for the ``count`` flattened elements of a sources expression."""
    if node is None:
        return [f"sources[{i}]" for i in range(count)]
    if isinstance(node, (ast.List, ast.Tuple)) and len(node.elts) == count:
        return [ast.unparse(e) for e in node.elts]
    if isinstance(node, ast.Dict) and len(node.values) == count:
        return [ast.unparse(v) for v in node.values]
    text = ast.unparse(node)
    if count == 1:
        return [text]
    return [f"{text}[{i}]" for i in range(count)]


def binding_line(path: str, name: str, before_line: int) -> Expr | None:
    """The last assignment to ``name`` at or before ``before_line`` (where a tensor was made)."""
    tree = _parse(path)
    if tree is None:
        return None
    best: ast.AST | None = None
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        else:
            continue
        names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        if name in names and node.lineno <= before_line and (best is None or node.lineno > best.lineno):
            best = node
    if best is None:
        return None
    value = getattr(best, "value", None)
    if isinstance(value, ast.expr):
        return _as_expr(value)
    return Expr(
        best.lineno,
        best.col_offset + 1,
        best.end_lineno or best.lineno,
        (best.end_col_offset or 0) + 1,
        ast.unparse(best),
        best,
    )
