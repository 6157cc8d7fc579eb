"""GC102 (round, floor, ceil) and GC103 (a cast to int/bool, a comparison) on the way to
the loss: a straight-through estimator.

``v + stop_gradient(hard(v) - v)`` has the value of ``hard(v)`` in the forward pass and
the gradient of ``v`` in the backward pass. ``hard(v)`` is the user's own expression, kept
as written: ``tf.round(y)``, ``tf.cast(tf.cast(score, tf.int32), tf.float32)``, or
``ops.cast(noise <= p, "float32")``. For a comparison or cast whose result is not cast
back to a float in the same expression, the estimator casts it to ``v``'s dtype. When
``v`` is not a plain name it is assigned to a new variable first, so it is computed once
(``tf.floor(x + tf.random.uniform(...))`` must not draw its noise twice).

A float cast to integer ids for a lookup (the ``indices`` variant) has no such fix.
"""

from __future__ import annotations

import libcst as cst

from gradcheck.findings import Finding
from gradcheck.fix.kinds._common import parenthesize, replace_expression, value_name
from gradcheck.fix.ops import ops_for
from gradcheck.fix.patch import Candidate
from gradcheck.fix.registry import register
from gradcheck.fix.source import Source, Span, arg, callee_tail, names_in

_ROUNDING = {"round": "unrounded", "floor": "unfloored", "ceil": "unceiled", "rint": "unrounded"}
_COMPARISONS = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}
_FLOAT_WORDS = ("float", "half", "bfloat", "double", ".dtype")
_CONSTANT_CALLS = {
    "uniform",
    "normal",
    "random_uniform",
    "random_normal",
    "zeros",
    "ones",
    "zeros_like",
    "ones_like",
    "constant",
    "fill",
    "shape",
}
_PREDICTION_WORDS = ("pred", "logit", "output", "out", "prob", "score", "y_hat", "yhat", "q")


@register("GC102")
def rounding(source: Source, finding: Finding) -> list[Candidate]:
    calls = source.calls_at(Span.of(finding), tuple(_ROUNDING))
    if not calls:
        return []
    call = calls[0]
    first = arg(call, 0, "x", "input")
    if first is None:
        return []
    ops = ops_for(source, call)
    candidate = Candidate(finding, "ste-rounding", f"a straight-through estimator around `{_callee(source, call)}`")
    v = value_name(source, candidate, first.value, _ROUNDING[callee_tail(call)])
    hard = _with_value(source, call, first.value, v)
    replace_expression(source, candidate, call, _ste(ops, v, hard))
    return [candidate]


@register("GC103")
def comparison(source: Source, finding: Finding) -> list[Candidate]:
    span = Span.of(finding)
    culprit = next(
        (n for n in source.nodes_at(span, (cst.Call, cst.Comparison)) if _hard(source, n) is not None),
        None,
    )
    if culprit is None:
        return []
    # the float the hard values come back as: the culprit itself, or a float cast around it
    outer = culprit
    parent_call = _enclosing_call(source, culprit)
    if not _is_float_cast(source, culprit) and parent_call is not None and _is_float_cast(source, parent_call):
        outer = parent_call
    if _is_int_cast(source, culprit) and not _is_float_cast(source, outer):
        return []  # integers kept as integers: nothing to estimate through
    hard = _hard(source, culprit)
    assert hard is not None
    ops = ops_for(source, culprit if isinstance(culprit, cst.Call) else None)
    out = []
    for operand in _live_operands(source, hard):
        candidate = Candidate(
            finding,
            "ste-threshold",
            f"a straight-through estimator: the hard value forward, the gradient of `{source.code(operand).strip()}` backward",
        )
        v = value_name(source, candidate, operand, "soft_value")
        hard_code = _with_value(source, outer, operand, v)
        if not _is_float_cast(source, outer):
            hard_code = ops.cast(hard_code, f"{v}.dtype")
        replace_expression(source, candidate, outer, _ste(ops, v, hard_code))
        out.append(candidate)
    return out


def _ste(ops, v: str, hard: str) -> str:
    return f"{parenthesize(v)} + {ops.stop_gradient(f'{hard} - {parenthesize(v)}')}"


def _callee(source: Source, call: cst.Call) -> str:
    return source.code(call.func).strip()


def _with_value(source: Source, outer: cst.CSTNode, inner: cst.BaseExpression, name: str) -> str:
    """The code of ``outer`` with ``inner`` written as ``name``."""
    if source.code(inner).strip() == name:
        return source.code(outer).strip()

    class _Swap(cst.CSTTransformer):
        def on_leave(self, original_node, updated_node):
            if original_node is inner:
                return cst.Name(name)
            return updated_node

    return source.module.code_for_node(outer.visit(_Swap())).strip()


def _hard(source: Source, node: cst.CSTNode) -> cst.CSTNode | None:
    """The node whose operands lose the gradient: a comparison, a ``tf.equal``-like call, or
    a cast to an integer type; inside a float cast, its argument."""
    if isinstance(node, cst.Comparison):
        return node
    if not isinstance(node, cst.Call):
        return None
    tail = callee_tail(node)
    if tail in _COMPARISONS:
        return node
    if tail == "cast" and _is_int_cast(source, node):
        return node
    if tail == "cast" and _is_float_cast(source, node):
        inner = arg(node, 0, "x")
        if inner is not None:
            return _hard(source, inner.value)
    return None


def _is_float_cast(source: Source, node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.Call) or callee_tail(node) != "cast":
        return False
    dtype = arg(node, 1, "dtype")
    return dtype is not None and any(w in source.code(dtype.value) for w in _FLOAT_WORDS)


def _is_int_cast(source: Source, node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.Call) or callee_tail(node) != "cast":
        return False
    dtype = arg(node, 1, "dtype")
    return dtype is not None and any(w in source.code(dtype.value) for w in ("int", "bool"))


def _enclosing_call(source: Source, node: cst.CSTNode) -> cst.Call | None:
    parent = source.parent(node)
    if isinstance(parent, cst.Arg):
        call = source.parent(parent)
        if isinstance(call, cst.Call) and call.args and call.args[0] is parent:
            return call
    return None


def _live_operands(source: Source, hard: cst.CSTNode) -> list[cst.BaseExpression]:
    """The operands that can carry a gradient, likeliest first: not literals, not calls
    that make constants or random draws; a prediction's name before others."""
    if isinstance(hard, cst.Comparison):
        operands = [hard.left] + [c.comparator for c in hard.comparisons]
    elif isinstance(hard, cst.Call) and callee_tail(hard) == "cast":
        first = arg(hard, 0, "x")
        operands = [first.value] if first is not None else []
    else:
        operands = [a.value for a in hard.args if a.keyword is None][:2]
    live = [o for o in operands if not _constant(o)]

    def rank(o: cst.BaseExpression) -> int:
        names = " ".join(names_in(o)).lower() + " " + source.code(o).lower()
        return 0 if any(w in names for w in _PREDICTION_WORDS) else 1

    return sorted(live, key=rank)


def _constant(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(node, cst.UnaryOperation):
        return _constant(node.expression)
    if isinstance(node, cst.Call):
        return callee_tail(node) in _CONSTANT_CALLS
    return False
