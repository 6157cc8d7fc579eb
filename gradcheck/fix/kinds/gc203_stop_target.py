"""GC203: a bootstrap / distillation target or an advantage built from the trained network
inside the tape, with the gradient flowing through it: ``tf.stop_gradient`` on the
target-only branch.

- a TD or distillation target: the expression that builds it is wrapped,
  ``target = tf.stop_gradient(rewards + gamma * tf.reduce_max(q_net(next_states), axis=1))``;
  in a TD error ``reward + gamma * v_next - v``, only the target side is:
  ``tf.stop_gradient(reward + gamma * v_next) - v``;
- an advantage weighing a log-probability: the factor beside the log-probability is
  wrapped, ``-log_p * tf.stop_gradient(ret - v)``, so the policy loss stops training the
  critic (its own loss still does).

This is also the follow-up a GC109 patch needs when moving the forward pass into the tape
lets the target's gradient through (an actor-critic episode collected before the tape).
"""

from __future__ import annotations

import re

import libcst as cst

from gradcheck.findings import Finding
from gradcheck.fix.kinds._common import replace_expression
from gradcheck.fix.ops import ops_for
from gradcheck.fix.patch import Candidate
from gradcheck.fix.registry import register
from gradcheck.fix.source import Source, Span, callee_tail, names_in

_TARGET = re.compile(r"reward|^r$|^rew|return|target|gamma|discount|next|done|^lam", re.I)


@register("GC203", "*")
def propose(source: Source, finding: Finding) -> list[Candidate]:
    nodes = [n for n in source.nodes_at(Span.of(finding)) if isinstance(n, cst.BaseExpression)]
    if not nodes:
        return []
    node = nodes[0]
    if _is_stopped(node):
        return []
    if isinstance(node, cst.Tuple):
        return []  # several values assigned at once: which one is the target is not said
    ops = ops_for(source)
    target = node
    if finding.fields.get("variant") == "td":
        target = _target_side(source, node) or node
    if finding.fields.get("variant") == "advantage" or (isinstance(node, cst.Call) and not _is_math(node)):
        factor = _factor_beside_log(source, node)
        if factor is not None:
            target = factor
        elif _has_log(source, node) or isinstance(node, cst.Call):
            return []
    text = source.code(target).strip()
    if target.lpar:
        text = source.code(target.with_changes(lpar=[], rpar=[])).strip()
    candidate = Candidate(finding, "stop-gradient-target", f"stop the gradient of `{_short(text)}`")
    replace_expression(source, candidate, target, ops.stop_gradient(text))
    return [candidate]


def _target_side(source: Source, node: cst.BaseExpression) -> cst.BaseExpression | None:
    """In a TD error ``reward + gamma * v_next - v``, the target side ``reward + gamma *
    v_next``: the prediction ``v`` keeps its gradient (its loss is the squared TD error)."""
    if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Subtract)):
        return None
    left, right = _is_target(source, node.left), _is_target(source, node.right)
    if left and not right:
        return node.left
    if right and not left:
        return node.right
    return None


def _is_target(source: Source, node: cst.CSTNode) -> bool:
    return any(_TARGET.search(name) for name in names_in(node))


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def _is_stopped(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and callee_tail(node) == "stop_gradient"


def _is_math(call: cst.Call) -> bool:
    """A call that computes a value (``tf.reduce_max(...)``), not a method that stores one
    (``terms.append(...)``)."""
    return callee_tail(call) not in ("append", "extend", "insert", "add")


def _has_log(source: Source, node: cst.CSTNode) -> bool:
    if any("log" in name.lower() for name in names_in(node)):
        return True
    return any("log" in callee_tail(c) for c in source.walk(node, (cst.Call,)))


def _factor_beside_log(source: Source, node: cst.CSTNode) -> cst.BaseExpression | None:
    """In ``-log_p * (ret - v)``, the ``(ret - v)``."""
    for product in source.walk(node, (cst.BinaryOperation,)):
        if not isinstance(product.operator, cst.Multiply):
            continue
        left, right = _has_log(source, product.left), _has_log(source, product.right)
        if left and not right:
            return product.right
        if right and not left:
            return product.left
    return None
