"""GC101 integer-index-op: argmax/argmin and other ops that return indices."""

from __future__ import annotations

from gradcheck.rules._base import Rule


class IntegerIndexOp(Rule):
    code = "GC101"
    name = "integer-index-op"
    summary = (
        "The loss is built from integer indices (argmax, argmin, top_k indices, where...), which carry no gradient."
    )
    message = "{call} returns integer indices, which carry no gradient: {variables} get none"
    what = """
Finds a path from the trained variables to the loss that goes through an op returning
integer indices: `tf.math.argmax`/`argmin`, the indices of `tf.math.top_k`/`tf.argsort`,
`tf.unique`, `tf.where(condition)`, `tf.searchsorted`, `tf.math.bincount`...
"""
    why = """
An index is an integer, and no gradient flows to or through an integer: a small change of
the weights does not change which position is largest, so the derivative is zero almost
everywhere and undefined at the jumps. TensorFlow registers no gradient for these ops, so
every variable upstream of the index gets `None`. Keras 3 then stops with
`ValueError: No gradients provided for any variable.`, naming no variable, op or line.

The classic case is a DQN `train_step` that takes `argmin`/`argmax` of the Q-values inside
the tape and builds the loss from the action index instead of from the Q-value of the
taken action.
"""
    example = """
with tf.GradientTape() as tape:
    q = self(states, training=True)
    action = tf.math.argmax(q, axis=1)
    loss = keras.losses.mean_squared_error(targets, action)
"""
    use_instead = """
with tf.GradientTape() as tape:
    q = self(states, training=True)
    q_action = tf.reduce_sum(q * tf.one_hot(actions, num_actions), axis=1)
    # or: q_action = tf.gather(q, actions, batch_dims=1)
    loss = keras.losses.Huber()(targets, q_action)
# take argmax only to act, outside the tape: action = int(tf.argmax(q[0]))
"""
    fix = (
        "Compute the loss on values, not on indices. For Q-learning, select the taken action's "
        "Q-value: `tf.reduce_sum({arg} * tf.one_hot(actions, num_actions), axis=1)` (or "
        "`tf.gather({arg}, actions, batch_dims=1)`), and take argmax/argmin only to act, outside the "
        "tape. For classification, train on the logits with a cross-entropy loss "
        "(`keras.losses.SparseCategoricalCrossentropy(from_logits=True)`) and keep argmax for metrics."
    )
    references = (
        "https://www.tensorflow.org/api_docs/python/tf/math/argmax",
        "https://www.tensorflow.org/guide/autodiff#cases_where_gradient_returns_none",
        "https://keras.io/examples/rl/deep_q_network_breakout/",
    )
    op_types = frozenset(
        {
            "ArgMax",
            "ArgMin",
            "TopKV2",
            "TopK",
            "Unique",
            "UniqueV2",
            "UniqueWithCounts",
            "Where",
            "LowerBound",
            "UpperBound",
            "Bincount",
            "DenseBincount",
            "HistogramFixedWidth",
            "Bucketize",
            "InTopKV2",
        }
    )
    call_names = {
        "ArgMax": ("argmax",),
        "ArgMin": ("argmin",),
        "TopKV2": ("top_k", "argsort", "sort"),
        "Where": ("where",),
        "LowerBound": ("searchsorted",),
        "UpperBound": ("searchsorted",),
        "Bincount": ("bincount",),
        "DenseBincount": ("bincount",),
        "Bucketize": ("bucketize",),
        "Unique": ("unique",),
        "UniqueV2": ("unique",),
    }
