"""What a value is *for* in a loss, read from the data-flow graph: the op kinds of a
comparison between a prediction and its target, shared by the diagnosis of a None gradient
and by GC203 (``values/bootstrap``).

A *target* is what the prediction is compared against: the other side of an error (``a -
b`` squared, absolute or Huber'd, a squared difference), the labels of a cross-entropy, or
the weight that multiplies a log-probability (a policy gradient's advantage). A
``tf.stop_gradient`` on a target is deliberate (a TD target, an advantage, a teacher's
output); variables whose only path to the loss goes through it were asked of the wrong
loss, which is the finding to make, not "remove the stop_gradient"."""

from __future__ import annotations

from collections.abc import Callable

from gradcheck.trace.record.dataflow import TAG_READ, Flow

LOGS = frozenset({"Log", "LogSoftmax", "Log1p"})
#: ops whose output is a (negative) log-probability of their logits
LOG_PROBS = LOGS | {"SparseSoftmaxCrossEntropyWithLogits", "SoftmaxCrossEntropyWithLogits"}
#: ops a log-probability (or a ratio exp(log p - log p_old)) passes through on its way to the
#: product with its weight: selection, reduction over actions, sign, scale, clipping
LOG_PASS = frozenset(
    {
        "Identity", "Neg", "Cast", "Squeeze", "Reshape", "ExpandDims", "Transpose", "StridedSlice", "Slice",
        "GatherV2", "GatherNd", "ResourceGather", "Sum", "Mean", "Mul", "RealDiv", "AddV2", "Add", "Sub",
        "Exp", "Maximum", "Minimum", "ClipByValue", "SelectV2", "Select", "ConcatV2", "Pack",
    }
)  # fmt: skip
#: ops that keep a value as it is (the target's statement is the op before them)
SHAPE_ONLY = frozenset({"Identity", "Squeeze", "Reshape", "ExpandDims", "Cast", "StridedSlice"})
#: ops whose output is a probability
PROBS = frozenset({"Softmax", "Sigmoid"})
#: what a weighted probability goes through on its way into a loss: sums, scales, a mean
LOSS_ALGEBRA = SHAPE_ONLY | {"Sum", "Mean", "Neg", "Mul", "RealDiv", "AddV2", "Add", "AddN", "Sub"}
#: what makes a difference an error: its square, absolute value, power, or Huber
ERRORS = frozenset({"Square", "Abs", "Pow", "SquaredDifference"})
#: the algebra a target goes through before it is compared: ``r + γ·V'``, a baseline
#: subtracted, a normalisation, a selection of the taken action, a clip
TARGET_ALGEBRA = SHAPE_ONLY | {
    "Neg", "Mul", "RealDiv", "AddV2", "Add", "Sub", "Maximum", "Minimum", "ClipByValue",
    "GatherV2", "GatherNd", "Sum", "Mean", "Transpose",
}  # fmt: skip


def is_error(flow: Flow, c: int) -> bool:
    """The difference ``flow.ops[c]`` is an error: squared, absolute or raised to a power (a
    Huber loss takes both), through ops that only reshape or select it."""
    consumers = flow.data_consumers
    stack, seen = [(k, 0) for k in flow.ops[c].outputs], set()
    while stack:
        k, depth = stack.pop()
        for j in consumers.get(k, ()):
            if j in seen or depth > 4:
                continue
            seen.add(j)
            op = flow.ops[j]
            if op.type in ERRORS or (op.type == "Mul" and len(op.data) == 2 and op.data[0] == op.data[1]):
                return True
            if op.type in SHAPE_ONLY or op.type in ("Neg", "GatherV2", "GatherNd", "Mul", "RealDiv"):
                stack.extend((o, depth + 1) for o in op.outputs)
    return False


def is_log_prob(flow: Flow, k, hops: int = 8) -> bool:
    """``k`` is a log-probability (or ``exp`` of a difference of them, a probability ratio):
    a log op within a few selection / reduction / scaling ops."""
    return made_by(flow, [k], lambda op: op.type in LOG_PROBS, hops, lambda op: op.data if op.type in LOG_PASS else ())


def is_probability(flow: Flow, k, hops: int = 4) -> bool:
    """``k`` is a probability: a softmax's or a sigmoid's output within a few selection ops."""
    return made_by(flow, [k], lambda op: op.type in PROBS, hops, lambda op: op.data if op.type in SHAPE_ONLY else ())


def _expectation(flow: Flow, product: int, others) -> bool:
    """``product`` weights a probability (``probs * tf.stop_gradient(q)``, summed over the
    actions: the expected value of a policy, an expected SARSA target's actor loss), and what
    it makes goes into the loss through sums and scales only. A probability times a value
    that feeds further layers (attention weights over values) is no such weight."""
    if not any(is_probability(flow, d) for d in others):
        return False
    stack, seen = [(k, 0) for k in flow.ops[product].outputs], set()
    while stack:
        k, depth = stack.pop()
        for j in flow.data_consumers.get(k, ()):
            if j in seen:
                continue
            seen.add(j)
            if depth > 8 or flow.ops[j].type not in LOSS_ALGEBRA:
                return False
            stack.extend((o, depth + 1) for o in flow.ops[j].outputs)
    return True


def made_by(flow: Flow, keys, match, hops: int = 8, inputs=lambda op: op.inputs) -> bool:
    """Whether an op that ``match`` accepts produces ``keys`` or sits within ``hops`` ops
    above them, following ``inputs`` of each op passed."""
    stack, seen = [(k, 0) for k in keys], set()
    while stack:
        k, depth = stack.pop()
        p = flow.producer.get(k)
        if p is None or p in seen or depth > hops:
            continue
        seen.add(p)
        op = flow.ops[p]
        if match(op):
            return True
        stack.extend((d, depth + 1) for d in inputs(op))
    return False


def predicts(flow: Flow, keys: list, live: Callable[[list], bool]) -> bool:
    """Some of ``keys`` is a prediction: made, on a path no ``tf.stop_gradient`` cuts, from a
    trained variable whose gradient the loss reaches (``live`` asks that of the variables'
    reads). A value that only *receives* a gradient (a stopped sample fed on to a network)
    is none."""
    reads, stack, seen = [], list(keys), set()
    while stack:
        p = flow.producer.get(stack.pop())
        if p is None or p in seen:
            continue
        seen.add(p)
        op = flow.ops[p]
        if op.type == "StopGradient":
            continue
        if op.tag == TAG_READ:
            reads.extend(op.outputs)
        else:
            stack.extend(op.data)
    return bool(reads) and live(reads)


#: what a teacher's logits go through to become soft targets (a distillation loss)
SOFT_TARGET = TARGET_ALGEBRA | {"Softmax", "LogSoftmax", "Sigmoid"}


def stops_a_target(flow: Flow, stop: int, live: Callable[[list], bool], hops: int = 6) -> bool:
    """The op ``stop`` (a ``tf.stop_gradient``) stops a target: through target algebra only,
    its value is compared with a prediction (``predicts``, with ``live`` the loss's
    liveness question): the other side of an error, the logits of a cross-entropy it
    labels, or a log-probability it weights."""
    return is_target(flow, flow.ops[stop].outputs, live, hops)


def is_target(
    flow: Flow, keys, live: Callable[[list], bool], hops: int = 6, passes: frozenset = TARGET_ALGEBRA
) -> bool:
    """Some of ``keys`` is a target: through ``passes`` only, compared with a prediction
    (see ``stops_a_target``). ``SOFT_TARGET`` lets a teacher's logits pass a softmax."""

    def prediction(keys) -> bool:
        return predicts(flow, keys, live)

    stack, seen = [(k, 0) for k in keys], set()
    while stack:
        k, depth = stack.pop()
        for j in flow.data_consumers.get(k, ()):
            if j in seen or depth > hops:
                continue
            seen.add(j)
            op = flow.ops[j]
            others = [d for d in op.data[:2] if d != k]
            if len(op.data) >= 2 and others:
                if op.type == "SquaredDifference" or (op.type == "Sub" and is_error(flow, j)):
                    if prediction(others):
                        return True
                elif op.type == "SoftmaxCrossEntropyWithLogits" and op.data[1] == k:
                    if prediction([op.data[0]]):
                        return True
                elif (
                    op.type == "Mul"
                    and (any(is_log_prob(flow, d) for d in others) or _expectation(flow, j, others))
                    and prediction(others)
                ):
                    return True
            if op.type in passes:
                stack.extend((o, depth + 1) for o in op.outputs)
    return False
