"""GC201 at a ReLU: dead (off, or for Relu6 clamped at 6) on every element whose gradient
matters, by a margin and on several samples, so a jitter of its input does not revive it.

An input exactly 0 is not "at the edge" by chance: it is a product of zeros (the layer
before it dead on that sample, a bias still at its zero initialisation), and it stays 0 as
long as the ReLU passes nothing back to move them. The margin and the jitter test the
other elements, the ones a draw of the weights placed below 0; they alone must show the
ReLU off on several samples. Only when every input is exactly 0 is the zero's own cause
looked for (``zero_value``)."""

from __future__ import annotations

import numpy as np

from gradcheck.trace.values.frontier.analysis import Analysis, Cause
from gradcheck.trace.values.frontier.structure import jitter, off_by_structure
from gradcheck.trace.values.frontier.zero_values import zero_value

#: Samples on which a ReLU with exact-zero inputs must be off by a draw (as ``structure``
#: asks of a unit off on every sample).
_DRAWN_MIN_SAMPLES = 4


def _samples(x: np.ndarray, elements: np.ndarray) -> int:
    """How many samples (rows of the leading axis) hold one of ``elements``."""
    if x.ndim < 2:
        return int(elements.sum())
    return int(elements.reshape(x.shape[0], -1).any(axis=1).sum())


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
    # exact zeros are held at 0 by zeros (see the module docstring): the jitter and the
    # margin judge the elements a draw placed off
    drawn = live & (x != 0)
    if not drawn.any():
        return None
    if (live & (x == 0)).any() and _samples(x, drawn) < _DRAWN_MIN_SAMPLES:
        return None
    moved = np.where(drawn, jitter(a.rng, x), x)
    if not dead(moved):
        return None  # at the edge: a perturbation revives it (chance)
    if not off_by_structure(x, x[drawn], upper):
        return None
    top = float(np.max(x[live]))
    n = int(live.sum())
    exact = int((live & (x == 0)).sum())
    held = f"; {exact} are exactly 0, held there by zeros before it" if exact else ""
    reason = (
        f"relu is dead on the whole batch: each of its {n} inputs that matter is ≤ 0 (the largest is {top:.3g}{held})"
    )
    return Cause("GC201", "dead-relu", c, c, reason)
