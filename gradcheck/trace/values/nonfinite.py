"""GC204 non-finite-loss: the loss of a checked step is NaN or Inf.

The guard is one reduction on the loss: ``is_finite`` of the targets, on the host in eager
mode, and in a traced function (``tf.function``, ``fit``) a ``tf.cond`` whose diagnosing
branch runs only when the loss is not finite. Only then are the forward values read: in
eager mode the tensors the recorder kept; in a traced step the leaves of the loss's
backward cone are fed to a host callback in that branch, and the rest is computed again
from them (``recompute``). ``diagnose.nonfinite`` finds the op where the first non-finite
value was made.

The value checks look at the first step of each eager call site; a later step of a site
(``--steps N``, or any step while ``install()``/``watch()`` is on) gets the guard alone,
and a diagnosis only when its loss is not finite.

A session that stays on (``install()``/``watch()``) keeps Python out of a traced step's
graph as GC202 does (``mailbox``): the branch taken on a non-finite loss stores the fed
values in the check's box, and the host diagnoses them when it next looks. Under dynamic
loss scaling the guard is on the unscaled loss: a scaled loss that overflows is how a
``LossScaleOptimizer`` finds its scale (it skips that step).
"""

from __future__ import annotations

import weakref

import numpy as np

from gradcheck.findings import Finding
from gradcheck.trace.diagnose.context import build_flow, new_context
from gradcheck.trace.diagnose.describe import make, op_label
from gradcheck.trace.diagnose.nonfinite import Origin, find_origin, nonfinite
from gradcheck.trace.record import _tf, hostpoint
from gradcheck.trace.record.call import GradientCall
from gradcheck.trace.record.dataflow import WriteKey
from gradcheck.trace.record.errors import internal_error
from gradcheck.trace.record.registry import register
from gradcheck.trace.values import mailbox, recompute
from gradcheck.trace.values.checked import Checked, checked_call, unscaled_loss
from gradcheck.trace.values.frontier.analysis import Analysis
from gradcheck.trace.values.layers import blame_location
from gradcheck.trace.values.xla import in_xla

__all__ = ["check", "loss_finite"]


@register("values", "GC204")
def check(call: GradientCall) -> list[Finding]:
    """GC204 on ``call``: eager, now; in a traced function, when it runs."""
    checked = checked_call(call)
    if checked is None and call.eager:
        checked = _later_step(call)  # a call site checked on an earlier step (``--steps N``)
    if checked is None:
        return []
    if checked.eager:
        targets = _guarded(call, _float_targets(checked))
        if loss_finite([np.asarray(t._numpy()) for t in targets]):
            return []
        return _findings(checked, _eager_values(checked))
    if not in_xla(call.graph, call.session):
        _guard_graph(checked)
    return []


def _guarded(call: GradientCall, targets: list) -> list:
    """What the guard looks at: the loss before a LossScaleOptimizer scaled it, when the
    target is a scaled loss (its overflow is the optimizer's business), else ``targets``."""
    loss = unscaled_loss(call)
    return targets if loss is None else [loss]


def _later_step(call: GradientCall) -> Checked | None:
    """``call`` ready for a diagnosis when its loss is not finite (the guard only otherwise):
    the value checks look at the first step of each call site, a loss may go NaN later."""
    if all(g is None for g in call.flat_grads):
        return None
    targets = [t for t in _guarded(call, call.flat_targets) if _tf.is_tensor(t) and hasattr(t, "_numpy")]
    try:
        if loss_finite([np.asarray(t._numpy()) for t in targets]):
            return None
    except (ValueError, TypeError):
        return None
    ctx = new_context(call)
    build_flow(ctx)
    return Checked(call, ctx)


def loss_finite(values) -> bool:
    """The guard: whether every value of the loss is finite."""
    return not any(nonfinite(v) for v in values)


def _float_targets(checked: Checked) -> list:
    out = []
    for t in checked.ctx.flat_targets:
        dtype = getattr(t, "dtype", None)
        if (
            _tf.is_tensor(t)
            and dtype is not None
            and _tf.is_differentiable_dtype(dtype)
            and not _tf.tf.as_dtype(dtype).is_complex
        ):
            out.append(t)
    return out


# -- the forward values ---------------------------------------------------------------------
def _cone_keys(checked: Checked) -> list:
    """Keys of the values the loss depends on (outputs and inputs of its backward cone)."""
    flow = checked.ctx.flow
    keys: dict = {}
    for i in sorted(flow.backward_cone(checked.ctx.target_keys, data=False), reverse=True):
        op = flow.ops[i]
        for k in (*op.outputs, *op.inputs):
            if k not in flow.resources and not isinstance(k, WriteKey):
                keys[k] = None
    return list(keys)


def _eager_values(checked: Checked) -> dict:
    ctx = checked.ctx
    orphans = ctx.session.recorder.orphans
    out: dict = {}
    for k in _cone_keys(checked):
        t = ctx.tensors.get(k)
        if t is None:
            t = orphans.get(k)
        if t is None or not hasattr(t, "_numpy"):
            continue
        try:
            out[k] = np.asarray(t._numpy())
        except (ValueError, TypeError):  # strings, resources
            continue
    for k, t in zip(ctx.target_keys, ctx.flat_targets, strict=False):
        if hasattr(t, "_numpy"):
            out.setdefault(k, np.asarray(t._numpy()))
    return out


def _shippable(t) -> bool:
    return t.dtype.name not in ("resource", "variant", "string")


def _guard_graph(checked: Checked) -> None:
    """Add to the function being traced: ``is_finite`` of the loss, and a branch that feeds
    the host callback only when it is not."""
    tf = _tf.tf
    ctx = checked.ctx
    targets = [t for t in _float_targets(checked) if getattr(t, "graph", None) is ctx.graph]
    guarded = [t for t in _guarded(checked.gradient_call, targets) if getattr(t, "graph", None) is ctx.graph]
    if not targets or not guarded:
        return
    wanted = [(k, ctx.tensors.get(k)) for k in _cone_keys(checked)]
    wanted = [(k, t) for k, t in wanted if t is not None and getattr(t, "graph", None) is ctx.graph and _shippable(t)]
    plan = recompute.plan([t for _, t in wanted], ctx.graph, {t.name for t in targets})
    if plan is not None:
        fed_keys = [_graph_key(t) for t in plan.leaves]
        fed = list(plan.leaves)
    else:
        fed_keys, fed = [k for k, _ in wanted], [t for _, t in wanted]
    probe = _Probe(checked, plan, fed_keys, [k for k, _ in wanted])
    probe.entry = _traced_call_location()  # now, while the frames that called the step are alive
    # a session that stays on: no Python op in the step's graph (a check, or a step under
    # tf.distribute, keeps the host callback, which reports during the step)
    mail = mailbox.open_for(checked.session, probe.delivered)
    finite = tf.reduce_all(tf.stack([tf.reduce_all(tf.math.is_finite(t)) for t in guarded]))

    def store():
        mail.store(fed)
        return tf.constant(True)

    def diagnose():
        if mail is None:
            tf.py_function(probe.receive, fed, [tf.int32])
            return tf.constant(True)
        # a run that stays on goes on for many steps: only the first non-finite one is kept
        return _unlowered(tf.cond(mail.armed(), store, lambda: tf.constant(False)))

    _unlowered(tf.cond(finite, lambda: tf.constant(False), diagnose))


def _unlowered(out):
    """``out``, the result of a ``tf.cond``, with its ``If`` op kept a function call (a
    lowered branch costs every step a dead tensor through each op it holds)."""
    from tensorflow.core.framework import attr_value_pb2

    op = out.op
    while op.type == "Identity" and op.inputs:
        op = op.inputs[0].op
    if op.type in ("If", "StatelessIf"):
        op._set_attr("_lower_using_switch_merge", attr_value_pb2.AttrValue(b=False))
    return out


def _graph_key(t):
    from gradcheck.trace.record import graph as graph_mode

    return graph_mode.key(t)


class _Probe:
    """The host side of a traced step's guard: the values, when the loss was not finite."""

    def __init__(self, checked: Checked, plan, fed_keys: list, wanted_keys: list) -> None:
        self.checked, self.plan = checked, plan
        self.fed_keys, self.wanted_keys = fed_keys, wanted_keys
        self.done = False
        self.entry = None

    def delivered(self, _flag, *fed):
        """The values a traced step stored in its ``mailbox``, handed over by the host."""
        self.receive(*fed)

    def receive(self, *fed):
        if self.done:
            return np.int32(0)
        self.done = True
        session = self.checked.session
        try:
            with hostpoint.deferring_stop(session), session.paused():
                values = {k: np.asarray(v.numpy()) for k, v in zip(self.fed_keys, fed, strict=False)}
                if self.plan is not None:
                    try:
                        values.update(self.plan.run(list(fed), self.wanted_keys))
                    except Exception as error:  # noqa: BLE001 - diagnose from the fed values alone
                        internal_error(error)
                findings = _findings(self.checked, values, self.entry)
            session.add_value_findings(findings)
        except Exception as error:  # noqa: BLE001
            internal_error(error)
        return np.int32(0)


# -- the finding ---------------------------------------------------------------------------
def _findings(checked: Checked, values: dict, entry=None) -> list[Finding]:
    ctx = checked.ctx
    analysis = Analysis(checked, None)
    origin = find_origin(ctx.flow, list(ctx.target_keys), values.get, analysis.call_text)
    if origin is None:
        return []
    names = _reached(ctx.sources, checked.flat_grads, _upstream(ctx, origin))
    if origin.op is not None and origin.variant != "weights":
        location = blame_location(checked, origin.op)
        op = op_label(ctx.flow.ops[origin.op].type)
    else:
        location, op = _entry_location(checked, origin, entry), None
    place = (location.path, location.line) if location is not None else None
    if not _first_report(checked.session, (place, origin.variant)):
        return []  # another gradient call's loss went non-finite at the same place: one finding
    notes = list(origin.notes) + _other_origins(checked, origin, place)
    if origin.variant == "data":
        notes.append("the first non-finite value is in the data fed to the step, not made by an op of the model")
    return [
        make(
            ctx,
            "GC204",
            location,
            names,
            op=op,
            notes=notes,
            reason=origin.reason,
            kind=origin.kind,
            variant=origin.variant,
        )
    ]


def _other_origins(checked: Checked, origin: Origin, place) -> list[str]:
    """A note per other line whose op made a non-finite value from finite inputs on the way
    to the same loss: fixing the first alone leaves the loss non-finite."""
    notes, seen = [], {place}
    for op, reason in origin.others:
        location = blame_location(checked, op)
        if location is None or (location.path, location.line) in seen:
            continue
        seen.add((location.path, location.line))
        notes.append(f"line {location.line} is not finite either: {reason}; it needs the same fix")
    return notes


def _upstream(ctx, origin: Origin) -> set[str] | None:
    """The sources the ops that made the non-finite values depend on: the NaN flows back
    through those ops' gradients into them and no others (a value head beside a NaN policy
    log in a traced ``fit`` step, whose gradients' values are not known here). None when the
    non-finite value came in with the batch or a weight."""
    ops = [op for op in (origin.op, *(op for op, _ in origin.others)) if op is not None]
    if not ops or origin.variant in ("weights", "data"):
        return None
    flow = ctx.flow
    cone = set(ops) | flow.backward_cone([k for op in ops for k in flow.ops[op].outputs])
    return {s.name for s in ctx.sources if s.key is not None and cone.intersection(flow.consumers.get(s.key, ()))}


def _reached(sources, grads, upstream: set[str] | None = None) -> list[str]:
    """The variables the non-finite loss reaches: those whose gradient is not finite, when
    the gradients' values are known (eager) and some are finite (a value head that the NaN
    entropy term never reaches is not among them); else those the ops that made the
    non-finite values depend on (``upstream``); else every variable with a gradient."""
    with_grads = [(s.name, g) for s, g in zip(sources, grads, strict=False) if g is not None]
    bad, known = [], True
    for name, g in with_grads:
        try:
            value = np.asarray(g.numpy() if hasattr(g, "numpy") else g.values.numpy())
        except Exception:  # noqa: BLE001 - a symbolic gradient (a traced step): not known here
            known = False
            break
        if value.dtype.kind in "fc" and not np.isfinite(value).all():
            bad.append(name)
    if known and bad:
        return bad
    reached = [name for name, _ in with_grads if upstream is None or name in upstream]
    return reached or [name for name, _ in with_grads]


_REPORTED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _first_report(session, key) -> bool:
    """Whether ``key`` (a place and a cause) is new in ``session``'s GC204 findings. Weights
    already non-finite after a reported non-finite step are that step's update (a session
    that stays on, or another replica of a distributed step): not a finding of their own."""
    seen = _REPORTED.setdefault(session, set())
    if key in seen or (key[1] == "weights" and seen):
        return False
    seen.add(key)
    return True


def _entry_location(checked: Checked, origin: Origin, entry=None):
    """Where a non-finite value that no op made entered the step: in eager mode the user's
    line of its first consumer (``model(x)``); in a traced step the user's call of the traced
    function (``model.fit(...)``, ``train_step(x)``), found while it was traced."""
    ctx = checked.ctx
    if origin.variant == "weights" and origin.op is not None:
        return blame_location(checked, origin.op)
    if checked.eager:
        consumers = sorted(ctx.flow.consumers.get(origin.key, ()))
        for c in consumers:
            frame = ctx.caller_level_frame(c) or next(iter(ctx.op_frames(c)), None)
            if frame is not None:
                return ctx.frame_location(frame)
        return None
    # a literal written in the traced step itself (``x * float("nan")``): its own line
    producer = ctx.flow.producer.get(origin.key)
    if producer is not None and ctx.flow.ops[producer].type == "Const":
        location = ctx.op_location(producer)
        if location is not None:
            return location
    return entry


#: TensorFlow's modules that call a traced function (a frame of theirs is where the user's
#: call of the function is left for TensorFlow's tracing).
_CALLS_TRACED = ("polymorphic_function", "def_function")


def _traced_call_location():
    """The user's line that called the traced function now being traced: the first user
    frame outside TensorFlow's call of a ``tf.function``."""
    import sys
    import threading

    from gradcheck.trace.record import frames

    frame, inside = sys._getframe(1), False
    while frame is not None:
        name = frame.f_code.co_filename
        if not inside:
            inside = "tensorflow" in name and any(part in name for part in _CALLS_TRACED)
        elif frames.is_user_file(name):
            return frames.site_location(frames.frame_site(frame))
        frame = frame.f_back
    # a replica of a tf.distribute strategy traces the step in a thread of its own: the
    # user's call (``fit``, ``strategy.run``) is where the main thread waits for it
    main = threading.main_thread()
    if threading.current_thread() is not main:
        waiting = sys._current_frames().get(main.ident)
        frame = frames.user_frame(waiting) if waiting is not None else None
        if frame is not None:
            return frames.site_location(frames.frame_site(frame))
    return None
