"""A zero factor that is the result of an earlier gradient request of the step.

A loss built from a gradient (a PDE residual ``k * u_xx``, a gradient penalty) multiplies the
outer request's sources by what an inner ``tape.gradient`` returned. When that result is
identically zero, the inner request's own diagnosis already found why (a second derivative
through relu, a saturated unit): the outer sources are starved by the same cause, at the same
line. The values of the inner backward pass are not the outer request's to walk (they are no
forward values of its sources), so each degenerate request remembers, per gradient it returned,
the finding that explained it; a later request that meets that gradient as a zero factor names
the same cause and line."""

from __future__ import annotations

from dataclasses import dataclass

from gradcheck.findings import Finding
from gradcheck.trace.record import _tf
from gradcheck.trace.record import graph as graph_mode
from gradcheck.trace.record.frames import Location
from gradcheck.trace.values.frontier.analysis import Analysis, Cause

__all__ = ["earlier_zero", "remember"]

#: the session attribute holding the remembered gradients
_STORE = "zero_gradients"
#: at most this many remembered (a step's requests are few; a long run keeps the latest)
_LIMIT = 256


@dataclass(frozen=True)
class _Zero:
    source: str  # what the earlier request asked about (``x_col``)
    location: Location  # where its finding points
    variant: str
    reason: str
    call_line: int | None  # the earlier request's line


def _key(ctx, tensor):
    if ctx.eager:
        k = getattr(tensor, "_id", None)
        return None if k is None else ("eager", k)
    # a dense graph tensor only (an embedding's IndexedSlices is no factor of a later loss)
    if not _tf.is_tensor(tensor) or not hasattr(tensor, "value_index") or getattr(tensor, "graph", None) is None:
        return None
    return (id(tensor.graph), *graph_mode.key(tensor))


def remember(checked, findings: list[Finding], zero_sources) -> None:
    """For each all-zero gradient of ``checked`` explained by one of ``findings``, the finding."""
    ctx = checked.ctx
    store = ctx.session.__dict__.setdefault(_STORE, {})
    call = ctx.call_location
    for source in zero_sources:
        finding = next((f for f in findings if f.code == "GC201" and source.name in f.variables), None)
        if finding is None or source.index >= len(checked.flat_grads):
            continue
        key = _key(ctx, checked.flat_grads[source.index])
        if key is None:
            continue
        location = Location(finding.path, finding.line, finding.column, finding.end_line, finding.end_column)
        store[key] = _Zero(
            source.name,
            location,
            finding.fields.get("variant", ""),
            finding.fields.get("reason") or finding.message,
            call and call.line,
        )
        while len(store) > _LIMIT:
            store.pop(next(iter(store)))


def earlier_zero(a: Analysis, k, consumer: int) -> Cause | None:
    """The cause of an earlier request's all-zero gradient, when ``k`` is that gradient."""
    store = a.ctx.session.__dict__.get(_STORE)
    if not store:
        return None
    tensor = a.ctx.tensors.get(k)
    key = _key(a.ctx, tensor) if tensor is not None else None
    zero = store.get(key) if key is not None else None
    if zero is None:
        return None
    where = f" (line {zero.call_line})" if zero.call_line else ""
    reason = (
        f"{a.call_text(consumer)} multiplies the gradient by the gradient with respect to {zero.source} computed "
        f"earlier{where}, which is zero everywhere: {zero.reason}"
    )
    return Cause("GC201", zero.variant or "zero-factor", consumer, consumer, reason, location=zero.location)
