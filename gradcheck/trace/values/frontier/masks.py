"""GC201 at a ``tf.where``: the branch on the path is never taken on the batch, so no
gradient flows back through it (``masked``), or the where's result is zero because it took
a zero branch everywhere (``select_zero``)."""

from __future__ import annotations

import numpy as np

from gradcheck.trace.values.frontier.analysis import Analysis, Cause


def masked(a: Analysis, c: int, t, g) -> Cause | None:
    op = a.flow.ops[c]
    cond = a.value(op.inputs[0])
    if cond is None:
        return None
    position = list(op.inputs).index(t)
    if position not in (1, 2):
        return None
    chosen = cond.astype(bool) if position == 1 else ~cond.astype(bool)
    if cond.ndim == 1 and g.ndim > 1 and op.type == "Select" and cond.shape[0] == g.shape[0]:
        chosen = chosen.reshape((-1,) + (1,) * (g.ndim - 1))
    try:
        chosen = np.broadcast_to(chosen, g.shape)
    except ValueError:
        return None
    if (chosen & (g != 0)).any():
        return None
    branch = "true" if position == 1 else "false"
    reason = (
        f"{a.call_text(c)} never takes its {branch} branch on the batch (the condition is "
        f"{'False' if position == 1 else 'True'} everywhere), so no gradient flows back through that branch"
    )
    return Cause("GC201", "masked", c, c, reason)


def select_zero(a: Analysis, p: int, consumer: int, depth: int) -> Cause | None:
    """A tf.where whose output is zero: it took a zero branch everywhere. When the
    other branch is never taken, that is the cause (the trained branch is masked out)."""
    op = a.flow.ops[p]
    cond = a.value(op.inputs[0]) if op.inputs else None
    if cond is None or len(op.inputs) < 3:
        return None
    cond = cond.astype(bool)
    for position, taken in ((1, cond), (2, ~cond)):
        if not taken.any():
            branch = "true" if position == 1 else "false"
            reason = (
                f"{a.call_text(p)} never takes its {branch} branch on the batch (the condition is "
                f"{'False' if position == 1 else 'True'} everywhere), so its result is the other branch's zeros"
            )
            return Cause("GC201", "masked", p, consumer, reason)
    return None
