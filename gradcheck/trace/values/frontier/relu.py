"""GC201 at a ReLU: dead (off, or for Relu6 clamped at 6) on every element whose gradient
matters, by a margin and on several samples, so a jitter of its input does not revive it."""

from __future__ import annotations

import numpy as np

from gradcheck.trace.values.frontier.analysis import Analysis, Cause
from gradcheck.trace.values.frontier.structure import jitter, off_by_structure
from gradcheck.trace.values.frontier.zero_values import zero_value


def dead_relu(a: Analysis, c: int, t, g) -> Cause | None:
    x = a.value(t)
    if x is None or x.shape != g.shape:
        return None
    upper = 6.0 if a.flow.ops[c].type == "Relu6" else None
    live = g != 0

    def dead(v) -> bool:
        off = v[live] <= 0
        if upper is not None:
            off |= v[live] >= upper
        return bool(off.all())

    if not dead(x):
        return None
    if not x.any():
        return zero_value(a, t, c)  # exactly zero input: why is it zero?
    if not dead(jitter(a.rng, x)):
        return None  # at the edge: a perturbation revives it (chance)
    if not off_by_structure(x, x[live], upper):
        return None
    top = float(np.max(x[live]))
    n = int(live.sum())
    reason = f"relu is dead on the whole batch: each of its {n} inputs that matter is ≤ 0 (the largest is {top:.3g})"
    return Cause("GC201", "dead-relu", c, c, reason)
