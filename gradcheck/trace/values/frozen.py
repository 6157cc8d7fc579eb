"""Values a check changed. A check does not train: the optimizer updates it sees are
skipped, and a ``fit`` ends after its checked steps. A variable the program would have
trained before a gradient call therefore holds, at that call, a value the program would
not have (a decoder that ``fit`` would have trained for two epochs, read by a later latent
optimisation loop). A zero or non-finite gradient judged on such values is the check's
doing, not the program's, so GC201/GC202 are not reported for it.

One skipped update is not enough: within one training step (a GAN's discriminator update
before its generator step) the values differ from the program's by one step, which does
not make a gradient zero or infinite, and a structural cause is found as well there."""

from __future__ import annotations

from collections.abc import Iterable

from gradcheck.trace.record import _tf
from gradcheck.trace.record.dataflow import TAG_READ

__all__ = ["FROZEN_AT", "freeze", "reads_frozen"]

#: Skipped updates after which a variable's value is no longer the program's.
FROZEN_AT = 2
#: What a ``fit`` cut short at its checked steps counts for: the rest of its training.
CUT_FIT = FROZEN_AT


def freeze(session, handle_ids: Iterable[int], updates: int = 1) -> None:
    """Note ``updates`` updates the check skipped for the variables of these handles."""
    for ident in handle_ids:
        session.frozen[ident] = session.frozen.get(ident, 0) + updates


def reads_frozen(checked, frozen: dict[int, int]) -> bool:
    """Whether the loss of ``checked`` depends on a variable frozen (``FROZEN_AT``) when
    the call was made (``frozen``: the session's counts then)."""
    if not any(n >= FROZEN_AT for n in frozen.values()):
        return False
    ctx = checked.ctx
    flow = ctx.flow
    captured = {} if ctx.eager else _tf.captured_externals(ctx.graph)
    for i in flow.backward_cone(ctx.target_keys):
        op = flow.ops[i]
        if op.tag != TAG_READ or not op.inputs:
            continue
        ident = _handle_id(ctx, captured, op.inputs[0])
        if ident is not None and frozen.get(ident, 0) >= FROZEN_AT:
            return True
    return False


def _handle_id(ctx, captured: dict, key) -> int | None:
    """The ``_id`` of the eager resource handle a read takes, from its flow key: an int in
    an eager flow, ``("eager", _id)`` or a captured placeholder in a graph's."""
    if isinstance(key, int):
        return key
    if isinstance(key, tuple) and key and key[0] == "eager":
        return key[1]
    tensor = ctx.tensors.get(key)
    external = captured.get(id(tensor)) if tensor is not None else None
    return getattr(external, "_id", None)
