"""GC104: ``tf.stop_gradient`` on the only path the variables have to the loss.

When the stopped expression mixes a target with the prediction (``tf.stop_gradient(
reward + gamma * q_next - q)``), the stop moves onto the target-only branch
(``tf.stop_gradient(reward + gamma * q_next) - q``): the target stays a constant and the
prediction gets its gradient. Otherwise the stop is removed (``tf.stop_gradient(t)`` ->
``t``), which is also what a ``Lambda(lambda t: tf.stop_gradient(t))`` "freeze" layer
becomes; layers meant to be frozen are better set ``trainable=False``.
"""

from __future__ import annotations

import re

import libcst as cst

from gradcheck.findings import Finding
from gradcheck.fix.kinds._common import parenthesize, replace_expression
from gradcheck.fix.patch import Candidate
from gradcheck.fix.registry import register
from gradcheck.fix.source import Source, Span, arg, names_in

_TARGET = re.compile(r"target|next|bootstrap|return|reward|discount|gamma|y_true|label|^r$|^rewards?_", re.I)


@register("GC104")
def propose(source: Source, finding: Finding) -> list[Candidate]:
    calls = source.calls_at(Span.of(finding), ("stop_gradient", "prevent_gradient"))
    if not calls:
        return []
    call = calls[0]
    stopped = arg(call, 0, "input", "x")
    if stopped is None:
        return []
    out = []
    value = stopped.value
    sg = source.code(call.func).strip()
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Subtract, cst.Add)):
        left, right = value.left, value.right
        target_left, target_right = _is_target(source, left), _is_target(source, right)
        if target_left != target_right:
            target, other = (left, right) if target_left else (right, left)
            stopped_code = f"{sg}({source.code(target).strip()})"
            other_code = parenthesize(source.code(other).strip())
            op = source.code(value.operator).strip()
            code = f"{stopped_code} {op} {other_code}" if target is left else f"{other_code} {op} {stopped_code}"
            candidate = Candidate(
                finding,
                "stop-gradient-target",
                f"stop the gradient of the target only (`{source.code(target).strip()}`)",
            )
            replace_expression(source, candidate, call, code)
            out.append(candidate)
    candidate = Candidate(finding, "stop-gradient-remove", f"remove `{sg}` from the path the variables need")
    replace_expression(source, candidate, call, source.code(value).strip())
    out.append(candidate)
    return out


def _is_target(source: Source, node: cst.BaseExpression) -> bool:
    return any(_TARGET.search(name) for name in names_in(node)) or bool(_TARGET.search(source.code(node)))
