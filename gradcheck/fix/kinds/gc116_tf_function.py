"""GC116: ``@tf.function`` on a Keras model's ``call`` (or a layer's): the nested function
captured the variables by value, so the tape never sees them read. The decorator is
removed; the outer training step (``model.fit``, or the user's ``@tf.function`` step)
still traces the model."""

from __future__ import annotations

import libcst as cst

from gradcheck.findings import Finding
from gradcheck.fix.patch import Candidate
from gradcheck.fix.registry import register
from gradcheck.fix.source import Source, Span


@register("GC116")
def propose(source: Source, finding: Finding) -> list[Candidate]:
    span = Span.of(finding)
    for node in source.nodes_at(span, (cst.Decorator, cst.BaseExpression)):
        decorator = (
            node
            if isinstance(node, cst.Decorator)
            else next((up for up in source.ancestors(node) if isinstance(up, cst.Decorator)), None)
        )
        if decorator is None:
            continue
        text = source.code(decorator.decorator).strip()
        if "function" not in text:
            return []
        function = source.parent(decorator)
        if not isinstance(function, cst.FunctionDef):
            return []
        candidate = Candidate(finding, "remove-tf-function", f"remove `@{text}` from `{function.name.value}`")
        candidate.edit(decorator, lambda _updated, _pass: cst.RemovalSentinel.REMOVE)
        return [candidate]
    return []
