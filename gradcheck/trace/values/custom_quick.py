"""GC301's default comparison: a cheap finite-difference check of a user's
``tf.custom_gradient`` on the checked batch (the full one, ``custom_check._mismatch``, is
``--check-custom-gradients``).

For input ``x``, random output weights ``w`` and three random unit directions ``u``: the
directional derivative the custom gradient gives, ``<vjp(w), u>`` (one forward pass and its
gradient for all directions), against central differences of ``t -> sum(w * f(x + t u))``
(two forward evaluations a direction), in float64 where the function accepts it. A
direction whose difference disagrees is confirmed at an eighth of the step (a jump, where
finite differences say nothing, is dropped).

It reports only what cannot be deliberate. A custom gradient is often *meant* not to be
the derivative, and then it is silent:

- the forward function jumps (``round``, ``sign``) or is flat in every direction while the
  gradient is not: a straight-through estimator;
- the forward function is the identity on ``x``: its gradient is a gradient transform
  (clipping, scaling, reversal, masking) by construction;
- the gradient is not linear in the upstream gradient ``dy`` (a true vector-Jacobian product
  is): it clips, normalises or takes the sign of ``dy``;
- the gradient is the derivative times one constant (the same ratio in every direction): a
  scaled gradient or a gradient reversal. A missing constant factor is a bug this leaves to
  the full check.

What is left, a gradient that disagrees with the derivative differently in different
directions (the derivative of another function: the identity's for a ReLU, a missing term),
is reported.
"""

from __future__ import annotations

import numpy as np

from gradcheck.trace.record import _tf

__all__ = ["DIRECTIONS", "quick_mismatch"]

DIRECTIONS = 3
THRESHOLD = 0.1
#: ``|sin|`` of the angle between the analytic and the numeric directional derivatives
#: under which they count as proportional (a scaled gradient).
PARALLEL = 0.05
#: The upstream gradient is scaled by this to test linearity (a power of two: a linear
#: gradient scales exactly).
LINEARITY_SCALE = 1.0 / 64


def quick_mismatch(function, args: list, kwargs: dict, index: int) -> float | tuple | None:
    """The relative error of the custom gradient of ``function`` for input ``index`` (or
    ``("shape", gradient shape, input shape)``) when it cannot be a deliberate surrogate;
    None when it agrees, is a surrogate or cannot be checked."""
    tf = _tf.tf
    prepared = _prepared(function, args, kwargs, index)
    if prepared is None:
        return None
    value_at, x, outputs, weights, analytic, analytic_scaled = prepared
    if analytic is None:
        return None  # no gradient at all: GC112's business
    if tuple(analytic.shape) != tuple(x.shape):
        return ("shape", tuple(analytic.shape), tuple(x.shape))
    if len(outputs) == 1 and outputs[0].shape == tuple(x.shape) and np.array_equal(outputs[0], x.numpy()):
        return None  # the identity: a gradient transform, deliberate
    g = analytic.numpy().astype(np.float64)
    scaled = analytic_scaled.numpy().astype(np.float64) / LINEARITY_SCALE
    if not np.allclose(scaled, g, rtol=1e-3, atol=1e-6 * max(1.0, float(np.max(np.abs(g), initial=0.0)))):
        return None  # not linear in dy: clipped, normalised, sign of dy
    dtype = x.dtype
    rng = np.random.default_rng(3010 + index)
    x64 = x.numpy()
    scale = float(np.sqrt(np.mean(np.square(x64, dtype=np.float64)))) if x64.size else 0.0
    double = dtype == tf.float64
    delta = (1e-6 if double else 1e-3) * max(1.0, scale)
    tolerance = 1e-6 if double else 1e-3
    w64 = [np.asarray(w, np.float64) for w in weights]

    def h(moved) -> float:
        # the reduction in NumPy: fewer TensorFlow dispatches, which are most of the cost
        result = value_at(moved)
        return float(sum(np.sum(np.asarray(r, np.float64) * w) for r, w in zip(result, w64, strict=False)))

    def central(u: np.ndarray, step: float) -> float:
        shift = tf.constant((step * u).astype(x64.dtype))
        return (h(x + shift) - h(x - shift)) / (2 * step)

    pairs, jumps, flat = [], 0, 0
    for _ in range(DIRECTIONS):
        u = rng.standard_normal(x64.shape)
        u /= max(_norm(u), 1e-12)
        a = float(np.sum(g * u))
        try:
            n = central(u, delta)
        except Exception:  # noqa: BLE001 - cannot evaluate it again: nothing to compare
            return None
        if not (np.isfinite(a) and np.isfinite(n)):
            continue
        if abs(a - n) > THRESHOLD * max(abs(a), abs(n), tolerance) / 2:
            # confirm at a finer step: differences that change with the step are a jump
            # (round, sign), about which finite differences say nothing
            try:
                fine = central(u, delta / 8)
            except Exception:  # noqa: BLE001
                return None
            if not np.isfinite(fine) or abs(n - fine) > 0.5 * max(abs(n), abs(fine), tolerance):
                jumps += 1
                continue
        if abs(n) <= 1e-6 * max(1.0, abs(a)):
            flat += 1
        pairs.append((a, n))
    if not pairs or jumps:
        return None
    if flat == len(pairs):
        return None  # piecewise constant with a surrogate gradient: a straight-through estimator
    a_vec, n_vec = (np.array(v) for v in zip(*pairs, strict=True))
    error = _norm(a_vec - n_vec) / max(_norm(a_vec), _norm(n_vec), tolerance)
    if error <= THRESHOLD:
        return None
    if _proportional(a_vec, n_vec):
        return None  # the derivative times one constant: a scaled gradient, a reversal
    return error


def _norm(v: np.ndarray) -> float:
    # not np.linalg.norm: its BLAS call contends with TensorFlow's threads (milliseconds)
    return float(np.sqrt(np.sum(np.square(v))))


def _proportional(a: np.ndarray, n: np.ndarray) -> bool:
    """The two sketches are parallel (``a = c n`` for one nonzero ``c``)."""
    na, nn = _norm(a), _norm(n)
    if na == 0.0 or nn == 0.0 or len(a) < 2:
        return False
    cos = float(np.sum(a * n)) / (na * nn)
    return (1.0 - min(1.0, cos * cos)) ** 0.5 < PARALLEL


def _prepared(function, args: list, kwargs: dict, index: int):
    """``(forward, x, outputs, weights, vjp(w), vjp(w * LINEARITY_SCALE))`` evaluated in
    float64 when the function accepts its inputs in float64, else in their own dtypes; None
    when it cannot be called again."""
    wide = _widened(args)
    for candidate in (wide, list(args)) if wide is not None else (list(args),):
        try:
            return _evaluate(function, candidate, kwargs, index)
        except Exception:  # noqa: BLE001 - float64 refused (a float32 weight inside): the input's own dtype
            continue
    return None


def _widened(args: list) -> list | None:
    """The float arguments in float64; None when there is nothing to widen."""
    tf = _tf.tf
    out, changed = [], False
    for a in args:
        if _tf.is_tensor(a) and a.dtype.is_floating and a.dtype != tf.float64:
            out.append(tf.cast(a, tf.float64))
            changed = True
        else:
            out.append(a)
    return out if changed else None


def _evaluate(function, args: list, kwargs: dict, index: int):
    from tensorflow.python.eager import backprop

    tf = _tf.tf

    def differentiable(result) -> list:
        return [o for o in tf.nest.flatten(result) if _tf.is_tensor(o) and _tf.is_differentiable_dtype(o.dtype)]

    def forward(value) -> list:
        moved = list(args)
        moved[index] = value
        return differentiable(tf.custom_gradient(function)(*moved, **kwargs))

    def value_at(value) -> list:
        """The value only: the function itself, without tf.custom_gradient's wrapping."""
        moved = list(args)
        moved[index] = value
        return differentiable(function(*moved, **kwargs)[0])

    x = tf.convert_to_tensor(args[index])
    # a raw persistent tape (tf.test.compute_gradient's kind): not one of the user's tapes
    outputs, vjp = backprop.make_vjp(forward, persistent=True)(x)
    if not outputs:
        raise ValueError("no differentiable output")
    rng = np.random.default_rng(301 + index)
    weights = [rng.standard_normal(o.shape.as_list() or []).astype(o.dtype.as_numpy_dtype) for o in outputs]
    (analytic,) = vjp([tf.constant(w) for w in weights])
    (scaled,) = vjp([tf.constant(w * LINEARITY_SCALE) for w in weights])
    if analytic is not None:
        analytic = tf.convert_to_tensor(analytic)
        scaled = tf.convert_to_tensor(scaled) if scaled is not None else tf.zeros_like(analytic)
    return value_at, x, [o.numpy() for o in outputs], weights, analytic, scaled
