"""GC105 host-escape: a tensor left TensorFlow inside the tape and came back as a constant."""

from __future__ import annotations

from gradcheck.rules._base import Example, Rule


class HostEscape(Rule):
    code = "GC105"
    trace_check = "gradcheck.trace.diagnose.analyze:analyse"
    name = "host-escape"
    summary = "Inside the tape a tensor left TensorFlow (`.numpy()`, NumPy, `float()`, `model.predict`) and came back as a constant."
    message = "{call} takes the value out of TensorFlow; what comes back is a constant with no gradient: {variables} {get} none"
    what = """
Finds a tensor computed from the trained variables that is converted to a host value
inside the tape (`t.numpy()`, `np.mean(t)`, `float(t)`, `model.predict(x)`), whose result
then feeds the loss. In graph mode (`tf.function`, `model.fit`) the same code fails while
tracing (`'SymbolicTensor' object has no attribute 'numpy'`); gradcheck reports that
trace-time error as this cause. So it does for a failure the escape causes while a tape
records eagerly: `model.predict` inside a `run_eagerly` `train_step` (a distribution
strategy's cross-replica `RuntimeError`), or the NumPy value that came back used as a tensor
on a later line (`'numpy.ndarray' object has no attribute 'numpy'`): the finding is at the
escape, the failure in a note.
"""
    why = """
The tape records TensorFlow ops only. A NumPy array is a plain value: when it comes back
into TensorFlow it is a new constant with no history, so the loss no longer depends on the
variables as far as the tape knows and every one of them gets `None`.
"""
    example = """
with tf.GradientTape() as tape:
    generated = generator(noise)
    stats = np.array([generated.numpy().mean(), generated.numpy().std()])
    loss = bce(tf.ones_like(critic(stats[None])), critic(stats[None]))
"""
    use_instead = """
with tf.GradientTape() as tape:
    generated = generator(noise)
    stats = tf.stack([tf.reduce_mean(generated), tf.math.reduce_std(generated)])
    loss = bce(tf.ones_like(critic(stats[None])), critic(stats[None]))
"""
    fix = (
        "Keep the computation in TensorFlow ops inside the tape: `tf.reduce_mean`, `tf.math.reduce_std`, "
        "`keras.ops.*` instead of NumPy; no `.numpy()` or `float()` on tensors that feed the loss; call "
        "the model directly (`model(x, training=True)`) instead of `model.predict`."
    )
    fix_variants = {
        "discrete": (
            "When the value that left is turned into a choice on the host (`np.argmax(logits.numpy())`, a "
            "sampled token or action)",
            "Keeping it in TensorFlow is not enough: a discrete choice (an argmax, a sample) has no gradient "
            "there either. To train what makes the choice, make it inside the tape and use a policy gradient "
            "(REINFORCE: `loss = -reward * log_prob`, with the log-probabilities of the chosen tokens taken "
            "from the logits), or pass on the probabilities instead of the choice (a soft one-hot "
            "`tf.nn.softmax(logits) @ embedding`, or a Gumbel-softmax sample).",
        ),
        "weights": (
            "When a model's weights are copied through NumPy (`get_weights`, `set_weights`, `load_weights`)",
            "`{call}` copies the weights' values through NumPy, so the model then computes with constants, "
            "not with the tensors the tape recorded: neither the model they were copied from nor adapted "
            "weights (`w - lr * g`, MAML's fast weights) are on the path to the loss. Keep those weights as "
            "tensors computed from the trained model's variables and run the forward pass functionally with "
            "them: in Keras 3 "
            "`outputs, _ = model.stateless_call(new_weights, model.non_trainable_variables, x)`; with tf.keras, "
            "a forward function that takes the weight tensors (e.g. `tf.nn.relu(x @ w1 + b1) @ w2 + b2`).",
        ),
    }
    #: Calls that copy a model's variables through the host (reading them out or writing them
    #: in): the "weights" fix.
    weight_writers = ("get_weights", "set_weights", "load_weights")

    def fix_text(self, **fields) -> str:
        call = str(fields.get("call") or "")
        if not fields.get("variant") and call.rsplit(".", 1)[-1] in self.weight_writers:
            fields = {**fields, "variant": "weights"}
        return super().fix_text(**fields)

    references = (
        "https://www.tensorflow.org/guide/autodiff#getting_a_gradient_of_none",
        "https://www.tensorflow.org/guide/function#python_side_effects",
    )

    invalid = (
        Example(
            "GAN moments computed with NumPy on generated.numpy() (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

generator = keras.Sequential([keras.Input((1,)), keras.layers.Dense(8, activation="elu"), keras.layers.Dense(1)])
critic = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, activation="sigmoid")])
noise = np.random.rand(64, 1).astype("float32")
with tf.GradientTape() as tape:
    samples = generator(noise).numpy().ravel()  # expect: GC105
    stats = np.array([[samples.mean(), samples.std()]], dtype="float32")
    verdict = critic(stats)
    loss = tf.reduce_mean(tf.math.log(1.0 - verdict + 1e-6))
grads = tape.gradient(loss, generator.trainable_variables)
""",
        ),
        Example(
            "model.predict inside the tape (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
x = np.random.rand(16, 4).astype("float32")
y = np.random.rand(16, 1).astype("float32")
with tf.GradientTape() as tape:
    prediction = model.predict(x, verbose=0)  # expect: GC105
    loss = tf.reduce_mean(tf.square(y - prediction))
grads = tape.gradient(loss, model.trainable_variables)
""",
        ),
        Example(
            ".numpy() in a train_step traced by model.fit (fails while tracing)",
            "fit",
            """\
import keras
import numpy as np
import tensorflow as tf


class Regressor(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(1)

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            prediction = self(x, training=True)
            error = np.mean((prediction.numpy() - y.numpy()) ** 2)  # expect: GC105
            loss = tf.constant(error)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


model = Regressor()
model.compile(optimizer="sgd")
model.fit(np.random.rand(32, 3).astype("float32"), np.random.rand(32, 1).astype("float32"), epochs=1, verbose=0)
""",
        ),
        Example(
            "a NumPy function called on the model's output (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
x = np.random.rand(16, 4).astype("float32")
with tf.GradientTape() as tape:
    scores = model(x)
    spread = np.std(scores, axis=1)  # expect: GC105
    loss = tf.reduce_mean(tf.square(tf.convert_to_tensor(spread) - 1.0))
grads = tape.gradient(loss, model.trainable_variables)
""",
        ),
        Example(
            "a NumPy ufunc (np.maximum) on the model's output (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="softmax")])
x = np.random.rand(16, 4).astype("float32")
labels = tf.one_hot(np.random.randint(0, 3, 16), 3)
with tf.GradientTape() as tape:
    probs = model(x)
    probs = np.maximum(probs, 1e-7)  # expect: GC105
    loss = -tf.reduce_mean(tf.reduce_sum(labels * tf.math.log(probs), axis=1))
grads = tape.gradient(loss, model.trainable_variables)
""",
        ),
    )
    valid = (
        Example(
            "moments with TensorFlow ops (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

generator = keras.Sequential([keras.Input((1,)), keras.layers.Dense(8, activation="elu"), keras.layers.Dense(1)])
critic = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, activation="sigmoid")])
noise = np.random.rand(64, 1).astype("float32")
with tf.GradientTape() as tape:
    samples = generator(noise)
    stats = tf.stack([tf.reduce_mean(samples), tf.math.reduce_std(samples)])[None, :]
    loss = tf.reduce_mean(tf.math.log(1.0 - critic(stats) + 1e-6))
grads = tape.gradient(loss, generator.trainable_variables)
assert all(g is not None for g in grads)
""",
        ),
        Example(
            "logging float(loss) inside the tape while the loss itself stays in TensorFlow (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
x = np.random.rand(16, 4).astype("float32")
y = np.random.rand(16, 1).astype("float32")
history = []
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(y - model(x)))
    history.append(float(loss))
grads = tape.gradient(loss, model.trainable_variables)
assert all(g is not None for g in grads)
""",
        ),
        Example(
            "NumPy arrays combined with the output by operators, a ufunc only on a logged copy (eager)",
            "eager",
            """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
x = np.random.rand(16, 4).astype("float32")
weights = np.random.rand(16, 3).astype("float32")
with tf.GradientTape() as tape:
    scores = model(x)
    weighted = weights * scores + np.float32(0.5)  # ndarray * Tensor is a Tensor: still on the tape
    peak = np.maximum(scores, 0.0).max()  # a logged number, not part of the loss
    loss = tf.reduce_mean(tf.square(weighted))
grads = tape.gradient(loss, model.trainable_variables)
assert all(g is not None for g in grads), peak
""",
        ),
    )
