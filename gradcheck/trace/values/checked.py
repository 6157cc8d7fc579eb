"""What every value check reads: the options of a session's value checks, and ``Checked``,
one ``GradientCall`` with the data-flow graph around it built once and shared by the checks
of the ``values`` phase (``checked_call``)."""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

from gradcheck.trace.diagnose.context import Context, build_flow, new_context, recover_hidden_reads
from gradcheck.trace.record.call import GradientCall


@dataclass(eq=False)
class Options:
    """The value checks' options and state for one session."""

    check_custom_gradients: bool = False
    installed: bool = False  # custom_check's tf.custom_gradient hooks
    seen_sites: set = field(default_factory=set)
    custom_calls: list = field(default_factory=list)  # custom_check.CustomCall, in call order
    #: the gradients of every ``tape.gradient`` call so far (eager: ``EagerTensor._id``s under
    #: ``None``; graph mode: ``(op._id, value_index)`` under ``id(graph)``): a value made from
    #: them is a derivative of the network (a physics-informed residual), never a target
    derivatives: dict = field(default_factory=dict)
    #: scaled loss -> the loss before a LossScaleOptimizer multiplied it by its loss scale
    #: (keyed like ``derivatives``: ``(None, _id)`` eager, ``(id(graph), op._id, index)``)
    scaled_losses: dict = field(default_factory=dict)


def _tensor_key(tensor):
    graph = getattr(tensor, "graph", None)  # an EagerTensor has none
    if graph is None:
        return (None, getattr(tensor, "_id", None))
    return (id(graph), tensor.op._id, tensor.value_index)


def note_scaled_loss(session, scaled, loss) -> None:
    """``scaled`` is ``loss`` times a LossScaleOptimizer's dynamic loss scale."""
    known = options(session).scaled_losses
    if len(known) > 1000:
        known.clear()
    known[_tensor_key(scaled)] = loss


def unscaled_loss(call: GradientCall):
    """The loss before loss scaling, when ``call`` differentiates a scaled loss; else None."""
    known = options(call.session).scaled_losses
    if not known:
        return None
    targets = _flatten(call.target)
    if len(targets) != 1:
        return None
    return known.get(_tensor_key(targets[0]))


def _flatten(value) -> list:
    from gradcheck.trace.record import _tf

    return [t for t in _tf.tf.nest.flatten(value) if _tf.is_tensor(t)]


def note_derivatives(call: GradientCall) -> None:
    """Remember ``call``'s gradient tensors (a higher-order loss may be built from them)."""
    from gradcheck.trace.record import graph as graph_mode

    known = options(call.session).derivatives
    if sum(map(len, known.values())) > 100_000:  # a long eager loop: only recent calls matter
        known.clear()
    found = known.setdefault(None if call.eager else id(call.graph), set())
    for g in call.flat_grads:
        g = getattr(g, "values", g)  # IndexedSlices (an embedding's gradient): its values
        if g is None or not hasattr(g, "dtype"):
            continue
        if call.eager:
            key = getattr(g, "_id", None)
        elif getattr(g, "graph", None) is call.graph and hasattr(g, "value_index"):
            key = graph_mode.key(g)
        else:
            continue
        if key is not None:
            found.add(key)


def derivative_keys(checked: Checked) -> set:
    """The keys of ``checked``'s flow that are gradients of an earlier ``tape.gradient`` call."""
    call = checked.gradient_call
    return options(call.session).derivatives.get(None if call.eager else id(call.graph), set())


_OPTIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def options(session) -> Options:
    found = _OPTIONS.get(session)
    if found is None:
        found = _OPTIONS[session] = Options()
    return found


@dataclass(eq=False)
class Checked:
    """One gradient call being value-checked: the call and its context, flow built."""

    gradient_call: GradientCall
    ctx: Context

    @property
    def session(self):
        return self.gradient_call.session

    @property
    def flat_grads(self) -> list:
        return self.gradient_call.flat_grads

    @property
    def output_gradients(self) -> list | None:
        return self.gradient_call.flat_output_gradients

    @property
    def eager(self) -> bool:
        return self.gradient_call.eager

    @property
    def site(self):
        """The user's call (``capture``'s ``CallSite``; eager: its frame is alive now)."""
        return self.gradient_call.site

    @property
    def flow(self):
        return self.ctx.flow


def checked_call(call: GradientCall) -> Checked | None:
    """``call`` ready for the value checks, built once per call; None when there is nothing
    to check: no gradient at all, or (eager) a call site already checked on an earlier step."""
    if "checked" not in call.memo:
        call.memo["checked"] = _build(call)
    return call.memo["checked"]


def _build(call: GradientCall) -> Checked | None:
    flat_grads = call.flat_grads
    if len(flat_grads) != len(call.flat_sources) or all(g is None for g in flat_grads):
        return None
    if call.eager:
        caller = call.site.caller
        site = (caller.f_code, caller.f_lasti) if caller is not None else None
        seen = options(call.session).seen_sites
        if site in seen:
            return None  # the first step of each call site is checked
        seen.add(site)
    ctx = new_context(call)
    build_flow(ctx)
    if call.eager:
        recover_hidden_reads(ctx, [s for s in ctx.sources if s.is_variable and s.key is not None])
    return Checked(call, ctx)


def region(flow, targets, source_keys, data: bool = True) -> set[int]:
    """Recorded ops on data paths (``data=False``: on any paths) from the sources to the
    targets."""
    cone = flow.backward_cone(targets, data=data)
    reach = flow.forward_cone(source_keys, within=cone, data=data)
    return {i for i in reach if flow.ops[i].recorded}
