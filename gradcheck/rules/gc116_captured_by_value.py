"""GC116 captured-by-value: a nested tf.function captured the variables by value."""

from __future__ import annotations

from gradcheck.rules._base import Example, Rule


class CapturedByValue(Rule):
    code = "GC116"
    trace_check = "gradcheck.trace.diagnose.analyze:analyse"
    name = "captured-by-value"
    summary = "The loss depends on a nested `tf.function` (e.g. `@tf.function` on a Keras 3 `Model.call`) that captured the variables by value."
    message = "{function} was traced while its variables were created, so it captured {variables} by value: the tape never sees {them} read"
    what = """
Finds variables created while a `tf.function` was being traced (a Keras 3 model whose
`call` is decorated with `@tf.function` and is built by its first call) and a loss that
depends on that function. The traced function computes with the values it saw while
tracing (the variables' initial values), not with reads of the variables. Also a Keras 3
variable a nested `@tf.function` read while it was traced, before the variable was
initialized (a layer built inside `fit`'s trace, its method decorated and mapped with
`tf.vectorized_map`): that trace computed with the initializer's value. The finding
points at the function's `@tf.function` decorator.
"""
    why = """
The tape sees the function call as one op whose inputs do not include the variables, so
their gradients are `None` although the output visibly depends on the weights.
"""
    example = """
class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(2)

    @tf.function
    def call(self, x):
        return self.dense(x)
"""
    use_instead = """
class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(2)

    def call(self, x):  # model.fit / an outer @tf.function traces it
        return self.dense(x)
"""
    fix = (
        "Remove `@tf.function` from `{function}` and let the outer training step (`model.fit` or your "
        "`@tf.function` train step) trace the model; or build the model eagerly (call it once on a "
        "batch) before its first traced call."
    )
    doc_fields = {"function": "call"}
    references = ("https://keras.io/guides/making_new_layers_and_models_via_subclassing/",)

    invalid = (
        Example(
            "@tf.function on call, the model built by its first call (eager loop)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(2)

    @tf.function  # expect: GC116
    def call(self, x):
        return self.dense(x)


model = Net()
x = np.random.rand(8, 4).astype("float32")
for step in range(2):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x)))
    grads = tape.gradient(loss, model.trainable_variables)
""",
        ),
        Example(
            "@tf.function on call inside a tf.function train step",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(2)

    @tf.function  # expect: GC116
    def call(self, x):
        return self.dense(x)


model = Net()


@tf.function
def train_step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x)))
    return tape.gradient(loss, model.trainable_variables)


train_step(np.random.rand(8, 4).astype("float32"))
""",
        ),
    )
    valid = (
        Example(
            "no decorator on call (eager loop)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(2)

    def call(self, x):
        return self.dense(x)


model = Net()
x = np.random.rand(8, 4).astype("float32")
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(model(x)))
grads = tape.gradient(loss, model.trainable_variables)
assert all(g is not None for g in grads)
""",
        ),
        Example(
            "@tf.function on call, the model built eagerly first (eager loop)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(2)

    @tf.function
    def call(self, x):
        return self.dense(x)


model = Net()
model.dense.build((None, 4))
x = np.random.rand(8, 4).astype("float32")
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(model(x)))
grads = tape.gradient(loss, model.trainable_variables)
assert all(g is not None for g in grads)
""",
        ),
    )
