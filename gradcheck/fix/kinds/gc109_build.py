"""GC109, computed once in ``build()`` or ``__init__()``: ``self.kernel = self.mu + self.sigma
* self.eps`` runs before any tape records, so every step uses a constant. The computation
moves to the top of ``call()``, into a local variable that replaces ``self.kernel`` there:

    def call(self, inputs):
        kernel = self.mu + self.sigma * self.eps
        return tf.matmul(inputs, kernel)

Only when the expression reads nothing but ``self``'s attributes and module-level names
(no local of ``build()``), and ``self.kernel`` is read in ``call()`` and nowhere else.
"""

from __future__ import annotations

import libcst as cst

from gradcheck.findings import Finding
from gradcheck.fix.kinds._common import statement
from gradcheck.fix.patch import Candidate
from gradcheck.fix.registry import register
from gradcheck.fix.source import Source, Span, bound_names, names_in


@register("GC109", "build")
@register("GC109")  # the engine may not name the variant: the statement's method tells
def propose(source: Source, finding: Finding) -> list[Candidate]:
    nodes = source.nodes_at(Span.of(finding))
    if not nodes:
        return []
    stmt = source.statement(nodes[0])
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)):
        return []
    assign = stmt.body[0]
    if len(assign.targets) != 1:
        return []
    target = assign.targets[0].target
    if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self"):
        return []
    attribute = target.attr.value
    method = source.function(stmt)
    cls = next((up for up in source.ancestors(stmt) if isinstance(up, cst.ClassDef)), None)
    if method is None or cls is None or method.name.value not in ("build", "__init__"):
        return []
    if source.parent(stmt) is not method.body:
        return []  # inside a loop or a branch of build(): its order matters
    module_names = set().union(*(bound_names(s) for s in source.module.body)) | set(source.aliases)
    free = names_in(assign.value) - {"self"} - _comprehension_names(source, assign.value) - module_names
    if free - set(dir(__builtins__)):
        return []  # it reads locals of build(): they do not exist in call()
    call = next(
        (f for f in cls.body.body if isinstance(f, cst.FunctionDef) and f.name.value == "call"),
        None,
    )
    if call is None or not isinstance(call.body, cst.IndentedBlock) or not call.body.body:
        return []
    reads = [n for n in source.walk(cls, (cst.Attribute,)) if _is_self_attr(n, attribute) and n is not target]
    if not reads or any(not source.contains(call, n) for n in reads):
        return []
    if any(source.parent(n) is not None and isinstance(source.parent(n), cst.AssignTarget) for n in reads):
        return []
    local = source.fresh(attribute.lstrip("_") or "value")
    candidate = Candidate(finding, "build-into-call", f"compute `self.{attribute}` in `call()`, on every forward pass")
    candidate.edit(stmt, lambda _updated, _pass: cst.RemovalSentinel.REMOVE)
    for n in reads:
        candidate.replace(n, cst.Name(local))
    first = call.body.body[0]
    if _is_docstring(first) and len(call.body.body) > 1:
        first = call.body.body[1]
    candidate.insert_before(first, statement(f"{local} = {source.code(assign.value).strip()}"))
    return [candidate]


def _is_self_attr(node: cst.Attribute, name: str) -> bool:
    return isinstance(node.value, cst.Name) and node.value.value == "self" and node.attr.value == name


def _is_docstring(node: cst.CSTNode) -> bool:
    return (
        isinstance(node, cst.SimpleStatementLine)
        and len(node.body) == 1
        and isinstance(node.body[0], cst.Expr)
        and isinstance(node.body[0].value, cst.SimpleString)
    )


def _comprehension_names(source: Source, node: cst.CSTNode) -> set[str]:
    out: set[str] = set()
    for comp in source.walk(node, (cst.CompFor,)):
        out |= names_in(comp.target)
    return out
