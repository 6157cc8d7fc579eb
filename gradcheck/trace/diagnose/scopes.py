"""The user's source around a line, by its AST: the function (or module) holding it and the
statements of that scope itself, for the diagnoses that ask where a value is bound or used."""

from __future__ import annotations

import ast

from gradcheck import sourcemap

__all__ = ["enclosing_scope", "own_statements", "span", "statement_at"]


def enclosing_scope(path: str, line: int) -> ast.AST | None:
    """The innermost function holding ``line``, else the module (a script's own loop)."""
    tree = sourcemap.parsed(path)
    if tree is None:
        return None
    best = None
    for node in ast.walk(tree):
        inside = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (
            node.end_lineno or 0
        )
        if inside and (best is None or node.lineno > best.lineno):
            best = node
    return best or tree


def span(scope: ast.AST) -> tuple[int, float]:
    if isinstance(scope, ast.Module):
        return 1, float("inf")
    return scope.lineno, scope.end_lineno or scope.lineno


def own_statements(function) -> list[ast.stmt]:
    """The statements of ``function`` itself, not of the functions and classes it defines."""
    out, todo = [], list(function.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.stmt):
            out.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return sorted(out, key=lambda s: s.lineno)


def statement_at(scope: ast.AST, line: int) -> ast.stmt | None:
    """The innermost statement of ``scope`` itself spanning ``line``."""
    held = [s for s in own_statements(scope) if s.lineno <= line <= (s.end_lineno or s.lineno)]
    return max(held, key=lambda s: s.lineno, default=None)
