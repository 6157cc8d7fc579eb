"""Forward values and loss gradients of the tensors around a gradient call, on the host, and
the backward pass replayed over them: each op's registered gradient function evaluated eagerly
on its recorded values, as eager backprop evaluates it. Shared by ``degenerate`` (a traced
step's check) and ``frontier.inside`` (the body of a ``tf.function`` called by the step)."""

from __future__ import annotations

import numpy as np

from gradcheck.trace.record import _tf

__all__ = ["GraphValues", "Values", "dense_full", "key_of_graph", "mock_vjp", "replay_backward"]


class Values:
    """Forward values and loss gradients of the tensors around a gradient call, as NumPy
    arrays, and each op's own gradient (``own_vjp``) for telling apart two consumers."""

    def __init__(self) -> None:
        self.forward: dict = {}
        self.grads: dict = {}  # key -> ndarray, or None when the loss has no gradient for it

    def value(self, key):
        return self.forward.get(key)

    def grad(self, key):
        return self.grads.get(key)

    def has_grad(self, key) -> bool:
        return key in self.grads

    def own_vjp(self, op_index: int, input_key):
        """The gradient op ``op_index`` alone sends back to its input ``input_key``."""
        return None


class GraphValues(Values):
    """Values of a traced function's tensors, received when it ran; an op's own gradient
    is its registered gradient function evaluated eagerly on them (as eager backprop does)."""

    def __init__(self, ctx) -> None:
        super().__init__()
        self._ctx = ctx

    def own_vjp(self, op_index: int, input_key):
        op = self._ctx.flow.ops[op_index]
        graph_op = op.site
        if graph_op is None or isinstance(graph_op, tuple):
            return None
        try:
            position = [key_of_graph(t) for t in graph_op.inputs].index(input_key)
        except ValueError:
            return None
        ins = [self.forward.get(key_of_graph(t)) for t in graph_op.inputs]
        outs = [self.forward.get(key_of_graph(t)) for t in graph_op.outputs]
        grads = []
        for t, value in zip(graph_op.outputs, outs, strict=False):
            g = self.grads.get(key_of_graph(t))
            grads.append(g if g is not None else (np.zeros_like(value) if value is not None else None))
        if any(v is None for v in ins + outs + grads):
            return None
        return _registered_vjp(graph_op, ins, outs, grads, position)


def replay_backward(flow, ops: set[int], values: Values) -> None:
    """Reverse-mode over ``ops`` on the host: from the gradients already in ``values``
    (the targets'), each op's registered gradient function, evaluated eagerly on the op's
    forward values (as eager backprop evaluates it), sends its contribution to each input;
    a tensor's gradient is the sum of its consumers' contributions, as on TensorFlow's
    tape. A tensor no contribution reaches stays unconnected (None); an op whose gradient
    cannot be evaluated here (a missing value) contributes nothing."""
    accumulated: dict = {k: v for k, v in values.grads.items() if v is not None}
    for i in sorted(ops, reverse=True):
        op = flow.ops[i]
        graph_op = op.site
        if graph_op is None or isinstance(graph_op, tuple):
            continue
        outs = [accumulated.get(k) for k in op.outputs]
        if all(g is None for g in outs):
            continue
        out_values = [values.forward.get(k) for k in op.outputs]
        grads = []
        for g, v in zip(outs, out_values, strict=False):
            if g is None:
                g = np.zeros_like(v) if v is not None else None
            grads.append(g)
        ins = [values.forward.get(k) for k in op.inputs]
        if any(v is None for v in ins + out_values + grads):
            continue
        contributions = _registered_vjp(graph_op, ins, out_values, grads, None)
        if contributions is None:
            continue
        for k, g in zip(op.inputs, contributions, strict=False):
            if g is None or k not in op.data or not flow.is_differentiable(k):
                continue
            previous = accumulated.get(k)
            accumulated[k] = g if previous is None else previous + g
    for k, g in accumulated.items():
        values.grads.setdefault(k, g)


def key_of_graph(t):
    from gradcheck.trace.record import graph as graph_mode

    return graph_mode.key(t)


def dense_full(g):
    """IndexedSlices as the dense tensor they stand for."""
    if isinstance(g, _tf.tf.IndexedSlices):
        return _tf.tf.convert_to_tensor(g)
    return g


def _registered_vjp(graph_op, ins, outs, grads, position):
    """The registered gradient of ``graph_op`` for input ``position``, run eagerly."""
    try:
        attrs: list = []
        for name in graph_op.node_def.attr:
            attrs += [name, graph_op.get_attr(name)]
    except Exception:  # noqa: BLE001
        return None
    return mock_vjp(graph_op.type, attrs, ins, outs, grads, position)


def mock_vjp(op_type: str, attrs: list, ins, outs, grads, position):
    """An op's registered gradient function, called as eager backprop calls it (a mock op
    holding the forward values), for input ``position``; None when it cannot be."""
    tf = _tf.tf
    try:
        from tensorflow.python.eager import backprop
        from tensorflow.python.framework import ops as tf_ops

        grad_fn = tf_ops._gradient_registry.lookup(op_type)
        mock = backprop._MockOp(
            tuple(attrs), [tf.constant(v) for v in ins], [tf.constant(v) for v in outs], op_type, None
        )
        result = grad_fn(mock, *[tf.constant(g) for g in grads])
    except Exception:  # noqa: BLE001 - control flow, functions, custom gradients: not here
        return None
    if not isinstance(result, (list, tuple)):
        result = [result]
    if position is None:  # every input's
        return [None if g is None else np.asarray(dense_full(g).numpy()) for g in result]
    if position >= len(result) or result[position] is None:
        return None
    return np.asarray(dense_full(result[position]).numpy())
