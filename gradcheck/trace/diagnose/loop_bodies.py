"""Inside a traced loop: the data flow of a ``tf.function`` holds a ``tf.while_loop`` as one
op (under a tape, inside a function TensorFlow wraps it in), so what its body does is read
from the body's own graph here. A computation the body makes with the model's weights and
then drops (``ta.write(t, y)`` without ``ta =``, ``y = model(h)`` never carried on) is the
dead end of the values made from the sources, and its line is the one to change, not the
loop's."""

from __future__ import annotations

from gradcheck.rules import call_hints
from gradcheck.trace.diagnose.context import Context
from gradcheck.trace.record import _tf, frames
from gradcheck.trace.record.frames import Location

__all__ = ["dropped_in_loop"]

#: ops of a loop body that leave no value: a dead end is a computation, not these
_NO_VALUE = frozenset({"Const", "NoOp", "Identity", "Placeholder", "ReadVariableOp", "Shape", "Size", "Rank"})
_WHILE = ("While", "StatelessWhile")
_READS = ("ReadVariableOp", "ResourceGather")


def dropped_in_loop(ctx: Context, graph_op) -> Location | None:
    """Where the body of the loop ``graph_op`` runs (or of a loop in the function it calls)
    drops a value made with a variable it reads: the latest such op with a user line."""
    if ctx.eager or graph_op is None or isinstance(graph_op, tuple):
        return None
    for body in _loop_bodies(graph_op):
        for op in reversed(_dropped(body)):
            found = frames.stack_frames(op.traceback)
            if found:
                return ctx.frame_location(found[0], call_hints(op.type))
    return None


def _loop_bodies(op) -> list:
    if op.type in _WHILE:
        body = getattr(op, "_body_graph", None)
        return [body] if body is not None else []
    if not op.type.endswith("PartitionedCall"):
        return []
    try:
        graph = _tf.function_body(op.graph, op.get_attr("f").name)
    except (AttributeError, ValueError):
        return []
    if graph is None:
        return []
    return [body for inner in graph.get_operations() if inner.type in _WHILE for body in _loop_bodies(inner)]


def _dropped(body) -> list:
    """The body's ops, in creation order, made with a variable the body reads (a layer's
    weights), that none of its outputs depends on (bookkeeping and side effects aside)."""
    kept: set = set()
    stack = [t.op for t in body.outputs]
    while stack:
        op = stack.pop()
        if op in kept:
            continue
        kept.add(op)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    inputs = {t.op for t in body.inputs}
    weighted: set = set()
    dead = []
    for op in body.get_operations():  # creation order: an op's inputs come before it
        if op.type in _READS and any(t.op in inputs for t in op.inputs):
            weighted.add(op)
            continue
        if not any(t.op in weighted for t in op.inputs):
            continue
        weighted.add(op)
        if op not in kept and op.type not in _NO_VALUE and not op._is_stateful:
            dead.append(op)
    return dead
