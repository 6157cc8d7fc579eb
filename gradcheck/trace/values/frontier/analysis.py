"""What every pass reads: ``Analysis``, the checked call, its forward values and loss
gradients, the data-flow graph and the targets, with the look-ups the explainers share; and
``Cause``, what an explainer concludes about one frontier. One ``Analysis`` serves both
passes of a gradient call, and its random generator (the jitter of ``structure``) is drawn
from in the order the explainers run."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gradcheck import sourcemap
from gradcheck.trace.diagnose.describe import op_label

_RNG_SEED = 20260101


@dataclass
class Cause:
    code: str
    variant: str
    blame: int  # the op to point at
    frontier: int  # the op where the gradient died
    reason: str
    notes: list[str] = field(default_factory=list)
    fields: dict = field(default_factory=dict)
    #: A cause that names only the sources no other cause names: a ``tf.sign`` inside a mask
    #: is meant to pass nothing, so for the values the mask gates the mask's own zero is the
    #: finding; a source that reaches the loss only through the sign is still starved by it.
    secondary: bool = False
    #: where to point when the op's own line is not the line to change (a helper called twice)
    location: object = None
    #: the op to name when ``blame`` stands for it (an op inside an eagerly called function)
    label: str | None = None

    @property
    def key(self) -> tuple:
        return (self.code, self.variant, self.blame)


#: ops a value keeps its meaning through, looking back from a loss
_THROUGH = ("Identity", "Maximum", "Minimum", "ClipByValue", "Cast", "Reshape", "RealDiv", "Div")


def union(masks) -> int:
    """The sources any of ``masks`` names (their bitwise or)."""
    out = 0
    for mask in masks:
        out |= mask
    return out


class Analysis:
    def __init__(self, checked, values) -> None:
        self.checked, self.values = checked, values
        self.ctx = checked.ctx
        self.flow = checked.ctx.flow
        self.targets = list(self.ctx.target_keys)
        self.rng = np.random.default_rng(_RNG_SEED)
        #: the pass's ``tensor_mask(k)``: which of its sources a tensor depends on (set by a
        #: pass for the explainers that walk back towards the sources)
        self.tensor_mask = None

    def grad(self, k):
        return self.values.grad(k)

    def value(self, k):
        return self.values.value(k)

    def line_of(self, op_index: int) -> str:
        location = self.ctx.op_location(op_index)
        return f"line {location.line}" if location is not None else "an op"

    def output_grad(self, op_index: int):
        """The gradient of the op's first float output with a gradient (None: none)."""
        for k in self.flow.ops[op_index].outputs:
            g = self.grad(k)
            if g is not None:
                return g
        return None

    def call_text(self, op_index: int) -> str:
        """The user's expression for an op (`tf.where(...)`, `actions - mu`)."""
        location = self.ctx.op_location(op_index)
        fallback = op_label(self.flow.ops[op_index].type) or "this op"
        if location is None:
            return fallback
        if location.end_column and (location.end_line in (None, location.line)):
            text = sourcemap.source_line(location.path, location.line)[location.column - 1 : location.end_column - 1]
            if text.strip() and len(text) <= 60:
                return f"`{text.strip()}`"
        expr = sourcemap.expression_at(
            location.path, location.line, location.column, location.end_line, location.end_column
        )
        if expr is not None and len(expr.text) <= 60:
            return f"`{expr.text}`"
        return fallback

    def producer_through(self, k, kinds, hops: int = 6):
        # through a division too: the normalisation `p / sum(p)` a probability loss applies
        return self.flow.producer_through(k, kinds, _THROUGH, hops)
