"""GC202: a gradient that is NaN or Inf while the loss is finite, at an op whose derivative
blows up at the batch's values. The op's *input* is kept where its derivative is finite:

- ``tf.norm(d, axis=1)`` -> ``tf.sqrt(tf.reduce_sum(tf.square(d), axis=1) + 1e-12)``;
- ``tf.sqrt(x)`` -> ``tf.sqrt(x + 1e-12)``;
- ``tf.math.log(p)`` -> ``tf.math.log(p + 1e-7)``;
- ``a / b``, ``tf.math.divide(a, b)`` -> ``tf.math.divide_no_nan(a, b)``;
- an op inside ``tf.where(cond, op(x), other)`` that only guards the forward pass: the
  double ``tf.where``, ``op(tf.where(cond, x, tf.ones_like(x)))``, so the unused branch never
  sees the dangerous value (a division becomes ``divide_no_nan``).

Overflowing ``exp``, ``pow``, ``acos`` and values that are already inf in the forward pass
have no mechanical fix here.
"""

from __future__ import annotations

import libcst as cst

from gradcheck.findings import Finding
from gradcheck.fix.kinds._common import parenthesize, replace_expression
from gradcheck.fix.patch import Candidate
from gradcheck.fix.registry import register
from gradcheck.fix.source import Source, Span, arg, callee_tail

_EPS = {"sqrt": "1e-12", "log": "1e-7"}


@register("GC202", "*")
def propose(source: Source, finding: Finding) -> list[Candidate]:
    tf = source.tf
    if tf is None:
        return []
    variant = finding.fields.get("variant") or ""
    nodes = [n for n in source.nodes_at(Span.of(finding)) if isinstance(n, (cst.Call, cst.BinaryOperation))]
    node = next((n for n in nodes if _kind(n) is not None), None)
    if node is None:
        return []
    kind = _kind(node)
    guard = _guarding_where(source, node)
    if variant == "where" or guard is not None:
        return _double_where(source, finding, node, kind, guard, tf)
    if kind == "norm":
        return _norm(source, finding, node, tf)
    if kind == "div":
        return _divide_no_nan(source, finding, node, tf)
    x = arg(node, 0, "x")
    if x is None:
        return []
    candidate = Candidate(finding, "epsilon", f"keep the input of `{_callee(source, node)}` away from 0")
    value = source.code(x.value).strip()
    candidate.replace(x.value, cst.parse_expression(f"{parenthesize(value)} + {_EPS[kind]}"))
    return [candidate]


def _kind(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.BinaryOperation):
        return "div" if isinstance(node.operator, cst.Divide) else None
    if not isinstance(node, cst.Call):
        return None
    tail = callee_tail(node)
    if tail in ("sqrt",):
        return "sqrt"
    if tail in ("log",):
        return "log"
    if tail in ("norm", "euclidean_norm"):
        return "norm"
    if tail in ("divide", "truediv", "div", "realdiv"):
        return "div"
    return None


def _callee(source: Source, node: cst.CSTNode) -> str:
    return source.code(node.func).strip() if isinstance(node, cst.Call) else "/"


def _norm(source: Source, finding: Finding, call: cst.Call, tf: str) -> list[Candidate]:
    x = arg(call, 0, "tensor", "x")
    order = arg(call, 1, "ord")
    if x is None or (order is not None and source.code(order.value).strip() not in ("2", "'euclidean'", '"euclidean"')):
        return []
    if any(
        a.keyword is not None and a.keyword.value not in ("tensor", "x", "ord", "axis", "keepdims") for a in call.args
    ):
        return []
    axis, keep = arg(call, 2, "axis"), arg(call, 3, "keepdims")
    parts = [f"{tf}.square({source.code(x.value).strip()})"]
    if axis is not None:
        parts.append(f"axis={source.code(axis.value).strip()}")
    if keep is not None:
        parts.append(f"keepdims={source.code(keep.value).strip()}")
    candidate = Candidate(finding, "epsilon-norm", "compute the norm with an epsilon inside the square root")
    replace_expression(source, candidate, call, f"{tf}.sqrt({tf}.reduce_sum({', '.join(parts)}) + 1e-12)")
    return [candidate]


def _operands(source: Source, node: cst.CSTNode) -> tuple[str, str] | None:
    if isinstance(node, cst.BinaryOperation):
        return source.code(node.left).strip(), source.code(node.right).strip()
    a, b = arg(node, 0, "x"), arg(node, 1, "y")
    if a is None or b is None:
        return None
    return source.code(a.value).strip(), source.code(b.value).strip()


def _divide_no_nan(source: Source, finding: Finding, node: cst.CSTNode, tf: str) -> list[Candidate]:
    operands = _operands(source, node)
    if operands is None:
        return []
    candidate = Candidate(
        finding, "divide-no-nan", "divide with `tf.math.divide_no_nan` (0 where the denominator is 0)"
    )
    replace_expression(source, candidate, node, f"{tf}.math.divide_no_nan({operands[0]}, {operands[1]})")
    return [candidate]


def _guarding_where(source: Source, node: cst.CSTNode) -> tuple[cst.Call, bool] | None:
    """``tf.where(cond, ...<node>..., other)`` around the culprit, through arithmetic
    (``self.alpha * tf.math.log(x)``); and whether the culprit is in the branch taken
    where ``cond`` holds."""
    parent = source.parent(node)
    while isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)):
        parent = source.parent(parent)
    if not isinstance(parent, cst.Arg):
        return None
    call = source.parent(parent)
    if (
        isinstance(call, cst.Call)
        and callee_tail(call) == "where"
        and len(call.args) == 3
        and parent is not call.args[0]
    ):
        return call, parent is call.args[1]
    return None


def _double_where(
    source: Source,
    finding: Finding,
    node: cst.CSTNode,
    kind: str | None,
    guard: tuple[cst.Call, bool] | None,
    tf: str,
) -> list[Candidate]:
    if guard is None or kind is None:
        return []
    if kind == "div":
        return _divide_no_nan(source, finding, node, tf)
    x = arg(node, 0, "x", "tensor")
    if x is None or not isinstance(node, cst.Call):
        return []
    where, taken = guard
    condition = source.code(where.args[0].value).strip()
    value = source.code(x.value).strip()
    safe = (
        f"{tf}.where({condition}, {value}, {tf}.ones_like({value}))"
        if taken
        else f"{tf}.where({condition}, {tf}.ones_like({value}), {value})"
    )
    candidate = Candidate(
        finding, "double-where", f"the double `tf.where`: `{_callee(source, node)}` never sees the values it discards"
    )
    candidate.replace(x.value, cst.parse_expression(safe))
    return [candidate]
