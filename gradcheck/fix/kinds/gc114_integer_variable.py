"""GC114: a variable with an integer dtype among the sources. A counter, a step, an index
is state: it is created ``trainable=False`` so it is not asked for a gradient. A learned
weight is made floating point (``dtype=tf.int32`` -> ``dtype=tf.float32``); the forward
pass casts it as before. The variable's name decides which is tried first; the other is
tried when the first does not verify. Integer *indices* (token ids) as sources have no
mechanical fix."""

from __future__ import annotations

import re

import libcst as cst

from gradcheck.findings import Finding
from gradcheck.fix.kinds._common import append_arg, expression
from gradcheck.fix.patch import Candidate
from gradcheck.fix.registry import register
from gradcheck.fix.source import Source, Span, arg, callee_tail

_STATE = re.compile(r"count|counter|step|iter|index|idx|seen|num_|total|epoch|seed|position", re.I)
_CREATORS = ("add_weight", "add_variable", "Variable")


@register("GC114")
def propose(source: Source, finding: Finding) -> list[Candidate]:
    calls = source.calls_at(Span.of(finding), _CREATORS)
    if not calls:
        return []
    call = calls[0]
    dtype = arg(call, None, "dtype")
    if dtype is None:
        return []
    name = _name(source, call)
    state = Candidate(
        finding, "int-variable-state", f"create `{name}` with `trainable=False`: it is state, not a weight"
    )
    trainable = arg(call, None, "trainable")
    if trainable is not None:
        state.replace(trainable.value, cst.Name("False"))
    else:
        state.edit(call, _add_trainable_false)
    as_float = _float_dtype(source, dtype.value)
    floating = None
    if as_float is not None:
        floating = Candidate(finding, "int-variable-float", f"make `{name}` a floating-point weight")
        floating.replace(dtype.value, expression(as_float))
    ordered = [state, floating] if _STATE.search(name) or floating is None else [floating, state]
    return [c for c in ordered if c is not None]


def _name(source: Source, call: cst.Call) -> str:
    given = arg(call, None, "name")
    if given is None and callee_tail(call) in ("add_weight", "add_variable"):
        first = arg(call, 0)
        if first is not None and isinstance(first.value, cst.SimpleString):
            given = first
    if given is not None and isinstance(given.value, cst.SimpleString):
        return given.value.evaluated_value if isinstance(given.value.evaluated_value, str) else "the variable"
    parent = source.parent(call)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
        return source.code(parent.targets[0].target).strip()
    return "the variable"


def _add_trainable_false(updated: cst.CSTNode, _pass) -> cst.CSTNode:
    assert isinstance(updated, cst.Call)
    new = cst.Arg(
        keyword=cst.Name("trainable"),
        value=cst.Name("False"),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )
    return updated.with_changes(args=append_arg(list(updated.args), new))


def _float_dtype(source: Source, node: cst.BaseExpression) -> str | None:
    text = source.code(node).strip()
    if not re.search(r"u?int(8|16|32|64)?\b", text):
        return None
    return re.sub(r"\bu?int(8|16|32|64)?\b", "float32", text)
