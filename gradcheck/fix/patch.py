"""What a patch kind proposes, and how proposals become new source and unified diffs.

A proposal (``Candidate``) is a list of edits keyed by the *original* libcst nodes they
replace: "this call becomes that expression", "this block gets these statements". All the
edits of a file are applied in one pass over the original tree (``apply``), so several
patches combine without re-locating anything, and libcst prints every untouched node
exactly as it was written.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from gradcheck.fix.source import Source
from gradcheck.output.diffs import replacements  # noqa: F401  (part of this module's API)

if TYPE_CHECKING:
    from gradcheck.findings import Finding

#: An edit: (the updated node, its children already edited; the pass) -> its replacement.
Rewrite = Callable[[cst.CSTNode, "Pass"], "cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel"]


_ATOMIC = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float, cst.SimpleString)


@dataclass
class Candidate:
    """One proposed patch for one finding."""

    finding: Finding
    kind: str  # the patch kind, e.g. "gc101-gather"
    title: str  # what it does, in a few words ("select the Q-value with tf.gather")
    edits: list[tuple[cst.CSTNode, Rewrite]] = field(default_factory=list)
    #: statements to add before / after an original statement: id -> (statement, new ones)
    before: dict[int, tuple[cst.CSTNode, list[cst.BaseStatement]]] = field(default_factory=dict)
    after: dict[int, tuple[cst.CSTNode, list[cst.BaseStatement]]] = field(default_factory=dict)

    def edit(self, node: cst.CSTNode, rewrite: Rewrite) -> Candidate:
        self.edits.append((node, rewrite))
        return self

    def replace(self, node: cst.CSTNode, new: cst.CSTNode) -> Candidate:
        """Replace ``node`` by ``new``, keeping the parentheses written around ``node``
        unless ``new`` is atomic (a name, a call, a subscript, a literal)."""

        def rewrite(updated: cst.CSTNode, _pass: Pass) -> cst.CSTNode:
            if (
                isinstance(updated, cst.BaseExpression)
                and isinstance(new, cst.BaseExpression)
                and updated.lpar
                and not new.lpar
                and not isinstance(new, _ATOMIC)
            ):
                return new.with_changes(lpar=updated.lpar, rpar=updated.rpar)
            return new

        return self.edit(node, rewrite)

    def insert_before(self, statement: cst.CSTNode, *new: cst.BaseStatement) -> Candidate:
        self.before.setdefault(id(statement), (statement, []))[1].extend(new)
        return self

    def insert_after(self, statement: cst.CSTNode, *new: cst.BaseStatement) -> Candidate:
        self.after.setdefault(id(statement), (statement, []))[1].extend(new)
        return self

    @property
    def empty(self) -> bool:
        return not (self.edits or self.before or self.after)


class Pass(cst.CSTTransformer):
    """One pass over the original tree applying every edit of the chosen candidates.
    ``updated(original)`` is what an already visited original node became."""

    def __init__(self, candidates: Iterable[Candidate]) -> None:
        super().__init__()
        self.edits: dict[int, list[Rewrite]] = {}
        self.nodes: dict[int, cst.CSTNode] = {}
        self.before: dict[int, list[cst.BaseStatement]] = {}
        self.after: dict[int, list[cst.BaseStatement]] = {}
        self._updated: dict[int, object] = {}
        for candidate in candidates:
            for node, rewrite in candidate.edits:
                self.edits.setdefault(id(node), []).append(rewrite)
                self.nodes[id(node)] = node
            for key, (node, stmts) in candidate.before.items():
                self.before.setdefault(key, []).extend(stmts)
                self.nodes[key] = node
            for key, (node, stmts) in candidate.after.items():
                self.after.setdefault(key, []).extend(stmts)
                self.nodes[key] = node

    def updated(self, original: cst.CSTNode) -> list[cst.CSTNode]:
        """The nodes ``original`` became (none if removed, several if flattened)."""
        result = self._updated.get(id(original), original)
        if isinstance(result, cst.RemovalSentinel):
            return []
        if isinstance(result, cst.FlattenSentinel):
            return list(result.nodes)
        return [result]

    def on_leave(self, original_node, updated_node):
        key = id(original_node)
        if self.nodes.get(key) is not original_node:
            return updated_node
        result = updated_node
        for rewrite in self.edits.get(key, ()):
            if not isinstance(result, cst.CSTNode):
                break  # removed, or flattened into several: nothing left to edit
            result = rewrite(result, self)
        before, after = self.before.get(key, []), self.after.get(key, [])
        if before or after:
            middle = (
                []
                if isinstance(result, cst.RemovalSentinel)
                else (list(result.nodes) if isinstance(result, cst.FlattenSentinel) else [result])
            )
            result = cst.FlattenSentinel([*before, *middle, *after])
        self._updated[key] = result
        return result


def apply(source: Source, candidates: Iterable[Candidate]) -> str:
    """The source with every candidate's edits applied (in order, where several touch one node)."""
    chosen = [c for c in candidates if not c.empty]
    if not chosen:
        return source.text
    return source.module.visit(Pass(chosen)).code


def unified_diff(old: str, new: str, path: str) -> str:
    """``git diff`` style: ``a/PATH``/``b/PATH`` headers (``git apply``, ``patch -p1``)."""
    shown = path.replace("\\", "/")
    while shown.startswith("./"):
        shown = shown[2:]
    prefix_a, prefix_b = ("a/", "b/") if not shown.startswith("/") else ("a", "b")
    lines = difflib.unified_diff(
        _lines(old), _lines(new), fromfile=f"{prefix_a}{shown}", tofile=f"{prefix_b}{shown}", n=3
    )
    out = []
    for line in lines:
        if line.endswith("\n"):
            out.append(line)
        else:  # the last line of a file without a final newline
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def line_map(old: str, new: str) -> dict[int, int]:
    """Old line number -> new line number (1-based) for every line the edit kept; a line
    inside a changed block maps to the new line with the same text, when there is one."""
    a, b = old.splitlines(), new.splitlines()
    out: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                out[i1 + k + 1] = j1 + k + 1
        elif tag == "replace":
            pool = {}
            for j in range(j1, j2):
                pool.setdefault(b[j].strip(), []).append(j)
            for i in range(i1, i2):
                hits = pool.get(a[i].strip())
                if hits and a[i].strip():
                    out[i + 1] = hits.pop(0) + 1
    # a block moved (deleted here, inserted there): follow each line by its text
    moved_from = [i for tag, i1, i2, _, _ in matcher.get_opcodes() if tag == "delete" for i in range(i1, i2)]
    if moved_from:
        inserted = [
            j for tag, _, _, j1, j2 in matcher.get_opcodes() if tag in ("insert", "replace") for j in range(j1, j2)
        ]
        pool: dict[str, list[int]] = {}
        for j in inserted:
            pool.setdefault(b[j].strip(), []).append(j)
        for i in moved_from:
            hits = pool.get(a[i].strip())
            if hits and a[i].strip():
                out[i + 1] = hits.pop(0) + 1
    return out
