"""GC201 at a squashing op: a sigmoid, tanh or softmax saturated on the whole batch (its
local gradient is exactly zero, and stays so when its input is jittered); and at a clip
(``tf.maximum``/``tf.minimum``/``tf.clip_by_value``) that lets no element through, most often
a loss clipping a saturated probability to [ε, 1-ε]. A clip of a value that is exactly zero
is a consequence: the zero's structural cause upstream (an all-zero mask) is reported; so
is a clip whose input a saturated squash or a closed clip further back made extreme (PPO's
ratio clip behind a saturated, clipped softmax): the op that made it so is named."""

from __future__ import annotations

import numpy as np

from gradcheck.trace.values.frontier.analysis import Analysis, Cause
from gradcheck.trace.values.frontier.ops import CLIPS, SQUASH
from gradcheck.trace.values.frontier.structure import jitter
from gradcheck.trace.values.frontier.zero_values import zero_value

_NAMES = {"Sigmoid": "sigmoid", "Tanh": "tanh", "Softmax": "softmax"}


def saturated(a: Analysis, c: int, t, g) -> Cause | None:
    kind = a.flow.ops[c].type
    y = a.value(a.flow.ops[c].outputs[0])
    x = a.value(t)
    if y is None or y.shape != g.shape:
        return None

    def local(out) -> np.ndarray:
        out = out.astype(np.float32)
        if kind == "Sigmoid":
            return out * (np.float32(1) - out) * g
        if kind == "Tanh":
            return (np.float32(1) - out * out) * g
        return out * (g - np.sum(out * g, axis=-1, keepdims=True))

    if local(y).any():
        return None
    if x is not None and x.shape == y.shape:
        perturbed = squash(kind, jitter(a.rng, x).astype(np.float32))
        if local(perturbed).any():
            return None
    name = _NAMES[kind]
    ends = "-1 or 1" if kind == "Tanh" else "0 or 1"
    reason = f"{name} is saturated on the whole batch (its outputs are exactly {ends}), so its gradient is exactly zero"
    notes = []
    if x is not None and x.size:
        notes.append(f"its inputs reach {float(np.max(np.abs(x))):.3g} in magnitude")
    return Cause("GC201", "saturated", c, c, reason, notes, {"act": name})


def clipped(a: Analysis, c: int, t, g) -> Cause | None:
    op = a.flow.ops[c]
    kind = op.type
    ins = [a.value(k) for k in op.inputs]
    if any(v is None for v in ins):
        return None
    position = list(op.inputs).index(t)

    def passes(values) -> np.ndarray:
        if kind == "ClipByValue":
            x, lo, hi = values
            return np.broadcast_to((x >= lo) & (x <= hi), g.shape) if position == 0 else np.zeros(g.shape, bool)
        x, y = values
        xmask = (x >= y) if kind == "Maximum" else (x <= y)
        mine = xmask if position == 0 else ~xmask
        try:
            return np.broadcast_to(mine, g.shape)
        except ValueError:
            return np.ones(g.shape, bool)

    live = g != 0
    if (passes(ins) & live).any():
        return None
    x = ins[position]
    if x.size and not x.any():
        # Clipped everywhere because what it clips is exactly zero (`clip(p * mask, ε, 1)` with
        # an all-zero mask): the clip is a consequence; the zero factor upstream, when it is
        # structural, is what the user changes. Otherwise the clip is judged on its own.
        upstream = zero_value(a, t, c)
        if upstream is not None:
            return upstream
    squash_op = a.producer_through(t, SQUASH)
    if squash_op is None:
        upstream = _closed_upstream(a, c, t)
        if upstream is not None:
            return upstream
    jittered = list(ins)
    squashed_input = a.value(a.flow.ops[squash_op].data[0]) if squash_op is not None else None
    if squashed_input is not None and squashed_input.shape == ins[position].shape:
        # perturb where the value comes from (the logits), not the probability itself
        kind_of = a.flow.ops[squash_op].type
        jittered[position] = squash(kind_of, jitter(a.rng, squashed_input).astype(np.float32))
    else:
        jittered[position] = jitter(a.rng, ins[position]).astype(ins[position].dtype)
    if (passes(jittered) & live).any():
        return None
    if squash_op is not None:
        name = _NAMES[a.flow.ops[squash_op].type]
        reason = (
            f"{name}'s outputs are saturated (exactly 0 or 1) and the loss clips them to [ε, 1-ε], "
            "where the gradient is zero"
        )
        notes = [f"the clip is {a.call_text(c)} ({a.line_of(c)})"] if a.ctx.op_location(c) else []
        return Cause("GC201", "saturated-clipped", squash_op, c, reason, notes, {"act": name})
    reason = f"{a.call_text(c)} clips every value of the batch, where the gradient is zero"
    return Cause("GC201", "clipped", c, c, reason)


#: How far back from a clip's input a closed clip or a saturated squash is looked for.
_UPSTREAM_HOPS = 12


def _closed_upstream(a: Analysis, c: int, t) -> Cause | None:
    """The op that made the clip ``c``'s input degenerate: walking back from ``t`` along the
    one input made from the sources (PPO's ratio ``exp(log p - log p_old)`` back
    to ``p``), a clip that passes nothing or a squash saturated everywhere. Its gradient
    would be zero even if ``c`` let every value through: it is the cause, ``c`` a
    consequence (a saturated, clipped softmax makes every probability ratio extreme)."""
    flow = a.flow
    k = t
    for _ in range(_UPSTREAM_HOPS):
        p = flow.producer.get(k)
        if p is None:
            return None
        op = flow.ops[p]
        fed = a.tensor_mask or (lambda d: a.grad(d) is not None)
        live = [d for d in dict.fromkeys(op.data) if fed(d)]
        if len(live) != 1:
            return None
        out = a.value(op.outputs[0]) if op.outputs else None
        if out is not None and (op.type in CLIPS or op.type in SQUASH):
            # any upstream gradient, as if ``c`` passed one (not a uniform one: a softmax
            # passes nothing back of a gradient equal on every class)
            g = np.random.default_rng(0).standard_normal(out.shape).astype(np.float32)
            cause = clipped(a, p, live[0], g) if op.type in CLIPS else saturated(a, p, live[0], g)
            if cause is not None and cause.code == "GC201":
                cause.frontier = c
                if a.ctx.op_location(c) is not None:
                    cause.notes.append(f"{a.call_text(c)} ({a.line_of(c)}) clips every value it gets from it")
                return cause
        k = live[0]
    return None


def squash(kind: str, x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", under="ignore"):
        if kind == "Sigmoid":
            return (np.float32(1) / (np.float32(1) + np.exp(-x))).astype(np.float32)
        if kind == "Tanh":
            return np.tanh(x).astype(np.float32)
        shifted = x - np.max(x, axis=-1, keepdims=True)
        e = np.exp(shifted)
        return (e / np.sum(e, axis=-1, keepdims=True)).astype(np.float32)
