"""GC115 non-trainable-source: gradients asked for non-trainable variables."""

from __future__ import annotations

from gradcheck.rules._base import Example, Rule


class NonTrainableSource(Rule):
    code = "GC115"
    trace_check = "gradcheck.trace.diagnose.analyze:analyse"
    name = "non-trainable-source"
    summary = "Gradients are asked for non-trainable variables (e.g. `model.variables` includes BatchNormalization statistics)."
    message = "{variables} {is} not trainable: the tape does not watch non-trainable variables, so the gradient is None"
    what = """
Finds non-trainable variables among the sources of `tape.gradient`, typically because the
step asks for `model.variables` or `model.weights` instead of `model.trainable_variables`
(BatchNormalization's moving mean and variance, frozen layers, counters).
"""
    why = """
A tape watches only trainable variables; non-trainable state such as BatchNormalization
moving statistics is updated outside backpropagation. Their gradients are `None`, and an
optimizer given the list fails or silently skips them.
"""
    example = """
with tf.GradientTape() as tape:
    loss = loss_fn(y, model(x, training=True))
grads = tape.gradient(loss, model.variables)
"""
    use_instead = """
with tf.GradientTape() as tape:
    loss = loss_fn(y, model(x, training=True))
grads = tape.gradient(loss, model.trainable_variables)
"""
    fix = (
        "Ask for gradients of `model.trainable_variables` (not `model.variables` / `model.weights`); "
        "non-trainable state such as BatchNormalization moving statistics is updated outside backprop."
    )
    references = ("https://keras.io/api/layers/normalization_layers/batch_normalization/",)

    invalid = (
        Example(
            "model.variables includes BatchNormalization statistics (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8), keras.layers.BatchNormalization(), keras.layers.Dense(1)])
x, y = np.random.rand(16, 4).astype("float32"), np.random.rand(16, 1).astype("float32")
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
grads = tape.gradient(loss, model.variables)  # expect: GC115
""",
        ),
        Example(
            "a train_step asking for self.weights (model.fit)",
            "fit",
            """\
import keras
import numpy as np
import tensorflow as tf


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(8)
        self.norm = keras.layers.BatchNormalization()
        self.out = keras.layers.Dense(1)

    def call(self, x, training=False):
        return self.out(self.norm(self.dense(x), training=training))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self(x, training=True) - y))
        grads = tape.gradient(loss, self.weights)  # expect: GC115
        trainable = [(g, v) for g, v in zip(grads, self.weights) if v.trainable]
        self.optimizer.apply_gradients(trainable)
        return {"loss": loss}


model = Net()
model.compile(optimizer="sgd")
model.fit(np.random.rand(16, 4).astype("float32"), np.random.rand(16, 1).astype("float32"), epochs=2, verbose=0)
""",
        ),
    )
    valid = (
        Example(
            "trainable_variables with BatchNormalization (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8), keras.layers.BatchNormalization(), keras.layers.Dense(1)])
x, y = np.random.rand(16, 4).astype("float32"), np.random.rand(16, 1).astype("float32")
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
grads = tape.gradient(loss, model.trainable_variables)
assert all(g is not None for g in grads)
""",
        ),
        Example(
            "BatchNormalization trained with model.fit",
            "fit",
            """\
import keras
import numpy as np

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8), keras.layers.BatchNormalization(), keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
model.fit(np.random.rand(16, 4).astype("float32"), np.random.rand(16, 1).astype("float32"), epochs=2, verbose=0)
""",
        ),
    )
