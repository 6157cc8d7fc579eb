"""GC201 at a loop or a traced function (``tf.while_loop``, ``tf.cond``, a TensorArray, a
nested ``tf.function``): its gradient is all zero because inside it the value that reaches
the loss does not depend on this input; in a traced function a cut gives zeros, not None."""

from __future__ import annotations

from gradcheck.trace.diagnose.describe import op_label
from gradcheck.trace.diagnose.loop_bodies import dropped_in_loop
from gradcheck.trace.record import _tf
from gradcheck.trace.record.dataflow import TAG_FUNCTION
from gradcheck.trace.values.frontier.analysis import Analysis, Cause, union
from gradcheck.trace.values.frontier.ops import LIST_OPS_PREFIX, LOOPS


def loop(a: Analysis, c: int, t) -> Cause | None:
    op = a.flow.ops[c]
    dropped = _dropped_cause(a, c)
    if dropped is not None:
        return dropped
    inner = _inner_cut(op.site)
    what = "tf.while_loop" if op.type in ("While", "StatelessWhile") else op_label(op.type) or op.type
    if op.type.startswith(LIST_OPS_PREFIX):
        what = "TensorArray"
    reason = f"the gradient through this {what} is all zero: inside it, the value that reaches the loss does not depend on this input"
    notes = []
    if inner is not None:
        notes.append(f"inside the loop body, {inner} cuts the path; in a traced function that gives zeros, not None")
    return Cause("GC201", "loop", c, c, reason, notes)


def _dropped_cause(a: Analysis, c: int) -> Cause | None:
    """The body of the loop ``c`` drops what it made from the sources: the dead end of GC108,
    hidden behind zeros as a cut is (``hidden_cuts``)."""
    dropped = dropped_in_loop(a.ctx, a.flow.ops[c].site)
    if dropped is None:
        return None
    note = (
        "TensorFlow gives these variables zeros, not None: the loop's gradient is computed for all its inputs at once"
    )
    return Cause("GC108", "loop", c, c, "", [note], location=dropped)


def dropped_loops(a: Analysis, region: set[int], tensor_mask, mask: int) -> list[tuple[Cause, int]]:
    """For zero sources no frontier and no cut explains (``mask``): a traced loop on their
    paths whose body drops a value made with the weights it reads (``ta.write(t, y)`` without
    ``ta =``: the loop's outputs then do not depend on the body's work, and no frontier is
    seen at the loop because its inputs are the variables' handles)."""
    out = []
    for c in sorted(region):
        op = a.flow.ops[c]
        if not mask or not (op.type in LOOPS or op.tag == TAG_FUNCTION):
            continue
        behind = mask & union(tensor_mask(k) for k in op.outputs)
        cause = _dropped_cause(a, c) if behind else None
        if cause is not None:
            out.append((cause, behind))
            mask &= ~behind
    return out


def _inner_cut(graph_op) -> str | None:
    """Inside a while loop's body (a traced function): an op that cuts the gradient."""
    if graph_op is None or isinstance(graph_op, tuple):
        return None
    from gradcheck.rules import classify_op

    for attr in ("body", "f", "then_branch", "else_branch"):
        try:
            function = graph_op.get_attr(attr)
        except (ValueError, AttributeError):
            continue
        name = getattr(function, "name", None)
        if not name:
            continue
        graph = _tf.function_body(graph_op.graph, name)
        if graph is None:
            continue
        for inner in graph.get_operations():
            if inner.type in ("StopGradient", "PreventGradient") or classify_op(inner.type):
                return f"{op_label(inner.type)}"
    return None
