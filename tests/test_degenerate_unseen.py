"""Degenerate gradients (GC2xx) on code nobody here has seen (issue 36 §3): each mechanism
with the shape that was silent or misplaced, and a correct look-alike that stays silent, in
eager and in ``tf.function`` (and under ``fit`` / tf_keras where the shape exists there)."""

from __future__ import annotations

import importlib.util
import json

import pytest

from tests.conftest import run_cli

needs_tf_keras = pytest.mark.skipif(importlib.util.find_spec("tf_keras") is None, reason="tf_keras is not installed")


def _codes_lines(result) -> list[tuple[str, int]]:
    assert result.error is None, result.error
    return sorted((f.code, f.line) for f in result.findings)


def _cli_findings(script, *env_pairs) -> list[tuple[str, int]]:
    proc = run_cli(str(script), "--format", "json", env=dict(env_pairs))
    report = json.loads(proc.stdout)
    assert all(f["status"] == "checked" for f in report["files"]), proc.stdout + proc.stderr
    return sorted((f["code"], f["line"]) for file in report["files"] for f in file["findings"])


# -- 1. a ReLU dead on the batch whose inputs are partly exactly 0 ------------------------
# Rows of zeros reach the output ReLU as exact zeros (0 * w + a zero bias): "the largest input
# is 0" is not a ReLU at the edge, it is held at 0 by zeros, and the other rows are off by a
# margin. (569: the layer before is dead on one sample, so its pre-activation there is 0.)
RELU_HELD_AT_ZERO = """\
import keras
import numpy as np
import tensorflow as tf

x = np.concatenate([np.zeros((2, 3)), np.random.default_rng(0).uniform(1, 2, (6, 3))]).astype("float32")
y = np.linspace(-3, 3, 8).reshape(8, 1).astype("float32")
net = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, activation="{activation}", kernel_initializer=keras.initializers.Constant(-0.5))])


{decorator}
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(net(x) - y))
    return tape.gradient(loss, net.trainable_variables)


step(x, y)
"""


@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "function"])
def test_a_relu_held_at_zero_on_some_samples_and_off_on_the_rest_is_dead(run_script, decorator):
    source = RELU_HELD_AT_ZERO.format(activation="relu", decorator=decorator)
    result = run_script(source)
    assert _codes_lines(result) == [("GC201", 7)]
    assert "exactly 0" in result.findings[0].message


@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "function"])
def test_the_same_layer_linear_is_silent(run_script, decorator):
    assert _codes_lines(run_script(RELU_HELD_AT_ZERO.format(activation="linear", decorator=decorator))) == []


RELU_ZERO_MOSTLY = """\
import keras
import numpy as np
import tensorflow as tf

# six padding rows and two rows off: too few samples off to call the unit dead (chance)
x = np.concatenate([np.zeros((6, 3)), np.random.default_rng(0).uniform(1, 2, (2, 3))]).astype("float32")
net = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, activation="relu", kernel_initializer=keras.initializers.Constant(-0.5))])
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(net(x) - 1.0))
grads = tape.gradient(loss, net.trainable_variables)
"""


def test_a_relu_off_on_too_few_samples_beside_exact_zeros_is_chance(run_script):
    assert _codes_lines(run_script(RELU_ZERO_MOSTLY)) == []


RELU_FIT_KERAS2 = """\
import numpy as np
import tensorflow as tf
from tensorflow import keras

x = np.concatenate([np.zeros((2, 3)), np.random.default_rng(0).uniform(1, 2, (6, 3))]).astype("float32")
y = np.linspace(-3, 3, 8).reshape(8, 1).astype("float32")
model = keras.Sequential([keras.layers.Dense(1, activation="{activation}", kernel_initializer=keras.initializers.Constant(-0.5), input_shape=(3,))])
model.compile(optimizer="sgd", loss="mse")
model.fit(x, y, batch_size=8, epochs=1, verbose=0)
"""


@pytest.mark.keras2
@needs_tf_keras
@pytest.mark.parametrize(("activation", "expected"), [("relu", [("GC201", 7)]), ("linear", [])])
def test_tf_keras_fit_relu_held_at_zero(tmp_path, activation, expected):
    script = tmp_path / "train.py"
    script.write_text(RELU_FIT_KERAS2.format(activation=activation), encoding="utf-8")
    assert _cli_findings(script, ("TF_USE_LEGACY_KERAS", "1")) == expected


# -- 2. a zero no value of an untrained model opens is the program's ---------------------
# The warm-up's updates are skipped by the check, so the generator holds values the program
# would not (``values.frozen``). An offset or a scale by a constant that no value within the
# activations' own scale overcomes (``relu(h - 1e4)``, ``tanh(h * 1e6)``) is closed whatever
# training made of them: reported. A threshold training could reach is withheld.
WARMUP_THEN = """\
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(7)
rng = np.random.default_rng(7)
cond = rng.normal(size=(32, 4)).astype("float32")
real = rng.normal(size=(32, 8)).astype("float32")
generator = keras.Sequential([keras.Input((4,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(8)])
critic = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])
opt = keras.optimizers.Adam(1e-3)

for step in range({warmup}):  # the warm-up: its skipped updates leave the generator untrained
    with tf.GradientTape() as tape:
        warm_loss = tf.reduce_mean(tf.square(generator(cond) - real))
    grads = tape.gradient(warm_loss, generator.trainable_variables)
    opt.apply_gradients(zip(grads, generator.trainable_variables))


{decorator}
def adversarial_step():
    with tf.GradientTape() as tape:
        fake = generator(cond)
        fake = {bug}
        loss = -tf.reduce_mean(critic(fake))
    grads = tape.gradient(loss, generator.trainable_variables)
    opt.apply_gradients(zip(grads, generator.trainable_variables))


for step in range(3):
    adversarial_step()
"""


@pytest.mark.parametrize(
    ("bug", "variant"),
    [("tf.nn.relu(fake - 1e4)", "dead-relu"), ("tf.tanh(fake * 1e6)", "saturated")],
    ids=["relu-offset", "tanh-scale"],
)
@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "function"])
def test_a_constant_offset_or_scale_no_training_overcomes_is_reported_after_a_warm_up(
    run_script, bug, variant, decorator
):
    result = run_script(WARMUP_THEN.format(warmup=3, decorator=decorator, bug=bug))
    assert result.error is None, result.error
    assert [(f.code, f.line, f.fields.get("variant")) for f in result.findings] == [("GC201", 24, variant)]


@pytest.mark.parametrize(
    "bug",
    [
        "tf.nn.relu(fake - 4.0 * tf.reduce_max(tf.abs(fake)))",  # an offset by the model's own values
        "tf.tanh(fake * 20.0 / tf.reduce_mean(tf.abs(fake)))",  # a scale by them
    ],
    ids=["relu-own-offset", "tanh-own-scale"],
)
def test_a_zero_decided_by_the_untrained_values_themselves_is_withheld(run_script, bug):
    """The offset and the scale come from the generator's own (untrained) values: moved
    with them, nothing is known to stay closed, so the check does not claim it."""
    result = run_script(WARMUP_THEN.format(warmup=3, decorator="", bug=bug))
    assert result.error is None, result.error
    assert result.findings == []


# -- 3. a consistency / pseudo-label target: the sharpened side of the same network -------
def _line(source: str, marker: str) -> int:
    return next(n for n, text in enumerate(source.splitlines(), 1) if marker in text)


CONSISTENCY = """\
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
net = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)])
x = np.random.rand(16, 4).astype("float32")
labels = np.random.randint(0, 3, 16)


{decorator}
def step():
    with tf.GradientTape() as tape:
        logits = net(x)
        noisy = net(x + 0.1)
        supervised = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
        probs = tf.nn.softmax(logits)
        target = {target}  # the pseudo-label
        consistency = tf.reduce_mean({compare})
        loss = supervised + consistency
    return tape.gradient(loss, net.trainable_variables)


step()
"""
SQUARED = "tf.square(target - tf.nn.softmax(noisy))"
CROSS_ENTROPY = "-tf.reduce_sum(target * tf.nn.log_softmax(noisy), axis=-1)"
SHARPENED = {
    "temperature": "tf.nn.softmax(logits / 0.4)",
    "scaled-logits": "tf.nn.softmax(logits * 3.0)",
    "mixmatch-power": "probs ** 2.0 / tf.reduce_sum(probs ** 2.0, axis=-1, keepdims=True)",
}


@pytest.mark.parametrize("compare", [SQUARED, CROSS_ENTROPY], ids=["squared", "cross-entropy"])
@pytest.mark.parametrize("target", sorted(SHARPENED))
@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "function"])
def test_an_unstopped_sharpened_prediction_is_a_consistency_target(run_script, decorator, target, compare):
    source = CONSISTENCY.format(decorator=decorator, target=SHARPENED[target], compare=compare)
    result = run_script(source)
    assert _codes_lines(result) == [("GC203", _line(source, "# the pseudo-label"))]
    finding = result.findings[0]
    assert finding.fields.get("variant") == "consistency"
    assert "stop_gradient" in finding.fix


@pytest.mark.parametrize(
    "target",
    [
        "tf.stop_gradient(tf.nn.softmax(logits / 0.4))",  # the twin: the pseudo-label stopped
        "tf.nn.softmax(logits)",  # two views through the same softmax: symmetric, both trained
        "tf.nn.softmax(logits / 2.0)",  # a softened copy: the other side is the sharper one
    ],
    ids=["stopped", "symmetric-views", "softened"],
)
@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "function"])
def test_a_stopped_or_symmetric_consistency_loss_is_silent(run_script, decorator, target):
    source = CONSISTENCY.format(decorator=decorator, target=target, compare=SQUARED)
    if "2.0" in target:  # the noisy side is then the sharper one: make it stopped
        source = source.replace("tf.nn.softmax(noisy)", "tf.stop_gradient(tf.nn.softmax(noisy / 0.4))")
    assert _codes_lines(run_script(source)) == []


CONSISTENCY_FIT = """\
import numpy as np
import tensorflow as tf
{keras_import}


class SemiSupervised(keras.Model):
    def __init__(self):
        super().__init__()
        self.body = keras.layers.Dense(8, activation="relu")
        self.out = keras.layers.Dense(3)

    def call(self, x):
        return self.out(self.body(x))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            logits = self(x, training=True)
            noisy = self(x + 0.1, training=True)  # the augmented example
            target = {target}  # the pseudo-label
            supervised = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(y, logits, from_logits=True))
            loss = supervised + tf.reduce_mean(tf.square(target - tf.nn.softmax(noisy)))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {{"loss": loss}}


model = SemiSupervised()
model.compile(optimizer="adam")
model.fit(np.random.rand(32, 4).astype("float32"), np.random.randint(0, 3, 32), batch_size=16, epochs=1, verbose=0)
"""


@pytest.mark.parametrize(
    ("target", "expected"),
    [("tf.nn.softmax(logits / 0.5)", True), ("tf.stop_gradient(tf.nn.softmax(logits / 0.5))", False)],
    ids=["unstopped", "stopped"],
)
def test_a_consistency_target_in_a_train_step_under_fit(run_script, target, expected):
    source = CONSISTENCY_FIT.format(keras_import="import keras", target=target)
    want = [("GC203", _line(source, "# the pseudo-label"))] if expected else []
    assert _codes_lines(run_script(source)) == want


@pytest.mark.keras2
@needs_tf_keras
@pytest.mark.parametrize(
    ("target", "expected"),
    [("tf.nn.softmax(logits / 0.5)", True), ("tf.stop_gradient(tf.nn.softmax(logits / 0.5))", False)],
    ids=["unstopped", "stopped"],
)
def test_tf_keras_consistency_target_under_fit(tmp_path, target, expected):
    source = CONSISTENCY_FIT.format(keras_import="from tensorflow import keras", target=target)
    script = tmp_path / "train.py"
    script.write_text(source, encoding="utf-8")
    want = [("GC203", _line(source, "# the pseudo-label"))] if expected else []
    assert _cli_findings(script, ("TF_USE_LEGACY_KERAS", "1")) == want


# -- 4. an advantage transformed on its way into the policy loss: where it is made -------
ADVANTAGE = """\
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
inputs = keras.Input((4,))
trunk = keras.layers.Dense(16, activation="relu")(inputs)
model = keras.Model(inputs, [keras.layers.Dense(2)(trunk), keras.layers.Dense(1)(trunk)])
states = np.random.rand(32, 4).astype("float32")
actions = np.random.randint(0, 2, 32).astype("int32")
rewards = np.random.uniform(0, 10, 32).astype("float32")


{decorator}
def update():
    with tf.GradientTape() as tape:
        logits, values = model(states)
        values = tf.reshape(values, [-1])
        advantages = {advantage}  # made here
        neg_logs = tf.nn.sparse_softmax_cross_entropy_with_logits(logits=logits, labels=actions)
        policy_loss = tf.reduce_mean(neg_logs * {weight})
        loss = policy_loss + tf.reduce_mean(tf.square(rewards - values))
    return tape.gradient(loss, model.trainable_variables)


update()
"""


@pytest.mark.parametrize(
    "weight", ["tf.nn.softplus(advantages)", "tf.clip_by_value(advantages, -5.0, 5.0) * 0.5"], ids=["softplus", "clip"]
)
@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "function"])
def test_a_transformed_advantage_is_reported_where_it_is_made(run_script, decorator, weight):
    source = ADVANTAGE.format(decorator=decorator, advantage="rewards - values", weight=weight)
    assert _codes_lines(run_script(source)) == [("GC203", _line(source, "# made here"))]


def test_the_same_advantage_stopped_is_silent(run_script):
    source = ADVANTAGE.format(
        decorator="@tf.function", advantage="tf.stop_gradient(rewards - values)", weight="tf.nn.softplus(advantages)"
    )
    assert _codes_lines(run_script(source)) == []


# -- 5. a clip made all-clipping by a saturated softmax before it: name the softmax ------
PPO_RATIO = """\
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
policy = keras.Sequential([keras.Input((4,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(2)])
states = np.random.rand(32, 4).astype("float32")
actions = tf.one_hot(np.random.randint(0, 2, 32), 2)
old_probs = np.full((32, 2), {old}, "float32")
advantages = np.random.randn(32).astype("float32")


{decorator}
def update():
    with tf.GradientTape() as tape:
        probs = tf.clip_by_value(tf.nn.softmax(policy(states) * {scale}), 1e-7, 1.0 - 1e-7)  # the policy
        ratio = tf.reduce_sum(probs * actions, axis=1) / tf.reduce_sum(old_probs * actions, axis=1)
        clipped = tf.clip_by_value(ratio, 0.8, 1.2)  # the ratio clip
        loss = -tf.reduce_mean(clipped * advantages)
    return tape.gradient(loss, policy.trainable_variables)


update()
"""


@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "function"])
def test_a_ratio_clip_behind_a_saturated_softmax_names_the_softmax(run_script, decorator):
    source = PPO_RATIO.format(decorator=decorator, old="0.5", scale="1e4")
    result = run_script(source)
    assert _codes_lines(result) == [("GC201", _line(source, "# the policy"))]
    assert "saturated" in result.findings[0].message
    assert any(f"line {_line(source, '# the ratio clip')}" in note for note in result.findings[0].notes)


@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "function"])
def test_a_ratio_clip_of_a_healthy_softmax_is_the_clip(run_script, decorator):
    """The same clip all-clipping because the old probabilities are tiny (every ratio
    huge): the softmax passes a gradient, the clip is what the user changes."""
    source = PPO_RATIO.format(decorator=decorator, old="1e-6", scale="1.0")
    assert _codes_lines(run_script(source)) == [("GC201", _line(source, "# the ratio clip"))]


# -- 3b. the clean prediction beside a perturbed one (Pi-model, VAT, UDA) -----------------
CLEAN_VIEW = """\
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
net = keras.Sequential(
    [keras.Input((4,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dropout(0.5), keras.layers.Dense(3, activation="softmax")]
)
x = np.random.rand(16, 4).astype("float32")
other = np.random.rand(16, 4).astype("float32")
labels = np.random.randint(0, 3, 16)


{decorator}
def step():
    with tf.GradientTape() as tape:
        clean = {clean}  # the clean prediction
        noisy = net(x, training=True)
        supervised = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(labels, noisy))
        loss = supervised + tf.reduce_mean(tf.square(clean - noisy))
    return tape.gradient(loss, net.trainable_variables)


step()
"""


@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "function"])
def test_the_clean_prediction_beside_a_perturbed_one_is_a_consistency_target(run_script, decorator):
    source = CLEAN_VIEW.format(decorator=decorator, clean="net(x, training=False)")
    result = run_script(source)
    assert _codes_lines(result) == [("GC203", _line(source, "# the clean prediction"))]
    assert result.findings[0].fields.get("variant") == "consistency"


@pytest.mark.parametrize(
    "clean",
    [
        "tf.stop_gradient(net(x, training=False))",  # the twin: stopped
        "net(x, training=True)",  # two perturbed views: symmetric, both trained
        "net(other, training=False)",  # another batch: no view of the same one
    ],
    ids=["stopped", "both-perturbed", "other-batch"],
)
@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "function"])
def test_a_stopped_symmetric_or_unrelated_view_is_silent(run_script, decorator, clean):
    assert _codes_lines(run_script(CLEAN_VIEW.format(decorator=decorator, clean=clean))) == []


# -- 6. an FGSM attack on a distilled model: the input gradient through clipped 0/1 -------
FGSM = """\
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(4)])
images = tf.constant(np.random.rand(16, 8).astype("float32"))
labels = tf.one_hot(np.random.randint(0, 4, 16), 4)


{decorator}
def attack(images):
    with tf.GradientTape() as tape:
        tape.watch(images)
        probs = tf.nn.softmax(model(images) * {temperature})  # the distilled model's output
        probs = tf.clip_by_value(probs, 1e-7, 1.0 - 1e-7)
        loss = -tf.reduce_mean(tf.reduce_sum(labels * tf.math.log(probs), axis=-1))
    return images + 0.1 * tf.sign(tape.gradient(loss, images))


attack(images)
"""


@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "function"])
def test_an_input_gradient_through_a_saturated_distilled_softmax_is_zero(run_script, decorator):
    source = FGSM.format(decorator=decorator, temperature="1e4")
    result = run_script(source)
    assert _codes_lines(result) == [("GC201", _line(source, "# the distilled model's output"))]
    assert result.findings[0].variables == ["images"] or "images" in result.findings[0].message


def test_the_same_attack_at_temperature_one_is_silent(run_script):
    assert _codes_lines(run_script(FGSM.format(decorator="", temperature="1.0"))) == []


FOCAL = """\
import keras
import numpy as np
import tensorflow as tf

net = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
x = np.random.rand(16, 4).astype("float32")
labels = tf.one_hot(np.random.randint(0, 3, 16), 3)
with tf.GradientTape() as tape:
    p = tf.nn.softmax(net(x))
    focal = -tf.reduce_sum(labels * (1.0 - p) ** 2.0 * tf.math.log(p), axis=-1)  # a focal loss
    loss = tf.reduce_mean(focal)
grads = tape.gradient(loss, net.trainable_variables)
"""


def test_a_focal_factor_is_no_sharpened_target(run_script):
    """``(1 - p) ** γ`` is a power above 1 beside ``log p``, but of ``1 - p``: no sharpening."""
    assert _codes_lines(run_script(FOCAL)) == []
