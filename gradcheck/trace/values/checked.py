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
    seen_sites: set = field(default_factory=set)
    custom_calls: list = field(default_factory=list)  # custom_check.CustomCall, in call order


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


def region(flow, targets, source_keys) -> set[int]:
    """Recorded ops on data paths from the sources to the targets."""
    cone = flow.backward_cone(targets, data=True)
    reach = flow.forward_cone(source_keys, within=cone, data=True)
    return {i for i in reach if flow.ops[i].recorded}
