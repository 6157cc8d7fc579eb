"""GC110 unwatched-source: a plain tensor passed as a source without tape.watch."""

from __future__ import annotations

from gradcheck.rules._base import Example, Rule


class UnwatchedSource(Rule):
    code = "GC110"
    trace_check = "gradcheck.trace.diagnose.analyze:analyse"
    name = "unwatched-source"
    summary = "A plain tensor (not a variable) is asked for gradients, but the tape never watched it."
    message = "{variables}: {plain} the tape never watched, so {its} {gradient} {is} None"
    what = """
Finds a source of `tape.gradient` that is a `tf.Tensor` (a constant, a NumPy array
converted to a tensor, a function argument) that was not passed to `tape.watch()` and not
computed inside the tape, while the tape uses it (so `tape.watch` is the fix: a tensor the
target depends on only through a forward pass made before the tape is GC109). The finding
points where the tensor was made, or at the request for a function's argument. Also a
variable read inside a tape opened with `watch_accessed_variables=False` and never watched.
"""
    why = """
A `GradientTape` watches trainable variables automatically, nothing else. A gradient with
respect to an unwatched tensor is `None`, even when the target clearly depends on it.
"""
    example = """
image = tf.constant(np.random.rand(1, 5, 5, 1), tf.float32)
with tf.GradientTape() as tape:
    response = tf.reduce_sum(tf.nn.conv2d(image, kernel, 1, "VALID"))
d_image = tape.gradient(response, image)  # None
"""
    use_instead = """
image = tf.constant(np.random.rand(1, 5, 5, 1), tf.float32)
with tf.GradientTape() as tape:
    tape.watch(image)
    response = tf.reduce_sum(tf.nn.conv2d(image, kernel, 1, "VALID"))
d_image = tape.gradient(response, image)
"""
    fix = "Call `tape.watch({names})` inside the tape before using it, or make it a `tf.Variable`."
    fix_variants = {
        "accessed": (
            "When the tape was opened with `watch_accessed_variables=False`",
            "Drop `watch_accessed_variables=False`, or call `tape.watch({names}.trainable_variables)` "
            "inside the tape before the forward pass.",
        ),
    }
    references = ("https://www.tensorflow.org/guide/autodiff#controlling_what_the_tape_watches",)

    invalid = (
        Example(
            "gradients of a conv2d with respect to constant tensors (eager)",
            "eager",
            """\
import numpy as np
import tensorflow as tf

image = tf.constant(np.random.rand(1, 5, 5, 1).astype("float32"))  # expect: GC110
kernel = tf.Variable(np.random.rand(3, 3, 1, 1).astype("float32"))
with tf.GradientTape() as tape:
    response = tf.reduce_sum(tf.nn.conv2d(image, kernel, strides=1, padding="VALID"))
d_image, d_kernel = tape.gradient(response, [image, kernel])
""",
        ),
        Example(
            "saliency: gradient with respect to the input of a tf.function, never watched",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])


@tf.function
def saliency(x):
    with tf.GradientTape() as tape:
        score = tf.reduce_sum(model(x))
    return tape.gradient(score, x)  # expect: GC110


saliency(tf.constant(np.random.rand(2, 4).astype("float32")))
""",
        ),
        Example(
            "an adversarial step that watches the clean input and asks for the perturbed one (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(3)])
x = tf.constant(np.random.rand(4, 8).astype("float32"))
y = np.random.randint(0, 3, 4)
adv_x = x + tf.random.uniform(tf.shape(x), -0.1, 0.1)
with tf.GradientTape() as tape:
    tape.watch(x)  # expect: GC110
    loss = keras.losses.sparse_categorical_crossentropy(y, model(adv_x), from_logits=True)
grad = tape.gradient(loss, adv_x)
""",
        ),
    )
    valid = (
        Example(
            "an adversarial step that watches the perturbed input it asks for (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(3)])
x = tf.constant(np.random.rand(4, 8).astype("float32"))
y = np.random.randint(0, 3, 4)
adv_x = x + tf.random.uniform(tf.shape(x), -0.1, 0.1)
with tf.GradientTape() as tape:
    tape.watch(adv_x)
    loss = keras.losses.sparse_categorical_crossentropy(y, model(adv_x), from_logits=True)
grad = tape.gradient(loss, adv_x)
assert grad is not None
""",
        ),
        Example(
            "tape.watch on the input tensor (eager)",
            "eager",
            """\
import numpy as np
import tensorflow as tf

image = tf.constant(np.random.rand(1, 5, 5, 1).astype("float32"))
kernel = tf.constant(np.random.rand(3, 3, 1, 1).astype("float32"))
with tf.GradientTape() as tape:
    tape.watch([image, kernel])
    response = tf.reduce_sum(tf.nn.conv2d(image, kernel, strides=1, padding="VALID"))
d_image, d_kernel = tape.gradient(response, [image, kernel])
assert d_image is not None and d_kernel is not None
""",
        ),
        Example(
            "saliency with the input watched (tf.function)",
            "tf.function",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])


@tf.function
def saliency(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        score = tf.reduce_sum(model(x))
    return tape.gradient(score, x)


saliency(tf.constant(np.random.rand(2, 4).astype("float32")))
""",
        ),
    )
