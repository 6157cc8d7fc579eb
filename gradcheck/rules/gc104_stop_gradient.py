"""GC104 stop-gradient: tf.stop_gradient on the only path."""

from __future__ import annotations

from gradcheck.rules._base import Example, Rule


class StopGradient(Rule):
    code = "GC104"
    trace_check = "gradcheck.trace.diagnose.analyze:analyse"
    name = "stop-gradient"
    summary = "`tf.stop_gradient` (or PreventGradient) sits on the only path from the variables to the loss."
    message = "{call} stops the gradient on the only path to the loss: {variables} {get} none"
    what = """
Finds `tf.stop_gradient` (also inside a `Lambda` layer) on every path from some trained
variables to the loss.
"""
    why = """
`tf.stop_gradient` is meant for one branch that must not backpropagate (a bootstrapped
target, an EMA teacher). Placed on the main path, it silently freezes everything before
it: those variables get `None`, and Keras only warns that gradients do not exist.
"""
    example = """
x = layers.Dense(32, name="feature")(inputs)
x = layers.Lambda(lambda t: tf.stop_gradient(t))(x)
outputs = layers.Dense(2)(x)
"""
    use_instead = """
x = layers.Dense(32, name="feature")(inputs)
outputs = layers.Dense(2)(x)
aux = layers.Dense(1)(layers.Lambda(lambda t: tf.stop_gradient(t))(x))  # only this branch is stopped
"""
    fix = (
        "Remove `tf.stop_gradient` from the path these variables need, or apply it only to the branch "
        "that must not backpropagate (e.g. the bootstrap target); if the layers are meant to be frozen, "
        "set `trainable=False` instead so they are not asked for gradients."
    )
    references = ("https://www.tensorflow.org/api_docs/python/tf/stop_gradient",)
    op_types = frozenset({"StopGradient", "PreventGradient"})
    call_names = {"StopGradient": ("stop_gradient",), "PreventGradient": ("prevent_gradient",)}

    invalid = (
        Example(
            "a Lambda(stop_gradient) layer on the main path (model.fit)",
            "fit",
            """\
import keras
import numpy as np
import tensorflow as tf

inputs = keras.Input(shape=(10,))
x = keras.layers.Dense(8, activation="relu", name="feature")(inputs)
x = keras.layers.Lambda(lambda t: tf.stop_gradient(t), name="freeze")(x)  # expect: GC104
outputs = keras.layers.Dense(1, name="head")(x)
model = keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="mse")
model.fit(np.random.rand(32, 10).astype("float32"), np.random.rand(32, 1).astype("float32"), epochs=2, verbose=0)
""",
        ),
        Example(
            "the prediction wrapped in stop_gradient (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
x = np.random.rand(16, 4).astype("float32")
y = np.random.rand(16, 1).astype("float32")
with tf.GradientTape() as tape:
    prediction = tf.stop_gradient(model(x))  # expect: GC104
    loss = tf.reduce_mean(tf.square(y - prediction))
grads = tape.gradient(loss, model.trainable_variables)
""",
        ),
    )
    valid = (
        Example(
            "DQN bootstrap target under stop_gradient, online Q-values differentiable (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

online = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
states = np.random.rand(16, 4).astype("float32")
next_states = np.random.rand(16, 4).astype("float32")
actions = np.random.randint(0, 2, 16)
rewards = np.random.rand(16).astype("float32")
with tf.GradientTape() as tape:
    target = tf.stop_gradient(rewards + 0.99 * tf.reduce_max(online(next_states), axis=1))
    q_taken = tf.reduce_sum(online(states) * tf.one_hot(actions, 2), axis=1)
    loss = tf.reduce_mean(tf.square(target - q_taken))
grads = tape.gradient(loss, online.trainable_variables)
assert all(g is not None for g in grads)
""",
        ),
        Example(
            "stop_gradient only on an auxiliary branch (model.fit)",
            "fit",
            """\
import keras
import numpy as np
import tensorflow as tf

inputs = keras.Input(shape=(10,))
features = keras.layers.Dense(8, activation="relu")(inputs)
main = keras.layers.Dense(1, name="main")(features)
aux = keras.layers.Dense(1, name="aux")(keras.layers.Lambda(lambda t: tf.stop_gradient(t))(features))
model = keras.Model(inputs, [main, aux])
model.compile(optimizer="adam", loss=["mse", "mse"])
x = np.random.rand(32, 10).astype("float32")
y = np.random.rand(32, 1).astype("float32")
model.fit(x, [y, y], epochs=2, verbose=0)
""",
        ),
    )
