"""The diagnosis on the shapes that went wrong on unseen code: each broken script must give
exactly its marked findings (``# expect: GCxxx`` on the culprit line), each correct
look-alike nothing at all, no note either (a false "cut again" note on a Huber loss was one
of the failures). Eager and graph mode, Keras 3 and (in a child process) tf_keras."""

from __future__ import annotations

import importlib.util
import re
import textwrap

import pytest

from tests.conftest import run_cli

_EXPECT = re.compile(r"#\s*expect:\s*(GC\d{3})")
_HAS_TF_KERAS = importlib.util.find_spec("tf_keras") is not None


def _expected(source: str) -> list[tuple[int, str]]:
    return sorted(
        (n, m.group(1)) for n, line in enumerate(source.splitlines(), start=1) for m in [_EXPECT.search(line)] if m
    )


_DQN_DATA = """\
import numpy as np
import tensorflow as tf
import keras

s = np.random.rand(32, 4).astype("float32")
a = np.random.randint(0, 2, 32)
r = np.random.rand(32).astype("float32")
s2 = np.random.rand(32, 4).astype("float32")
q = keras.Sequential([keras.Input((4,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(2)])
target_q = keras.models.clone_model(q)
huber = keras.losses.Huber()
"""

BROKEN = {
    "dqn-argmax-huber-target-before-tape-eager": _DQN_DATA
    + """
target = r + 0.99 * tf.reduce_max(target_q(s2), axis=1)
with tf.GradientTape() as tape:
    qv = q(s)
    best = tf.cast(tf.argmax(qv, axis=1), tf.float32)  # expect: GC101
    loss = huber(target, best)
tape.gradient(loss, q.trainable_variables)
""",
    "dqn-argmax-huber-online-target-fit": """\
import numpy as np
import tensorflow as tf
import keras


class DQN(keras.Model):
    def __init__(self):
        super().__init__()
        self.h = keras.layers.Dense(16, activation="relu")
        self.out = keras.layers.Dense(2)
        self.huber = keras.losses.Huber()

    def call(self, x):
        return self.out(self.h(x))

    def train_step(self, data):
        (s, a, r, s2), _ = data
        target = r + 0.99 * tf.reduce_max(self(s2), axis=1)
        with tf.GradientTape() as tape:
            q = self(s, training=True)
            chosen = tf.cast(tf.argmax(q, axis=1), tf.float32)  # expect: GC101
            loss = self.huber(target, chosen)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


m = DQN()
m.compile(optimizer="adam")
s = np.random.rand(32, 4).astype("float32")
m.fit((s, np.zeros(32, "int64"), np.random.rand(32).astype("float32"), s), np.zeros(32, "float32"), epochs=1, batch_size=8, verbose=0)
""",
    "forward-pass-before-tape-in-train-step-fit": """\
import numpy as np
import tensorflow as tf
import keras


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.a = keras.layers.Dense(8, activation="relu")
        self.b = keras.layers.Dense(1)

    def call(self, x):
        return self.b(self.a(x))

    def train_step(self, data):
        x, y = data
        y_pred = self(x, training=True)  # expect: GC109
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(y - y_pred))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


m = Net()
m.compile(optimizer="adam")
m.fit(np.random.rand(16, 3).astype("float32"), np.random.rand(16, 1).astype("float32"), epochs=1, verbose=0)
""",
    "value-computed-in-build-fit": """\
import numpy as np
import tensorflow as tf
import keras


class NormDense(keras.layers.Layer):
    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], 4), initializer="glorot_uniform")
        self.w_n = self.w / tf.norm(self.w, axis=0, keepdims=True)  # expect: GC109

    def call(self, x):
        return tf.matmul(x, self.w_n)


model = keras.Sequential([keras.Input((3,)), NormDense(), keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
model.fit(np.random.rand(8, 3).astype("float32"), np.random.rand(8, 1).astype("float32"), epochs=1, verbose=0)
""",
    "np-asarray-in-loss-eager": """\
import numpy as np
import tensorflow as tf
import keras

model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4), keras.layers.Dense(1)])
x = np.random.rand(8, 3).astype("float32")
y = np.random.rand(8, 1).astype("float32")
with tf.GradientTape() as tape:
    pred = model(x)
    arr = np.asarray(pred)  # expect: GC105
    loss = tf.convert_to_tensor(np.mean((arr - y) ** 2))
tape.gradient(loss, model.trainable_variables)
""",
    "predict-inside-tape-eager": """\
import numpy as np
import tensorflow as tf
import keras

model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
x = np.random.rand(8, 3).astype("float32")
with tf.GradientTape() as tape:
    pred = model.predict(x, verbose=0)  # expect: GC105
    loss = tf.reduce_mean(tf.square(pred))
tape.gradient(loss, model.trainable_variables)
""",
    "watched-input-through-numpy-function-eager": """\
import numpy as np
import tensorflow as tf
import keras

model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
x = tf.constant(np.random.rand(8, 3).astype("float32"))
with tf.GradientTape() as tape:
    tape.watch(x)
    xs = tf.numpy_function(lambda a: (a * 2).astype("float32"), [x], tf.float32)  # expect: GC106
    out = model(xs)
tape.gradient(out, x)
""",
    "numpy-function-reads-model-graph": """\
import numpy as np
import tensorflow as tf
import keras


class Agent:
    def __init__(self):
        self.model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
        self.states = np.random.rand(4, 3).astype("float32")

    def rollout(self):
        return self.model(self.states).numpy()

    @tf.function
    def step(self):
        with tf.GradientTape() as tape:
            logits = tf.numpy_function(self.rollout, [], tf.float32)  # expect: GC106
            loss = tf.reduce_mean(logits)
        return tape.gradient(loss, self.model.trainable_variables)


agent = Agent()
agent.model(agent.states)
agent.step()
""",
    "assign-then-read-plain-variable-eager": """\
import numpy as np
import tensorflow as tf

w = tf.Variable(tf.ones((3,)), name="w")
fast = tf.Variable(tf.ones((3,)), name="fast")
x = tf.constant(np.random.rand(4, 3).astype("float32"))
with tf.GradientTape() as tape:
    fast.assign(w * 0.5)  # expect: GC113
    loss = tf.reduce_sum(x * fast)
tape.gradient(loss, [w])
""",
    "tf-function-on-model-call": """\
import numpy as np
import tensorflow as tf
import keras


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.d = keras.layers.Dense(1)

    @tf.function  # expect: GC116
    def call(self, x):
        return self.d(x)


m = Net()
x = np.random.rand(8, 3).astype("float32")
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(m(x) ** 2)
tape.gradient(loss, m.trainable_variables)
""",
    "token-ids-to-embedding-eager": """\
import numpy as np
import tensorflow as tf
import keras

embed = keras.layers.Embedding(20, 4)
ids = tf.constant(np.random.randint(0, 20, (2, 5)), dtype=tf.int32)
with tf.GradientTape() as tape:
    tape.watch(ids)
    out = tf.reduce_sum(embed(ids))  # expect: GC114
tape.gradient(out, ids)
""",
    "builtin-lambda-argmax-inside-fit": """\
import numpy as np
import keras
from keras import layers, ops

inp = keras.Input((6,))
h = layers.Dense(8)(inp)
idx = layers.Lambda(ops.argmax, arguments={"axis": -1})(h)  # expect: GC101
idx = layers.Lambda(ops.cast, arguments={"dtype": "float32"})(idx)
out = layers.Dense(1)(layers.Reshape((1,))(idx))
model = keras.Model(inp, out)
model.compile(optimizer="adam", loss="mse")
model.fit(np.random.rand(16, 6).astype("float32"), np.random.rand(16, 1).astype("float32"), epochs=1, verbose=0)
""",
    "watched-tensor-copy-used-eager": """\
import numpy as np
import tensorflow as tf
import keras

model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2), keras.layers.Dense(1)])
features = keras.Sequential([model.layers[0]])
img = np.random.rand(1, 3).astype("float32")
with tf.GradientTape() as tape:
    hidden = features(img)
    tape.watch(hidden)
    preds = model(img)  # expect: GC108
tape.gradient(preds, hidden)
""",
    "stop-gradient-beside-an-op-without-gradient-graph": """\
import numpy as np
import tensorflow as tf
import keras

images = tf.constant(np.random.rand(4, 16, 16, 1).astype("float32"))
loc_net = keras.Sequential([keras.Input((16,)), keras.layers.Dense(2, activation="tanh")])
head = keras.Sequential([keras.Input((18,)), keras.layers.Dense(1)])


@tf.function
def step(loc):
    with tf.GradientTape() as tape:
        glimpse = tf.reshape(tf.image.extract_glimpse(images, [4, 4], loc), (4, 16))
        mean = tf.stop_gradient(loc_net(glimpse))  # expect: GC104
        sample = tf.stop_gradient(mean + tf.random.normal((4, 2), stddev=0.1))
        again = tf.reshape(tf.image.extract_glimpse(images, [4, 4], sample), (4, 16))
        log_prob = -tf.reduce_sum(tf.square(sample - mean), axis=1)
        loss = tf.reduce_mean(head(tf.concat([again, sample], axis=1))) - tf.reduce_mean(log_prob)
    variables = loc_net.trainable_variables + head.trainable_variables
    return tape.gradient(loss, variables)


step(tf.zeros((4, 2)))
""",
    "output-without-loss-in-compile-fit": """\
import keras
import numpy as np

inputs = keras.Input((8,))
hidden = keras.layers.Dense(16, activation="relu")(inputs)
price = keras.layers.Dense(1, name="price")(hidden)
volume = keras.layers.Dense(1, name="volume")(keras.layers.Dense(4, name="volume_hidden")(inputs))
model = keras.Model(inputs, [price, volume])
model.compile(optimizer="adam", loss=["mse", None])  # expect: GC108
x = np.random.rand(32, 8).astype("float32")
model.fit(x, [np.random.rand(32, 1), np.random.rand(32, 1)], epochs=1, verbose=0)
""",
}

CLEAN = {
    "dqn-onehot-huber-target-before-tape-eager": _DQN_DATA
    + """
target = r + 0.99 * tf.reduce_max(target_q(s2), axis=1)
with tf.GradientTape() as tape:
    qv = q(s)
    chosen = tf.reduce_sum(qv * tf.one_hot(a, 2), axis=1)
    loss = huber(target, chosen)
tape.gradient(loss, q.trainable_variables)
""",
    "dqn-gather-huber-online-target-fit": """\
import numpy as np
import tensorflow as tf
import keras


class DQN(keras.Model):
    def __init__(self):
        super().__init__()
        self.h = keras.layers.Dense(16, activation="relu")
        self.out = keras.layers.Dense(2)
        self.huber = keras.losses.Huber()

    def call(self, x):
        return self.out(self.h(x))

    def train_step(self, data):
        (s, a, r, s2), _ = data
        target = r + 0.99 * tf.reduce_max(self(s2), axis=1)
        with tf.GradientTape() as tape:
            q = self(s, training=True)
            chosen = tf.gather(q, a, batch_dims=1)
            loss = self.huber(target, chosen)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


m = DQN()
m.compile(optimizer="adam")
s = np.random.rand(32, 4).astype("float32")
m.fit((s, np.zeros(32, "int64"), np.random.rand(32).astype("float32"), s), np.zeros(32, "float32"), epochs=1, batch_size=8, verbose=0)
""",
    "double-dqn-argmax-selects-stopped-target-in-tape": _DQN_DATA
    + """
with tf.GradientTape() as tape:
    next_a = tf.argmax(q(s2), axis=1)
    next_q = tf.gather(target_q(s2), next_a, batch_dims=1)
    target = tf.stop_gradient(r + 0.99 * next_q)
    chosen = tf.gather(q(s), a, batch_dims=1)
    loss = huber(target, chosen)
tape.gradient(loss, q.trainable_variables)
""",
    "value-computed-in-call-fit": """\
import numpy as np
import tensorflow as tf
import keras


class NormDense(keras.layers.Layer):
    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], 4), initializer="glorot_uniform")

    def call(self, x):
        return tf.matmul(x, self.w / tf.norm(self.w, axis=0, keepdims=True))


model = keras.Sequential([keras.Input((3,)), NormDense(), keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
model.fit(np.random.rand(8, 3).astype("float32"), np.random.rand(8, 1).astype("float32"), epochs=1, verbose=0)
""",
    "log-line-numpy-beside-tf-loss-eager": """\
import numpy as np
import tensorflow as tf
import keras

model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
x = np.random.rand(8, 3).astype("float32")
with tf.GradientTape() as tape:
    pred = model(x)
    print("mean prediction", float(np.mean(np.asarray(pred))))
    loss = tf.reduce_mean(tf.square(pred))
tape.gradient(loss, model.trainable_variables)
""",
    "grad-model-returns-both-outputs-eager": """\
import numpy as np
import tensorflow as tf
import keras

inp = keras.Input((3,))
hidden = keras.layers.Dense(2)(inp)
out = keras.layers.Dense(1)(hidden)
grad_model = keras.Model(inp, [hidden, out])
img = np.random.rand(1, 3).astype("float32")
with tf.GradientTape() as tape:
    h, preds = grad_model(img)
tape.gradient(preds, h)
""",
    "op-without-gradient-on-a-stopped-path-graph": """\
import numpy as np
import tensorflow as tf
import keras

images = tf.constant(np.random.rand(4, 16, 16, 1).astype("float32"))
loc_net = keras.Sequential([keras.Input((16,)), keras.layers.Dense(2, activation="tanh")])
head = keras.Sequential([keras.Input((18,)), keras.layers.Dense(1)])


@tf.function
def step(loc):
    with tf.GradientTape() as tape:
        glimpse = tf.reshape(tf.image.extract_glimpse(images, [4, 4], loc), (4, 16))
        mean = loc_net(glimpse)
        sample = tf.stop_gradient(mean + tf.random.normal((4, 2), stddev=0.1))
        again = tf.reshape(tf.image.extract_glimpse(images, [4, 4], sample), (4, 16))
        log_prob = -tf.reduce_sum(tf.square(sample - mean), axis=1)
        loss = tf.reduce_mean(head(tf.concat([again, sample], axis=1))) - tf.reduce_mean(log_prob)
    variables = loc_net.trainable_variables + head.trainable_variables
    return tape.gradient(loss, variables)


step(tf.zeros((4, 2)))
""",
    "every-output-with-a-loss-fit": """\
import keras
import numpy as np

inputs = keras.Input((8,))
hidden = keras.layers.Dense(16, activation="relu")(inputs)
price = keras.layers.Dense(1, name="price")(hidden)
volume = keras.layers.Dense(1, name="volume")(keras.layers.Dense(4, name="volume_hidden")(inputs))
model = keras.Model(inputs, [price, volume])
model.compile(optimizer="adam", loss=["mse", "mae"], loss_weights=[1.0, 0.5])
x = np.random.rand(32, 8).astype("float32")
model.fit(x, [np.random.rand(32, 1), np.random.rand(32, 1)], epochs=1, verbose=0)
""",
}

KERAS2 = {
    "forward-pass-before-tape-eager": """\
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(3,)), tf.keras.layers.Dense(1)])
x = np.random.rand(8, 3).astype("float32")
y = np.random.rand(8, 1).astype("float32")
pred = model(x)  # expect: GC109
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(pred - y))
tape.gradient(loss, model.trainable_variables)
""",
    "backend-argmax-loss-fit": """\
import numpy as np
import tensorflow as tf
from tensorflow.keras import backend as K


def loss_fn(y_true, y_pred):
    idx = K.cast(K.argmax(y_pred, axis=-1), "float32")  # expect: GC101
    return K.mean(K.square(idx - K.flatten(y_true)))


model = tf.keras.Sequential([tf.keras.layers.Dense(8, input_shape=(6,)), tf.keras.layers.Dense(3, activation="softmax")])
model.compile(optimizer="adam", loss=loss_fn)
model.fit(np.random.rand(16, 6).astype("float32"), np.random.randint(0, 3, (16, 1)).astype("float32"), epochs=1, verbose=0)
""",
    "weights-made-in-call-eager": """\
import numpy as np
import tensorflow as tf


class Scale(tf.keras.layers.Layer):
    def call(self, x):
        w = self.add_weight(name="w", shape=(x.shape[-1],), initializer="ones")  # expect: GC108
        b = self.add_weight(name="b", shape=(x.shape[-1],), initializer="zeros")
        return x * w + b


model = tf.keras.Sequential([tf.keras.layers.Dense(4, input_shape=(4,)), Scale()])
x = np.random.rand(8, 4).astype("float32")
model(x)
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(model(x) ** 2)
tape.gradient(loss, model.trainable_variables)
""",
    # tf_keras's predict on a recording tape fails (LookupError on IteratorGetNext), under
    # python too: that crash is the host escape, at the predict
    "predict-in-tape-crashes-eager": """\
import numpy as np
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.layers.Dense(4, input_shape=(2,))])
critic = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
noise = np.random.rand(8, 2).astype("float32")
with tf.GradientTape() as tape:
    fake = generator.predict(noise, verbose=0)  # expect: GC105
    loss = -tf.reduce_mean(critic(fake))
tape.gradient(loss, generator.trainable_variables)
""",
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_shape_is_diagnosed(run_script, name):
    source = BROKEN[name]
    result = run_script(source, name=f"{name.replace('-', '_')}.py")
    assert result.error is None, result.error
    got = sorted((f.line, f.code) for f in result.findings)
    assert got == _expected(source), "\n".join(f"{f.line}: {f.code} {f.message} {f.notes}" for f in result.findings)
    for finding in result.findings:
        assert finding.variables and finding.fix
        assert not any("cut again" in note for note in finding.notes), finding.notes


@pytest.mark.parametrize("name", sorted(CLEAN))
def test_correct_look_alike_is_silent(run_script, name):
    result = run_script(CLEAN[name], name=f"{name.replace('-', '_')}.py")
    assert result.error is None, result.error
    assert result.steps_checked >= 1
    assert result.findings == [], [f"{f.line}: {f.code} {f.message}" for f in result.findings]


@pytest.mark.skipif(not _HAS_TF_KERAS, reason="tf_keras is not installed")
@pytest.mark.parametrize("name", sorted(KERAS2))
def test_keras2_shape_is_diagnosed(tmp_path, name):
    import json

    source = KERAS2[name]
    path = tmp_path / f"{name.replace('-', '_')}.py"
    path.write_text(source, encoding="utf-8")
    proc = run_cli("--format", "json", str(path), env={"TF_USE_LEGACY_KERAS": "1"})
    record = json.loads(proc.stdout)["files"][0]
    assert record["error"] is None, record["error"]
    assert sorted((f["line"], f["code"]) for f in record["findings"]) == _expected(source), proc.stdout


def test_unread_build_weight_gets_a_did_you_mean(run_script):
    source = textwrap.dedent(
        """\
        import numpy as np
        import tensorflow as tf
        import keras


        class Cell(keras.layers.Layer):
            def __init__(self, units, **kwargs):
                super().__init__(**kwargs)
                self.units = units
                self.state_size = units

            def build(self, input_shape):
                self.kernel = self.add_weight(shape=(input_shape[-1], self.units), name="kernel")
                self.recurrent_kernel = self.add_weight(shape=(self.units, self.units), name="recurrent_kernel")

            def call(self, inputs, states):
                h = tf.matmul(inputs, self.kernel) + tf.matmul(states[0], self.kernel[: self.units])
                return h, [h]


        model = keras.Sequential([keras.Input((5, 4)), keras.layers.RNN(Cell(4)), keras.layers.Dense(1)])
        model.compile(optimizer="adam", loss="mse")
        model.fit(np.random.rand(8, 5, 4).astype("float32"), np.random.rand(8, 1).astype("float32"), epochs=1, verbose=0)
        """
    )
    result = run_script(source, name="rnn_cell.py")
    assert [f.code for f in result.findings] == ["GC108"]
    finding = result.findings[0]
    assert finding.variables == ["sequential/rnn/cell/recurrent_kernel"]
    assert "created at line 14" in " ".join(finding.notes)
    assert any("did you mean `self.recurrent_kernel`" in note for note in finding.notes), finding.notes
    assert "gets" not in finding.message or "reaches" in finding.message


def test_fix_texts_name_the_users_op_and_avoid_its_names(run_script):
    source = textwrap.dedent(
        """\
        import numpy as np
        import tensorflow as tf

        w = tf.Variable(tf.random.normal((3, 1)), name="w")
        v = tf.constant(np.random.rand(8, 3).astype("float32"))
        with tf.GradientTape() as tape:
            q = tf.floor(v @ w * 4.0) / 4.0
            loss = tf.reduce_mean(q ** 2)
        tape.gradient(loss, [w])
        """
    )
    (finding,) = run_script(source, name="floor.py").findings
    assert finding.code == "GC102"
    assert "tf.math.floor(" in finding.fix and "tf.round" not in finding.fix
    assert "`v +" not in finding.fix  # `v` is the user's input here: the placeholder must differ
    assert finding.message.endswith("w gets none")


def test_outputs_without_loss_reads_compile_arguments():
    from gradcheck.trace.diagnose.unreached import outputs_without_loss

    names = ["a", "b", "c"]
    assert outputs_without_loss(names, "mse", None) == []  # one loss for every output
    assert outputs_without_loss(names, "mse", [1.0, 0.5]) == ["c"]
    assert outputs_without_loss(names, None, None) == []
    assert outputs_without_loss(names, ["mse", None, "mae"], None) == ["b"]
    assert outputs_without_loss(names, ["mse"] * 3, [0.25, 0.25]) == ["c"]
    assert outputs_without_loss(names, {"a": "mse", "c": "mae"}, None) == ["b"]
    assert outputs_without_loss(names, {"a": "mse", "b": "mse", "c": "mse"}, {"a": 1.0, "b": 1.0}) == ["c"]
    assert outputs_without_loss(names, ["mse"] * 3, [1.0, 1.0, 0.5]) == []


# -- issue 23, parts 2-4 (ids 450-479 / 850-879) --------------------------------------


def test_issue23_numpy_loss_target_is_host_escape_in_eager_and_graph(run_script):
    """A NumPy loss hands `tape.gradient` a host value: GC105 at the NumPy call, never the
    internal `'numpy.float32' object has no attribute '_id'`; also under tf.function (it
    fails while tracing) and as a `float(...)` target."""
    body = """\
        import numpy as np
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
        x = np.random.rand(8, 4).astype("float32")
        y = np.random.rand(8, 1).astype("float32")
        {decorator}
        def step():
            with tf.GradientTape() as tape:
                pred = model(x)
                loss = {loss}
            return tape.gradient(loss, model.trainable_variables)
        step()
        """
    for n, (decorator, loss, call) in enumerate(
        (
            # the innermost NumPy call is where the tensor left TensorFlow
            ("", "np.mean(np.abs(pred - y))", "np.abs"),
            ("", "tf.convert_to_tensor(np.mean(np.abs(pred - y)))", "np.abs"),
            ("", "float(tf.reduce_mean(pred - y)) * 2.0", "float"),
            ("@tf.function", "np.mean(np.abs(pred - y))", "np.mean"),
        )
    ):
        source = textwrap.dedent(body).format(decorator=decorator, loss=loss)
        result = run_script(source, name=f"numpy_loss_{n}.py")
        assert result.error is None, (loss, result.error)
        (finding,) = result.findings
        assert (finding.code, finding.line, finding.call) == ("GC105", 11, call), (decorator, loss, finding)
        assert finding.variables == ["sequential/dense/bias", "sequential/dense/kernel"]


def test_gc101_fix_follows_what_the_indices_are_for(run_script):
    """Predicted classes compared with labels (an error rate used as a loss) get the
    classification advice first; argmin of Q-values regressed on targets keeps Q-learning's."""
    body = """\
        import numpy as np
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3)])
        x = np.random.rand(16, 4).astype("float32")
        y = np.random.randint(0, 3, 16)
        with tf.GradientTape() as tape:
            pred = tf.argmax(model(x), axis=1)
            loss = {loss}
        tape.gradient(loss, model.trainable_variables)
        """
    cases = (
        ("tf.reduce_mean(tf.cast(tf.not_equal(pred, y), tf.float32))", "For classification"),
        ("tf.reduce_mean(tf.square(tf.cast(pred, tf.float32) - y))", "For Q-learning"),
    )
    for n, (loss, advice) in enumerate(cases):
        result = run_script(textwrap.dedent(body).format(loss=loss), name=f"argmax_fix_{n}.py")
        (finding,) = result.findings
        assert finding.code == "GC101"
        assert finding.fix.split(". ")[1].startswith(advice), finding.fix


def test_issue23_numpy_metric_beside_tensor_loss_is_clean(run_script):
    source = textwrap.dedent(
        """\
        import numpy as np
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
        x = np.random.rand(8, 4).astype("float32")
        y = np.random.rand(8, 1).astype("float32")
        with tf.GradientTape() as tape:
            pred = model(x)
            mae = np.mean(np.abs(pred - y))
            loss = tf.reduce_mean(tf.abs(pred - y))
        grads = tape.gradient(loss, model.trainable_variables)
        assert all(g is not None for g in grads), mae
        """
    )
    result = run_script(source, name="numpy_metric.py")
    assert result.error is None and result.findings == []


def test_issue23_environment_set_by_the_script_is_seen_by_tensorflow(tmp_path):
    """TF_USE_LEGACY_KERAS set by the script before its own `import tensorflow`: under
    gradcheck tf.keras is tf_keras, as under python (TensorFlow is imported by the script)."""
    pytest.importorskip("tf_keras")
    script = tmp_path / "legacy.py"
    script.write_text(
        textwrap.dedent(
            """\
            import os
            import sys

            os.environ["TF_USE_LEGACY_KERAS"] = "1"
            import tensorflow as tf
            import tf_keras

            assert tf.keras is tf_keras or tf.keras.__name__.startswith("tf_keras"), tf.keras
            assert sys.path[0] == os.path.dirname(os.path.abspath(__file__))
            assert os.getcwd() not in sys.path[1:] or os.path.dirname(os.path.abspath(__file__)) == os.getcwd()
            model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.round(model(tf.ones((2, 3)))))
            tape.gradient(loss, model.trainable_variables)
            """
        ),
        encoding="utf-8",
    )
    proc = run_cli("--format", "json", str(script), cwd=tmp_path)
    assert '"GC102"' in proc.stdout, proc.stdout + proc.stderr
    assert '"dense/kernel"' in proc.stdout  # tf_keras's names, not Keras 3's "sequential/dense/kernel"


def test_issue23_variable_read_in_dataset_map_is_outside_tape(run_script):
    source = textwrap.dedent(
        """\
        import numpy as np
        import tensorflow as tf

        scale = tf.Variable(tf.ones([4]), name="scale")
        w = tf.Variable(tf.ones([4, 1]), name="w")


        def preprocess(x):
            return x * scale

        data = tf.data.Dataset.from_tensor_slices(np.random.rand(8, 4).astype("float32")).map(preprocess).batch(4)
        for x in data:
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(x @ w)
            tape.gradient(loss, [scale, w])
        """
    )
    (finding,) = run_script(source, name="pipeline.py").findings
    assert (finding.code, finding.line, finding.variables) == ("GC109", 9, ["scale"])


def test_issue23_escape_for_sampling_or_logging_is_not_blamed(run_script):
    """A `.numpy()` whose tensor goes on into the loss (sampling an action), or that is only
    printed, is not why another source gets None: that is GC108."""
    source = textwrap.dedent(
        """\
        import numpy as np
        import tensorflow as tf

        w = tf.Variable(tf.ones([3, 2]), name="w")
        unused = tf.Variable(tf.ones([2]), name="unused")
        x = tf.ones([1, 3])
        with tf.GradientTape() as tape:
            print("unused", unused.numpy().mean())
            probs = tf.nn.softmax(x @ w + unused)
            action = np.random.choice(2, p=probs.numpy()[0] / probs.numpy()[0].sum())
            loss = -tf.math.log(probs[0, action]) * np.float32(np.random.rand())
            other = tf.reduce_sum(x @ w)
        tape.gradient(other, [w, unused])
        """
    )
    (finding,) = run_script(source, name="sampling.py").findings
    assert (finding.code, finding.variables) == ("GC108", ["unused"])


def test_issue23_predict_on_a_tape_tensor_starves_the_upstream_model_too(run_script):
    source = textwrap.dedent(
        """\
        import keras
        import numpy as np
        import tensorflow as tf

        enc = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4)], name="enc")
        head = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)], name="head")
        x = np.random.rand(8, 3).astype("float32")
        with tf.GradientTape() as tape:
            pred = head.predict(enc(x), verbose=0)
            loss = tf.reduce_mean(tf.square(pred - 1.0))
        tape.gradient(loss, enc.trainable_variables + head.trainable_variables)
        """
    )
    (finding,) = run_script(source, name="predict_chain.py").findings
    assert (finding.code, finding.line) == ("GC105", 9)
    assert finding.variables == ["enc/dense/bias", "enc/dense/kernel", "head/dense_1/bias", "head/dense_1/kernel"]


def test_issue23_a_later_fit_is_checked_after_a_clean_first_fit(run_script):
    """A fit whose checked step is clean returns (as EarlyStopping would) and the program
    goes on: a later training loop's bug is found, not hidden behind the first one."""
    source = textwrap.dedent(
        """\
        import keras
        import numpy as np
        import tensorflow as tf

        x = np.random.rand(32, 3).astype("float32")
        y = np.random.rand(32, 1).astype("float32")
        first = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)], name="first")
        first.compile(optimizer="sgd", loss="mse")
        first.fit(x, y, epochs=2, batch_size=8, verbose=0)


        class Second(keras.Model):
            def __init__(self):
                super().__init__()
                self.dense = keras.layers.Dense(1)

            def call(self, x):
                return self.dense(x)

            def train_step(self, data):
                x, y = data
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(tf.round(self(x)) - y))
                self.optimizer.apply(tape.gradient(loss, self.trainable_variables), self.trainable_variables)
                return {"loss": loss}


        second = Second()
        second.compile(optimizer="sgd")
        second.fit(x, y, epochs=2, batch_size=8, verbose=0)
        """
    )
    result = run_script(source, name="two_fits.py")
    assert result.error is None
    assert [(f.code, f.line) for f in result.findings] == [("GC102", 23)]


WHILE_BODY = textwrap.dedent(
    """\
    import keras
    import tensorflow as tf

    layer = keras.layers.Dense(4, activation="tanh")
    layer.build((None, 4))


    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            def body(i, h):
                y = layer(h)
                return i + 1, BODY_RESULT

            _, h = tf.while_loop(lambda i, h: i < 3, body, (tf.constant(0), x))
            loss = tf.reduce_sum(h)
        return tape.gradient(loss, layer.trainable_variables)


    step(tf.random.normal((2, 4)))
    """
)


@pytest.mark.parametrize(("result", "expected"), [("h", [("GC108", 12, "loop")]), ("y", [])])
def test_a_value_a_traced_loop_body_drops_is_the_dead_end(run_script, result, expected):
    # The loop is one op outside its body: the line to change is the dropped computation in
    # the body, not the `tf.while_loop` line.
    found = run_script(WHILE_BODY.replace("BODY_RESULT", result))
    assert found.error is None, found.error
    assert [(f.code, f.line, f.fields.get("variant")) for f in found.findings] == expected


INNER_UPDATE = textwrap.dedent(
    """\
    import keras
    import numpy as np
    import tensorflow as tf

    policy = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    shaper = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    inner = keras.optimizers.SGD(0.1)
    inner.build(policy.trainable_variables)
    x = np.random.default_rng(0).normal(size=(8, 4)).astype("float32")


    def meta_step(x):
        with tf.GradientTape() as outer:
            with tf.GradientTape() as tape:
                inner_loss = tf.reduce_mean(policy(x) * shaper(x))
            grads = tape.gradient(inner_loss, policy.trainable_variables)
            INNER_STEP
            meta_loss = tf.reduce_mean(tf.square(policy(x)))
        return outer.gradient(meta_loss, shaper.trainable_variables)


    STEP(x)
    """
)


@pytest.mark.parametrize("step", ["meta_step", "tf.function(meta_step)"])
@pytest.mark.parametrize(
    ("inner_step", "expected"),
    [
        # the inner update is an assignment the outer tape cannot differentiate (531): the
        # check applies it, as python does, instead of skipping it as it skips other updates
        ("inner.apply_gradients(zip(grads, policy.trainable_variables))", [("GC113", 17)]),
        ("policy.layers[0].kernel.assign_sub(0.1 * grads[0])", [("GC113", 17)]),
    ],
)
def test_an_optimizer_step_inside_a_tape_runs_and_is_the_assignment(run_script, step, inner_step, expected):
    found = run_script(INNER_UPDATE.replace("INNER_STEP", inner_step).replace("STEP(x)", f"{step}(x)"))
    assert found.error is None, found.error
    assert [(f.code, f.line) for f in found.findings] == expected


LAYER_OUTPUT_DROPPED = textwrap.dedent(
    """\
    import keras
    import numpy as np
    import tensorflow as tf


    class Encoder(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.body = keras.layers.Dense(8)
            self.pooler = keras.layers.Dense(8, activation="tanh")

        def call(self, x):
            sequence = self.body(x)
            pooled = self.pooler(sequence)
            return sequence, pooled


    inputs = keras.Input((4,))
    outputs = Encoder()(inputs)
    model = keras.Model(inputs, keras.layers.Dense(1)(outputs[USED]))
    x = np.random.default_rng(0).normal(size=(8, 4)).astype("float32")
    with tf.GradientTape() as tape:
        prediction = model(x)
        loss = tf.reduce_mean(tf.square(prediction))
    grads = tape.gradient(loss, model.trainable_variables)
    """
)


@pytest.mark.parametrize(("used", "expected"), [("0", [("GC108", 14, "dead-end")]), ("1", [])])
def test_a_layer_output_a_functional_model_leaves_out_is_left_where_it_is_made(run_script, used, expected):
    # the functional model returns only the layer's first output (525): the line that
    # receives the model's outputs uses all of them, so the pooled value was left on the way
    # up, at the line inside the layer that made it, not at `model(x)`
    found = run_script(LAYER_OUTPUT_DROPPED.replace("USED", used))
    assert found.error is None, found.error
    assert [(f.code, f.line, f.fields.get("variant")) for f in found.findings] == expected
    if expected:
        assert "`pooled`" in found.findings[0].fix


QUANTIZED = textwrap.dedent(
    """\
    import keras
    import numpy as np
    import tensorflow as tf

    encoder = keras.Sequential([keras.Input((6,)), keras.layers.Dense(4)])
    codebook = tf.Variable(tf.random.normal((16, 4), seed=0), name="codebook")
    x = np.random.default_rng(0).normal(size=(8, 6)).astype("float32")
    with tf.GradientTape() as tape:
        z = encoder(x)
        scores = SCORES
        codes = tf.argmin(scores, axis=1)
        quantized = tf.gather(codebook, codes)
        loss = tf.reduce_mean(tf.square(quantized - 1.0))
    grads = tape.gradient(loss, encoder.trainable_variables)
    """
)


@pytest.mark.parametrize(
    ("scores", "variant"),
    [
        ("tf.reduce_sum(tf.square(z[:, None, :] - codebook[None]), axis=-1)", "nearest"),
        ("tf.norm(z[:, None, :] - codebook[None], axis=-1)", "nearest"),
        ("tf.matmul(z, codebook, transpose_b=True)", "indices"),  # a score, not a distance
    ],
)
def test_argmin_of_distances_is_a_nearest_entry_with_a_straight_through_fix(run_script, scores, variant):
    found = run_script(QUANTIZED.replace("SCORES", scores))
    assert found.error is None, found.error
    assert [(f.code, f.line, f.fields.get("variant")) for f in found.findings] == [("GC101", 11, variant)]
    assert ("stop_gradient" in found.findings[0].fix) == (variant == "nearest")


HOST_CHOICE = textwrap.dedent(
    """\
    import keras
    import numpy as np
    import tensorflow as tf

    generator = keras.Sequential([keras.Input((4,)), keras.layers.Dense(5)])
    table = keras.layers.Embedding(5, 3)
    x = np.random.default_rng(0).normal(size=(8, 4)).astype("float32")
    with tf.GradientTape() as tape:
        logits = generator(x)
        picked = HOST
        loss = tf.reduce_mean(tf.square(table(picked)))
    grads = tape.gradient(loss, generator.trainable_variables)
    """
)


@pytest.mark.parametrize(
    ("host", "variant"),
    [
        ("np.argmax(logits.numpy(), axis=-1)", "discrete"),
        ("np.clip(logits.numpy(), 0, 4).astype('int32')[:, 0]", None),
    ],
)
def test_a_choice_made_on_the_host_gets_the_policy_gradient_fix(run_script, host, variant):
    found = run_script(HOST_CHOICE.replace("HOST", host))
    assert found.error is None, found.error
    assert [(f.code, f.line, f.fields.get("variant")) for f in found.findings] == [("GC105", 10, variant)]
    assert ("REINFORCE" in found.findings[0].fix) == (variant == "discrete")


ADJOINT = textwrap.dedent(
    """\
    import numpy as np
    import tensorflow as tf

    w = tf.Variable(np.full((2, 2), 0.1, "float32"), name="w")


    @tf.custom_gradient
    def flow(z0):
        z = z0 + tf.tanh(z0 @ w)

        def grad(dz, variables=None):
            adj = dz
            for _ in range(3):  # a hand-written adjoint: its own tape, three times a step
                with tf.GradientTape() as inner:
                    inner.watch(z0)
                    f = tf.tanh(z0 @ w)
                adj = adj + inner.gradient(f, z0, output_gradients=dz)
            return adj, VARIABLE_GRADS

        return z, grad


    x = tf.constant(np.ones((4, 2), "float32"))
    for step in range(2):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(flow(x))
        grads = tape.gradient(loss, [w])
    """
)


@pytest.mark.parametrize(
    ("variable_grads", "expected"),
    [
        ("[None] * len(variables)", [("GC112", 18)]),  # 541: at the return that spells the None
        ("[tf.matmul(z0, dz * (1.0 - tf.tanh(z0 @ w) ** 2), transpose_a=True)]", []),
    ],
)
def test_a_custom_gradient_whose_backward_opens_a_tape_is_checked_once_at_its_return(
    run_script, variable_grads, expected
):
    # The backward function's own tape is part of the outer request: not a step of the
    # check's budget (which ended the run inside the outer backward pass), and not a tape
    # left empty by the diagnosis's own questions to the shadow tape.
    found = run_script(ADJOINT.replace("VARIABLE_GRADS", variable_grads))
    assert found.error is None, found.error
    assert [(f.code, f.line) for f in found.findings] == expected


EDGES = textwrap.dedent(
    """\
    import keras
    import numpy as np
    import tensorflow as tf

    learner = keras.Sequential([keras.Input((4,)), keras.layers.Dense(4)])
    nodes = np.random.default_rng(0).normal(size=(4, 4)).astype("float32")
    with tf.GradientTape() as tape:
        adj = tf.sigmoid(learner(nodes))
        edges = tf.where(adj > 0.5)
        messages = tf.gather(nodes, edges[:, 1]) * WEIGHT
        loss = tf.reduce_sum(tf.math.unsorted_segment_sum(messages, edges[:, 0], 4))
    grads = tape.gradient(loss, learner.trainable_variables)
    """
)


@pytest.mark.parametrize(
    ("weight", "expected"),
    [
        ("1.0", [("GC103", 9, "coordinates")]),  # 543: only where the adjacency is large is used
        ("tf.gather_nd(adj, edges)[:, None]", []),  # its values weight the messages
    ],
)
def test_coordinates_of_a_condition_get_the_use_the_values_fix(run_script, weight, expected):
    found = run_script(EDGES.replace("WEIGHT", weight))
    assert found.error is None, found.error
    assert [(f.code, f.line, f.fields.get("variant")) for f in found.findings] == expected
    if expected:
        assert "gather_nd" in found.findings[0].fix
