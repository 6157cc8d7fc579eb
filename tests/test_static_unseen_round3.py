"""Issue 39, round 3: the static engine's misses on progD (docs/accuracy-progD.md, "Static
engine", items 5, 7, 8). Each bug has a correct look-alike that must stay silent. INVALID
sources mark each culprit with ``# expect: GCxxx``; the findings must be exactly those."""

from __future__ import annotations

import pytest

from tests.test_static_engine import expected, found

INVALID: dict[str, str] = {}
VALID: dict[str, str] = {}

# --- item 5: models held by a plain Python class, called with two inputs -----------------
# The agent samples a replay buffer whose arrays are sized by its constructor's parameters
# (``np.zeros((maxsize, dim))``: a shape, no unseen computation), and blends the target
# network with ``set_weights`` after the tape (a copy of values, no path to any loss).

_AGENT = """\
import numpy as np
import tensorflow as tf


class Buffer:
    def __init__(self, maxsize, dim):
        self.cnt = 0
        self.states = np.zeros((maxsize, dim), dtype=np.float32)
        self.actions = np.zeros((maxsize, 2), dtype=np.float32)
        self.rewards = np.zeros((maxsize,), dtype=np.float32)

    def sample(self, k):
        batch = np.random.choice(len(self.states), k, replace=False)
        return self.states[batch], self.actions[batch], self.rewards[batch]


class Critic(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.f1 = tf.keras.layers.Dense(16, activation="relu")
        self.f2 = tf.keras.layers.Dense(16, activation="relu")
        self.v = tf.keras.layers.Dense(1)

    def call(self, state, action):
        x = self.f1(tf.concat([state, action], axis=1))
        {layer}
        return self.v(x)


class Agent:
    def __init__(self, dim):
        self.memory = {memory}
        self.critic_main = Critic()
        self.critic_target = Critic()
        self.opt = tf.keras.optimizers.Adam(1e-3)

    def update_target(self, tau=0.005):
        blended = []
        targets = self.critic_target.weights
        for i, weight in enumerate(self.critic_main.weights):
            blended.append(weight * tau + targets[i] * (1 - tau))
        self.critic_target.set_weights(blended)

    def train(self):
        states, actions, rewards = {sample}
        states = tf.convert_to_tensor(states)
        actions = tf.convert_to_tensor(actions)
        with tf.GradientTape() as tape:
            target = rewards + 0.99 * tf.squeeze(self.critic_target(states, actions), 1)
            value = tf.squeeze(self.critic_main(states, actions), 1)
            loss = tf.reduce_mean(tf.square(target - value))
        grads = tape.gradient(loss, self.critic_main.trainable_variables)
        self.opt.apply_gradients(zip(grads, self.critic_main.trainable_variables))
        {update}


agent = Agent(3)
agent.train()
"""
_DROPPED = "x_f2 = self.f2(x)  # expect: GC108"
_KEPT = "x = self.f2(x)"
_BUFFER = ("Buffer(64, dim)", "self.memory.sample(8)")
_NO_BUFFER = ("None", "(np.ones((8, 3), np.float32), np.ones((8, 2), np.float32), np.ones((8,), np.float32))")
for _name, (_memory, _sample), _update in (
    ("buffer", _BUFFER, "pass"),
    ("soft-update", _NO_BUFFER, "self.update_target()"),
    ("buffer-and-soft-update", _BUFFER, "self.update_target()"),
):
    _fields = {"memory": _memory, "sample": _sample, "update": _update}
    INVALID[f"plain-agent-{_name}"] = _AGENT.format(layer=_DROPPED, **_fields)
    VALID[f"plain-agent-{_name}"] = _AGENT.format(layer=_KEPT, **_fields)

# --- item 7: a predict outside every tape is no cause of what the tape's body cuts ---------
# Grad-CAM: the class index comes from a module-level ``model.predict``; the function builds
# a model from its arguments and asks for the gradient of a conv output (a tensor the file
# cannot resolve). The cut is what the tape's computation did.

_GRADCAM = """\
import numpy as np
import tensorflow as tf


def grad_cam(input_model, image, category_index):
    modified_outputs = [input_model.get_layer("block5_conv4").output, input_model.output]
    modified_model = tf.keras.Model(inputs=input_model.input, outputs=modified_outputs)
    inp = tf.keras.Input((224, 224, 3))
    conv_outputs, preds = modified_model(inp)
    outputs = tf.multiply(preds, tf.one_hot([category_index], 1000))
    model = tf.keras.Model(inputs=inp, outputs=[outputs, conv_outputs])
    {before}
    with tf.GradientTape() as tape:
        {forward}
        {cut}
        loss = tf.reduce_sum(out)
    grads = tape.gradient(loss, conv_out)
    return grads


net = tf.keras.applications.VGG19(weights=None)
image = np.random.rand(1, 224, 224, 3).astype("float32")
predictions = net.predict(image)
predicted_class = int(np.argmax(predictions))
grad_cam(net, image, predicted_class)
"""
_FORWARD = "out, conv_out = model(image)"
for _name, _fields in (
    ("np-call", {"before": "", "forward": _FORWARD, "cut": "out = np.maximum(out, -1e9)  # expect: GC105"}),
    ("numpy-method", {"before": "", "forward": _FORWARD, "cut": "out = tf.constant(out.numpy())  # expect: GC105"}),
    ("hoisted-forward", {"before": _FORWARD + "  # expect: GC109", "forward": "pass", "cut": ""}),
):
    INVALID[f"gradcam-{_name}"] = _GRADCAM.format(**_fields)
VALID["gradcam"] = _GRADCAM.format(before="", forward=_FORWARD, cut="")
VALID["gradcam-tf-maximum"] = _GRADCAM.format(before="", forward=_FORWARD, cut="out = tf.maximum(out, -1e9)")

# --- item 8: an integer cast inside a tf.function loss called inside the tape --------------
# The line is the cast's, in the loss function, not the call site (the caller's tensor has
# the same name).

_SSM = """\
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(2)])
optimizer = tf.keras.optimizers.Adam(1e-3)


@tf.function
def ssm_loss(scorenet, x_batch):
    v = tf.random.normal(x_batch.shape)
    with tf.GradientTape() as tape:
        {cast}
        tape.watch(x_batch)
        scores = scorenet(x_batch)
        v_times_scores = tf.reduce_sum(v * scores)
    grad = tape.gradient(v_times_scores, x_batch)
    loss_first = tf.reduce_sum(grad * v, axis=1)
    loss_second = 0.5 * tf.reduce_sum(tf.square(scores), axis=1)
    return tf.reduce_mean(loss_first + loss_second)


x_batch = tf.constant(np.random.randn(16, 2), tf.float32)
with tf.GradientTape(persistent=True) as tape:
    current_loss = ssm_loss(model, x_batch)
    gradients = tape.gradient(current_loss, model.trainable_variables)
optimizer.apply_gradients(zip(gradients, model.trainable_variables))
"""
INVALID["loss-function-int-cast"] = _SSM.format(cast="x_batch = tf.cast(x_batch, tf.int32)  # expect: GC114")
VALID["loss-function-float-cast"] = _SSM.format(cast="x_batch = tf.cast(x_batch, tf.float32)")


# --- a rollout's value taken to NumPy before the tape is data (batch 15, 1002; 557) ---------
# The advantages come from the critic's values computed outside the tape and taken out with
# ``.numpy()``: moving that forward pass onto the tape would give no path either, so it is
# no GC109. The critic loss the total leaves out is the cause. With the critic loss in the
# total, advantages computed outside the tape (with or without ``.numpy()``) are silent.
_A2C = """\
import keras
import numpy as np
import tensorflow as tf

x0 = keras.layers.Input((8,))
h = keras.layers.Dense(16, activation="relu")(x0)
model = keras.models.Model(x0, [keras.layers.Dense(4, activation="softmax")(h), keras.layers.Dense(1)(h)])
optimizer = keras.optimizers.Adam(1e-3)


def train_step(states, returns, advantages):
    with tf.GradientTape() as tape:
        probs, values = model(states, training=True)
        actor_loss = -tf.reduce_mean(tf.math.log(probs[:, 0] + 1e-8) * advantages)
        critic_loss = tf.reduce_mean(tf.square(returns - values[:, 0])){critic_mark}
        loss = {total}
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))


states = np.random.rand(16, 8).astype("float32")
returns = np.random.rand(16).astype("float32")
{rollout}
train_step(states, returns, advantages)
"""
_NUMPY_ROLLOUT = "_, old_values = model(states)\nadvantages = (returns - old_values.numpy()[:, 0]).astype('float32')"
INVALID["rollout-numpy-advantages-critic-dropped"] = _A2C.format(
    critic_mark="  # expect: GC108", total="actor_loss", rollout=_NUMPY_ROLLOUT
)
VALID["rollout-numpy-advantages-critic-added"] = _A2C.format(
    critic_mark="", total="actor_loss + 0.5 * critic_loss", rollout=_NUMPY_ROLLOUT
)
VALID["rollout-tensor-advantages"] = _A2C.format(
    critic_mark="",
    total="actor_loss + 0.5 * critic_loss",
    rollout="_, old_values = model(states)\nadvantages = returns - old_values[:, 0]",
)


# --- star imports of Keras modules (progE's simclr: a false GC109 on a correct original) ----
# ``from tensorflow.keras.layers import *`` binds ``Input``, ``Dense``, ``Model``: a functional
# model built from them before the tape is graph construction, not a forward pass.
_STAR = """\
import tensorflow as tf
from tensorflow.keras.layers import *
from tensorflow.keras.models import *


def get_model():
    base = tf.keras.Sequential([Dense(8, activation="relu")])
    inputs = Input((4,))
    h = base(inputs, training=True)
    return Model(inputs, Dense(2)(h))


model = get_model()
optimizer = tf.keras.optimizers.Adam()
x = tf.random.normal((8, 4))
with tf.GradientTape() as tape:
    out = {out}
    loss = tf.reduce_mean(tf.square(out))
grads = tape.gradient(loss, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""
VALID["star-import-functional-model"] = _STAR.format(out="model(x)")
INVALID["star-import-functional-model-rounded"] = _STAR.format(out="tf.round(model(x))  # expect: GC102")


# --- a custom layer's weight in a functional model built by a Model subclass's __init__ ---
# (progE's BigGAN: a false GC109 on a correct original.) An op on the layer's output in the
# builder (``tanh(...)``) is graph construction, not a computation that runs once.
_GAN = """\
import tensorflow as tf
from tensorflow.keras import Model, layers
from tensorflow.keras.activations import tanh


class Gate(layers.Layer):
    def build(self, input_shape):
        self.sigma = self.add_weight(shape=[1], initializer="zeros", trainable=True, name="sigma")
        self.conv = layers.Dense(4)

    def call(self, x):
        return x + self.sigma * self.conv(x)


def build_generator():
    inp = layers.Input(shape=(4,))
    x = Gate()(layers.Dense(4)(inp))
    return Model(inp, tanh(layers.Dense(4)(x)))


class GAN(Model):
    def __init__(self):
        super().__init__()
        self.generator = build_generator()
        self.opt = tf.keras.optimizers.Adam()

    def train_step(self, data):
        with tf.GradientTape() as tape:
            loss = {out}
        grads = tape.gradient(loss, self.generator.trainable_variables)
        self.opt.apply_gradients(zip(grads, self.generator.trainable_variables))
        return {{"loss": loss}}


gan = GAN()
gan.compile()
gan.fit(tf.ones((8, 4)), epochs=1)
"""
VALID["custom-layer-weight-built-in-init"] = _GAN.format(out="tf.reduce_mean(self.generator(data))")
INVALID["custom-layer-weight-built-in-init-rounded"] = _GAN.format(
    out="tf.reduce_mean(tf.round(self.generator(data)))  # expect: GC102"
)


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in INVALID.items()])
def test_invalid_shape_is_found_exactly(source):
    assert expected(source), "an invalid shape must mark its culprits"
    assert found(source) == expected(source)


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in VALID.items()])
def test_valid_look_alike_is_silent(source):
    assert found(source) == []
