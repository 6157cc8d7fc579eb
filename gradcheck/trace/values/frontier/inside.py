"""A frontier at the call of a ``tf.function``: the op inside it.

Called eagerly, a ``tf.function`` is one op of the eager record (its call); nested in a traced
step, one call op of the step's graph. The ops of its body are in its own ``FuncGraph``, and
when the gradient turns non-finite (or zero) across the call, the culprit is an op of the body
(``tf.sqrt(tf.square(v))`` at an exact 0), whose line is the one to change, not the caller's.
The body is evaluated again on the call's own inputs (the graph imported into a function that
returns every intermediate value), the gradients of the call's outputs are sent back through it
on the host with each op's registered gradient (as a traced step's check does,
``replay.replay_backward``), and the pass (GC202's, GC201's) runs over the body as over a
step."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from gradcheck.trace.diagnose.describe import op_label
from gradcheck.trace.record import _tf
from gradcheck.trace.record import graph as graph_mode
from gradcheck.trace.record.dataflow import TAG_FUNCTION
from gradcheck.trace.values.frontier.analysis import Analysis, Cause
from gradcheck.trace.values.replay import GraphValues, replay_backward

__all__ = ["inside_function"]

#: a body larger than this is not evaluated again (the call's own line stands)
MAX_OPS = 2000


def inside_function(a: Analysis, c: int, t, find_causes) -> Cause | None:
    """The cause ``find_causes`` (a pass: ``nonfinite.causes``) finds inside the body of the
    function that the call op ``c`` runs (called eagerly, or nested in a traced step) for its
    input ``t``, located at the body's line; None when the body cannot be evaluated or explains
    nothing."""
    op = a.flow.ops[c]
    if op.tag != TAG_FUNCTION or t not in op.inputs:
        return None
    graph = a.ctx.function_graph(c)
    if graph is None or len(graph.inputs) != len(op.inputs) or len(graph.outputs) != len(op.outputs):
        return None
    if len(graph.get_operations()) > MAX_OPS:
        return None
    try:
        inner = _Body(a, c, graph)
    except Exception:  # noqa: BLE001 - a body we cannot run again: the call's line stands
        return None
    return inner.cause(c, op.inputs.index(t), find_causes)


class _Body:
    def __init__(self, a: Analysis, c: int, graph) -> None:
        ctx = a.ctx
        op = a.flow.ops[c]
        flow, tensors = graph_mode.build_flow(graph, [(0, 1 << 62)], 1 << 62)
        keys = [graph_mode.key(x) for x in graph.inputs]
        outputs = [graph_mode.key(x) for x in graph.outputs]
        self.ctx = replace(ctx, flow=flow, tensors=tensors, target_keys=outputs)
        self.values = GraphValues(self.ctx)
        fed = [self._eager_input(a, k) for k in op.inputs]
        if any(v is None for v in fed):
            raise ValueError("an input of the call was not kept")
        inner = [x for o in graph.get_operations() for x in o.outputs if not _tf.is_resource_dtype(x.dtype)]
        inner = [x for x in inner if x.dtype != _tf.tf.variant and x.dtype != _tf.tf.string]
        for x, value in zip(inner, _evaluate(graph, fed, inner), strict=True):
            self.values.forward[graph_mode.key(x)] = np.asarray(value)
        for k, outer in zip(outputs, op.outputs, strict=True):
            g = a.grad(outer)
            if g is not None:
                self.values.grads[k] = g
        self.inputs = keys
        self.analysis = Analysis(_Checked(a.checked, self.ctx), self.values)
        self.region = {i for i, inner_op in enumerate(flow.ops) if inner_op.type != "Placeholder"}
        replay_backward(flow, self.region, self.values)

    @staticmethod
    def _eager_input(a: Analysis, k):
        """The value the call was fed at ``k``: a source variable's handle, the value the check
        received (a traced step's), or the eager tensor the recorder kept."""
        for s in a.ctx.sources:
            if s.key == k:
                return _tf.handle_of(s.value) if s.is_variable else s.value
        value = a.value(k)
        if value is not None:
            return _tf.tf.constant(value)
        if not a.ctx.eager:
            return None
        tensor = a.ctx.tensors.get(k)
        if tensor is None:
            tensor = a.ctx.session.recorder.orphans.get(k)
        return tensor

    def cause(self, c: int, position: int, find_causes) -> Cause | None:
        flow = self.ctx.flow
        reach = flow.forward_cone([self.inputs[position]], data=True)
        reached = {k for i in reach for k in flow.ops[i].outputs} | {self.inputs[position]}

        def tensor_mask(k) -> int:
            return 1 if k in reached else 0

        found = [cause for cause, mask in find_causes(self.analysis, self.region, tensor_mask) if cause and mask]
        if not found:
            return None
        cause = found[0]
        location = self.ctx.op_location(cause.blame)
        if location is None:
            return None
        label = op_label(flow.ops[cause.blame].type)
        # named at the call in the step's record (its path, its chain), located inside the body
        return replace(cause, blame=c, frontier=c, location=location, label=label)


class _Checked:
    """The outer check's ``Checked`` seen through the body's context."""

    def __init__(self, checked, ctx) -> None:
        self._checked = checked
        self.ctx = ctx

    def __getattr__(self, name):
        return getattr(self._checked, name)


def _evaluate(graph, fed: list, fetches: list) -> list:
    """The values of ``fetches`` when ``graph`` runs on ``fed`` (its inputs, in order): the graph
    imported into a function of its inputs, pruned to the fetches."""
    tf = _tf.tf
    definition = graph.as_graph_def()

    def imported():
        tf.compat.v1.import_graph_def(definition, name="")

    wrapped = tf.compat.v1.wrap_function(imported, [])
    element = wrapped.graph.as_graph_element
    run = wrapped.prune([element(x.name) for x in graph.inputs], [element(x.name) for x in fetches])
    with _tf.stop_recording():  # no tape of the user's records gradcheck's evaluation
        return [v.numpy() for v in run(*fed)]
