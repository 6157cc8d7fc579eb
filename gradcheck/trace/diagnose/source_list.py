"""When the source list is the mistake: where it was built, and whether a forward pass that
ran outside the tape is a cause (GC109) or a model the request should not have named (GC108).

A model run before the tape is GC109's bug when the tape was meant to train it. It is the
program's intent when its output is a target (a teacher's soft targets, a frozen model's
features compared with a prediction) or when the tape trains another model whose variables
the request leaves out (a GAN's discriminator step asking for the generator's variables):
then what is wrong is the list of sources, and the line to change is the expression that
built it. Not when the tape was opened in one ``with`` with another (``d_tape, g_tape``):
both tapes are there to train a model each from one forward pass, so a model run before
them is the forward pass that should have been inside (GC109); nor when an earlier request
of the step asked for the model the tape read (the discriminator's own step came first):
then this tape is the one for the model run before it (GC109)."""

from __future__ import annotations

import ast

from gradcheck import sourcemap
from gradcheck.findings import Finding
from gradcheck.trace.diagnose.context import Context, Source
from gradcheck.trace.diagnose.cuts import OUTSIDE, Cut
from gradcheck.trace.diagnose.describe import make
from gradcheck.trace.diagnose.requests import asked_before
from gradcheck.trace.diagnose.roles import SOFT_TARGET, is_target
from gradcheck.trace.record import _tf
from gradcheck.trace.record.dataflow import GRADIENT_CALL, TAG_READ
from gradcheck.trace.record.frames import Location

__all__ = [
    "OTHER_MODEL",
    "TARGET",
    "outside_is_intended",
    "source_list_finding",
    "sources_expression",
    "sources_location",
    "trains_another_model",
]

#: why a model run outside the tape is no cause
TARGET = "target"  # its output is only compared with the prediction
OTHER_MODEL = "other-model"  # the tape trains another model, which the request leaves out


def sources_location(ctx: Context, argument: bool = True) -> Location | None:
    """The expression that built the gradient call's source list: the statement that bound
    the name it passes (``variables = model.variables``), else the sources argument itself
    (``tape.gradient(loss, gen.trainable_variables)``; the whole call when not ``argument``:
    GC115's fix finds the call at the finding), else the call."""
    return sources_expression(ctx.call_location, argument)


def sources_expression(call: Location | None, argument: bool = True) -> Location | None:
    """``sources_location`` for the gradient call at ``call``."""
    if call is None:
        return None
    args = sourcemap.call_arguments(call.path, call.line, call.column, "gradient")
    if not args or len(args) < 2:
        return call
    node = args[1]
    if isinstance(node, ast.Name):
        bound = sourcemap.binding_line(call.path, node.id, call.line)
        if bound is not None:
            return Location(call.path, bound.line, bound.column, bound.end_line, bound.end_column)
        return call
    if not argument:
        return call
    return Location(call.path, node.lineno, node.col_offset + 1, node.end_lineno, (node.end_col_offset or 0) + 1)


def outside_is_intended(ctx: Context, cut: Cut, live, before_tape: bool) -> str | None:
    """Why the forward pass that ``cut`` (an OUTSIDE cut) found outside the tape is the
    program's intent and the sources are the mistake (``TARGET``, ``OTHER_MODEL``), or None
    when moving it into the tape is the fix (GC109). ``live(keys)``: which keys the loss has
    a gradient for."""
    flow = ctx.flow
    if cut.kind != OUTSIDE or cut.op < 0 or not before_tape or flow.ops[cut.op].type == GRADIENT_CALL:
        return None
    if any(f.function in ("build", "__init__") for f in ctx.op_frames(cut.op)):
        return None  # a value computed once when a layer is made: GC109's own variant
    sources = [s for s in ctx.sources if s.key in cut.sources]
    if not sources or not all(s.is_variable for s in sources):
        return None
    if any(flow.ops[j].recorded for s in sources for j in flow.consumers.get(s.key, ())):
        return None  # the tape read some of them: their model did not run entirely outside it
    cone = flow.backward_cone(ctx.target_keys)
    reach = flow.forward_cone([s.key for s in sources], within=cone)
    entries = [
        k
        for i in sorted(reach)
        if not flow.ops[i].recorded
        for k in flow.ops[i].outputs
        if any(flow.ops[j].recorded for j in flow.consumers.get(k, ()) if j in cone)
    ]
    if not entries:
        return None
    if is_target(flow, entries, lambda keys: bool(live(keys)), hops=8, passes=SOFT_TARGET):
        return TARGET
    if any(g is not None for g in ctx.call.flat_grads):
        return None  # some requested variable is trained by this loss: the tape's own model is asked for
    if getattr(ctx.state, "together", False):
        # opened in one `with` with another tape: the two record one forward pass to train two
        # models, and the one run before them is the one neither can train (GC109)
        return None
    if _trained_by_another_request(ctx):
        # the model this tape read is what an earlier request of the step trains (the
        # discriminator's own step): this tape is the one for the model run before it (GC109)
        return None
    reads = [
        k for i in sorted(cone) if flow.ops[i].recorded and flow.ops[i].tag == TAG_READ for k in flow.ops[i].outputs
    ]
    if reads and live(reads):
        return OTHER_MODEL
    return None


def _trained_by_another_request(ctx: Context) -> bool:
    """Every variable the tape read beyond the requested ones was asked for by an earlier
    request (of this step: the requests remembered are the last few)."""
    try:
        read = {id(_tf.handle_of(v)) for v in ctx.call.tape.watched_variables()}
    except (AttributeError, TypeError, ValueError):
        return False
    mine = {id(_tf.handle_of(s.value)) for s in ctx.sources if s.is_variable}
    others = read - mine
    return bool(others) and others <= asked_before(ctx.session)


def trains_another_model(ctx: Context) -> bool:
    """No requested source gets a gradient, while the tape read variables the request leaves
    out on the way to the loss: the request names another model than the one the tape
    trains (whose forward ran outside the tape, or never)."""
    if any(g is not None for g in ctx.call.flat_grads):
        return False
    flow = ctx.flow
    asked = {s.key for s in ctx.sources}
    return any(
        flow.ops[i].recorded and flow.ops[i].tag == TAG_READ and not asked & set(flow.ops[i].inputs)
        for i in flow.backward_cone(ctx.target_keys)
    )


def source_list_finding(ctx: Context, cut: Cut, sources: list[Source], why: str, outside: Location | None) -> Finding:
    """GC108 at the expression that built the source list, naming the forward pass that ran
    outside the tape (``outside``: its statement) and why it is no cause."""
    variant = "outside-target" if why == TARGET else "other-model"
    finding = make(ctx, "GC108", sources_location(ctx), [s.name for s in sources], variant=variant)
    ran = f"at line {outside.line}" if outside is not None else "before the tape"
    if why == TARGET:
        finding.notes.append(
            f"their model ran {ran}, before the tape, and its output is only a target the prediction is "
            "compared with: a constant to this loss, on purpose"
        )
    else:
        finding.notes.append(
            f"their model ran {ran}, before the tape; the tape trains another model, whose variables this "
            "request leaves out"
        )
    return finding
