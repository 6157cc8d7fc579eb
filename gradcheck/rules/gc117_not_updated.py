"""GC117 not-updated: a trainable variable a loss of the step depends on, which no optimizer
step of that step updates (a GAN's generator step applying the discriminator's gradients)."""

from __future__ import annotations

from gradcheck.rules._base import Example, Rule


class NotUpdated(Rule):
    code = "GC117"
    trace_check = "gradcheck.trace.values.updates:check"
    name = "not-updated"
    summary = (
        "A trainable variable feeds a loss of the training step, but no `apply_gradients` (or `assign_sub`) "
        "of that step updates it."
    )
    message = (
        "{variables} {reach} this loss, but no optimizer step updates {them}: {call} applies gradients to {applied}"
    )
    what = """
Over one whole checked training step (every tape of it, e.g. both tapes of a GAN's
`train_step`), finds a trainable variable that a loss depends on (the shadow tape has a
gradient for it) that no optimizer update of the step touches: not `apply_gradients` /
`apply` of any optimizer, not a hand-written `assign_sub`. The typical case is a GAN
generator step that asks for, and applies, `self.discriminator.trainable_weights`: every
gradient exists, Keras says nothing, and the generator never trains. The finding points at
the `apply_gradients` call that should have updated the variable: one that only repeats
an earlier update of the step (the generator's optimizer applied to the discriminator's
variables, which the discriminator's own step already updates), and names what it updated
instead.

Not reported: a variable with `trainable=False` (a frozen feature extractor, a GAN's
discriminator frozen for the combined model), one allowed with `--allow-none`, a part that
another step of the same training step updates (the discriminator, left alone by the
generator step, trained by its own step), and a variable no optimizer call was meant for:
a teacher or a target network read inside the tape and updated by copying (no update of
the step repeats another, so nothing points at a wrong `apply_gradients`).

A variable the loss does not depend on at all is GC108 (its gradient is None); this rule is
about variables whose gradient exists and is never applied.
"""
    why = """
An optimizer updates exactly the variables it is given. Computing the gradients for the
wrong list (or zipping them with the wrong list) trains another part of the model, or
nothing, while the loss still moves: the mistake is invisible in the logs until the samples
never improve.
"""
    example = """
with tf.GradientTape() as tape:
    g_loss = bce(ones, self.discriminator(self.generator(z)))
grads = tape.gradient(g_loss, self.discriminator.trainable_weights)
self.g_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights))
"""
    use_instead = """
with tf.GradientTape() as tape:
    g_loss = bce(ones, self.discriminator(self.generator(z)))
grads = tape.gradient(g_loss, self.generator.trainable_weights)
self.g_optimizer.apply_gradients(zip(grads, self.generator.trainable_weights))
"""
    fix = (
        "Ask for and apply the gradients of the variables this loss should train (for a generator step, "
        "`self.generator.trainable_weights`, in both `tape.gradient` and `apply_gradients`). If {names} must not "
        "train, set `trainable = False` on its layers or allow {them} (`--allow-none`)."
    )
    doc_fields = {"names": "the generator's variables", "them": "them"}
    references = (
        "https://keras.io/guides/customizing_what_happens_in_fit/#wrapping-up-an-endtoend-gan-example",
        "https://www.tensorflow.org/tutorials/generative/dcgan",
    )

    invalid = (
        Example(
            "a GAN generator step that applies the discriminator's gradients (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

generator = keras.Sequential([keras.Input((4,)), keras.layers.Dense(6)])
discriminator = keras.Sequential([keras.Input((6,)), keras.layers.Dense(1)])
d_opt, g_opt = keras.optimizers.Adam(1e-3), keras.optimizers.Adam(1e-3)
bce = keras.losses.BinaryCrossentropy(from_logits=True)
real = np.random.randn(16, 6).astype("float32")
z = tf.random.normal((16, 4))
with tf.GradientTape() as tape:
    d_loss = bce(tf.ones((16, 1)), discriminator(real)) + bce(tf.zeros((16, 1)), discriminator(generator(z)))
d_grads = tape.gradient(d_loss, discriminator.trainable_variables)
d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables))
with tf.GradientTape() as tape:
    g_loss = bce(tf.ones((16, 1)), discriminator(generator(z)))
g_grads = tape.gradient(g_loss, discriminator.trainable_variables)
g_opt.apply_gradients(zip(g_grads, discriminator.trainable_variables))  # expect: GC117
""",
        ),
        Example(
            "the same mistake in a GAN train_step run by model.fit (graph mode)",
            "fit",
            """\
import keras
import numpy as np
import tensorflow as tf

bce = keras.losses.BinaryCrossentropy(from_logits=True)


class GAN(keras.Model):
    def __init__(self):
        super().__init__()
        self.generator = keras.Sequential([keras.Input((4,)), keras.layers.Dense(6)])
        self.discriminator = keras.Sequential([keras.Input((6,)), keras.layers.Dense(1)])
        self.d_optimizer, self.g_optimizer = keras.optimizers.Adam(1e-3), keras.optimizers.Adam(1e-3)

    def train_step(self, real):
        z = tf.random.normal((tf.shape(real)[0], 4))
        with tf.GradientTape() as tape:
            d_loss = bce(tf.ones_like(real[:, :1]), self.discriminator(real)) + bce(
                tf.zeros_like(real[:, :1]), self.discriminator(self.generator(z))
            )
        d_grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
        self.d_optimizer.apply_gradients(zip(d_grads, self.discriminator.trainable_weights))
        with tf.GradientTape() as tape:
            g_loss = bce(tf.ones_like(real[:, :1]), self.discriminator(self.generator(z)))
        g_grads = tape.gradient(g_loss, self.discriminator.trainable_weights)
        self.g_optimizer.apply_gradients(zip(g_grads, self.discriminator.trainable_weights))  # expect: GC117
        return {"d_loss": d_loss, "g_loss": g_loss}


gan = GAN()
gan.compile()
gan.fit(np.random.randn(32, 6).astype("float32"), batch_size=16, epochs=1, verbose=0)
""",
        ),
    )
    valid = (
        Example(
            "the generator step applies the generator's gradients; the discriminator has its own step",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

generator = keras.Sequential([keras.Input((4,)), keras.layers.Dense(6)])
discriminator = keras.Sequential([keras.Input((6,)), keras.layers.Dense(1)])
d_opt, g_opt = keras.optimizers.Adam(1e-3), keras.optimizers.Adam(1e-3)
bce = keras.losses.BinaryCrossentropy(from_logits=True)
real = np.random.randn(16, 6).astype("float32")
z = tf.random.normal((16, 4))
with tf.GradientTape() as tape:
    d_loss = bce(tf.ones((16, 1)), discriminator(real)) + bce(tf.zeros((16, 1)), discriminator(generator(z)))
d_grads = tape.gradient(d_loss, discriminator.trainable_variables)
d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables))
with tf.GradientTape() as tape:
    g_loss = bce(tf.ones((16, 1)), discriminator(generator(z)))
g_grads = tape.gradient(g_loss, generator.trainable_variables)
g_opt.apply_gradients(zip(g_grads, generator.trainable_variables))
""",
        ),
        Example(
            "a frozen feature extractor (trainable=False) in a perceptual loss",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

features = keras.Sequential([keras.Input((6,)), keras.layers.Dense(3)])
features.trainable = False
net = keras.Sequential([keras.Input((6,)), keras.layers.Dense(6)])
opt = keras.optimizers.Adam(1e-3)
x = np.random.randn(16, 6).astype("float32")
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(features(net(x)) - features(x)))
grads = tape.gradient(loss, net.trainable_variables)
opt.apply_gradients(zip(grads, net.trainable_variables))
""",
        ),
    )
