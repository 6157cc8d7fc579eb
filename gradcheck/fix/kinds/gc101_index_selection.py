"""GC101 on ``argmax``/``argmin``: compute the loss on values, not on an index.

- Q-learning (the Q-values' name, the class or the function says Q / DQN): select the
  Q-value of the taken action, ``tf.gather(q, actions, batch_dims=1)`` with the user's
  ``actions`` when the step has them, else of the action the argmin/argmax picks
  (``tf.gather(q, tf.math.argmin(q, axis=1), batch_dims=1)``: the index selects, the
  gradient flows to the selected Q-value).
- Otherwise (a position regressed, an index compared): the differentiable soft-argmax,
  ``sum(softmax(q) * [0, 1, ..., n-1])``, the expected index (``softmax(-q)`` for argmin).

Integer indices used to select or look up afterwards (the ``indices`` variant: token ids
fed to an embedding) have no mechanical fix: no patch.
"""

from __future__ import annotations

import re

import libcst as cst

from gradcheck.findings import Finding
from gradcheck.fix.kinds._common import expression, parenthesize, value_name
from gradcheck.fix.ops import Ops, ops_for
from gradcheck.fix.patch import Candidate
from gradcheck.fix.registry import register
from gradcheck.fix.source import Source, Span, arg, bound_names, callee_tail

_ACTIONS = re.compile(r"^(actions?|acts?|taken_actions?|actions?_(batch|taken|t)|(batch|b)_actions?|a_batch)$")
_Q_WORDS = {"q", "qs", "dqn", "ddqn", "qnet", "qnetwork", "qvalue", "qvalues", "qnn"}


@register("GC101")
def propose(source: Source, finding: Finding) -> list[Candidate]:
    calls = source.calls_at(Span.of(finding), ("argmax", "argmin"))
    if not calls:
        return []
    call = calls[0]
    values = arg(call, 0, "input", "x", "a")
    if values is None:
        return []
    ops = ops_for(source, call)
    axis = _axis(source, call)
    if axis is None:
        return []
    is_min = callee_tail(call) == "argmin"
    out: list[Candidate] = []
    actions = _actions_name(source, call)
    if _q_learning(source, call, values.value, actions is not None):
        if actions is not None:
            out.append(_select(source, finding, call, values.value, ops, axis, actions, taken=True))
        out.append(_select(source, finding, call, values.value, ops, axis, None, taken=False))
        out.append(_soft(source, finding, call, values.value, ops, axis, is_min))
    else:
        out.append(_soft(source, finding, call, values.value, ops, axis, is_min))
        out.append(_select(source, finding, call, values.value, ops, axis, None, taken=False))
    return out


def _axis(source: Source, call: cst.Call) -> str | None:
    given = arg(call, 1, "axis", "dimension")
    if given is not None:
        return source.code(given.value).strip()
    from gradcheck.fix.ops import family_of

    # tf.argmax's default axis is 0 (the batch): no per-row index to fix; Keras' backend's is -1
    return "-1" if family_of(source, call) == "k" else None


def _q_learning(source: Source, call: cst.Call, values: cst.BaseExpression, has_actions: bool) -> bool:
    """The enclosing function or class is named for Q-learning; or the values are named
    like Q-values (or computed by a Q-network) and the step has the taken actions."""
    scopes: set[str] = set()
    for up in source.ancestors(call):
        if isinstance(up, (cst.FunctionDef, cst.ClassDef)):
            scopes |= _words(up.name.value)
    if scopes & _Q_WORDS:
        return True
    words: set[str] = set()
    if isinstance(values, cst.Name):
        words |= _words(values.value)
    if isinstance(values, cst.Call):
        words |= _words(source.code(values.func))
    return has_actions and bool(words & _Q_WORDS)


def _words(name: str) -> set[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    return {w.lower() for w in re.split(r"[\s_.\d]+", spaced) if w}


def _actions_name(source: Source, call: cst.Call) -> str | None:
    """A name the step binds to the taken actions before the culprit statement."""
    culprit = source.statement(call)
    culprit_line = source.line_of(culprit)
    function = source.function(call)
    scope = function if function is not None else source.module
    candidates: list[tuple[int, str]] = []
    if function is not None:
        for param in function.params.params:
            if _ACTIONS.match(param.name.value):
                candidates.append((0, param.name.value))
    for stmt in source.walk(scope, (cst.SimpleStatementLine, cst.For, cst.With)):
        line = source.line_of(stmt)
        if line >= culprit_line or source.function(stmt) is not function:
            continue
        for name in bound_names(stmt if not isinstance(stmt, (cst.For, cst.With)) else _header(stmt)):
            if _ACTIONS.match(name):
                candidates.append((line, name))
    if not candidates:
        return None
    return max(candidates)[1]


def _header(stmt: cst.CSTNode) -> cst.CSTNode:
    """A ``for``/``with`` statement without its body (only what its header binds)."""
    return stmt.with_changes(body=cst.IndentedBlock(body=[cst.SimpleStatementLine([cst.Pass()])]))


def _select(
    source: Source,
    finding: Finding,
    call: cst.Call,
    values: cst.BaseExpression,
    ops: Ops,
    axis: str,
    actions: str | None,
    taken: bool,
) -> Candidate:
    picked = "taken" if taken else ("greedy" if callee_tail(call) == "argmax" else "chosen")
    candidate = Candidate(
        finding,
        "gc101-select",
        f"select the Q-value of the {picked} action instead of its index",
    )
    q = value_name(source, candidate, values, "q_values")
    if actions is None:
        index = source.code(call).strip()
        if q != source.code(values).strip():  # the values now have a name: the index reads it too
            index = source.code(call.with_changes(args=[call.args[0].with_changes(value=cst.Name(q)), *call.args[1:]]))
    else:
        index = actions
    candidate.replace(call, expression(ops.take(q, index, axis)))
    return candidate


def _soft(
    source: Source, finding: Finding, call: cst.Call, values: cst.BaseExpression, ops: Ops, axis: str, is_min: bool
) -> Candidate:
    candidate = Candidate(
        finding,
        "gc101-soft-argmax",
        f"use the differentiable soft-{'argmin' if is_min else 'argmax'} (the expected index)",
    )
    q = value_name(source, candidate, values, "scores")
    logits = f"-{parenthesize(q)}" if is_min else q
    soft = ops.reduce_sum(f"{ops.softmax(logits, axis)} * {ops.positions(q, axis)}", axis)
    candidate.replace(call, expression(soft))
    return candidate
