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
from gradcheck.trace.diagnose.context import (
    Context,
    Source,
    build_flow,
    key_of,
    new_context,
    recover_hidden_reads,
    source_tensor,
)
from gradcheck.trace.diagnose.cut_findings import (
    cut_finding,
    outside_location,
    ran_before_tape,
    stopped_target_finding,
    target_outside_findings,
)
from gradcheck.trace.diagnose.cuts import BLOCK, OUTSIDE, Cut, find_cuts
from gradcheck.trace.diagnose.describe import make, merge
from gradcheck.trace.diagnose.escape import escaped_target_findings
from gradcheck.trace.diagnose.probe import deliberate_probe
from gradcheck.trace.diagnose.roles import stops_a_target
from gradcheck.trace.diagnose.source_list import outside_is_intended, source_list_finding, sources_location
from gradcheck.trace.diagnose.unreached import unreached_findings
from gradcheck.trace.record import _tf, frames
from gradcheck.trace.record.call import GradientCall
from gradcheck.trace.record.dataflow import cyclic_gc_paused
from gradcheck.trace.record.frames import Location
from gradcheck.trace.record.registry import register

__all__ = ["analyse", "no_gradient_registered"]


@register(
    "none",
    "GC101",
    "GC102",
    "GC103",
    "GC104",
    "GC105",
    "GC106",
    "GC107",
    "GC108",
    "GC109",
    "GC110",
    "GC112",
    "GC113",
    "GC114",
    "GC115",
    "GC116",
)
@cyclic_gc_paused()
def analyse(call: GradientCall) -> list[Finding]:
    """Explain every source of ``call`` whose gradient is None."""
    flat_grads = call.flat_grads
    if len(flat_grads) != len(call.flat_sources):
        return []
    starved_idx = [i for i, g in enumerate(flat_grads) if g is None]
    if not starved_idx:
        return []
    ctx = new_context(call)
    starved = [ctx.sources[i] for i in starved_idx]
    starved = [s for s in starved if not _allowed(s.name, call.session.allow_none)]
    if not starved:
        return []
    return _diagnose(ctx, starved)


@register("lookup", "GC111")
@cyclic_gc_paused()
def no_gradient_registered(call: GradientCall) -> list[Finding]:
    """``tape.gradient`` raised LookupError: an op on the path has no gradient function."""
    error = call.error
    op_type = _tf.missing_gradient_op(error) or str(error).rsplit(":", 1)[-1].strip()
    ctx = new_context(call)
    build_flow(ctx)
    cone = ctx.flow.backward_cone(ctx.target_keys)
    culprits = [i for i in sorted(cone) if ctx.flow.ops[i].type == op_type]
    findings = []
    for culprit in culprits:
        starved = [s for s in ctx.sources if s.key is not None and culprit in ctx.flow.forward_cone([s.key], cone)]
        if not starved:
            continue
        forward = _differentiated(ctx.flow, culprit, cone)
        at = culprit if forward is None else forward
        cut = Cut(BLOCK, at, {s.key for s in starved}, [], cone, ctx.target_keys)
        if forward is None:
            findings.append(cut_finding(ctx, cut, starved, code="GC111"))
        else:  # named as the op without a gradient, found where the user wrote its forward op
            findings.append(cut_finding(ctx, cut, starved, code="GC111", label=op_type, variant="second-order"))
    return merge(findings)


def _differentiated(flow, culprit: int, cone: set[int]) -> int | None:
    """The forward op that ``culprit``, an op of a gradient, differentiates
    (``ResizeNearestNeighborGrad`` is the gradient of a ``ResizeNearestNeighbor``): a second
    derivative (a gradient penalty, a Hessian) needs the gradient of that gradient. None
    when ``culprit`` is no gradient op, or no such forward op was recorded before it."""
    kind = flow.ops[culprit].type
    if not kind.endswith("Grad"):
        return None
    forward = kind[: -len("Grad")]
    before = [i for i in cone if i < culprit and flow.ops[i].type == forward and flow.ops[i].recorded]
    return max(before) if before else None


def _allowed(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _live_fn(ctx: Context):
    """Liveness, asked of the shadow tape: which keys the targets have a gradient for."""
    source_tensors = {s.key: source_tensor(s.value) for s in ctx.sources if s.key is not None}

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


def _diagnose(ctx: Context, starved: list[Source]) -> list[Finding]:
    findings: list[Finding] = []
    build_flow(ctx)
    if deliberate_probe(ctx):
        return []  # the program's own check that a stopped value has no gradient
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
            recover_hidden_reads(ctx, [s for s in rest if s.is_variable and s.key is not None])
        if not ctx.flat_targets:  # `tape.gradient(model.losses, ...)` with no layer loss: nothing to differentiate
            return merge([*findings, _empty_target_finding(ctx, rest)])
        escaped = escaped_target_findings(ctx, rest)
        if escaped is not None:  # the loss itself left TensorFlow: that is every source's cause
            return merge(findings + escaped)
        by_key = {s.key: s for s in rest if s.key is not None}
        unkeyed = [s for s in rest if s.key is None]
        live = _live_fn(ctx)
        intended = _intended_stop_fn(ctx)
        result = find_cuts(ctx.flow, ctx.target_keys, by_key, live, on_tape, intended)
        for cut in _rank(result.cuts, intended):
            cut_sources = [by_key[k] for k in cut.sources]
            if _stops_a_target(ctx, cut, live):
                findings.append(stopped_target_finding(ctx, cut, cut_sources))
            elif (why := _outside_on_purpose(ctx, cut, live)) is not None:
                findings.append(source_list_finding(ctx, cut, cut_sources, why, outside_location(ctx, cut)))
            else:
                findings.append(cut_finding(ctx, cut, cut_sources))
        # in the order of the sources (a set's order would change the notes' order from run to run)
        unreached = sorted((by_key[k] for k in result.unreached), key=lambda s: s.index) + unkeyed
        findings.extend(unreached_findings(ctx, unreached))
        findings.extend(target_outside_findings(ctx, unreached))
    return merge(findings)


def _empty_target_finding(ctx: Context, sources: list[Source]) -> Finding:
    """The target is empty (an empty list: ``model.losses`` when no layer added a loss):
    there is no loss at all, and the request is the line to change."""
    location = ctx.call_location
    args = sourcemap.call_arguments(location.path, location.line, location.column, "gradient") if location else None
    target = sourcemap.short_text(args[0]) if args else None
    finding = make(
        ctx,
        "GC108",
        location,
        [s.name for s in sources],
        variant="empty-target",
        target=f"`{target}`" if target else "the target",
    )
    finding.notes.append(
        f"the target handed to `tape.gradient`{f' (`{target}`)' if target else ''} is empty: there is no loss"
    )
    return finding


def _intended_stop_fn(ctx: Context):
    """Whether a ``tf.stop_gradient`` stops a target (a TD target, an advantage): compared
    with a value made from the trained variables, live or not (a prediction cut elsewhere
    is still the prediction)."""
    memo: dict[int, bool] = {}

    def intended(i: int) -> bool:
        if i not in memo:
            op = ctx.flow.ops[i]
            memo[i] = op.type == "StopGradient" and stops_a_target(ctx.flow, i, lambda keys: bool(keys))
        return memo[i]

    return intended


def _rank(cuts: list[Cut], intended) -> list[Cut]:
    """A stop on a target is the program's intent: it ranks below any other cut of the same
    variables (an integer index on the prediction's path), and is reported only for
    variables no other cut explains."""
    others = set().union(*(c.sources for c in cuts if not (c.kind == BLOCK and c.op >= 0 and intended(c.op))))
    out = []
    for cut in cuts:
        if cut.kind == BLOCK and cut.op >= 0 and intended(cut.op):
            cut.sources = cut.sources - others
            if not cut.sources:
                continue
        out.append(cut)
    return out


def _outside_on_purpose(ctx: Context, cut: Cut, live) -> str | None:
    """A forward pass before the tape that is no cause: the sources are the mistake."""
    if cut.kind != OUTSIDE or cut.op < 0:
        return None
    return outside_is_intended(ctx, cut, lambda keys: live(ctx.target_keys, set(keys)), ran_before_tape(ctx, cut.op))


def _stops_a_target(ctx: Context, cut: Cut, live) -> bool:
    """The cut is a ``tf.stop_gradient`` that keeps a target constant on purpose (the sources
    reach the loss only through the advantage, the TD target or the teacher's output)."""
    if cut.kind != BLOCK or cut.op < 0 or ctx.flow.ops[cut.op].type != "StopGradient":
        return False
    return stops_a_target(ctx.flow, cut.op, lambda keys: bool(live(ctx.target_keys, keys)))


def _source_only_cause(ctx: Context, source: Source, on_tape: set) -> Finding | None:
    value = source.value
    dtype = getattr(value, "dtype", None)
    if source.is_variable and not getattr(value, "trainable", True):
        # a non-trainable variable among the sources (`model.variables`: BatchNorm statistics,
        # a Dropout's integer seed state): the source list is what to change, whatever its dtype
        return _source_finding(ctx, "GC115", source, sources_location(ctx, argument=False))
    if dtype is not None and not _tf.is_differentiable_dtype(dtype):
        dtype_name = _tf.tf.as_dtype(dtype).name
        cast = _cast_from_float(ctx, source)
        if cast is not None:  # the line that made it an integer is the one to change, not its uses
            return _source_finding(ctx, "GC114", source, cast, dtype=dtype_name, variant="tensor")
        use, as_index = _integer_use(ctx, source)
        if use is not None:  # an input tensor: point at its use (the model call, the embedding)
            variant = "indices" if as_index else "tensor"
            frame = ctx.caller_level_frame(use)  # the user's call that passed it, not a line inside the model
            location = ctx.frame_location(frame) if frame is not None else ctx.op_location(use)
            return _source_finding(ctx, "GC114", source, location, dtype=dtype_name, variant=variant)
        variant = "tensor" if not source.is_variable else ""
        return _source_finding(ctx, "GC114", source, _creation_location(ctx, source), dtype=dtype_name, variant=variant)
    if not source.is_variable and source.key not in on_tape:
        before = _used_only_before_tape(ctx, source)
        if before is not None:  # watching would not help: the forward pass is outside the tape
            return cut_finding(ctx, Cut(OUTSIDE, before, {source.key}), [source])
        wrong = _other_watch(ctx, source)
        if wrong is not None:  # the tape watches another tensor instead: that watch is the line to change
            finding = _source_finding(ctx, "GC110", source, wrong)
            finding.notes.append(f"the tape watches another tensor at line {wrong.line}, not {source.name}")
            return finding
        return _source_finding(ctx, "GC110", source, _creation_location(ctx, source))
    return None


def _cast_from_float(ctx: Context, source: Source) -> Location | None:
    """For an integer tensor source made by casting a float (``x = tf.cast(x, tf.int32)``
    before ``tape.watch(x)``): the user's statement of that cast."""
    if source.is_variable or source.key is None:
        return None
    flow = ctx.flow
    producer = flow.producer.get(source.key)
    for _ in range(8):  # back through integer recasts (float -> int64 -> int32)
        if producer is None or flow.ops[producer].type != "Cast" or len(flow.ops[producer].inputs) != 1:
            return None  # no cast (integer data: ids, labels): its use is where it is pointed at
        (key,) = flow.ops[producer].inputs
        if flow.is_differentiable(key):
            break
        producer = flow.producer.get(key)
    else:
        return None
    frame = ctx.caller_level_frame(producer)
    return ctx.frame_location(frame, ("cast",)) if frame is not None else ctx.op_location(producer)


def _used_only_before_tape(ctx: Context, source: Source) -> int | None:
    """For an unwatched tensor source (Grad-CAM's ``conv_out``): the first op that used it on
    the way to the targets, when every such use ran before the tape recorded. The targets
    depend on it only through a forward pass made outside the tape, so a ``tape.watch``
    would not help (GC109, at that pass). None when some use is on the tape (GC110)."""
    if source.key is None:
        return None
    flow = ctx.flow
    cone = flow.backward_cone(ctx.target_keys, data=True)
    uses = [
        i
        for i in sorted(flow.forward_cone([source.key], within=cone, data=True))
        if source.key in flow.inputs_of(flow.ops[i], True)
    ]
    if not uses or any(flow.ops[i].recorded for i in uses):
        return None
    first = uses[0]
    return first if ran_before_tape(ctx, first) else None


def _other_watch(ctx: Context, source: Source) -> Location | None:
    """The one ``tape.watch`` of this tape, when it watched tensors that are not sources
    (``tape.watch(x)`` while the gradient is asked for ``adv_x``)."""
    sources = {id(s.value) for s in ctx.sources}
    sites = [
        site
        for site, tensors in ctx.state.watch_sites
        if site is not None and not any(id(t) in sources for t in tensors)
    ]
    if len(ctx.state.watch_sites) != 1 or len(sites) != 1:
        return None
    return frames.site_location(sites[0], hints=("watch",))


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
        on.add(key_of(ctx, t))
    try:
        watched_variables = ctx.tape.watched_variables()
    except (AttributeError, RuntimeError):
        watched_variables = ()
    for variable in watched_variables:
        on.add(key_of(ctx, _tf.handle_of(variable)))
    on.discard(None)
    for op in flow.ops:
        if op.recorded and any(k in on and (flow.is_differentiable(k) or k in flow.resources) for k in op.inputs):
            on.update(op.outputs)
    return on


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
