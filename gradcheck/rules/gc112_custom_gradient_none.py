"""GC112 custom-gradient-none: a tf.custom_gradient returns None for an input or a variable."""

from __future__ import annotations

from gradcheck.rules._base import Example, Rule


class CustomGradientNone(Rule):
    code = "GC112"
    trace_check = "gradcheck.trace.diagnose.analyze:analyse"
    name = "custom-gradient-none"
    summary = "A `tf.custom_gradient` function's gradient returns None for an input the variables flow through."
    message = (
        "the tf.custom_gradient {call} returns None where a gradient is due (an input, or the variables it "
        "reads): {variables} {get} no gradient"
    )
    what = """
Finds a `@tf.custom_gradient` function on the path whose `grad` function returns `None`
for the input that carries the trained variables, or for the variables the function reads
(`return dx, [None] * len(variables)`). The finding points at the `return` of `grad` that
spells the `None`, the line to change; when none does, at the call of the custom gradient.
"""
    why = """
A custom gradient replaces TensorFlow's own: whatever `grad` returns is all that flows
back. `None` for an input means "no gradient", so everything upstream of that input is
starved. It is easy to do by accident when a `grad` returns fewer values than the function
has inputs, or returns `None` for an input thought constant.
"""
    example = """
@tf.custom_gradient
def clip_grad(x, scale):
    def grad(upstream):
        return None, tf.reduce_sum(upstream * x)
    return x * scale, grad
"""
    use_instead = """
@tf.custom_gradient
def clip_grad(x, scale):
    def grad(upstream):
        return tf.clip_by_norm(upstream * scale, 1.0), tf.reduce_sum(upstream * x)
    return x * scale, grad
"""
    fix = (
        "Return a gradient tensor (not None) from the custom gradient's `grad` for every input "
        "through which trained variables flow."
    )
    references = ("https://www.tensorflow.org/api_docs/python/tf/custom_gradient",)

    invalid = (
        Example(
            "a custom gradient that returns None for its input (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def scaled(x, scale):
    def grad(upstream):
        return None, tf.reduce_sum(upstream * x)  # expect: GC112

    return x * scale, grad


model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
scale = tf.Variable(1.0, name="scale")
with tf.GradientTape() as tape:
    out = scaled(model(np.random.rand(8, 4).astype("float32")), scale)
    loss = tf.reduce_mean(tf.square(out))
grads = tape.gradient(loss, model.trainable_variables + [scale])
""",
        ),
        Example(
            "the same custom gradient in a layer trained with model.fit",
            "fit",
            """\
import keras
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def clip_backward(x):
    def grad(upstream):
        return None  # expect: GC112

    return tf.identity(x), grad


class Clip(keras.layers.Layer):
    def call(self, x):
        return clip_backward(x)


model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2), Clip()])
model.compile(optimizer="sgd", loss="mse")
model.fit(np.random.rand(16, 4).astype("float32"), np.random.rand(16, 2).astype("float32"), epochs=2, verbose=0)
""",
        ),
    )
    valid = (
        Example(
            "a custom gradient that clips instead of dropping (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def clip_backward(x):
    def grad(upstream):
        return tf.clip_by_value(upstream, -1.0, 1.0)

    return tf.identity(x), grad


model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(clip_backward(model(np.random.rand(8, 4).astype("float32")))))
grads = tape.gradient(loss, model.trainable_variables)
assert all(g is not None for g in grads)
""",
        ),
        Example(
            "None only for an input that carries no variable (model.fit)",
            "fit",
            """\
import keras
import numpy as np
import tensorflow as tf


@tf.custom_gradient
def shift(x, offset):
    def grad(upstream):
        return upstream, None  # the offset is a constant: no gradient needed

    return x + offset, grad


class Shift(keras.layers.Layer):
    def call(self, x):
        return shift(x, tf.constant(0.5))


model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2), Shift()])
model.compile(optimizer="sgd", loss="mse")
model.fit(np.random.rand(16, 4).astype("float32"), np.random.rand(16, 2).astype("float32"), epochs=2, verbose=0)
""",
        ),
    )
