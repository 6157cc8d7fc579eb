"""Findings from cuts: the culprit op of each path a starved source lost, located in the
user's source (for a computation that ran outside the tape, the user's statement at the
level of the training step), with its rule code and the variant of its fix."""

from __future__ import annotations

import ast

from gradcheck import sourcemap
from gradcheck.findings import Finding
from gradcheck.rules import call_hints, classify_op
from gradcheck.trace.diagnose.context import Context, Source
from gradcheck.trace.diagnose.cuts import ASSIGN, BLOCK, BOUNDARY, OUTSIDE, UNKNOWN, UNWATCHED, Cut
from gradcheck.trace.diagnose.describe import chain, make, op_label, subgraph
from gradcheck.trace.diagnose.labels import used_as_labels
from gradcheck.trace.diagnose.roles import made_by
from gradcheck.trace.record import _tf, frames
from gradcheck.trace.record.dataflow import GRADIENT_CALL, TAG_CUSTOM_GRADIENT, TAG_FUNCTION
from gradcheck.trace.record.frames import Location

__all__ = ["cut_finding", "outside_location", "ran_before_tape", "stopped_target_finding", "target_outside_findings"]


def _cut_code(ctx: Context, cut: Cut) -> str:
    if cut.kind == OUTSIDE:
        return "GC109"
    if cut.kind == ASSIGN:
        return "GC113"
    if cut.kind == UNWATCHED:
        return "GC110"
    if cut.kind == UNKNOWN:
        return "GC111"
    op = ctx.flow.ops[cut.op]
    if op.tag == TAG_CUSTOM_GRADIENT:
        return "GC112"
    code = classify_op(op.type)
    if code:
        return code
    return "GC101" if cut.kind == BOUNDARY else "GC111"


def cut_finding(
    ctx: Context,
    cut: Cut,
    sources: list[Source],
    code: str | None = None,
    label: str | None = None,
    variant: str | None = None,
) -> Finding:
    """The finding of ``cut``; ``label`` names the op when it is not the cut op itself (the
    gradient op a second derivative cannot get past, found at its forward op)."""
    inside = _inside_function(ctx, cut) if code is None else None
    code = code or (inside[0] if inside else _cut_code(ctx, cut))
    location = None
    if inside is not None:
        location = inside[1]
    elif cut.op >= 0 and cut.kind == OUTSIDE:
        location = outside_location(ctx, cut)
    elif cut.op >= 0:
        location = ctx.cut_location(cut.op)
    location = location or ctx.call_location or Location("<unknown>", 1)
    expr = sourcemap.expression_at(
        location.path,
        location.line,
        location.column if location.end_column else None,
        location.end_line,
        location.end_column,
    )
    if label is None:
        label = inside[2] if inside else op_label(ctx.flow.ops[cut.op].type) if cut.op >= 0 else None
    first_arg = None
    if expr is not None and getattr(expr.node, "args", None):
        # the user's own name for the input, when it has one (not a whole expression)
        arg = expr.node.args[0]
        if isinstance(arg, (ast.Name, ast.Attribute, ast.Subscript)) and len(ast.unparse(arg)) <= 30:
            first_arg = ast.unparse(arg)
    notes = []
    for later in cut.later:
        later_line = ctx.op_line(later)
        if later_line is not None and later_line == location.line:
            continue  # the same statement (a loop over a dataset is two tf.data ops): one fix
        notes.append(
            f"the path is cut again further down, by {op_label(ctx.flow.ops[later].type)}"
            + (f" at line {later_line}" if later_line else "")
            + ": fix both"
        )
    first = min(sources, key=lambda s: s.index) if sources else None
    call = expr.text if expr is not None else None
    if expr is not None and cut.kind == OUTSIDE:
        call = sourcemap.short_text(expr.node) or call  # a whole statement, not one op's callee
    if code == "GC112" and cut.op >= 0:
        # named by its call, pointed at the `return` of its gradient function that gives None
        location = _none_return(ctx, cut.op) or location
    fields = {"variant": variant} if variant else _variant(ctx, cut, location)
    finding = make(
        ctx,
        code,
        location,
        [s.name for s in sources],
        op=label,
        call=call,
        chain=chain(ctx, cut, first.key if first else None),
        notes=notes,
        arg=first_arg or sourcemap.free_name(location.path, ("v", "value", "v_")),
        fn=(label or "").lower(),
        when=_when(ctx, cut, fields),
        **fields,
    )
    if finding.chain and first is not None:
        finding.chain_source = first.name
    if ctx.session.want_graph:
        finding.graph = subgraph(ctx, cut, sources)
    return finding


def stopped_target_finding(ctx: Context, cut: Cut, sources: list[Source]) -> Finding:
    """Sources whose only path to the loss is a ``tf.stop_gradient`` on a target: the stop is
    right (an advantage, a TD target, a teacher's output is a constant to its loss), the
    sources are the mistake (the critic's variables asked of the actor's loss). GC108 at
    the gradient call, where the sources are chosen."""
    finding = make(ctx, "GC108", ctx.call_location, [s.name for s in sources], variant="stopped-target")
    line = ctx.op_line(cut.op)
    where = f" at line {line}" if line is not None else ""
    finding.notes.append(
        f"their only path to the loss is through the `tf.stop_gradient`{where}, which keeps a target constant "
        "on purpose"
    )
    return finding


def _inside_function(ctx: Context, cut: Cut) -> tuple[str, Location, str] | None:
    """A cut at a call of a traced function (the eager tape records a ``tf.function`` as one
    op): the op inside its graph that the dead inputs reach first and whose type names a
    cause (a ``tf.math.floor``, an ``argmax``, a float turned into an integer), located at
    its line in the function's body. The shadow tape proved the gradient dies in the call;
    this only says where. None when no op names a cause."""
    if cut.kind != BLOCK or cut.op < 0 or ctx.flow.ops[cut.op].tag != TAG_FUNCTION:
        return None
    graph = ctx.function_graph(cut.op)
    op = ctx.flow.ops[cut.op]
    if graph is None:
        return None
    placeholders = list(graph.inputs)
    starts = [placeholders[i] for i, k in enumerate(op.inputs) if k in cut.inputs and i < len(placeholders)]
    culprit = _first_named_cause(graph, starts)
    if culprit is None:
        return None
    code, inner = culprit
    found = frames.stack_frames(inner.traceback)
    if not found:
        return None
    location = ctx.frame_location(found[0], call_hints(inner.type))
    return code, location, op_label(inner.type) or inner.type


def _first_named_cause(graph, starts: list) -> tuple[str, object] | None:
    """In execution order, the first op fed (through inputs that carry gradients) by
    ``starts`` whose type names a cause, or that turns a float into an integer."""
    reached = {id(t) for t in starts}
    for op in sorted(graph.get_operations(), key=lambda o: o._id):
        nondata = _tf.nondata_inputs(op.type, len(op.inputs))
        fed = [t for i, t in enumerate(op.inputs) if i not in nondata and id(t) in reached]
        if not fed:
            continue
        code = classify_op(op.type)
        floats_in = any(_tf.is_differentiable_dtype(t.dtype) for t in fed)
        if (
            code is None
            and floats_in
            and op.outputs
            and not any(_tf.is_differentiable_dtype(o.dtype) for o in op.outputs)
        ):
            code = "GC103"
        if code is not None:
            return code, op
        reached.update(id(o) for o in op.outputs)
    return None


def outside_location(ctx: Context, cut: Cut) -> Location | None:
    """A computation that ran outside the tape is one user statement, however many ops it
    ran: the user's call at the level where its stack leaves the ``tape.gradient`` call's
    (``y_pred = self(x)`` before the tape in a ``train_step``, not a line of the model's
    ``call``), unless it ran while a layer was built or constructed (a kernel computed
    once in ``build()``): then the statement of its innermost user frame, in ``build()``."""
    found = ctx.op_frames(cut.op)
    at_construction = any(f.function in ("build", "__init__") for f in found)
    frame = None if at_construction else ctx.caller_level_frame(cut.op)
    location = ctx.frame_location(frame) if frame is not None else ctx.op_location(cut.op)
    if location is None:
        return None
    value = sourcemap.statement_value(location.path, location.line)
    if value is None or not value.line <= location.line <= value.end_line:
        return location
    call = ctx.call_location
    if call is not None and call.path == location.path and value.line <= call.line <= value.end_line:
        return location  # computed in the arguments of tape.gradient itself: that expression

    return Location(location.path, value.line, value.column, value.end_line, value.end_column)


def _none_return(ctx: Context, op_index: int) -> Location | None:
    """Where a custom gradient's function returns None (``return None, dy * l``): the line
    to change, inside the gradient function the call of the custom gradient ran."""
    codes = ctx.session.__dict__.get("custom_gradient_codes") or {}
    code = next((codes[k] for k in ctx.flow.ops[op_index].outputs if k in codes), None)
    found = sourcemap.none_return(code.co_filename, code.co_firstlineno) if code is not None else None
    if found is None:
        return None
    return Location(code.co_filename, found.line, found.column, found.end_line, found.end_column)


def _when(ctx: Context, cut: Cut, fields: dict) -> str:
    """When an op the tape did not record ran, relative to the tape (GC109's message)."""
    if cut.kind != OUTSIDE:
        return ""
    if fields.get("variant") == "paused":
        return "while stop_recording() paused what"
    return "before" if ran_before_tape(ctx, cut.op) else "after"


def _variant(ctx: Context, cut: Cut, location: Location) -> dict:
    if cut.op < 0:
        return {}
    if cut.kind == OUTSIDE:
        return _outside_variant(ctx, cut, location)
    if cut.kind == ASSIGN:
        return _assign_variant(ctx, cut)
    return _index_variant(ctx, cut)


def _index_variant(ctx: Context, cut: Cut) -> dict:
    """A float turned into integers that then serve as indices (an Embedding lookup), or
    that are compared with labels (an error rate, accuracy: a classifier's loss). A rounding
    op blocks (its gradient is None) rather than leaving floats: its rounded positions used
    as indices are the same mistake (nearest-neighbour sampling of a learned coordinate)."""
    if cut.op < 0:
        return {}
    flow = ctx.flow
    rounding = cut.kind == BLOCK and classify_op(flow.ops[cut.op].type) == "GC102"
    if cut.kind != BOUNDARY and not rounding:
        return {}
    if flow.ops[cut.op].type == "ArgMin" and _distance(flow, flow.ops[cut.op].inputs[:1]):
        return {"variant": "nearest"}
    if (
        classify_op(flow.ops[cut.op].type) == "GC101"  # ids an index op made (a cast's ids index tables: 542)
        and flow.ops[cut.op].type != "Where"
        and used_as_labels(flow, cut.op, {s.key for s in ctx.sources})
    ):
        return {"variant": "labels"}  # another network's labels: the one that made them needs its own loss
    keys = set(flow.ops[cut.op].outputs)
    compared = False
    for i in sorted(flow.forward_cone(keys)):  # execution order: producers before consumers
        op = flow.ops[i]
        if op.type == "Where" and len(op.inputs) == 1 and op.inputs[0] in keys:
            return {"variant": "coordinates"}  # `tf.where(cond)`: where it holds, as indices
        if any(k in keys and k not in op.data for k in op.inputs):
            return {"variant": "indices"}
        if not flow.ops[i].recorded:
            continue
        compared = compared or (op.type in ("Equal", "NotEqual") and any(k in keys for k in op.inputs))
        keys.update(k for k in op.outputs if not flow.is_differentiable(k))
    if compared and classify_op(flow.ops[cut.op].type) == "GC101":
        return {"variant": "classification"}
    return {}


#: ops whose output measures how far apart two values are
_DISTANCE_OPS = frozenset({"Square", "SquaredDifference", "Abs", "EuclideanNorm", "Pow"})


def _distance(flow, keys) -> bool:
    """``keys`` are distances: a squared or absolute difference, a norm (``x * x`` in
    ``tf.norm``), within a few ops (``argmin`` of them picks the nearest entry: a vector
    quantizer, a nearest centroid)."""
    return made_by(
        flow, keys, lambda op: op.type in _DISTANCE_OPS or (op.type == "Mul" and len(set(op.inputs)) == 1), 6
    )


def _assign_variant(ctx: Context, cut: Cut) -> dict:
    """The assignment a Keras metric object makes to its running state: used as a loss."""
    op = ctx.flow.ops[cut.op]
    if op.attrs.get("metric") or (
        not isinstance(op.site, tuple)
        and op.site is not None
        and frames.in_keras_metric(f.filename for f in op.site.traceback)
    ):
        return {"variant": "metric"}
    return {}


def _outside_variant(ctx: Context, cut: Cut, location: Location) -> dict:
    """A value computed once when a layer is built or constructed gets its own fix; so does
    a gradient computed after the tape, then used in the loss (a loss on derivatives)."""
    if ctx.flow.ops[cut.op].type == GRADIENT_CALL:
        return {"variant": "gradient"}
    if sourcemap.inside_with_call(location.path, location.line, "stop_recording"):
        return {"variant": "paused"}  # the tape is open, but told not to record this stretch
    for frame in ctx.op_frames(cut.op):
        if frame.path == location.path and frame.line == location.line:
            if frame.function in ("build", "__init__"):
                return {"variant": "build", "method": frame.function}
            break
    return {}


def ran_before_tape(ctx: Context, op_index: int) -> bool:
    op = ctx.flow.ops[op_index]
    if ctx.eager:
        return op.site is not None and _record_seq(ctx, op_index) < ctx.state.start_seq
    if isinstance(op.site, tuple):
        return True  # an eager op joined to the flow ran before the function did
    windows = ctx.state.windows.get(ctx.graph, [])
    return bool(windows) and op.site._id <= windows[0][0]


def _record_seq(ctx: Context, op_index: int) -> int:
    records = ctx.session.recorder.records
    return records[op_index].seq if op_index < len(records) else 0


def target_outside_findings(ctx: Context, sources: list[Source]) -> list[Finding]:
    """A target computed after the tape stopped (``tape.gradient(preds[:, i], ...)``) cuts
    every source, also those with no path to it at all: both must be fixed."""
    if not sources:
        return []
    out = []
    for key in ctx.target_keys:
        producer = ctx.flow.producer.get(key)
        if producer is not None and not ctx.flow.ops[producer].recorded:
            cut = Cut(OUTSIDE, producer, {s.key for s in sources})
            out.append(cut_finding(ctx, cut, sources))
    return out
