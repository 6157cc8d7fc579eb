"""Sources with no data-flow path to the loss at all: where their value left TensorFlow
(GC105/GC106, value provenance), a function that captured them by value (GC116), or plain
non-use (GC108, with where the variable was made, or the copy of a watched tensor the loss
used instead)."""

from __future__ import annotations

from gradcheck import sourcemap
from gradcheck.findings import Finding
from gradcheck.trace.diagnose.context import Context, Source
from gradcheck.trace.diagnose.cut_findings import cut_finding
from gradcheck.trace.diagnose.cuts import BOUNDARY, Cut
from gradcheck.trace.diagnose.describe import make, op_label
from gradcheck.trace.diagnose.dropped_term import another_requests_target, loss_definition, loss_statement
from gradcheck.trace.diagnose.escape import escape_fields, is_log_line
from gradcheck.trace.diagnose.loop_bodies import dropped_in_loop
from gradcheck.trace.diagnose.source_list import sources_location, trains_another_model
from gradcheck.trace.record import _tf, frames
from gradcheck.trace.record.dataflow import TAG_FUNCTION, TAG_READ
from gradcheck.trace.record.frames import Location

__all__ = ["unreached_findings"]


def unreached_findings(ctx: Context, sources: list[Source]) -> list[Finding]:
    findings = []
    cone = ctx.flow.backward_cone(ctx.target_keys) if ctx.flow else set()
    called = [(i, g) for i in sorted(cone) if ctx.flow.ops[i].tag == TAG_FUNCTION for g in [ctx.function_graph(i)] if g]
    for source in sources:
        reach = ctx.flow.forward_cone([source.key]) if source.key is not None else set()
        escape = _escape_site(ctx, source, reach)
        if escape is not None:
            site, key, code = escape
            location = frames.site_location(site)
            extra = escape_fields(location) if code == "GC105" else {}
            findings.append(_located(ctx, code, [source], location, **extra))
            findings.extend(_cut_before(ctx, key, source))
            continue
        host = _host_function_reading(ctx, source, cone)
        if host is not None:
            findings.append(_host_function_finding(ctx, source, host))
            continue
        piped = _pipeline_read(ctx, source)
        if piped is not None:
            findings.append(piped)
            continue
        origin = ctx.session.variable_origin(source.value) if source.is_variable else None
        by_value = next((i for i, graph in called if origin is not None and origin.created_in(graph)), None)
        if by_value is not None:
            findings.append(_captured_finding(ctx, source, origin, by_value))
            continue
        placeholder = _placeholder_read(ctx, source) if not reach else None
        if placeholder is not None:
            findings.append(placeholder)
            continue
        findings.append(_unused_finding(ctx, source, reach))
    return findings


def _placeholder_read(ctx: Context, source: Source) -> Finding | None:
    """A Keras 3 variable never read on the tape, whose value a nested ``@tf.function`` took
    while it was traced before the variable was initialized: that trace computed with the
    initializer's value, a constant, and every call reuses it (GC116, at its decorator)."""
    read = getattr(source.value, "_gc_placeholder_read", None) if source.is_variable else None
    if not read:
        return None
    frame = read[0]  # the read itself, in the decorated function (not a caller's decorator)
    decorator = sourcemap.function_decorator(frame.path, frame.line, "function")
    if decorator is None:
        return None
    location = Location(frame.path, decorator.line, decorator.column, decorator.end_line, decorator.end_column)
    finding = _located(ctx, "GC116", [source], location, function=decorator.text)
    finding.notes.append(
        f"{source.name} was read at line {frame.line} while this function was traced, before the variable "
        "was initialized: the trace computed with its initial value, a constant"
    )
    return finding


def _pipeline_read(ctx: Context, source: Source) -> Finding | None:
    """A variable read only inside a ``tf.data`` function (``dataset.map(f)``): the
    pipeline computed with it outside any tape (GC109, at the read in ``f``)."""
    if not source.is_variable:
        return None
    reads = ctx.session.__dict__.get("pipeline_reads") or {}
    location = reads.get(id(_tf.handle_of(source.value)))
    if location is None:
        return None
    finding = _located(ctx, "GC109", [source], location)
    finding.notes.append(
        f"{source.name} is read inside a tf.data function (dataset.map/filter), which runs in the input "
        "pipeline: no tape records it, and the batches reach the tape as constants"
    )
    return finding


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
        # the value went into a resource and left from there: ``model.predict(t)`` builds a
        # dataset from ``t``, ``MakeIterator`` writes it into an iterator, and the predict
        # function reads the iterator and hands NumPy back (``.numpy()`` on its outputs)
        for i in _through_resources(ctx.flow, reach):
            for key in ctx.flow.ops[i].outputs:
                found.extend((seq, site, code, key) for seq, site, code in escapes.get(key, ()))
    # An escape is the cause only if what left came back into this loss: a tensor made on
    # the host after it (a constant, NumPy's result) that an op on the way to the target
    # consumes. A `.numpy()` to sample an action, or for a log line, explains nothing here.
    data, anyhow = _returned_after(ctx)
    # a float that left comes back as data; an integer (an argmax padded with NumPy) as indices
    # and the tensor itself went nowhere on the tape (a sampled action's probabilities go on
    # into the log-probability: their `.numpy()` only picked the action)
    flow = ctx.flow
    found = [
        e
        for e in found
        # the variable's own value taken out before the tape recorded (``get_weights()`` to
        # copy a target network): the tape reads the variable afresh, nothing of that came back
        if not (_read_of(flow, e[3], source.key) and e[0] < ctx.state.start_seq)
        and _key_after(data if flow.is_differentiable(e[3]) else anyhow, e[3])
        and _dead_end(flow, e[3])
        and not is_log_line(frames.site_location(e[1]))
    ]
    if not found:
        return None
    inside = [e for e in found if e[0] >= ctx.state.start_seq]
    _, site, code, key = max(inside or found, key=lambda e: e[0])
    return site, key, code


def _read_of(flow, key, source_key) -> bool:
    """``key`` is the source itself, or its value as it is (a read, an identity of one)."""
    for _ in range(8):
        if key == source_key:
            return True
        p = flow.producer.get(key)
        if p is None or not flow.ops[p].inputs or not (flow.ops[p].tag == TAG_READ or flow.ops[p].type == "Identity"):
            return False
        key = flow.ops[p].inputs[0]
    return False


def _returned_after(ctx: Context) -> tuple[list[int], list[int]]:
    """Eager keys of the tensors with no producer (host values brought in) that ops on the
    way to the target consume, sorted: those consumed as data (not an axis, not indices),
    and all. Eager tensor ids grow with creation, so one made after an escaped tensor has
    a larger key. Sources and watched tensors are not returns."""
    flow = ctx.flow
    if "returned" in ctx.call.memo:
        return ctx.call.memo["returned"]
    own = {s.key for s in ctx.sources} | {getattr(t, "_id", None) for t in ctx.state.watched}
    data, anyhow = set(), set()
    for i in flow.backward_cone(ctx.target_keys):
        op = flow.ops[i]
        for k in op.inputs:
            if k not in flow.producer and k not in own and isinstance(k, int):
                anyhow.add(k)
                if k in op.data and flow.is_differentiable(k):
                    data.add(k)
    for t in ctx.flat_targets:  # a constant target is itself what came back
        k = getattr(t, "_id", None)
        if isinstance(k, int) and k not in flow.producer:
            data.add(k)
            anyhow.add(k)
    ctx.call.memo["returned"] = out = (sorted(data), sorted(anyhow))
    return out


def _dead_end(flow, key) -> bool:
    """No op recorded on the tape consumes ``key``."""
    return not any(flow.ops[j].recorded for j in flow.consumers.get(key, ()))


def _key_after(returned: list[int], key) -> bool:
    return isinstance(key, int) and bool(returned) and returned[-1] > key


def _through_resources(flow, reach: set[int]) -> set[int]:
    """The ops that depend on ``reach`` through a resource written from it: an op of
    ``reach`` takes a resource it did not make (an iterator, a queue), and later ops read
    that resource. Only consumers after the write (index order is execution order)."""
    extra: set[int] = set()
    for i in sorted(reach):
        op = flow.ops[i]
        if op.outputs and any(k in flow.consumers for k in op.outputs):
            continue  # the value goes on through its outputs: followed already
        for key in op.inputs:
            if key not in flow.resources or flow.producer.get(key) in reach:
                continue
            later = [j for j in flow.consumers.get(key, ()) if j > i and j not in reach]
            for j in later:
                extra.add(j)
                extra |= flow.forward_cone(flow.ops[j].outputs)
    return extra


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
            out.append(cut_finding(ctx, Cut(BOUNDARY, i, {source.key}), [source]))
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
    compiled = _compiled_without_loss(ctx, source) if source.is_variable else None
    origin = ctx.session.variable_origin(source.value) if source.is_variable else None
    created = origin.location() if origin is not None else None
    if (
        created is not None
        and origin.function == "call"
        and _never_read(ctx, reach)
        and _made_again(ctx, source, origin)
    ):
        # ``add_weight`` in ``call()``: each call makes new weights; these are an earlier call's.
        # One finding for the layer: at its first such weight, naming them all.
        return _located(ctx, "GC108", [source], _first_made_alike(ctx, origin) or created, variant="call")
    uses = _uses(ctx, reach)
    if compiled is not None:
        # ``model.fit``'s loss is what ``compile`` made: an output left without one is the cause
        location, outputs = compiled
        names = ", ".join(outputs)
        finding = _located(ctx, "GC108", [source], location, variant="compile", outputs=names)
        finding.notes.append(f"`compile` gives no loss to the model's output{'s' if len(outputs) > 1 else ''} {names}")
    else:
        # the line to change is where a value made from it was left, else the gradient call
        sinks = _sinks(ctx, uses)
        dropped = dropped_in_loop(ctx, ctx.flow.ops[sinks[-1]].site) if sinks else None
        dead_end = _dead_end_location(ctx, sinks) if dropped is None else None
        if dropped is not None:
            finding = _located(ctx, "GC108", [source], dropped, variant="loop")
        elif (
            dead_end is not None
            and ctx.state.together
            and another_requests_target(ctx, dead_end)
            and loss_definition(ctx) is not None
        ):
            finding = _other_loss(ctx, source)
        elif dead_end is not None:
            name = sourcemap.bound_name(dead_end.path, dead_end.line)
            value = f"`{name}`" if name else "the value computed here"
            loss = loss_statement(ctx, sinks[-1], dead_end)
            if loss is not None:  # a loss term computed, and left out of the loss
                finding = _located(
                    ctx, "GC108", [source], loss, variant="dropped-term", value=value, value_name=name or "term"
                )
                finding.notes.append(
                    f"{value} is computed from them at line {dead_end.line} and never reaches the loss"
                )
            else:
                finding = _located(ctx, "GC108", [source], dead_end, variant="dead-end", value=value)
        else:
            # a watched tensor no value of the loss was made from: the variable fix does not fit
            tensor = {} if source.is_variable else {"variant": "tensor"}
            # tapes opened together train a model each, and this one's model ran on it (its
            # output went into the other tape's loss): the request is right, its loss is not
            if sinks and source.is_variable and ctx.state.together and loss_definition(ctx) is not None:
                finding = _other_loss(ctx, source)
            elif trains_another_model(ctx):  # the model the request names never ran on this tape
                finding = _located(ctx, "GC108", [source], sources_location(ctx), **tensor)
            else:
                finding = _located(ctx, "GC108", [source], ctx.call_location, **tensor)
    if uses:
        line = ctx.op_line(uses[0])
        if line is not None:
            finding.notes.append(f"{source.name} is read at line {line}, but that result never reaches the loss")
    else:
        finding.notes.append(f"{source.name} is never read while the tape records")
    if created is not None:
        finding.notes.append(f"{source.name} is created at {_where(ctx, created)}")
        hint = sourcemap.unread_attribute_hint(created.path, created.line)
        if hint:
            finding.notes.append(hint)
    return finding


def _other_loss(ctx: Context, source: Source) -> Finding:
    """Tapes opened together train a model each, and this one's model ran on it, its output
    going into the other tape's loss: the request is right, the loss it asks about is not."""
    finding = _located(ctx, "GC108", [source], loss_definition(ctx), variant="other-loss")
    finding.notes.append("the output of their model goes into another request's loss, not into this one")
    return finding


def _uses(ctx: Context, reach: set[int]) -> list[int]:
    """The recorded ops of the source's forward cone, in order, but those that initialize
    it: what a ``VarIsInitializedOp`` decides runs only to give a variable its first value
    (Keras builds weights inside the traced step), it does not use the variable."""
    flow = ctx.flow
    checks = {i for i in reach if flow.ops[i].type == "VarIsInitializedOp"}
    initializing = checks | flow.forward_cone([k for i in checks for k in flow.ops[i].outputs])
    return [i for i in sorted(reach) if flow.ops[i].recorded and i not in initializing]


def _sinks(ctx: Context, uses: list[int]) -> list[int]:
    """The uses of the source that leave a value made from it which no recorded op consumes."""
    flow = ctx.flow
    return [
        i
        for i in uses
        if flow.ops[i].outputs  # a value left; not a write into the variable
        and not all(k in flow.resources for k in flow.ops[i].inputs)  # made from it, not a bare read
        and not any(flow.ops[j].recorded for k in flow.ops[i].outputs for j in flow.consumers.get(k, ()))
    ]


def _dead_end_location(ctx: Context, sinks: list[int]) -> Location | None:
    """Where the last value made from the source was left: the latest of the ``sinks``, at
    the first of its user frames (innermost out) that does not return the value on to its
    caller. A layer's output dropped by the model that called it (``enc = self.encoder(x)``
    then ``return self.head(x)``) is at the model's line, not inside the layer. None when
    only the gradient or fit call is left."""
    if not sinks:
        return None
    here = ctx.call_location
    found = ctx.op_frames(sinks[-1])
    if not found or (here is not None and (found[0].path, found[0].line) == (here.path, here.line)):
        # a functional model's layer inside `fit` (no user frame but the fit call): where the
        # user applied the layer whose output is left
        located = ctx.op_location(sinks[-1])
        if located is not None and (here is None or (located.path, located.line) != (here.path, here.line)):
            return located
        return None
    passed = None  # the last frame that returned the value on to its caller
    for frame in found:
        if here is not None and (frame.path, frame.line) == (here.path, here.line):
            if passed is not None and not _user_gradient_call(here):
                # a layer handed it on to the functional model that `fit` trains, which left it
                # (a readout that unpacks a layer's outputs and pools one): where it was made
                return ctx.frame_location(passed)
            return None
        if sourcemap.differentiated_here(frame.path, frame.line):
            return None  # another gradient call's target: used, this call asked the wrong sources
        if not sourcemap.passes_on(frame.path, frame.line):
            if passed is not None and sourcemap.keeps_all_it_binds(frame.path, frame.line):
                # this line uses all it gets back: the value was left on the way up (a
                # functional model returns one of a layer's outputs), where it was made
                return ctx.frame_location(passed)
            return ctx.frame_location(frame)
        passed = frame
    return None


def _user_gradient_call(location: Location) -> bool:
    """Whether ``location`` is the user's own ``.gradient(...)`` call (not ``model.fit``,
    whose gradient call is Keras's)."""
    return sourcemap.call_arguments(location.path, location.line, location.column, "gradient") is not None


def _first_made_alike(ctx: Context, origin) -> Location | None:
    """The first creation line, among the sources, of variables made by the same code."""
    code = origin.site[0] if origin.site is not None else None
    lines = []
    for other in ctx.sources:
        theirs = ctx.session.variable_origin(other.value) if other.is_variable else None
        if theirs is not None and theirs.site is not None and theirs.site[0] is code:
            where = theirs.location()
            if where is not None:
                lines.append((where.line, where.column, where))
    return min(lines, key=lambda item: item[:2])[2] if lines else None


def _made_again(ctx: Context, source: Source, origin) -> bool:
    """Whether another source was created by the same line (``call()`` ran it again), not a
    weight made once, lazily, on the first call."""
    for other in ctx.sources:
        if other is not source and other.is_variable:
            theirs = ctx.session.variable_origin(other.value)
            if theirs is not None and theirs.site == origin.site:
                return True
    return False


def _never_read(ctx: Context, reach: set[int]) -> bool:
    return not any(ctx.flow.ops[i].recorded for i in reach)


def _compiled_without_loss(ctx: Context, source: Source) -> tuple[Location, list[str]] | None:
    """The ``compile`` of a multi-output model holding ``source`` that leaves outputs without
    a loss (a shorter ``loss`` or ``loss_weights`` list, a dict missing an output), and those
    outputs; None otherwise."""
    handle = id(_tf.handle_of(source.value))
    for ref, site, loss, weights in list(ctx.session.compiled.values()):
        model = ref()
        if model is None or site is None:
            continue
        try:
            names = [str(n) for n in model.output_names or ()]
            held = any(id(_tf.handle_of(v)) == handle for v in model.trainable_variables)
        except Exception:  # noqa: BLE001 - a model not built, or without named outputs
            continue
        if len(names) < 2 or not held:
            continue
        missing = outputs_without_loss(names, loss, weights)
        if missing:
            return frames.site_location(site), missing
    return None


def outputs_without_loss(names: list[str], loss, weights) -> list[str]:
    """Which of a model's outputs ``compile(loss=..., loss_weights=...)`` gives no loss."""
    if loss is None:
        return []  # no loss at all: another problem
    missing: set[str] = set()
    if isinstance(loss, dict):
        missing |= {n for n in names if loss.get(n) is None}
    elif isinstance(loss, (list, tuple)):
        missing |= {n for i, n in enumerate(names) if i >= len(loss) or loss[i] is None}
    if isinstance(weights, dict):
        missing |= {n for n in names if n not in weights}
    elif isinstance(weights, (list, tuple)):
        missing |= {n for i, n in enumerate(names) if i >= len(weights)}
    return [n for n in names if n in missing]


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
