"""One buffer's static check, kept between its edits (the language server's): the tree of
the previous text is reused for the top-level statements an edit did not touch, and a text
seen last time is not checked again.

Exact by construction: the engine is given the same tree ``ast.parse`` gives for the whole
text, and the same text. Top-level statements start at column 0, so the only way text can
join a statement that ends before it is to continue its block (an indented line, ``else:``),
and the only way it can join one that starts after it is to stay open (a bracket, a string,
a backslash, a decorator, a block header): the statement before the edit is parsed again
with it, and a piece that stays open does not parse on its own, which sends the whole text
to ``ast.parse``. Statements after an edit that adds or removes lines are parsed again (their
line numbers changed: walking their trees to shift them costs more than parsing them).
"""

from __future__ import annotations

import ast
import warnings
from bisect import bisect_left, bisect_right

from gradcheck.findings import Finding
from gradcheck.static import _parse, check_text

_FUTURE_SYNTAX = "barry_as_FLUFL"


class Buffer:
    """The static findings of one editor buffer as its text changes."""

    def __init__(self) -> None:
        self._lines: list[str] | None = None  # the last text that parsed, split at "\n"
        self._body: list[ast.stmt] = []
        self._starts: list[int] = []  # first line of each top-level statement (its decorators')
        self._ends: list[int] = []
        self._checked: tuple[str, str, list[Finding] | str] | None = None  # (text, path, result)
        self.reparsed = 0  # lines parsed by the last parse (a measure for the tests and the benchmark)

    def check(self, text: str, path: str) -> list[Finding] | str:
        """``gradcheck.static.check_text(text, path)``: the findings, or why the text cannot be
        read."""
        if self._checked is not None and self._checked[:2] == (text, path):
            found = self._checked[2]
        else:
            found = check_text(text, path, parse=self.parse)
            self._checked = (text, path, found)
        return list(found) if isinstance(found, list) else found

    def parse(self, text: str, path: str) -> ast.Module | str:
        """The tree ``ast.parse(text)`` gives (or the static engine's message when it fails),
        made from the previous one where the edit allows."""
        # "\r" ends a line too, and ``from __future__ import barry_as_FLUFL`` changes how the
        # whole file parses: such texts are parsed whole
        lines = text.split("\n") if "\r" not in text and _FUTURE_SYNTAX not in text else None
        tree = self._splice(lines, path) if lines is not None and self._lines is not None else None
        if tree is None:
            tree = _parse(text, path)
            self.reparsed = text.count("\n") + 1
        if isinstance(tree, ast.Module) and lines is not None:
            self._remember(lines, tree)
        else:
            self._lines = None
        return tree

    def _remember(self, lines: list[str], tree: ast.Module) -> None:
        self._lines, self._body = lines, tree.body
        self._starts = [min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", ()))]) for s in tree.body]
        self._ends = [s.end_lineno or s.lineno for s in tree.body]

    def _splice(self, lines: list[str], path: str) -> ast.Module | None:
        """The new tree from the old statements the edit left alone and the piece around the
        edit parsed again; None when the piece does not parse on its own (the whole text is
        then parsed, for its tree or for the message of its error)."""
        old, starts, ends, body = self._lines, self._starts, self._ends, self._body
        assert old is not None
        same = 0  # lines equal at the start
        limit = min(len(old), len(lines))
        while same < limit and old[same] == lines[same]:
            same += 1
        tail = 0  # lines equal at the end, not overlapping those at the start
        while tail < limit - same and old[-1 - tail] == lines[-1 - tail]:
            tail += 1
        lo, hi = same + 1, len(old) - tail  # the old lines replaced (1-based; hi < lo: lines inserted)
        delta = len(lines) - len(old)
        if not body:
            return None
        # from the last statement that ends before the edit: the edit may continue its block
        first = max(bisect_left(ends, lo) - 1, 0)
        while first > 0 and ends[first - 1] >= starts[first]:  # ``a = 1; b = 2``: one line, one piece
            first -= 1
        if delta:
            last = len(body) - 1  # the line numbers after the edit moved: parse to the end
        else:
            last = max(bisect_right(starts, max(hi, lo)) - 1, first)
            while last + 1 < len(body) and starts[last + 1] <= max(ends[last], hi):
                last += 1
        start = starts[first] if first else 1
        stop = len(old) if last == len(body) - 1 else max(ends[last], hi)  # old line numbers
        end = stop + delta
        # exactly those lines: a backslash on the last line of the file is an error there
        piece = "\n" * (start - 1) + "\n".join(lines[start - 1 : end]) + ("\n" if end < len(lines) else "")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # as ``_parse``: SyntaxWarnings are the compiler's
                middle = ast.parse(piece, filename=path)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return None
        self.reparsed = end - start + 1
        return ast.Module(body=[*body[:first], *middle.body, *body[last + 1 :]], type_ignores=[])


__all__ = ["Buffer"]
