"""Issue 39, round 4: the static engine's misses on progE (docs/accuracy-progE.md, "Static
engine", items 5 onward). Each bug has a correct look-alike that must stay silent. INVALID
sources mark each culprit with ``# expect: GCxxx``; the findings must be exactly those."""

from __future__ import annotations

import pytest

from tests.test_static_engine import expected, found

INVALID: dict[str, str] = {}
VALID: dict[str, str] = {}

# --- items 5 and 6: two views through one encoder, a host escape on one of them ------------
# The encoder reaches ``train_step`` through the base class's constructor (the subclass
# forwards ``**kwargs``), and the loss is the subclass's override of a base-class stub. The
# second view still carries the encoder's gradient, but ``fit`` runs ``train_step`` as a
# graph, where ``.numpy()``/``np.*``/``predict`` on a tensor raise: the step never gets to
# its gradient. Asked for eager execution (``run_eagerly=True``), the step runs and trains
# through the second view: no finding.

_CONTRASTIVE = """\
import numpy as np
import tensorflow as tf
from tensorflow import keras


class ContrastiveModel(keras.Model):
    def __init__(self, augmenter, encoder, projection_head):
        super().__init__()
        self.augmenter = augmenter
        self.encoder = encoder
        self.projection_head = projection_head

    def contrastive_loss(self, projections_1, projections_2):
        pass

    def train_step(self, data):
        view_1 = self.augmenter(data)
        view_2 = self.augmenter(data)
        with tf.GradientTape() as tape:
            {features_1}
            {cut}
            features_2 = self.encoder(view_2)
            projections_1 = self.projection_head(features_1)
            projections_2 = self.projection_head(features_2)
            loss = self.contrastive_loss(projections_1, projections_2)
        variables = self.encoder.trainable_weights + self.projection_head.trainable_weights
        gradients = tape.gradient(loss, variables)
        self.optimizer.apply_gradients(zip(gradients, variables))
        return {{"loss": loss}}


class SimCLR(ContrastiveModel):
    def __init__(self, *args, temperature=0.1, **kwargs):
        super().__init__(*args, **kwargs)
        self.temperature = temperature

    def contrastive_loss(self, projections_1, projections_2):
        projections_1 = tf.math.l2_normalize(projections_1, axis=1)
        projections_2 = tf.math.l2_normalize(projections_2, axis=1)
        return -tf.reduce_mean(projections_1 * projections_2) / self.temperature


model = SimCLR(
    augmenter=keras.Sequential([keras.layers.RandomFlip("horizontal")]),
    encoder=keras.Sequential([keras.layers.Flatten(), keras.layers.Dense(8, activation="relu")]),
    projection_head=keras.Sequential([keras.layers.Dense(8)]),
    temperature=0.1,
)
model.compile(optimizer="adam"{eager})
model.fit(np.zeros((8, 4, 4, 3), "float32"), epochs=1)
"""
_CALL = "features_1 = self.encoder(view_1)"
_PREDICT = "features_1 = self.encoder.predict(view_1, verbose=0)"
INVALID["fit-step-numpy-on-one-view"] = _CONTRASTIVE.format(
    features_1=_CALL, cut="features_1 = tf.constant(features_1.numpy())  # expect: GC105", eager=""
)
INVALID["fit-step-np-call-on-one-view"] = _CONTRASTIVE.format(
    features_1=_CALL, cut="features_1 = np.maximum(features_1, -1e9)  # expect: GC105", eager=""
)
INVALID["fit-step-predict-on-one-view"] = _CONTRASTIVE.format(
    features_1=_PREDICT + "  # expect: GC105", cut="", eager=""
)
VALID["fit-step-two-views"] = _CONTRASTIVE.format(features_1=_CALL, cut="", eager="")
VALID["fit-step-tf-maximum-on-one-view"] = _CONTRASTIVE.format(
    features_1=_CALL, cut="features_1 = tf.maximum(features_1, -1e9)", eager=""
)
VALID["eager-fit-step-numpy-on-one-view"] = _CONTRASTIVE.format(
    features_1=_CALL, cut="features_1 = tf.constant(features_1.numpy())", eager=", run_eagerly=True"
)

# --- a stub in the base class: the override runs, whatever it is -------------------------
# ``contrastive_loss`` is ``pass`` where ``train_step`` is written; what it returns is the
# subclass's loss, computed from its arguments (before: nothing, so nothing was checked).

_STUB = """\
import abc

import numpy as np
import tensorflow as tf


class Base(tf.keras.Model):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    {decorator}
    def loss_of(self, z):
        {body}

    def train_step(self, data):
        with tf.GradientTape() as tape:
            z = self.encoder(data)
            {cut}
            loss = self.loss_of(z)
        grads = tape.gradient(loss, self.encoder.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.encoder.trainable_variables))
        return {{"loss": loss}}


class Model(Base):
    def loss_of(self, z):
        return tf.reduce_mean(tf.square(z))


model = Model(tf.keras.Sequential([tf.keras.layers.Dense(4)]))
model.compile(optimizer="sgd", run_eagerly=True)
model.fit(np.zeros((8, 3), "float32"), epochs=1)
"""
for _name, _decorator, _body in (
    ("pass", "", "pass"),
    ("docstring", "", '"""The subclass says."""'),
    ("raise", "", "raise NotImplementedError"),
    ("abstractmethod", "@abc.abstractmethod", "..."),
):
    INVALID[f"stub-{_name}-numpy"] = _STUB.format(
        decorator=_decorator, body=_body, cut="z = tf.constant(z.numpy())  # expect: GC105"
    )
    VALID[f"stub-{_name}"] = _STUB.format(decorator=_decorator, body=_body, cut="")

# --- item 6: the host escape inside a module-level loss the tape's body calls ------------

_BARLOW = """\
import numpy as np
import tensorflow as tf


def normalize(z):
    return (z - tf.reduce_mean(z, axis=0)) / (tf.math.reduce_std(z, axis=0) + 1e-6)


def compute_loss(z_a, z_b, lambd):
    z_a_norm = normalize(z_a)
    {cut}
    z_b_norm = normalize(z_b)
    c = tf.matmul(z_a_norm, z_b_norm, transpose_a=True)
    return tf.reduce_sum(tf.square(c)) * lambd


class BarlowTwins(tf.keras.Model):
    def __init__(self, encoder, lambd=5e-3):
        super().__init__()
        self.encoder = encoder
        self.lambd = lambd

    def train_step(self, data):
        ds_one, ds_two = data
        with tf.GradientTape() as tape:
            z_a, z_b = self.encoder(ds_one, training=True), self.encoder(ds_two, training=True)
            loss = compute_loss(z_a, z_b, self.lambd)
        gradients = tape.gradient(loss, self.encoder.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.encoder.trainable_variables))
        return {{"loss": loss}}


model = BarlowTwins(tf.keras.Sequential([tf.keras.layers.Dense(4)]))
model.compile(optimizer="sgd")
x = np.zeros((8, 3), "float32")
model.fit(tf.data.Dataset.from_tensor_slices((x, x)).batch(4), epochs=1)
"""
INVALID["loss-helper-numpy-in-fit-step"] = _BARLOW.format(
    cut="z_a_norm = tf.constant(z_a_norm.numpy())  # expect: GC105"
)
VALID["loss-helper-in-fit-step"] = _BARLOW.format(cut="")
VALID["loss-helper-tf-identity-in-fit-step"] = _BARLOW.format(cut="z_a_norm = tf.identity(z_a_norm)")

# --- a host function run by ``tf.numpy_function`` from a ``tf.function`` runs eagerly -----

_HOSTED = """\
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
opt = tf.keras.optimizers.SGD()
states = np.ones((4, 2), "float32")


def rollout():
    logits = model(states).numpy()
    return np.argmax(logits, axis=1).astype("float32")


@tf.function
def step(x):
    actions = tf.numpy_function(rollout, [], tf.float32)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(x) * tf.reduce_mean(actions))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))


step(tf.constant(states))
"""
VALID["numpy-in-host-function-of-a-tf-function"] = _HOSTED


# --- item 9: a critic frozen while the combined model compiles, trainable again ----------
# ``critic.trainable = False`` before ``Model(generator.input, critic(...)).compile(...)``,
# then ``True``: the critic's own step trains it, so a cut on its output there starves it.

_WGAN = """\
import numpy as np
import tensorflow as tf
from tensorflow.keras import Model, layers


class WGAN:
    def __init__(self):
        self.critic = tf.keras.Sequential([layers.Input((4,)), layers.Dense(1)])
        self.critic.trainable = False
        self.generator = tf.keras.Sequential([layers.Input((2,)), layers.Dense(4)])
        self.model = Model(self.generator.input, self.critic(self.generator.output))
        self.model.compile(loss="mse", optimizer="rmsprop")
        self.critic.trainable = {unfrozen}
        self.optimizer_critic = tf.keras.optimizers.RMSprop(5e-5)

    def train_critic(self, real_images):
        fake_images = self.generator.predict(np.ones((4, 2), "float32"), verbose=0)
        with tf.GradientTape() as tape:
            pred_fake = self.critic(fake_images)
            {cut}
            total_loss = tf.reduce_mean(pred_fake)
        gradients = tape.gradient(total_loss, self.critic.trainable_variables)
        self.optimizer_critic.apply_gradients(zip(gradients, self.critic.trainable_variables))

    def train_generator(self):
        self.model.train_on_batch(np.ones((4, 2), "float32"), -np.ones((4, 1), "float32"))


wgan = WGAN()
wgan.train_critic(np.ones((4, 4), "float32"))
wgan.train_generator()
"""
INVALID["unfrozen-critic-rounded"] = _WGAN.format(
    unfrozen="True", cut="pred_fake = tf.round(pred_fake)  # expect: GC102"
)
VALID["unfrozen-critic"] = _WGAN.format(unfrozen="True", cut="")
VALID["unfrozen-critic-tf-identity"] = _WGAN.format(unfrozen="True", cut="pred_fake = tf.identity(pred_fake)")


# --- item 8: models that reach a base class's step through its constructor --------------
# ``GAN.__init__(self, generator, discriminator)`` called by ``DCGAN.__init__`` with the models
# it builds: ``GAN.train_step`` sees the subclass's generator (a BatchNormalization in it),
# so asking for ``self.G.variables`` is GC115 at the request.

_BASE_GAN = """\
import numpy as np
import tensorflow as tf
from tensorflow.keras import layers


class GAN:
    def __init__(self, generator, discriminator):
        self.D = discriminator
        self.G = generator
        self.G_optimizer = tf.keras.optimizers.Adam()

    def train_step(self, g_input):
        with tf.GradientTape() as g_tape:
            g_loss = -tf.reduce_mean(self.D(self.G(g_input)))
        gradient_g = g_tape.gradient(g_loss, {sources}){mark}
        self.G_optimizer.apply_gradients(zip(gradient_g, self.G.trainable_variables))


class DCGAN(GAN):
    def __init__(self, z_dim):
        discriminator = self.Discriminator()
        generator = self.Generator(z_dim)
        GAN.__init__(self, generator, discriminator)

    def Discriminator(self):
        model = tf.keras.Sequential()
        model.add(layers.Input(shape=(4,)))
        model.add(layers.Dense(1))
        return model

    def Generator(self, z_dim):
        model = tf.keras.Sequential()
        model.add(layers.Input(shape=(z_dim,)))
        model.add(layers.Dense(4))
        model.add({norm})
        return model


gan = DCGAN(2)
gan.train_step(np.ones((4, 2), "float32"))
"""
INVALID["base-constructor-all-variables"] = _BASE_GAN.format(
    sources="self.G.variables", mark="  # expect: GC115", norm="layers.BatchNormalization()"
)
VALID["base-constructor-trainable-variables"] = _BASE_GAN.format(
    sources="self.G.trainable_variables", mark="", norm="layers.BatchNormalization()"
)
VALID["base-constructor-all-variables-no-statistics"] = _BASE_GAN.format(
    sources="self.G.variables", mark="", norm="layers.LayerNormalization()"
)


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in INVALID.items()])
def test_invalid_shape_is_found_exactly(source):
    assert expected(source), "an invalid shape must mark its culprits"
    assert found(source) == expected(source)


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in VALID.items()])
def test_valid_look_alike_is_silent(source):
    assert found(source) == []
