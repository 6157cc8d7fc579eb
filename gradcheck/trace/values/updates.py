"""GC117 not-updated: a trainable variable that a loss of the checked step depends on, which
no optimizer step (``apply_gradients`` / ``apply``, or a manual ``assign_sub``) of that step
updates: a GAN's generator step that asks for, and applies, the discriminator's gradients.

Every gradient exists, so nothing is None: the mistake is in what is *applied*. Over the
whole checked step (every tape of it: a GAN's discriminator and generator steps):

- at each ``tape.gradient`` call, the shadow tape is asked which trainable variables the
  loss depends on beyond the sources asked for (``note_call``; only when there are any);
- the optimizer hooks tell which variables each ``apply`` updates, and from which gradient
  call its gradients came (``note_update``);
- when the session ends (the step is over), a variable a loss depends on that no update of
  the step touched is reported at the update that should have trained it: one that only
  repeats what an earlier update of the step did (the generator's optimizer applied to the
  discriminator's variables, which the discriminator's optimizer already updates).

Frozen on purpose stays silent: ``trainable=False`` (not trainable), ``--allow-none``, and
a part another step of the same run updates (a GAN discriminator left alone by the
generator step, trained by its own step). Without a repeated update nothing is judged: a
teacher or a target network (trainable by default, updated by copying) that a loss reads
inside the tape is no mistake of the optimizer calls.
"""

from __future__ import annotations

import fnmatch
import weakref
from dataclasses import dataclass, field

from gradcheck.findings import Finding
from gradcheck.trace.record import _tf, frames
from gradcheck.trace.record.call import GradientCall
from gradcheck.trace.record.errors import internal_error
from gradcheck.trace.record.registry import register
from gradcheck.trace.values.frozen import freeze

__all__ = ["check", "note_update", "report"]


@dataclass(eq=False)
class _Loss:
    location: object  # the tape.gradient call
    grads: list  # the gradient tensors it returned (to match an apply to it)
    fed: dict  # id(handle) -> (variable name, variable): trainable, not asked for, the loss depends on


@dataclass(eq=False)
class _Update:
    location: object
    handles: set
    names: list
    loss: _Loss | None
    optimizer: int = 0  # id() of the optimizer that applied it


@dataclass(eq=False)
class _Step:
    losses: list = field(default_factory=list)
    updates: list = field(default_factory=list)
    assigned: set = field(default_factory=set)  # id(handle) of variables assigned by hand
    seen: set = field(default_factory=set)  # eager call sites / graphs already noted
    reported: bool = False


_STEPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _step(session) -> _Step:
    found = _STEPS.get(session)
    if found is None:
        found = _STEPS[session] = _Step()
    return found


def _trainable_variables(session) -> list:
    """(handle, variable) of every trainable variable seen. A Keras variable and the
    tf.Variable it wraps share a handle: the Keras one speaks (``layer.trainable = False``
    makes it non-trainable, not the tf.Variable inside)."""
    by_handle: dict = {}
    for ref in getattr(session, "_variables", ()):
        variable = ref()
        if variable is None:
            continue
        try:
            handle = _tf.handle_of(variable)
        except (AttributeError, ValueError, TypeError):
            continue
        by_handle.setdefault(id(handle), (handle, []))[1].append(variable)
    out = []
    for handle, variables in by_handle.values():
        keras_variables = [v for v in variables if _tf.KerasVariable is not None and isinstance(v, _tf.KerasVariable)]
        variable = (keras_variables or variables)[0]
        if not all(getattr(v, "trainable", False) for v in variables):
            continue
        if _tf.is_differentiable_dtype(variable.dtype):
            out.append((handle, variable))
    return out


@register("values", "GC117")
def check(call: GradientCall) -> list[Finding]:
    """Note which trainable variables ``call``'s loss depends on beyond its sources; the
    finding comes when the step is over (``report``)."""
    try:
        note_call(call)
    except Exception as error:  # noqa: BLE001 - never stop the other value checks for it
        internal_error(error)
    return []


def note_call(call: GradientCall) -> None:
    step = _step(call.session)
    caller = call.site.caller
    key = ((caller.f_code, caller.f_lasti) if caller is not None else None, None if call.eager else id(call.graph))
    if key in step.seen or call.state is None or call.state.shadow is None:
        return
    step.seen.add(key)
    asked = {id(_tf.handle_of(s)) for s in call.flat_sources if _tf.is_variable(s)}
    others = [(h, v) for h, v in _trainable_variables(call.session) if id(h) not in asked]
    fed: dict = {}
    targets = [t for t in _tf.tf.nest.flatten(call.target) if _tf.is_tensor(t)]
    if others and targets and all(_tf.is_differentiable_dtype(t.dtype) for t in targets):
        try:
            grads = _tf.imperative_gradient(call.state.shadow, targets, [h for h, _ in others])
        except Exception:  # noqa: BLE001 - cannot ask: judge nothing
            grads = [None] * len(others)
        for (handle, variable), g in zip(others, grads, strict=False):
            if g is not None:
                fed[id(handle)] = (_tf.variable_name(variable), variable)
    step.losses.append(_Loss(call.site.location, [g for g in call.flat_grads if g is not None], fed))


def note_update(session, variables, grads, optimizer=None) -> None:
    """``optimizer`` applied ``grads`` to ``variables`` (at the user's current line)."""
    step = _step(session)
    handles, names, frozen = set(), [], []
    for v in variables:
        try:
            handle = _tf.handle_of(v)
            handles.add(id(handle))
            names.append(_tf.variable_name(v))
        except (AttributeError, ValueError, TypeError):
            continue
        if getattr(handle, "_id", None) is not None:
            frozen.append(handle._id)
    if session.skip_updates:
        freeze(session, frozen)  # a check does not train: this update never happens
    ids = {id(g) for g in grads if g is not None}
    loss = next((lo for lo in reversed(step.losses) if any(id(g) in ids for g in lo.grads)), None)
    site = frames.current_user_site()
    location = frames.site_location(site) if site is not None else None
    step.updates.append(_Update(location, handles, names, loss, id(optimizer)))


def note_assign(session, variable) -> None:
    """A variable assigned by hand (``v.assign_sub(lr * g)``) after the first gradient."""
    step = _STEPS.get(session)
    if step is None or not step.losses:
        return
    try:
        step.assigned.add(id(_tf.handle_of(variable)))
    except (AttributeError, ValueError, TypeError):
        pass


def report(session) -> list[Finding]:
    """The findings of the step, once: variables some loss depends on that nothing updated."""
    from gradcheck.trace.diagnose.describe import make

    step = _STEPS.get(session)
    if step is None or step.reported or not step.updates:
        return []
    step.reported = True
    updated = set(step.assigned)
    for u in step.updates:
        updated |= u.handles
    patterns = tuple(getattr(session, "allow_none", ()) or ())
    findings = []
    for loss in step.losses:
        missing = {
            h: name
            for h, (name, variable) in loss.fed.items()
            if h not in updated
            and getattr(variable, "trainable", False)
            and not any(fnmatch.fnmatchcase(name, p) for p in patterns)
        }
        if not missing:
            continue
        update = _should_have(step, loss)
        if update is None:
            continue
        location = update.location if update.location is not None else loss.location
        applied = _summary(update.names)
        names = sorted(missing.values())
        finding = make(
            None,
            "GC117",
            location,
            names,
            call="this optimizer step",
            applied=applied,
        )
        updated |= set(missing)  # one finding per variable
        findings.append(finding)
    return findings


def _should_have(step: _Step, loss: _Loss):
    """The update that should have updated what ``loss`` leaves untrained: among the
    updates of the losses that depend on those variables, the one that only repeats what
    another update already does (a generator optimizer applied to the discriminator);
    else the update of ``loss`` itself."""
    missing = set(loss.fed)
    for n, u in enumerate(step.updates):
        if u.loss is None or not (missing & set(u.loss.fed)):
            continue
        before = set().union(*(o.handles for o in step.updates[:n] if o.optimizer != u.optimizer))
        if u.handles and u.handles <= before:
            return u  # a second optimizer updating what an earlier one already did
    return None


def _summary(names: list[str]) -> str:
    if not names:
        return "no variable"
    prefixes = sorted({n.split("/")[0] for n in names})
    return f"{len(names)} variable{'s' if len(names) != 1 else ''} of {', '.join(f'`{p}`' for p in prefixes)}"
