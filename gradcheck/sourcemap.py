"""Map a file:line (and, when known, the exact column span) to the expression in the
user's source: the call whose op cut the gradient, the names of ``tape.gradient``'s
arguments, the line where a name was last bound. Pure ``ast``; no TensorFlow.
"""

from __future__ import annotations

import ast
import linecache
import os
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


def parsed(path: str) -> ast.Module | None:
    """The file's AST, or None when it cannot be read or parsed; cached while the file is
    unchanged (a test may rewrite one path between checks in the same process)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return _parsed_version(path, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=64)
def _parsed_version(path: str, _mtime_ns: int, _size: int) -> ast.Module | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
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
    text = ast.unparse(node)
    if isinstance(node, ast.BinOp) and len(text) > 40:
        return type(node.op).__name__
    return text


@lru_cache(maxsize=256)
def _names_in(path: str) -> frozenset[str]:
    tree = _parse(path)
    if tree is None:
        return frozenset()
    return frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name)) | frozenset(
        a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)
    )


def free_name(path: str, candidates: tuple[str, ...]) -> str:
    """The first of ``candidates`` the file does not use: a placeholder in a suggested fix
    must not read as one of the user's own variables."""
    used = _names_in(path)
    return next((c for c in candidates if c not in used), candidates[-1])


def short_text(node: ast.AST, limit: int = 60) -> str | None:
    """The source of ``node`` on one line, if it is short enough to quote."""
    text = ast.unparse(node)
    return text if len(text) <= limit and "\n" not in text else None


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


@lru_cache(maxsize=256)
def _statements_by_line(path: str) -> dict[int, ast.stmt]:
    """The innermost simple statement covering each line."""
    index: dict[int, ast.stmt] = {}
    tree = _parse(path)
    if tree is None:
        return index
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not hasattr(node, "body"):
            for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                current = index.get(line)
                if current is None or _span_size(node) < _span_size(current):
                    index[line] = node
    return index


def statement_value(path: str, line: int) -> Expr | None:
    """The value a simple statement on ``line`` computes (the right-hand side of an
    assignment, a returned or bare expression): one user-level computation, however many
    ops it ran."""
    node = _statements_by_line(path).get(line)
    value = getattr(node, "value", None)
    return _as_expr(value) if isinstance(value, ast.expr) else None


def passes_on(path: str, line: int) -> bool:
    """Whether what the statement on ``line`` computes goes on, whole, to the caller: a
    ``return`` (or ``yield``) of it, or a name bound to it that a later ``return`` of the
    same function gives back (``pooled = self.pool(h)`` then ``return seq, pooled``). An
    index into the result (``self.encoder(x)[0]``) or an unpacking of it whose names are not
    all returned keeps only part: the rest is left here."""
    node = _statements_by_line(path).get(line)
    if isinstance(node, ast.Expr) and isinstance(node.value, (ast.Yield, ast.YieldFrom)):
        return True
    value = getattr(node, "value", None)
    if (
        not isinstance(node, (ast.Return, ast.Assign, ast.AnnAssign))
        or value is None
        or isinstance(value, ast.Subscript)
    ):
        return False
    if isinstance(node, ast.Return):
        return True
    bound = _bound_names(node)
    function = _enclosing_function(path, line)
    if not bound or function is None:
        return False
    returned = {
        n.id
        for r in ast.walk(function)
        if isinstance(r, (ast.Return, ast.Yield)) and r.value is not None and r.lineno > line
        for n in ast.walk(r.value)
        if isinstance(n, ast.Name)
    }
    return bound <= returned


def calls_around(path: str, line: int, column: int | None) -> list[str]:
    """The names of the calls (``np.argmax(...)`` -> ``argmax``) of the statement on
    ``line`` whose span holds the position ``line:column`` (1-based): the call there and
    those around it. Without a column (graph tracebacks, Python 3.10), every call of the
    statement."""
    node = _statements_by_line(path).get(line)
    if node is None:
        return []
    found = []
    for call in ast.walk(node):
        if not isinstance(call, ast.Call):
            continue
        start = (call.lineno, call.col_offset + 1)
        end = (call.end_lineno or call.lineno, (call.end_col_offset or 0) + 1)
        if column is None or start <= (line, column) < end:
            found.append((start, _last_name(call.func)))
    return [name for _, name in sorted(found)]


def none_return(path: str, first_line: int) -> Expr | None:
    """In the function defined at ``first_line`` (its code's ``co_firstlineno``: the
    first decorator's line, if any), the last ``return`` whose value spells ``None`` (a
    custom gradient's ``return None, dy * l``, ``[None] * len(variables)``)."""
    tree = _parse(path)
    for node in ast.walk(tree) if tree is not None else ():
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        starts = [node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))]
        if min(starts) != first_line:
            continue
        if isinstance(node, ast.Lambda):
            returns = [node.body]
        else:
            returns = [r.value for r in _own_nodes(node) if isinstance(r, ast.Return) and r.value is not None]
        spelled = [r for r in returns if any(isinstance(n, ast.Constant) and n.value is None for n in ast.walk(r))]
        if spelled:
            return _as_expr(spelled[-1])
    return None


def _own_nodes(function: ast.AST):
    """The nodes of ``function``'s body, not those of the functions defined inside it."""
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def bound_name(path: str, line: int) -> str | None:
    """The one name the assignment on ``line`` binds (``x = tf.concat(...)``), else None."""
    node = _statements_by_line(path).get(line)
    if not isinstance(node, (ast.Assign, ast.AnnAssign)):
        return None
    names = _bound_names(node)
    return next(iter(names)) if len(names) == 1 else None


def keeps_all_it_binds(path: str, line: int) -> bool:
    """Whether the assignment on ``line`` binds only names read after it, in its function
    (or, at the top level, in the module): nothing it receives is left there. What a
    call returned and this line does not hold (a functional model's outputs leave out one
    of a layer's) was dropped before it came back."""
    node = _statements_by_line(path).get(line)
    if not isinstance(node, (ast.Assign, ast.AnnAssign)) or isinstance(getattr(node, "value", None), ast.Subscript):
        return False
    bound = _bound_names(node)
    scope = _enclosing_function(path, line) or _parse(path)
    if not bound or scope is None:
        return False
    end = node.end_lineno or node.lineno
    read = {n.id for n in ast.walk(scope) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.lineno > end}
    return bound <= read


def _bound_names(node: ast.AST | None) -> set[str]:
    targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
    return {t.id for target in targets if target is not None for t in ast.walk(target) if isinstance(t, ast.Name)}


def _functions_spanning(path: str, line: int) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every function definition whose span holds ``line``."""
    tree = _parse(path)
    return [
        node
        for node in (ast.walk(tree) if tree is not None else ())
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (node.end_lineno or 0)
    ]


def _enclosing_function(path: str, line: int) -> ast.AST | None:
    """The innermost function definition spanning ``line``."""
    return max(_functions_spanning(path, line), key=lambda node: node.lineno, default=None)


def inside_with_call(path: str, line: int, method: str) -> bool:
    """Whether ``line`` is in the body of a ``with <something>.<method>():`` block (a forward
    pass under ``tape.stop_recording()``)."""
    tree = _parse(path)
    for node in ast.walk(tree) if tree is not None else ():
        if not isinstance(node, (ast.With, ast.AsyncWith)) or not node.body:
            continue
        if not node.body[0].lineno <= line <= (node.body[-1].end_lineno or 0):
            continue
        if any(isinstance(i.context_expr, ast.Call) and _last_name(i.context_expr.func) == method for i in node.items):
            return True
    return False


def differentiated_here(path: str, line: int) -> bool:
    """Whether the statement on ``line`` binds a name that the file differentiates: the
    first argument of some ``.gradient(...)`` / ``.jacobian(...)`` call (``actor_loss`` of
    a second gradient call on the same persistent tape is used, not left)."""
    return bool(_bound_names(_statements_by_line(path).get(line)) & _differentiated_names(path))


@lru_cache(maxsize=64)
def _differentiated_names(path: str) -> frozenset[str]:
    tree = _parse(path)
    names: set[str] = set()
    for node in ast.walk(tree) if tree is not None else ():
        call = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args
        if call and node.func.attr in ("gradient", "jacobian", "batch_jacobian"):
            names |= {n.id for n in ast.walk(node.args[0]) if isinstance(n, ast.Name)}
    return frozenset(names)


def function_decorator(path: str, line: int, decorator: str) -> Expr | None:
    """The innermost function whose body holds ``line`` and that carries a decorator named
    ``decorator`` (``@tf.function``, ``@function(jit_compile=True)``): the decorator, with
    the function's name as its text."""
    best = None
    for node in _functions_spanning(path, line):
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            if _last_name(target) == decorator and (best is None or node.lineno > best[0].lineno):
                best = (node, dec)
    if best is None:
        return None
    node, dec = best
    return Expr(
        dec.lineno, dec.col_offset + 1, dec.end_lineno or dec.lineno, (dec.end_col_offset or 0) + 1, node.name, dec
    )


def hinted_line(path: str, line: int, hints: tuple[str, ...]) -> int:
    """The line an op really came from, when a graph traceback gives only a line: a
    statement spread over several lines is reported at its first (``loss = tf.reduce_mean(``
    above ``tf.floor(q)``), and autograph's source map puts the ops of the lines after a
    backslash continuation one line early. When the reported line has no call named in
    ``hints`` (the op's own), the first line below it in the same statement that has one,
    else the next line after a continuation."""
    if not hints or _hinted_call(path, line, hints):
        return line
    statement = _statements_by_line(path).get(line)
    if statement is not None:
        for n in range(line + 1, (statement.end_lineno or line) + 1):
            if _hinted_call(path, n, hints):
                return n
    continued = any(source_line(path, n).rstrip().endswith("\\") for n in range(max(1, line - 3), line + 1))
    return line + 1 if continued and _hinted_call(path, line + 1, hints) else line


def _hinted_call(path: str, line: int, hints: tuple[str, ...]) -> bool:
    return any(
        isinstance(n, ast.Call) and n.lineno == line and _last_name(n.func).lower() in hints
        for n in _expressions_by_line(path).get(line, ())
    )


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
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For, ast.AsyncFor)):
            targets = [node.target]  # ``for x, y in dataset:`` binds x and y too
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
        else:
            continue
        names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        if name in names and node.lineno <= before_line and (best is None or node.lineno > best.lineno):
            best = node
    if best is None:
        return None
    value = getattr(best, "value", None) or getattr(best, "iter", None)
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


def unread_attribute_hint(path: str, line: int) -> str | None:
    """For a weight made on ``line`` as ``self.NAME = ...`` in a class whose ``call`` never
    reads ``self.NAME``: a "did you mean" when ``call`` reads a sibling made the same way
    more than once (``self.kernel`` twice where ``self.recurrent_kernel`` belongs)."""
    tree = _parse(path)
    if tree is None:
        return None
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef) or not cls.lineno <= line <= (cls.end_lineno or 0):
            continue
        made = {}  # attribute -> line, for every self.X = ... in a method other than call
        call = None
        for method in cls.body:
            if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if method.name == "call":
                call = method
                continue
            for node in ast.walk(method):
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                    for target in node.targets:
                        if isinstance(target, ast.Attribute) and _is_self(target.value):
                            made[target.attr] = node.lineno
        name = next((a for a, at in made.items() if at == line), None)
        if name is None or call is None:
            return None
        reads: dict[str, list[int]] = {}
        for node in ast.walk(call):
            if isinstance(node, ast.Attribute) and _is_self(node.value) and node.attr in made:
                reads.setdefault(node.attr, []).append(node.lineno)
        if name in reads:
            return None
        twice = [(a, lines) for a, lines in reads.items() if len(lines) > 1]
        if not twice:
            return f"`call()` never reads `self.{name}`"
        other, lines = twice[0]
        where = ", ".join(str(n) for n in sorted(set(lines)))
        return (
            f"`call()` never reads `self.{name}` but reads `self.{other}` {len(lines)} times "
            f"(line{'s' if len(set(lines)) > 1 else ''} {where}): did you mean `self.{name}` in one of them?"
        )
    return None


def _is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"
