"""Gradients applied to other variables than the ones they were asked for.

``d_tape.gradient(d_loss, generator.trainable_variables)`` then
``opt.apply_gradients(zip(grads, discriminator.trainable_variables))``: every gradient
exists, so no None is diagnosed, and the update pairs each with a variable it was not
computed for. When the shapes differ, the update fails under python (the crash is the
symptom); when they agree it trains the discriminator with the generator's gradients in
silence. Either way the source list of the request is the line to change (GC108, variant
``applied-elsewhere``), when the update's variables are ones the request's tape read (the
loss depends on them and the request left them out), or when the shapes cannot match.

Applying one model's gradients to another on purpose (A3C's worker to the global network,
Reptile's fast weights to the slow ones) pairs copies: same shapes, and the tape never
read the variables updated. That stays silent."""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

from gradcheck.findings import Finding
from gradcheck.trace.diagnose.describe import make
from gradcheck.trace.diagnose.requests import tables
from gradcheck.trace.diagnose.source_list import sources_expression
from gradcheck.trace.record import _tf, frames
from gradcheck.trace.record.frames import Location

__all__ = ["check_update", "note_request"]

#: how many requests' gradients are remembered (a step asks a few; older ones are gone)
_KEEP = 16


@dataclass(eq=False)
class _Request:
    where: Location | None  # the ``tape.gradient`` call
    handles: list  # id of each flat source's handle (None: a tensor source)
    names: list[str]
    read: set[int]  # the handles of the variables the tape read while it recorded
    asked: set[int] = field(default_factory=set)  # the handles of ``handles``
    reported: bool = False
    grads: list = field(default_factory=list)  # weak references to the gradients returned


def note_request(session, call, grads) -> None:
    """Remember which request returned each gradient, and for which of its sources."""
    sources = call.flat_sources
    flat = _tf.tf.nest.flatten(grads, expand_composites=False)
    if len(flat) != len(sources):
        return
    handles, names = [], []
    for s in sources:
        if _tf.is_variable(s):
            handles.append(id(_tf.handle_of(s)))
            names.append(_tf.variable_name(s))
        else:
            handles.append(None)
            names.append("")
    if not any(h is not None for h in handles):
        return
    try:
        read = {id(_tf.handle_of(v)) for v in call.tape.watched_variables()}
    except (AttributeError, TypeError, ValueError):
        read = set()
    request = _Request(call.site.location, handles, names, read, {h for h in handles if h is not None})
    table, order = tables(session)
    for i, g in enumerate(flat):
        if g is None or handles[i] is None:
            continue
        try:
            table[id(g)] = (weakref.ref(g), request, i)
        except TypeError:  # not weak-referenceable (an IndexedSlices)
            continue
    order.append(request)
    if len(order) > _KEEP:
        del order[: len(order) - _KEEP]
        alive = set(map(id, order))
        for key in [k for k, (ref, r, _) in table.items() if ref() is None or id(r) not in alive]:
            del table[key]


def check_update(session, grads, variables) -> list[Finding]:
    """The findings of one optimizer update (``grads`` paired with ``variables``)."""
    table, _ = tables(session)
    if not table:
        return []
    wrong: dict[int, tuple[_Request, list]] = {}
    paired: dict[int, int] = {}  # request -> how many of its gradients the update pairs
    for g, v in zip(grads, variables, strict=False):
        entry = table.get(id(g)) if g is not None else None
        if entry is None or entry[0]() is not g:
            continue
        _, request, i = entry
        try:
            handle = id(_tf.handle_of(v))
        except (AttributeError, TypeError, ValueError):
            continue
        paired[id(request)] = paired.get(id(request), 0) + 1
        # a variable the request asked for too is a list misaligned by its extra entries
        # (`model.variables` applied to `trainable_variables`: GC115 says that), not another model
        if handle != request.handles[i] and handle not in request.asked:
            wrong.setdefault(id(request), (request, []))[1].append((i, g, v, handle))
    findings = []
    for request, pairs in wrong.values():
        if request.reported:
            continue
        left_out = [v for _, _, v, h in pairs if h in request.read]
        clash = next(((g, v) for _, g, v, _ in pairs if not _compatible(g, v)), None)
        if not left_out and clash is None:
            continue  # a copy's gradients applied to the original on purpose (A3C, Reptile)
        request.reported = True
        # none of its gradients met its own variable: the whole list is the wrong one (a zip
        # with a shorter list drops the rest, which the update never sees)
        whole = len(pairs) == paired[id(request)]
        findings.append(_finding(request, pairs, left_out, clash, whole))
    return findings


def _finding(request: _Request, pairs: list, left_out: list, clash, whole: bool) -> Finding:
    site = frames.current_user_site(converted=True)
    update = frames.site_location(site) if site is not None else None
    at = f" at line {update.line}" if update is not None else ""
    applied = [_tf.variable_name(v) for _, _, v, _ in pairs]
    finding = make(
        None,
        "GC108",
        sources_expression(request.where),
        sorted(
            {n for n, h in zip(request.names, request.handles, strict=True) if h is not None}
            if whole
            else {request.names[i] for i, _, _, _ in pairs}
        ),
        variant="applied-elsewhere",
        applied=_summary(applied),
    )
    if left_out:
        finding.notes.append(
            f"the update{at} applies them to {_summary([_tf.variable_name(v) for v in left_out])}, which the "
            "tape read for this loss and the request leaves out"
        )
    else:
        finding.notes.append(f"the update{at} applies them to {_summary(applied)}")
    if clash is not None:
        g, v = clash
        finding.notes.append(
            f"the shapes differ (a {_shape(g)} gradient for {_tf.variable_name(v)}, of shape {_shape(v)}): "
            f"under python the update{at} fails, and that crash is this mistake"
        )
    return finding


def _compatible(g, v) -> bool:
    try:
        return _tf.tf.TensorShape(g.shape).is_compatible_with(_tf.tf.TensorShape(v.shape))
    except (AttributeError, TypeError, ValueError):
        return True


def _shape(t) -> str:
    try:
        return str(list(_tf.tf.TensorShape(t.shape).as_list()))
    except (AttributeError, TypeError, ValueError):
        return "?"


def _summary(names: list[str]) -> str:
    """``2 variables of `discriminator```, or the names when few."""
    names = sorted(set(names))
    if len(names) <= 2:
        return " and ".join(names)
    prefixes = sorted({n.split("/")[0] for n in names})
    return f"{len(names)} variables of {', '.join(f'`{p}`' for p in prefixes)}"
