"""Graph mode (``tf.function``, ``model.fit``): the traced ``FuncGraph`` is the record.

When ``tape.gradient`` runs during tracing, the target is a symbolic tensor and every op
that produced it is in the graph, with ``op.traceback`` pointing at the user's code.
Captured variables are placeholders fed by the variable's handle; ``captures`` maps one
to the other, through every enclosing graph. An op was recorded by the tape when it was
created between the tape's push and pop, which op ids tell.
"""

from __future__ import annotations

from gradcheck.trace.record import _tf
from gradcheck.trace.record.dataflow import (
    CUSTOM_GRADIENT_RESULTS,
    TAG_ASSIGN,
    TAG_CUSTOM_GRADIENT,
    TAG_FUNCTION,
    TAG_READ,
    Flow,
)
from gradcheck.trace.record.eager import _DIFFERENTIABLE_ENUMS, _READ_OPS, _RESOURCE_ENUM, _VARIANT_ENUM, is_assign

_FUNCTION_OPS = frozenset({"PartitionedCall", "StatefulPartitionedCall"})


def graph_mark(graph) -> int:
    """The id of the newest op in ``graph`` (op ids only grow)."""
    return graph.version + _ID_OFFSET


def _probe_offset() -> int:
    graph = _tf.tf.Graph()
    with graph.as_default():
        op = _tf.tf.constant(0).op
    return op._id - graph.version


_ID_OFFSET = _probe_offset()


def key(tensor) -> tuple[int, int]:
    return (tensor.op._id, tensor.value_index)


def outermost_graph(graph):
    while isinstance(getattr(graph, "outer_graph", None), _tf.FuncGraph):
        graph = graph.outer_graph
    return graph


def internal_tensor(graph, tensor):
    """The tensor of ``graph`` that stands for ``tensor`` (itself, or its capture)."""
    if getattr(tensor, "graph", None) is graph:
        return tensor
    for external, internal in getattr(graph, "captures", ()):
        if external is tensor:
            return internal
    outer = getattr(graph, "outer_graph", None)
    if isinstance(outer, _tf.FuncGraph):
        in_outer = internal_tensor(outer, tensor)
        if in_outer is not None and in_outer is not tensor:
            for external, internal in graph.captures:
                if external is in_outer:
                    return internal
    return None


def _tag(op) -> str:
    if op.type in _READ_OPS:
        return TAG_READ
    if is_assign(op.type):
        return TAG_ASSIGN
    if op.type in _FUNCTION_OPS:
        return TAG_FUNCTION
    if op.type == "IdentityN":
        override = _tf.gradient_override_type(op)
        if override and override.startswith("CustomGradient"):
            return TAG_CUSTOM_GRADIENT
    return ""


def eager_key(tensor_id: int) -> tuple[str, int]:
    """The key of an eager tensor in a graph-mode flow."""
    return ("eager", tensor_id)


def build_flow(graph, windows: list[tuple[int, int]], upto: int, recorder=None) -> tuple[Flow, dict]:
    """Flow over the ops of ``graph`` with id ≤ ``upto``; ``windows`` are the (start, end]
    op-id ranges during which the tape recorded in this graph.

    An eager tensor the graph captured (a value computed once in ``build()`` or before the
    function was traced) or was called with (``train_step(model(x), y)``) is a placeholder
    here; when the eager ``recorder`` saw the ops that computed it, they join the flow (as
    ops no tape recorded), so the path from a variable through them exists and is cut
    where it left the tape."""
    flow = Flow()
    tensors: dict = {}
    captured = {}
    if recorder is not None:
        externals = [(e, i.op._id) for e, i in getattr(graph, "captures", ())]
        externals += [(t, op_id) for op_id, t in _tf.traced_arguments(graph).items()]
        for external, op_id in externals:
            ident = getattr(external, "_id", None)
            if ident is not None and ident in recorder.producer_seq:
                captured[op_id] = eager_key(ident)
        for rec in recorder.producing_records(k for _, k in captured.values()):
            flow.add(
                rec.type,
                [eager_key(k) for k in rec.inputs],
                [eager_key(k) for k in rec.outputs],
                recorded=False,
                site=rec.site,
                tag=rec.tag,
                name=rec.type,
                nondata=_tf.nondata_inputs(rec.type, len(rec.inputs)),
            )
            for k in rec.inputs + rec.outputs:
                enum = recorder.dtypes.get(k)
                if enum == _RESOURCE_ENUM:
                    flow.resources.add(eager_key(k))
                if enum not in _DIFFERENTIABLE_ENUMS and enum != _VARIANT_ENUM:
                    flow.differentiable[eager_key(k)] = False
    ops = sorted((op for op in graph.get_operations() if op._id <= upto), key=lambda op: op._id)
    for op in ops:
        ident = op._id
        recorded = any(start < ident <= end for start, end in windows)
        outputs = []
        for out in op.outputs:
            k = key(out)
            outputs.append(k)
            tensors[k] = out
            dtype = out.dtype
            if _tf.is_resource_dtype(dtype):
                flow.resources.add(k)
                flow.differentiable[k] = False
            elif not _tf.is_differentiable_dtype(dtype) and dtype != _tf.tf.variant:
                flow.differentiable[k] = False  # a variant (TensorList) carries gradients
        tag = _tag(op)
        # a custom gradient's IdentityN: which of its inputs are the results (no gradient
        # ever flows into them; the cut finder must not take that for a cut)
        results = _tf.custom_gradient_results(op) if tag == TAG_CUSTOM_GRADIENT else None
        flow.add(
            op.type,
            [key(t) for t in op.inputs] if ident not in captured else [captured[ident]],
            outputs,
            recorded=recorded,
            site=op,
            tag=tag,
            name=op.name,
            attrs={CUSTOM_GRADIENT_RESULTS: results} if results else None,
            nondata=_tf.nondata_inputs(op.type, len(op.inputs)),
        )
    return flow, tensors


def note_pipeline_reads(reads: dict, graph, handles: dict[int, str]) -> None:
    """A ``tf.data`` function's graph (``dataset.map(f)``) that captures variables: for
    each captured handle of a known variable (``handles``: id(handle) -> name), the
    user's line of its first use inside ``f``, kept in ``reads`` (id(handle) -> Location).
    The function runs in the input pipeline, where no tape records (GC109)."""
    from gradcheck.trace.record import frames

    for external, internal in getattr(graph, "captures", ()):
        ident = id(external)
        if ident not in handles or ident in reads:
            continue
        for op in graph.get_operations():
            if any(t is internal for t in op.inputs):
                location = frames.stack_user_location(op.traceback)
                if location is not None:
                    reads[ident] = location
                    break
