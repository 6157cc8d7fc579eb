"""Values a check changed. A check does not train: the optimizer updates it sees are
skipped, and a ``fit`` ends after its checked steps. A variable the program would have
trained before a gradient call therefore holds, at that call, a value the program would
not have (a decoder that ``fit`` would have trained for two epochs, read by a later latent
optimisation loop). A zero or non-finite gradient whose cause is that value is the check's
doing, not the program's, and GC201/GC202 are not reported for it.

What is judged is each cause the frontier names (``frontier.Cause``), not the whole call:
a later training reads variables an earlier one would have trained (a GAN's generator after
its warm-up, a critic in the actor's loss) and its own bug is still its own:

- a cause zero by construction (``tf.sign``, a constant zero factor, a softmax over one
  class, a second derivative of a piecewise-linear op) holds whatever the values: reported;
- a cause decided by values no frozen variable feeds (the batch, a weight trained here):
  reported, as on a first training;
- a cause decided by values a frozen variable feeds is judged on what the skipped training
  could have made of them: values the check left untrained may lie anywhere within their
  own scale, so a comparison mask (or a ReLU) is re-evaluated on those values moved by their
  own magnitude. A mask closed for every such value (``x > 1e9`` on activations of size 1)
  is the program's; one that training could open (a confidence threshold an untrained model
  does not reach, a zero-initialised bias that keeps a ReLU at 0) is the check's doing.
  What moves is the frozen-fed value itself, not what a constant or the batch made of it:
  ``relu(h - 1e4)`` moves ``h`` and subtracts 1e4 again, ``tanh(h * 1e4)`` moves ``h`` and
  scales it again, so an offset or a scale that no value of ``h`` overcomes stays closed.
  A saturated sigmoid or tanh is re-evaluated so too, and is the check's doing when
  training could bring a share of its inputs (``_OPEN_SHARE``) back off the flat ends; a
  cause that cannot be re-evaluated (a zero weight the skipped updates would have moved) is
  withheld.

One skipped update is not enough to withhold anything: within one training step (a GAN's
discriminator update before its generator step) the values differ from the program's by
one step, and a structural cause is found as well there."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from gradcheck.trace.record import _tf
from gradcheck.trace.record.dataflow import TAG_READ

__all__ = ["CUT_FIT", "FROZEN_AT", "freeze", "judge"]

#: Skipped updates after which a variable's value is no longer the program's.
FROZEN_AT = 2
#: What a ``fit`` cut short at its checked steps counts for: the rest of its training.
CUT_FIT = FROZEN_AT
#: Causes zero by construction: no value of any variable changes them.
STRUCTURAL = frozenset({"step", "second-derivative", "one-class", "zero-constant", "hidden-cut"})
#: How far values the check left untrained may lie from those it saw, relative to their
#: magnitude: anywhere within their own scale (the structural tests' batch jitter is 1%).
_TRAINING_SCALE = 1.0
_DRAWS = 8
_SEED = 20261207

_COMPARISONS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "Greater": np.greater,
    "GreaterEqual": np.greater_equal,
    "Less": np.less,
    "LessEqual": np.less_equal,
}
#: Ops between a comparison and the mask it makes (``tf.cast(x > t, x.dtype)``).
_MASK_COPIES = frozenset({"Cast", "Identity", "Reshape", "ExpandDims", "Squeeze"})
#: Squashes re-evaluated on moved inputs: flat (a zero derivative in float32) where saturated.
_SQUASHES = frozenset({"Sigmoid", "Tanh"})
#: A saturated squash is one training could open when this share of its inputs leave the
#: flat ends on moved values: a ``tanh(h * 1e4)`` lets through the few inputs within 1e-3 of
#: 0 whatever ``h`` is, a squash of untrained logits of size 50 opens on most of them.
_OPEN_SHARE = 0.01
#: Elementwise ops through which a frozen-fed value is moved at its source and recomputed,
#: when their other operands are fed by no frozen variable (a constant offset or scale).
_AFFINE: dict[str, Callable[..., np.ndarray]] = {
    "Add": np.add,
    "AddV2": np.add,
    "BiasAdd": np.add,
    "Sub": np.subtract,
    "Mul": np.multiply,
    "RealDiv": np.divide,
    "Neg": np.negative,
    "Identity": lambda x: x,
}
_AFFINE_DEPTH = 4


def freeze(session, handle_ids: Iterable[int], updates: int = 1) -> None:
    """Note ``updates`` updates the check skipped for the variables of these handles."""
    for ident in handle_ids:
        session.frozen[ident] = session.frozen.get(ident, 0) + updates


def judge(checked, frozen: dict[int, int]) -> Callable | None:
    """A test ``withheld(analysis, cause)``: whether the cause of a degenerate gradient of
    ``checked`` is the check's doing (see the module docstring). None when the loss reads no
    variable frozen (``FROZEN_AT``) when the call was made (``frozen``: the session's counts
    then)."""
    reads = _frozen_reads(checked, frozen)
    if not reads:
        return None
    flow = checked.ctx.flow

    def withheld(a, cause) -> bool:
        if cause.variant in STRUCTURAL or cause.code not in ("GC201", "GC202"):
            return False
        # the values that decided it: the blamed op's (a mask, a weight) and what reaches
        # the op where the gradient died (a ReLU's input)
        decided = [*flow.ops[cause.blame].outputs, *flow.ops[cause.frontier].inputs]
        if not _fed_by(flow, decided, reads):
            return False  # decided by values the check did not change
        for i in dict.fromkeys((cause.blame, cause.frontier)):
            closed = _still_closed(a, i, reads)
            if closed is not None:
                return not closed
        return True

    return withheld


def _frozen_reads(checked, frozen: dict[int, int]) -> set[int]:
    """Indices of the reads, in the loss's backward cone, of variables frozen at the call."""
    if not any(n >= FROZEN_AT for n in frozen.values()):
        return set()
    ctx = checked.ctx
    flow = ctx.flow
    captured = {} if ctx.eager else _tf.captured_externals(ctx.graph)
    out = set()
    for i in flow.backward_cone(ctx.target_keys):
        op = flow.ops[i]
        if op.tag != TAG_READ or not op.inputs:
            continue
        ident = _handle_id(ctx, captured, op.inputs[0])
        if ident is not None and frozen.get(ident, 0) >= FROZEN_AT:
            out.add(i)
    return out


def _fed_by(flow, keys, reads: set[int]) -> bool:
    """Whether a value of ``keys`` depends on one of the ``reads`` (through any input)."""
    return bool(flow.backward_cone(keys) & reads)


def _still_closed(a, blame: int, reads: set[int]) -> bool | None:
    """Whether the op ``blame`` passes nothing for every value of its frozen-fed inputs
    within their own scale; None when that cannot be evaluated here."""
    flow = a.flow
    i = blame
    for _ in range(6):  # from the mask back to its comparison, through casts and copies
        op = flow.ops[i]
        if op.type in _COMPARISONS or op.type in ("Relu", "Relu6") or op.type in _SQUASHES:
            break
        if op.type not in _MASK_COPIES or not op.inputs or flow.producer.get(op.inputs[0]) is None:
            return None
        i = flow.producer[op.inputs[0]]
    else:
        return None
    op = flow.ops[i]
    values = [a.value(k) for k in op.inputs]
    if not values or any(v is None for v in values):
        return None
    moved = [_fed_by(flow, [k], reads) for k in op.inputs]
    if any(m and not np.any(v) for v, m in zip(values, moved, strict=True)):
        return False  # exactly zero: weights left at their zero initialisation, which training moves
    rng = np.random.default_rng(_SEED)
    opened_share = 0.0
    for _ in range(_DRAWS):
        drawn = [
            _moved(a, k, reads, rng, _AFFINE_DEPTH) if m else np.asarray(v, np.float64)
            for k, v, m in zip(op.inputs, values, moved, strict=True)
        ]
        if op.type in _COMPARISONS:
            opened = _COMPARISONS[op.type](*drawn[:2])
        elif op.type in _SQUASHES:
            opened_share = max(opened_share, _unsaturated_share(op.type, drawn[0]))
            continue
        else:
            opened = drawn[0] > 0
            if op.type == "Relu6":
                opened &= drawn[0] < 6
        if np.any(opened):
            return False
    return opened_share < _OPEN_SHARE


def _unsaturated_share(kind: str, x: np.ndarray) -> float:
    """The share of ``x`` where the squash's float32 derivative is not exactly zero."""
    x = x.astype(np.float32)
    with np.errstate(over="ignore", under="ignore"):
        if kind == "Sigmoid":
            y = np.float32(1) / (np.float32(1) + np.exp(-x))
            slope = y * (np.float32(1) - y)
        else:
            y = np.tanh(x)
            slope = np.float32(1) - y * y
    return float(np.mean(slope != 0)) if slope.size else 0.0


def _moved(a, key, reads: set[int], rng: np.random.Generator, depth: int) -> np.ndarray:
    """The value of ``key`` with its frozen-fed part moved by its own scale (``_spread``):
    through an offset or a scale by values no frozen variable feeds, the operand it
    offsets or scales is what moves, and the op is computed again."""
    flow = a.flow
    value = np.asarray(a.value(key), np.float64)
    p = flow.producer.get(key)
    if depth <= 0 or p is None or flow.ops[p].type not in _AFFINE:
        return _spread(rng, value)
    op = flow.ops[p]
    fed = [_fed_by(flow, [k], reads) for k in op.inputs]
    operands = [a.value(k) for k in op.inputs]
    if sum(fed) != 1 or any(v is None for v in operands):
        return _spread(rng, value)
    args = [
        _moved(a, k, reads, rng, depth - 1) if f else np.asarray(v, np.float64)
        for k, v, f in zip(op.inputs, operands, fed, strict=True)
    ]
    try:
        with np.errstate(all="ignore"):
            out = np.asarray(_AFFINE[op.type](*args), np.float64)
    except (ValueError, TypeError):  # shapes a bias add broadcasts otherwise: move it whole
        return _spread(rng, value)
    return out if out.shape == value.shape else _spread(rng, value)


def _spread(rng: np.random.Generator, x) -> np.ndarray:
    """``x`` moved by its own scale: what training the check skipped could make of it."""
    x = np.asarray(x, np.float64)
    scale = float(np.sqrt(np.mean(np.square(x)))) if x.size else 0.0
    return x + _TRAINING_SCALE * (np.abs(x) + scale) * rng.standard_normal(x.shape)


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
