"""GC115: gradients asked for ``model.variables`` / ``model.weights``, which include
non-trainable state (BatchNormalization's moving statistics).

``tape.gradient(loss, model.variables)`` -> ``tape.gradient(loss, model.trainable_variables)``
(``weights`` -> ``trainable_weights``). The same ``model.variables`` zipped with the
gradients elsewhere in the file (``zip(grads, model.variables)`` for ``apply_gradients`` or a
report) changes with it: otherwise gradients and variables would be paired off by one.
"""

from __future__ import annotations

import libcst as cst

from gradcheck.findings import Finding
from gradcheck.fix.patch import Candidate
from gradcheck.fix.registry import register
from gradcheck.fix.source import Source, Span, arg, callee_tail

_TRAINABLE = {"variables": "trainable_variables", "weights": "trainable_weights"}


@register("GC115")
def propose(source: Source, finding: Finding) -> list[Candidate]:
    calls = source.calls_at(Span.of(finding), ("gradient",))
    if not calls:
        return []
    sources = arg(calls[0], 1, "sources")
    if sources is None:
        return []
    attributes = [a for a in _attributes(sources.value) if a.attr.value in _TRAINABLE]
    if not attributes:
        return []
    candidate = Candidate(finding, "trainable-variables", "ask for the gradients of the trainable variables only")
    owners = set()
    for attribute in attributes:
        owners.add((source.code(attribute.value).strip(), attribute.attr.value))
        _rename(candidate, attribute)
    # the same list zipped with the gradients elsewhere
    for node in source.positions:
        if isinstance(node, cst.Call) and callee_tail(node) == "zip" and isinstance(node.func, cst.Name):
            for a in node.args:
                value = a.value
                if (
                    isinstance(value, cst.Attribute)
                    and (source.code(value.value).strip(), value.attr.value) in owners
                    and value not in attributes
                ):
                    _rename(candidate, value)
    return [candidate]


def _attributes(node: cst.BaseExpression) -> list[cst.Attribute]:
    if isinstance(node, cst.Attribute):
        return [node]
    if isinstance(node, cst.BinaryOperation):
        return _attributes(node.left) + _attributes(node.right)
    if isinstance(node, (cst.List, cst.Tuple)):
        return [a for e in node.elements for a in _attributes(e.value)]
    return []


def _rename(candidate: Candidate, attribute: cst.Attribute) -> None:
    candidate.edit(
        attribute.attr,
        lambda updated, _pass, new=_TRAINABLE[attribute.attr.value]: updated.with_changes(value=new),
    )
