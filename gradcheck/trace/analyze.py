"""Turn one ``tape.gradient`` call with None gradients into findings.

For every source whose gradient is None: a few causes are decided by the source alone
(an integer dtype, a non-trainable variable, a tensor nobody watched); the rest come from
the data-flow graph around the call (``eager`` recorder or the traced ``graph``): the cut
finder locates the op on each path, and sources with no path at all are explained by a
host escape, a function that captured them by value, or plain non-use.
"""

from __future__ import annotations

import ast
import fnmatch

from gradcheck import sourcemap
from gradcheck.findings import Finding
from gradcheck.rules import classify_op
from gradcheck.trace import _tf, frames
from gradcheck.trace import graph as graph_mode
from gradcheck.trace.context import Context, Source
from gradcheck.trace.cuts import ASSIGN, BLOCK, BOUNDARY, OUTSIDE, UNKNOWN, UNWATCHED, Cut, find_cuts
from gradcheck.trace.dataflow import TAG_CUSTOM_GRADIENT, TAG_FUNCTION, TAG_READ, cyclic_gc_paused
from gradcheck.trace.describe import chain, make, merge, op_label, subgraph
from gradcheck.trace.frames import Location

__all__ = ["analyse", "no_gradient_registered"]


@cyclic_gc_paused()
def analyse(session, tape, state, target, sources, grads, graph, upto, call) -> list[Finding]:
    flat_sources = _tf.tf.nest.flatten(sources)
    flat_grads = _tf.tf.nest.flatten(grads, expand_composites=False)
    if len(flat_grads) != len(flat_sources):
        return []
    flat_targets = [_target_tensor(t) for t in _tf.tf.nest.flatten(target)]
    starved_idx = [i for i, g in enumerate(flat_grads) if g is None]
    if not starved_idx:
        return []
    ctx = _context(session, tape, state, flat_targets, flat_sources, graph, call)
    starved = [ctx.sources[i] for i in starved_idx]
    starved = [s for s in starved if not _allowed(s.name, session.allow_none)]
    if not starved:
        return []
    return _diagnose(ctx, starved, upto)


@cyclic_gc_paused()
def no_gradient_registered(session, tape, state, target, sources, error, graph, upto, call) -> list[Finding]:
    """``tape.gradient`` raised LookupError: an op on the path has no gradient function."""
    op_type = str(error).rsplit(":", 1)[-1].strip().strip("'\"")
    flat_sources = _tf.tf.nest.flatten(sources)
    flat_targets = [_target_tensor(t) for t in _tf.tf.nest.flatten(target)]
    ctx = _context(session, tape, state, flat_targets, flat_sources, graph, call)
    _build_flow(ctx, upto)
    cone = ctx.flow.backward_cone(ctx.target_keys)
    culprits = [i for i in sorted(cone) if ctx.flow.ops[i].type == op_type]
    findings = []
    for culprit in culprits:
        starved = [s for s in ctx.sources if s.key is not None and culprit in ctx.flow.forward_cone([s.key], cone)]
        if starved:
            cut = Cut(BLOCK, culprit, {s.key for s in starved}, [], cone, ctx.target_keys)
            findings.append(_cut_finding(ctx, cut, starved, code="GC111"))
    return merge(findings)


# -- building the context ------------------------------------------------------------
def _target_tensor(t):
    return t.handle if _tf.is_variable(t) else t


def _source_tensor(s):
    return _tf.handle_of(s) if _tf.is_variable(s) else s


def _context(session, tape, state, flat_targets, flat_sources, graph, call) -> Context:
    call_location = call.location
    names = _source_names(flat_sources, call_location, call.tensor_names)
    sources = [Source(i, s, names[i], _tf.is_variable(s)) for i, s in enumerate(flat_sources)]
    return Context(
        session, tape, state, flat_targets, sources, graph is None, graph, call_location, call.scope, call.frames
    )


def _source_names(flat_sources, call_location: Location | None, tensor_names: dict[int, str]) -> list[str]:
    expr_names = None
    if call_location is not None and any(not _tf.is_variable(s) for s in flat_sources):
        args = sourcemap.call_arguments(call_location.path, call_location.line, call_location.column, "gradient")
        node = args[1] if args and len(args) > 1 else None
        expr_names = sourcemap.element_names(node, len(flat_sources))
    names = []
    for i, s in enumerate(flat_sources):
        if _tf.is_variable(s):
            names.append(_tf.variable_name(s))
        elif id(s) in tensor_names:
            names.append(tensor_names[id(s)])
        elif expr_names is not None:
            names.append(expr_names[i])
        else:
            names.append(getattr(s, "name", None) or f"sources[{i}]")
    return names


def _allowed(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _build_flow(ctx: Context, upto) -> None:
    state = ctx.state
    if ctx.eager:
        watched = {t._id: t for t in state.watched if hasattr(t, "_id")}
        ctx.flow, ctx.tensors = ctx.session.recorder.build_flow(state.ident, watched, _tf.nondata_inputs)
        ctx.target_keys = [getattr(t, "_id", None) for t in ctx.flat_targets]
        for source in ctx.sources:
            source.key = _key_of(ctx, _source_tensor(source.value))
        for t in state.watched:  # a watched tensor is a leaf the tape knows
            key = getattr(t, "_id", None)
            if key is not None:
                ctx.flow.differentiable.setdefault(key, _tf.is_differentiable_dtype(t.dtype))
    else:
        windows = [(start, end if end is not None else upto) for start, end in state.windows.get(ctx.graph, [])]
        ctx.flow, ctx.tensors = graph_mode.build_flow(ctx.graph, windows, upto, ctx.session.recorder)
        ctx.target_keys = [graph_mode.key(t) for t in ctx.flat_targets if getattr(t, "graph", None) is ctx.graph]
        for source in ctx.sources:
            source.key = _key_of(ctx, _source_tensor(source.value))


def _live_fn(ctx: Context):
    """Liveness, asked of the shadow tape: which keys the targets have a gradient for."""
    source_tensors = {s.key: _source_tensor(s.value) for s in ctx.sources if s.key is not None}

    def tensor(k):
        if k in source_tensors:
            return source_tensors[k]  # variables are watched by handle, as tape.gradient asks
        if ctx.flow.is_differentiable(k) and k not in ctx.flow.resources:
            return ctx.tensors.get(k)
        return None

    def live(targets, keys):
        target_tensors = [ctx.tensors[k] for k in targets if k in ctx.tensors]
        # A target among the sources stops TensorFlow's backward pass there: leave it out.
        candidates = [(k, tensor(k)) for k in keys if k not in targets and tensor(k) is not None]
        if not target_tensors or not candidates:
            return set()
        grads = _tf.imperative_gradient(ctx.state.shadow, target_tensors, [t for _, t in candidates])
        return {k for (k, _), g in zip(candidates, grads, strict=False) if g is not None}

    return live


# -- diagnosis -------------------------------------------------------------------------
def _diagnose(ctx: Context, starved: list[Source], upto) -> list[Finding]:
    findings: list[Finding] = []
    _build_flow(ctx, upto)
    on_tape = _on_user_tape(ctx)
    rest = []
    for source in starved:
        finding = _source_only_cause(ctx, source, on_tape)
        if finding is not None:
            findings.append(finding)
        else:
            rest.append(source)
    if rest:
        if ctx.eager:
            _recover_hidden_reads(ctx, [s for s in rest if s.is_variable and s.key is not None])
        by_key = {s.key: s for s in rest if s.key is not None}
        unkeyed = [s for s in rest if s.key is None]
        result = find_cuts(ctx.flow, ctx.target_keys, by_key, _live_fn(ctx), on_tape)
        for cut in result.cuts:
            findings.append(_cut_finding(ctx, cut, [by_key[k] for k in cut.sources]))
        unreached = [by_key[k] for k in result.unreached] + unkeyed
        findings.extend(_unreached_findings(ctx, unreached))
        findings.extend(_target_outside_findings(ctx, unreached))
    return merge(findings)


def _target_outside_findings(ctx: Context, sources: list[Source]) -> list[Finding]:
    """A target computed after the tape stopped (``tape.gradient(preds[:, i], ...)``) cuts
    every source, also those with no path to it at all: both must be fixed."""
    if not sources:
        return []
    out = []
    for key in ctx.target_keys:
        producer = ctx.flow.producer.get(key)
        if producer is not None and not ctx.flow.ops[producer].recorded:
            cut = Cut(OUTSIDE, producer, {s.key for s in sources})
            out.append(_cut_finding(ctx, cut, sources))
    return out


def _recover_hidden_reads(ctx: Context, variables: list[Source]) -> None:
    """TensorFlow's C++ fast path reads a variable operand (``h * v``) without running any
    op callback, so its value shows up with no producer. The shadow tape did record the
    read: a no-producer tensor with a gradient with respect to a variable's handle *is*
    that variable's value. Add the read to the flow."""
    if not variables:
        return
    orphans = ctx.session.recorder.orphans
    consumed = {k for op in ctx.flow.ops if op.recorded for k in op.inputs}
    handles = [_source_tensor(s.value) for s in variables]
    sites = {}
    for op in ctx.flow.ops:
        for k in op.inputs:
            sites.setdefault(k, op.site)
    for key, tensor in list(orphans.items()):
        if key not in consumed or key in ctx.flow.producer:
            continue
        grads = _tf.imperative_gradient(ctx.state.shadow, [tensor], handles)
        for source, grad in zip(variables, grads, strict=True):
            if grad is not None:
                ctx.flow.add("ReadVariableOp", [source.key], [key], site=sites.get(key), tag=TAG_READ)
                ctx.tensors.setdefault(key, tensor)
                break


def _source_only_cause(ctx: Context, source: Source, on_tape: set) -> Finding | None:
    value = source.value
    dtype = getattr(value, "dtype", None)
    if dtype is not None and not _tf.is_differentiable_dtype(dtype):
        dtype_name = _tf.tf.as_dtype(dtype).name
        as_index = _index_use(ctx, source)
        if as_index is not None:  # ids fed to an embedding / gather: point at that use
            return _source_finding(ctx, "GC114", source, ctx.op_location(as_index), dtype=dtype_name, variant="indices")
        return _source_finding(ctx, "GC114", source, _creation_location(ctx, source), dtype=dtype_name)
    if source.is_variable and not getattr(value, "trainable", True):
        return _source_finding(ctx, "GC115", source, ctx.call_location)
    if not source.is_variable and source.key not in on_tape:
        return _source_finding(ctx, "GC110", source, _creation_location(ctx, source))
    return None


def _index_use(ctx: Context, source: Source) -> int | None:
    """The first recorded op on the way to the targets that takes the (integer) source, or
    a value computed from it, as indices: an input that can never carry a gradient."""
    if source.is_variable or source.key is None:
        return None
    flow = ctx.flow
    cone = flow.backward_cone(ctx.target_keys)
    reach = flow.forward_cone([source.key], within=cone) | {-1}
    keys = {source.key} | {k for i in reach if i >= 0 for k in flow.ops[i].outputs}
    for i in sorted(reach - {-1}):
        op = flow.ops[i]
        if op.recorded and any(k in keys and k not in op.data for k in op.inputs):
            return i
    return None


def _on_user_tape(ctx: Context) -> set:
    """The tensors the *user's* tape knows, by replaying TensorFlow's rule: an op is
    recorded when one of its float (or resource) inputs is already on the tape; watched
    tensors and the variables it watched start it off."""
    flow = ctx.flow
    on: set = set()
    for t in ctx.state.watched:
        on.add(_key_of(ctx, t))
    try:
        watched_variables = ctx.tape.watched_variables()
    except (AttributeError, RuntimeError):
        watched_variables = ()
    for variable in watched_variables:
        on.add(_key_of(ctx, _tf.handle_of(variable)))
    on.discard(None)
    for op in flow.ops:
        if op.recorded and any(k in on and (flow.is_differentiable(k) or k in flow.resources) for k in op.inputs):
            on.update(op.outputs)
    return on


def _key_of(ctx: Context, tensor):
    if ctx.eager:
        return getattr(tensor, "_id", None)
    internal = graph_mode.internal_tensor(ctx.graph, tensor)
    if internal is not None:
        return graph_mode.key(internal)
    # not captured: the graph never reads it, but an eager computation it fed may be
    ident = getattr(tensor, "_id", None)
    return graph_mode.eager_key(ident) if ident is not None else None


def _creation_location(ctx: Context, source: Source) -> Location | None:
    if source.is_variable:
        origin = ctx.session.variable_origin(source.value)
        if origin and origin.site is not None:
            return frames.site_location(origin.site)
        return ctx.call_location
    loc = ctx.call_location
    if loc is not None and source.name.isidentifier():
        expr = sourcemap.binding_line(loc.path, source.name, loc.line)
        if expr is not None:
            return Location(loc.path, expr.line, expr.column, expr.end_line, expr.end_column)
    return loc


def _source_finding(ctx: Context, code: str, source: Source, location: Location | None, **extra) -> Finding:
    return make(ctx, code, location, [source.name], **extra)


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


def _cut_finding(ctx: Context, cut: Cut, sources: list[Source], code: str | None = None) -> Finding:
    code = code or _cut_code(ctx, cut)
    location = None
    if cut.op >= 0 and cut.kind == OUTSIDE:
        location = _outside_location(ctx, cut)
    elif cut.op >= 0:
        location = ctx.op_location(cut.op)
    location = location or ctx.call_location or Location("<unknown>", 1)
    expr = sourcemap.expression_at(
        location.path,
        location.line,
        location.column if location.end_column else None,
        location.end_line,
        location.end_column,
    )
    label = op_label(ctx.flow.ops[cut.op].type) if cut.op >= 0 else None
    first_arg = None
    if expr is not None and getattr(expr.node, "args", None):
        # the user's own name for the input, when it has one (not a whole expression)
        arg = expr.node.args[0]
        if isinstance(arg, (ast.Name, ast.Attribute, ast.Subscript)) and len(ast.unparse(arg)) <= 30:
            first_arg = ast.unparse(arg)
    notes = []
    for later in cut.later:
        later_line = ctx.op_line(later)
        notes.append(
            f"the path is cut again further down, by {op_label(ctx.flow.ops[later].type)}"
            + (f" at line {later_line}" if later_line else "")
            + ": fix both"
        )
    first = min(sources, key=lambda s: s.index) if sources else None
    call = expr.text if expr is not None else None
    if expr is not None and cut.kind == OUTSIDE:
        call = sourcemap.short_text(expr.node) or call  # a whole statement, not one op's callee
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
        fn=ctx.flow.ops[cut.op].type.lower() if cut.op >= 0 else "",
        when=("before" if _ran_before_tape(ctx, cut.op) else "after") if cut.kind == OUTSIDE else "",
        **(_outside_variant(ctx, cut, location) if cut.kind == OUTSIDE else _index_variant(ctx, cut)),
    )
    if finding.chain and first is not None:
        finding.chain_source = first.name
    if ctx.session.want_graph:
        finding.graph = subgraph(ctx, cut, sources)
    return finding


def _outside_location(ctx: Context, cut: Cut) -> Location | None:
    """A computation that ran outside the tape is one user statement, however many ops it
    ran. When its result enters the tape right in the function that calls
    ``tape.gradient`` (``y_pred = self(x)`` before the tape in a ``train_step``), that is
    the call there, not a line of the model's ``call``; when it enters inside a model (a
    kernel computed once in ``build()``), the statement of its innermost user frame."""
    step_level = ctx.call_scope is not None and any(
        (frames_ := ctx.op_frames(i)) and frames_[0].scope == ctx.call_scope for i in cut.via
    )
    frame = ctx.caller_level_frame(cut.op) if step_level else None
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


def _index_variant(ctx: Context, cut: Cut) -> dict:
    """A float turned into integers that then serve as indices (an Embedding lookup)."""
    if cut.kind != BOUNDARY or cut.op < 0:
        return {}
    flow = ctx.flow
    keys = set(flow.ops[cut.op].outputs)
    for i in flow.forward_cone(keys):
        op = flow.ops[i]
        if any(k in keys and k not in op.data for k in op.inputs):
            return {"variant": "indices"}
        if not flow.ops[i].recorded:
            continue
        keys.update(k for k in op.outputs if not flow.is_differentiable(k))
    return {}


def _outside_variant(ctx: Context, cut: Cut, location: Location) -> dict:
    """A value computed once when a layer is built or constructed gets its own fix."""
    for frame in ctx.op_frames(cut.op):
        if frame.path == location.path and frame.line == location.line:
            if frame.function in ("build", "__init__"):
                return {"variant": "build", "method": frame.function}
            break
    return {}


def _ran_before_tape(ctx: Context, op_index: int) -> bool:
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


def _unreached_findings(ctx: Context, sources: list[Source]) -> list[Finding]:
    findings = []
    cone = ctx.flow.backward_cone(ctx.target_keys) if ctx.flow else set()
    called = [
        (i, g) for i in sorted(cone) if ctx.flow.ops[i].tag == TAG_FUNCTION for g in [_function_graph(ctx, i)] if g
    ]
    for source in sources:
        reach = ctx.flow.forward_cone([source.key]) if source.key is not None else set()
        escape = _escape_site(ctx, source, reach)
        if escape is not None:
            site, key, code = escape
            findings.append(_located(ctx, code, [source], frames.site_location(site)))
            findings.extend(_cut_before(ctx, key, source))
            continue
        host = _host_function_reading(ctx, source, cone)
        if host is not None:
            findings.append(_host_function_finding(ctx, source, host))
            continue
        origin = ctx.session.variable_origin(source.value) if source.is_variable else None
        by_value = next((i for i, graph in called if origin is not None and origin.created_in(graph)), None)
        if by_value is not None:
            findings.append(_captured_finding(ctx, source, origin, by_value))
            continue
        findings.append(_unused_finding(ctx, source, reach))
    return findings


def _function_graph(ctx: Context, op_index: int):
    """The FuncGraph a function-call op runs (eager: its op type is the function's name)."""
    op = ctx.flow.ops[op_index]
    name = op.type
    if not isinstance(op.site, tuple) and op.site is not None:
        try:
            name = op.site.get_attr("f").name
        except (ValueError, AttributeError):
            return None
    return ctx.session.function_graphs.get(name)


def _captured_finding(ctx: Context, source: Source, origin, op_index: int) -> Finding:
    """The variable was created while the function was traced: the function computed
    with its initial value, a constant, and never reads the variable (GC116). Point at
    the ``@tf.function`` of the function that created it."""
    location, function = None, None
    for frame in origin.trace_frames:
        decorator = sourcemap.function_decorator(frame.path, frame.line, "function")
        if decorator is not None:
            location = Location(frame.path, decorator.line, decorator.column, decorator.end_line, decorator.end_column)
            function = decorator.text
            break
    location = location or ctx.op_location(op_index) or ctx.call_location
    return _located(
        ctx,
        "GC116",
        [source],
        location,
        function=function or (op_label(ctx.flow.ops[op_index].type) or "").removeprefix("tf.function "),
    )


def _escape_site(ctx: Context, source: Source, reach: set[int]):
    """Where a value on the source's paths left TensorFlow (``.numpy()``, ``np.asarray``,
    ``float()``, ``model.predict``), preferring the latest escape while the tape recorded:
    an earlier one is more likely a log line than the loss's."""
    if not ctx.eager:
        return None
    escapes = ctx.session.recorder.escapes
    found = [(seq, site, code, source.key) for seq, site, code in escapes.get(source.key, ())]
    for i in reach:
        for key in ctx.flow.ops[i].outputs:
            found.extend((seq, site, code, key) for seq, site, code in escapes.get(key, ()))
    if not found:
        return None
    inside = [e for e in found if e[0] >= ctx.state.start_seq]
    _, site, code, key = max(inside or found, key=lambda e: e[0])
    return site, key, code


def _host_function_reading(ctx: Context, source: Source, cone: set[int]) -> int | None:
    """Graph mode: a ``tf.numpy_function`` on the way to the loss whose Python function
    uses the model owning ``source`` (``self.model(...)`` in a bound method): the variable
    is read where the tape cannot see, when the graph runs."""
    if ctx.eager or not source.is_variable:
        return None
    handle = id(_tf.handle_of(source.value))
    for i in sorted(cone):
        op = ctx.flow.ops[i]
        if isinstance(op.site, tuple) or op.site is None:
            continue
        function = _tf.python_function_of(op.site)
        if function is not None and handle in _tf.handles_used_by(function):
            return i
    return None


def _host_function_finding(ctx: Context, source: Source, op_index: int) -> Finding:
    finding = _located(ctx, "GC106", [source], ctx.op_location(op_index))
    function = _tf.python_function_of(ctx.flow.ops[op_index].site)
    name = getattr(function, "__qualname__", None) or getattr(function, "__name__", "its function")
    finding.notes.append(
        f"{source.name} is used inside `{name}`, which TensorFlow runs as Python: the tape never sees it"
    )
    return finding


def _cut_before(ctx: Context, key, source: Source) -> list[Finding]:
    """An escaped value that was already an integer (``pad_sequences(tf.argmax(p))``) was
    cut before it left: name where floats became integers too, both must be fixed."""
    flow = ctx.flow
    if flow.is_differentiable(key) or key not in flow.producer:
        return []
    out, seen, stack = [], set(), [flow.producer[key]]
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        op = flow.ops[i]
        if any(flow.is_differentiable(k) and k not in flow.resources for k in op.data):
            out.append(_cut_finding(ctx, Cut(BOUNDARY, i, {source.key}), [source]))
            continue
        stack.extend(flow.producer[k] for k in op.data if k in flow.producer)
    return out


def _located(ctx: Context, code: str, sources: list[Source], location: Location | None, **extra) -> Finding:
    return make(ctx, code, location, [s.name for s in sources], **extra)


def _unused_finding(ctx: Context, source: Source, reach: set[int]) -> Finding:
    relative = _relative_use(ctx, source) if not source.is_variable else None
    if relative is not None:
        # the loss uses a copy of the watched tensor: point at that use, it is what to change
        location = ctx.op_location(relative)
        line = location.line if location else None
        finding = _located(ctx, "GC108", [source], location, variant="relative")
        finding.notes.append(
            f"the loss uses a tensor equal to {source.name}"
            + (f", computed at line {line}" if line else "")
            + f", not {source.name} itself: did you mean to compute it from {source.name}?"
        )
        return finding
    finding = _located(ctx, "GC108", [source], ctx.call_location)
    recorded = [i for i in sorted(reach) if ctx.flow.ops[i].recorded]
    if recorded:
        line = ctx.op_line(recorded[0])
        if line is not None:
            finding.notes.append(f"{source.name} is read at line {line}, but that result never reaches the loss")
    else:
        finding.notes.append(f"{source.name} is never read while the tape records")
    origin = ctx.session.variable_origin(source.value) if source.is_variable else None
    if origin is not None and origin.site is not None:
        created = frames.site_location(origin.site)
        finding.notes.append(f"{source.name} is created at {_where(ctx, created)}")
        hint = sourcemap.unread_attribute_hint(created.path, created.line)
        if hint:
            finding.notes.append(hint)
    return finding


def _relative_use(ctx: Context, source: Source, limit: int = 200) -> int | None:
    """A recorded op on the way to the loss that makes, or consumes as a constant, a tensor
    equal in value to the unused watched ``source``: the model was called on a copy of it
    (``model(img)`` beside ``conv_model(img)``, a NumPy round trip), not on it."""
    if not ctx.eager:
        return None
    import numpy as np

    value = source.value
    try:
        shape, dtype = tuple(value.shape), value.dtype
        wanted = value._numpy()
    except (AttributeError, ValueError, TypeError):
        return None
    orphans = ctx.session.recorder.orphans
    compared = 0
    for i in sorted(ctx.flow.backward_cone(ctx.target_keys)):
        op = ctx.flow.ops[i]
        if not op.recorded:
            continue
        for key in (*op.outputs, *op.inputs):
            tensor = ctx.tensors.get(key) if key in op.outputs else orphans.get(key)
            if tensor is None or tensor is value or tuple(tensor.shape) != shape or tensor.dtype != dtype:
                continue
            compared += 1
            if np.allclose(tensor._numpy(), wanted, rtol=1e-5, atol=1e-6):
                return i
            if compared >= limit:
                return None
    return None


def _where(ctx: Context, location: Location) -> str:
    """``line N`` in the finding's own file, else ``path:N``."""
    here = ctx.call_location.path if ctx.call_location else None
    return f"line {location.line}" if location.path == here else f"{location.path}:{location.line}"
