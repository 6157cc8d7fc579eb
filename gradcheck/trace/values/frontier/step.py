"""GC201 at an op whose registered gradient is zero wherever it is defined: a step function
(``tf.sign``, and hard thresholds built from it such as ``(tf.sign(x) + 1) / 2``), or the
gradient op of a piecewise-linear op (relu, max-pooling) differentiated again. TensorFlow
returns zeros for that input by construction, so no batch and no jitter changes it: the zero
is structural without a test of the values."""

from __future__ import annotations

from gradcheck.trace.values.frontier.analysis import Analysis, Cause
from gradcheck.trace.values.frontier.ops import ADDITIVE, CONSTANTS, MASKS, ZERO_GRADIENT

#: Elementwise arithmetic a hard threshold is built with (`(tf.sign(x) + 1) / 2`).
_THRESHOLD_ARITHMETIC = ADDITIVE | {"Mul", "RealDiv", "Div", "Cast", "Maximum", "Minimum", "Relu", "Reshape"}

# The gradient ops of ZERO_GRADIENT, by the forward op they differentiate.
_FORWARD = {
    "ReluGrad": "relu",
    "Relu6Grad": "relu6",
    "LeakyReluGrad": "leaky relu",
    "MaxPoolGrad": "max-pooling",
    "MaxPoolGradV2": "max-pooling",
    "MaxPoolGradGrad": "max-pooling",
    "MaxPool3DGrad": "max-pooling",
    "MaxPool3DGradGrad": "max-pooling",
}


def zero_derivative(a: Analysis, c: int, t) -> Cause | None:
    """Why ``c`` (an op of ``ZERO_GRADIENT``) sends zeros to ``t``: by its registered gradient."""
    op = a.flow.ops[c]
    kind = op.type
    if kind not in ZERO_GRADIENT:
        return None
    zero_inputs = ZERO_GRADIENT[kind]
    positions = [i for i, k in enumerate(op.inputs) if k == t]
    # `t` may feed the op twice; only when every use of it gets zeros is the zero the op's.
    if not positions or (zero_inputs is not None and not set(positions) <= set(zero_inputs)):
        return None
    if kind == "Sign":
        reason = (
            f"{a.call_text(c)} is a step function: TensorFlow defines its gradient as zero everywhere, "
            "so nothing before it gets a gradient"
        )
        notes = ["no batch changes this: every value of the input gets the same zero gradient"]
        # A mask built from the step (`x * (tf.sign(x - t) + 1) / 2`) is meant to pass no
        # gradient, as `tf.cast(x > t)` does: for what it gates, the product decides (a mask
        # zero everywhere is a finding there); the sign names only the sources nothing else does.
        return Cause("GC201", "step", c, c, reason, notes, secondary=_gates(a, c))
    forward = _FORWARD.get(kind, kind)
    reason = (
        f"{kind} (the gradient of {forward}, differentiated again) has a zero derivative with respect to "
        f"{forward}'s input everywhere: a second derivative through a piecewise-linear {forward} is zero"
    )
    # the line to change chooses the activation (a layer's `activation="relu"`), not the
    # gradient call that made its gradient op: point at the forward op it differentiates
    activation = forward_op(a, c)
    return Cause("GC201", "second-derivative", c if activation is None else activation, c, reason)


#: The forward op each gradient op of ``_FORWARD`` differentiates.
_FORWARD_OPS = {
    "ReluGrad": ("Relu",),
    "Relu6Grad": ("Relu6",),
    "LeakyReluGrad": ("LeakyRelu",),
    "MaxPoolGrad": ("MaxPool", "MaxPoolV2"),
    "MaxPoolGradV2": ("MaxPool", "MaxPoolV2"),
    "MaxPoolGradGrad": ("MaxPoolGrad", "MaxPoolGradV2"),
    "MaxPool3DGrad": ("MaxPool3D",),
    "MaxPool3DGradGrad": ("MaxPool3DGrad",),
}


def forward_op(a: Analysis, c: int) -> int | None:
    """The recorded forward op whose gradient op ``c`` is: the producer, or a consumer, of a
    tensor the gradient op reads (relu's output, leaky relu's input, max-pooling's input and
    output), of the type ``c`` differentiates; None when the forward pass was not recorded."""
    flow = a.flow
    kinds = _FORWARD_OPS.get(flow.ops[c].type, ())
    for k in flow.ops[c].inputs:
        p = flow.producer.get(k)
        if p is not None and p != c and flow.ops[p].type in kinds:
            return p
    for k in flow.ops[c].inputs:
        for j in flow.consumers.get(k, ()):
            if j < c and flow.ops[j].type in kinds:
                return j
    return None


def steps_behind(a: Analysis, t, tensor_mask) -> list[tuple[Cause, int]]:
    """The step functions (``tf.sign``) that every path from ``t`` back to the sources crosses,
    each with the sources behind it. Their gradient is zero by construction, so a zero
    frontier downstream of them (a PPO clip that clips a ratio the sign made constant, a
    selection, a dead unit) is a consequence: open it, and the sources still get zeros.
    Empty when some path reaches a source without crossing a step."""
    flow = a.flow
    steps: list[int] = []
    seen: set = set()
    stack = [t]
    while stack:
        k = stack.pop()
        mask = tensor_mask(k)
        if k in seen or not mask:
            continue
        seen.add(k)
        p = flow.producer.get(k)
        if p is None:
            return []  # a source itself
        op = flow.ops[p]
        if op.type in ZERO_GRADIENT and ZERO_GRADIENT[op.type] is None:
            steps.append(p)
            continue
        carried = 0
        for d in op.data:
            carried |= tensor_mask(d)
        if mask & ~carried:
            return []  # a source is read here (a variable's read, a watched tensor)
        stack.extend(op.data)
    out = []
    for c in sorted(set(steps)):
        data = flow.ops[c].data
        cause = zero_derivative(a, c, data[0]) if data else None
        if cause is not None:
            out.append((cause, tensor_mask(data[0])))
    return out


def hard_threshold(a: Analysis, k) -> bool:
    """Whether the value ``k`` is a hard threshold built from a step function: elementwise
    arithmetic on ``tf.sign`` (and comparison masks, scalar literals), as `(tf.sign(x) + 1) / 2`.
    Its gradient is zero by construction, so when it is zero on the batch it is a mask that
    lets nothing through, as a ``tf.cast(x > t)`` is. Products of comparison masks alone are
    left to the zero-factor walk, which names the factor that is zero."""
    return _threshold(a, k, 0) == _STEP


_STEP, _MASK, _LITERAL, _OTHER = "step", "mask", "literal", "other"


def _threshold(a: Analysis, k, depth: int) -> str:
    """What the value ``k`` is built from: a step function (at least one), masks, a scalar
    literal only, or anything else (a value with a gradient path; a batch input, which is
    zero by chance)."""
    flow = a.flow
    p = flow.producer.get(k)
    if p is None or flow.ops[p].type in CONSTANTS:
        v = a.value(k)
        return _LITERAL if v is not None and v.size == 1 else _OTHER
    op = flow.ops[p]
    if op.type in ZERO_GRADIENT and ZERO_GRADIENT[op.type] is None:
        return _STEP
    if op.type in MASKS or (op.type == "Cast" and op.inputs and not flow.is_differentiable(op.inputs[0])):
        return _MASK
    if op.type not in _THRESHOLD_ARITHMETIC or depth > 8 or not op.data:
        return _OTHER
    parts = {_threshold(a, d, depth + 1) for d in op.data}
    for kind in (_OTHER, _STEP, _MASK):
        if kind in parts:
            return kind
    return _LITERAL


def _gates(a: Analysis, c: int) -> bool:
    """Whether the step ``c`` is only used as a mask: followed forward along the loss's path,
    its output passes through threshold arithmetic (literals, other steps and masks) and ends
    as a factor of a product whose other factor has a gradient path."""
    flow = a.flow
    gated = False
    seen: set[int] = set()
    todo = list(flow.ops[c].outputs)
    while todo:
        k = todo.pop()
        for u in flow.data_consumers.get(k, ()):
            if u in seen or a.output_grad(u) is None:  # None: off the loss's path (a metric)
                continue
            seen.add(u)
            op = flow.ops[u]
            others = [d for d in op.data if d != k]
            kinds = [_threshold(a, d, 0) for d in others]
            if op.type in ("Mul", "MulNoNan") and any(
                kind == _OTHER and a.grad(d) is not None for d, kind in zip(others, kinds, strict=True)
            ):
                gated = True
            elif op.type in _THRESHOLD_ARITHMETIC and _OTHER not in kinds:
                todo.extend(op.outputs)
            else:
                return False  # the step's value itself reaches the loss
    return gated
