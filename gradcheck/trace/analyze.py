"""Turn one ``tape.gradient`` call with None gradients into findings.

For every source whose gradient is None: a few causes are decided by the source alone
(an integer dtype, a non-trainable variable, a tensor nobody watched); the rest come from
the data-flow graph around the call (``eager`` recorder or the traced ``graph``): the cut
finder locates the op on each path, and sources with no path at all are explained by a
host escape, a function that captured them by value, or plain non-use.
"""

from __future__ import annotations

import fnmatch

from gradcheck import sourcemap
from gradcheck.findings import Finding
from gradcheck.trace import _tf
from gradcheck.trace import graph as graph_mode
from gradcheck.trace.context import Context, Source
from gradcheck.trace.cut_findings import cut_finding, target_outside_findings
from gradcheck.trace.cuts import BLOCK, Cut, find_cuts
from gradcheck.trace.dataflow import TAG_READ, cyclic_gc_paused
from gradcheck.trace.describe import make, merge
from gradcheck.trace.frames import Location
from gradcheck.trace.unreached import unreached_findings

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
    op_type = _tf.missing_gradient_op(error) or str(error).rsplit(":", 1)[-1].strip()
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
            findings.append(cut_finding(ctx, cut, starved, code="GC111"))
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
    ctx.flow.has_gradient = _tf.has_gradient


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
        # a target's gradient starts from ones: a variant (a TensorList, a dataset) has none
        target_tensors = [
            ctx.tensors[k] for k in targets if k in ctx.tensors and _tf.is_differentiable_dtype(ctx.tensors[k].dtype)
        ]
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
            findings.append(cut_finding(ctx, cut, [by_key[k] for k in cut.sources]))
        unreached = [by_key[k] for k in result.unreached] + unkeyed
        findings.extend(unreached_findings(ctx, unreached))
        findings.extend(target_outside_findings(ctx, unreached))
    return merge(findings)


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
        use, as_index = _integer_use(ctx, source)
        if use is not None:  # an input tensor: point at its use (the model call, the embedding)
            variant = "indices" if as_index else "tensor"
            frame = ctx.caller_level_frame(use)  # the user's call that passed it, not a line inside the model
            location = ctx.frame_location(frame) if frame is not None else ctx.op_location(use)
            return _source_finding(ctx, "GC114", source, location, dtype=dtype_name, variant=variant)
        variant = "tensor" if not source.is_variable else ""
        return _source_finding(ctx, "GC114", source, _creation_location(ctx, source), dtype=dtype_name, variant=variant)
    if source.is_variable and not getattr(value, "trainable", True):
        return _source_finding(ctx, "GC115", source, ctx.call_location)
    if not source.is_variable and source.key not in on_tape:
        return _source_finding(ctx, "GC110", source, _creation_location(ctx, source))
    return None


def _integer_use(ctx: Context, source: Source) -> tuple[int | None, bool]:
    """For an integer tensor source: the first recorded op on the way to the targets that
    consumes it, and whether some op takes it (or a value computed from it) as indices,
    an input that can never carry a gradient (then that op)."""
    if source.is_variable or source.key is None:
        return None, False
    flow = ctx.flow
    cone = flow.backward_cone(ctx.target_keys)
    reach = sorted(flow.forward_cone([source.key], within=cone))
    keys = {source.key} | {k for i in reach for k in flow.ops[i].outputs}
    first = next((i for i in reach if flow.ops[i].recorded and source.key in flow.ops[i].inputs), None)
    for i in reach:
        op = flow.ops[i]
        if op.recorded and any(k in keys and k not in op.data for k in op.inputs):
            return i, True
    return first, False


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
        return (origin.location() if origin else None) or ctx.call_location
    loc = ctx.call_location
    if loc is not None and source.name.isidentifier():
        expr = sourcemap.binding_line(loc.path, source.name, loc.line)
        if expr is not None:
            return Location(loc.path, expr.line, expr.column, expr.end_line, expr.end_column)
    return loc


def _source_finding(ctx: Context, code: str, source: Source, location: Location | None, **extra) -> Finding:
    return make(ctx, code, location, [source.name], **extra)
