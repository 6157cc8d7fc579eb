"""GC111 no-gradient-registered: an op with no gradient function."""

from __future__ import annotations

from gradcheck.rules._base import Example, Rule


class NoGradientRegistered(Rule):
    code = "GC111"
    trace_check = "gradcheck.trace.diagnose.analyze:no_gradient_registered"
    name = "no-gradient-registered"
    summary = "An op on the path has no gradient function (`LookupError`) or is registered as not differentiable."
    message = "{op} has no gradient in TensorFlow: {variables} upstream {get} none"
    what = """
Finds an op on the path to the loss for which TensorFlow has no gradient function: the
gradient call fails with `LookupError: gradient registry has no entry for: ResizeArea`
(the error names the op type, not your line), or the op is registered as not
differentiable without being one of the better-known causes (GC101-GC107).
"""
    why = """
Without a gradient function, TensorFlow cannot propagate anything through the op: either
the whole gradient call fails, or everything upstream of the op gets `None`.
"""
    example = """
with tf.GradientTape() as tape:
    small = tf.image.resize(model(x), [8, 8], method="area")
    loss = tf.reduce_mean(tf.square(small - y))
"""
    use_instead = """
with tf.GradientTape() as tape:
    small = tf.image.resize(model(x), [8, 8], method="bilinear")
    loss = tf.reduce_mean(tf.square(small - y))
"""
    fix = (
        "Use an op that has a gradient (for resizing, `method='bilinear'` or `'nearest'` instead of "
        "`'area'`), register one with `tf.RegisterGradient`, or wrap the computation in a "
        "`tf.custom_gradient`."
    )
    fix_variants = {
        "second-order": (
            "When the op is the gradient of another op, needed by a second derivative (a gradient penalty, a Hessian)",
            "`{op}` is the gradient of `{call}`, and TensorFlow has no gradient for it: a second derivative (a "
            "gradient penalty, a Hessian-vector product) cannot go through `{call}`. Build that step from ops "
            "whose gradients are differentiable (to upsample, `tf.repeat` along the spatial axes or a "
            "`Conv2DTranspose`), or register a gradient for `{op}` with `tf.RegisterGradient`.",
        ),
        "dataset": (
            "When the op is a `tf.data` one (`dataset.reduce`, a loop over a dataset in a `tf.function`)",
            "`{call}` runs the computation inside `tf.data`, which the tape cannot differentiate. Loop "
            "over the dataset in Python (`for x, y in dataset:`), computing each batch's loss on the tape "
            "(sum them, or take one gradient per batch and add the gradients), and keep `tf.data` for "
            "feeding the inputs. Inside a `tf.function` autograph turns that loop into `tf.data` ops "
            "again: loop outside it and call a `tf.function` step per batch.",
        ),
    }
    references = ("https://www.tensorflow.org/api_docs/python/tf/RegisterGradient",)

    def fix_text(self, **fields) -> str:
        if not fields.get("variant") and str(fields.get("op") or "").endswith("Dataset"):
            fields = {**fields, "variant": "dataset"}
        return super().fix_text(**fields)

    call_names = {
        "ResizeArea": ("resize", "resize_area"),
        "ResizeNearestNeighbor": ("upsampling1d", "upsampling2d", "upsampling3d", "resize", "resize_nearest_neighbor"),
    }

    invalid = (
        Example(
            "area resize has no gradient (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

decoder = keras.Sequential([keras.Input((4,)), keras.layers.Dense(64), keras.layers.Reshape((8, 8, 1))])
target = np.random.rand(2, 4, 4, 1).astype("float32")
with tf.GradientTape() as tape:
    image = decoder(np.random.rand(2, 4).astype("float32"))
    small = tf.image.resize(image, [4, 4], method="area")  # expect: GC111
    loss = tf.reduce_mean(tf.square(small - target))
grads = tape.gradient(loss, decoder.trainable_variables)
""",
        ),
        Example(
            "area resize inside a tf.function step",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

decoder = keras.Sequential([keras.Input((4,)), keras.layers.Dense(64), keras.layers.Reshape((8, 8, 1))])


@tf.function
def step(z, target):
    with tf.GradientTape() as tape:
        small = tf.image.resize(decoder(z), [4, 4], method="area")  # expect: GC111
        loss = tf.reduce_mean(tf.square(small - target))
    return tape.gradient(loss, decoder.trainable_variables)


step(np.random.rand(2, 4).astype("float32"), np.random.rand(2, 4, 4, 1).astype("float32"))
""",
        ),
        Example(
            "a gradient penalty through a nearest-neighbour upsampling (second derivative)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

critic = keras.Sequential([keras.Input((4, 4, 1)), keras.layers.Conv2D(4, 3, padding="same")])
x = tf.constant(np.random.rand(2, 4, 4, 1).astype("float32"))
with tf.GradientTape() as tape:
    with tf.GradientTape() as inner:
        inner.watch(x)
        up = tf.image.resize(critic(x), [8, 8], method="nearest")  # expect: GC111
        score = tf.reduce_sum(tf.nn.softplus(up))
    slopes = inner.gradient(score, x)
    penalty = tf.reduce_mean(tf.square(tf.norm(tf.reshape(slopes, [2, -1]), axis=1) - 1.0))
grads = tape.gradient(penalty, critic.trainable_variables)
""",
            static=False,
        ),
    )
    valid = (
        Example(
            "bilinear resize is differentiable (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

decoder = keras.Sequential([keras.Input((4,)), keras.layers.Dense(64), keras.layers.Reshape((8, 8, 1))])
target = np.random.rand(2, 4, 4, 1).astype("float32")
with tf.GradientTape() as tape:
    small = tf.image.resize(decoder(np.random.rand(2, 4).astype("float32")), [4, 4], method="bilinear")
    loss = tf.reduce_mean(tf.square(small - target))
grads = tape.gradient(loss, decoder.trainable_variables)
assert all(g is not None for g in grads)
""",
        ),
        Example(
            "area resize applied to the targets only (tf.function)",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(16), keras.layers.Reshape((4, 4, 1))])


@tf.function
def step(z, big_target):
    target = tf.image.resize(big_target, [4, 4], method="area")
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(z) - target))
    return tape.gradient(loss, model.trainable_variables)


step(np.random.rand(2, 4).astype("float32"), np.random.rand(2, 8, 8, 1).astype("float32"))
""",
        ),
        Example(
            "the same penalty through an upsampling made with tf.repeat",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

critic = keras.Sequential([keras.Input((4, 4, 1)), keras.layers.Conv2D(4, 3, padding="same")])
x = tf.constant(np.random.rand(2, 4, 4, 1).astype("float32"))
with tf.GradientTape() as tape:
    with tf.GradientTape() as inner:
        inner.watch(x)
        up = tf.repeat(tf.repeat(critic(x), 2, axis=1), 2, axis=2)
        score = tf.reduce_sum(tf.nn.softplus(up))
    slopes = inner.gradient(score, x)
    penalty = tf.reduce_mean(tf.square(tf.norm(tf.reshape(slopes, [2, -1]), axis=1) - 1.0))
grads = tape.gradient(penalty, critic.trainable_variables)
assert all(g is not None for g in grads)
""",
        ),
    )
