"""GC101 integer-index-op: argmax/argmin and other ops that return indices."""

from __future__ import annotations

from gradcheck.rules._base import Example, Rule


class IntegerIndexOp(Rule):
    code = "GC101"
    trace_check = "gradcheck.trace.diagnose.analyze:analyse"
    name = "integer-index-op"
    summary = (
        "The loss is built from integer indices (argmax, argmin, top_k indices, where...), which carry no gradient."
    )
    message = "{call} returns integer indices, which carry no gradient: {variables} {get} none"
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
        "(`keras.losses.SparseCategoricalCrossentropy(from_logits=True)`) and keep argmax for metrics. "
        "To regress or compare a position, use a differentiable soft-argmax: "
        "`tf.reduce_sum(tf.nn.softmax({arg}, axis=-1) * tf.range(n, dtype={arg}.dtype), axis=-1)`."
    )
    fix_variants = {
        "classification": (
            "When the loss compares predicted classes with labels (an error rate, accuracy, a classifier's loss)",
            "Compute the loss on values, not on indices. For classification, train on the logits with a "
            "cross-entropy loss (`keras.losses.SparseCategoricalCrossentropy(from_logits=True)`) and keep "
            "argmax for metrics. To regress or compare a position, use a differentiable soft-argmax: "
            "`tf.reduce_sum(tf.nn.softmax({arg}, axis=-1) * tf.range(n, dtype={arg}.dtype), axis=-1)`. "
            "For Q-learning, select the taken action's Q-value instead: `tf.gather({arg}, actions, batch_dims=1)`.",
        ),
        "indices": (
            "When the indices are then used to select or look up (`tf.one_hot`, `tf.gather`, an `Embedding`)",
            "Ids carry no gradient, so neither does what is selected or looked up with them. Use "
            "values, not ids: in Q-learning, select the taken action's Q-value "
            "(`tf.gather({arg}, actions, batch_dims=1)`); to pass a choice on to another network (a GAN "
            "generating tokens), feed it the probabilities instead of the ids "
            "(`tf.matmul(tf.nn.softmax({arg}), embedding.embeddings)`, a soft one-hot lookup) or a "
            "Gumbel-softmax sample.",
        ),
        "labels": (
            "When the ids are the labels or targets of another network's loss (`ctc_loss` labels, sparse "
            "cross-entropy labels, `y_true`)",
            "Labels are discrete: {call} returns ids, which carry no gradient, and a loss never "
            "backpropagates into its labels (`y_true`), so the network that made {arg} gets no gradient from "
            "this loss. Give that network its own differentiable loss on its logits (e.g. cross-entropy "
            "against its own targets), or, if it is not meant to train here, freeze it (`trainable = False`) "
            "or leave its variables out of the sources.",
        ),
        "nearest": (
            "When `argmin` picks the nearest entry by a distance (a vector quantizer's codebook, a nearest centroid)",
            "The nearest entry's index carries no gradient, and neither does the entry looked up with it. In a "
            "VQ-VAE, pass the gradient straight through the quantizer: `quantized = z + tf.stop_gradient("
            "quantized - z)`, with the codebook and commitment losses training the codebook. If what uses the "
            "codes is not meant to train what makes them (a prior over the codes of a trained encoder), freeze "
            "the encoder and quantizer (`trainable = False`) or precompute the codes.",
        ),
    }
    doc_fields = {"arg": "q"}
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

    invalid = (
        Example(
            "DQN train_step regresses the argmin index (model.fit, graph mode)",
            "fit",
            """\
import keras
import numpy as np
import tensorflow as tf


class QNet(keras.Model):
    def __init__(self):
        super().__init__()
        self.body = keras.layers.Dense(16, activation="relu")
        self.head = keras.layers.Dense(3)

    def call(self, x):
        return self.head(self.body(x))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            q = self(x, training=True)
            action = tf.math.argmin(q, axis=1)  # expect: GC101
            loss = keras.losses.mean_squared_error(y, action)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


model = QNet()
model.compile(optimizer="adam")
model.fit(np.random.rand(64, 4).astype("float32"), np.random.rand(64).astype("float32"), epochs=2, verbose=0)
""",
        ),
        Example(
            "classification loss on the predicted class index (eager custom loop)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(5)])
optimizer = keras.optimizers.SGD(0.1)
x = np.random.rand(32, 6).astype("float32")
labels = np.random.randint(0, 5, size=32)
for step in range(3):
    with tf.GradientTape() as tape:
        logits = model(x)
        predicted = tf.argmax(logits, axis=-1)  # expect: GC101
        loss = tf.reduce_mean(tf.cast(tf.abs(predicted - labels), tf.float32))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
""",
        ),
        Example(
            "top_k indices used as the prediction (tf.function custom step)",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

ranker = keras.Sequential([keras.Input((8,)), keras.layers.Dense(10)])
optimizer = keras.optimizers.Adam(1e-3)


@tf.function
def train_step(x, best):
    with tf.GradientTape() as tape:
        scores = ranker(x)
        top = tf.math.top_k(scores, k=1).indices[:, 0]  # expect: GC101
        loss = tf.reduce_mean(tf.square(tf.cast(top - best, tf.float32)))
    grads = tape.gradient(loss, ranker.trainable_variables)
    optimizer.apply_gradients(zip(grads, ranker.trainable_variables))
    return loss


for _ in range(3):
    train_step(np.random.rand(16, 8).astype("float32"), np.random.randint(0, 10, size=16).astype("int32"))
""",
        ),
    )
    valid = (
        Example(
            "DQN train_step selects the taken action's Q-value with one_hot (model.fit)",
            "fit",
            """\
import keras
import numpy as np
import tensorflow as tf


class QNet(keras.Model):
    def __init__(self):
        super().__init__()
        self.body = keras.layers.Dense(16, activation="relu")
        self.head = keras.layers.Dense(3)

    def call(self, x):
        return self.head(self.body(x))

    def train_step(self, data):
        (x, actions), y = data
        with tf.GradientTape() as tape:
            q = self(x, training=True)
            q_action = tf.reduce_sum(q * tf.one_hot(actions, 3), axis=1)
            loss = keras.losses.Huber()(y, q_action)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


model = QNet()
model.compile(optimizer="adam")
x = np.random.rand(64, 4).astype("float32")
actions = np.random.randint(0, 3, size=64)
model.fit((x, actions), np.random.rand(64).astype("float32"), epochs=2, verbose=0)
""",
        ),
        Example(
            "argmax only to act, tf.gather to train (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

q_net = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
optimizer = keras.optimizers.Adam(1e-3)
states = np.random.rand(32, 4).astype("float32")
actions = tf.argmax(q_net(states), axis=1)  # acting: outside the tape, no gradient needed
targets = np.random.rand(32).astype("float32")
with tf.GradientTape() as tape:
    q = q_net(states)
    q_taken = tf.gather(q, actions, batch_dims=1)
    loss = tf.reduce_mean(tf.square(targets - q_taken))
grads = tape.gradient(loss, q_net.trainable_variables)
optimizer.apply_gradients(zip(grads, q_net.trainable_variables))
""",
        ),
    )
