"""A bug in a later training (fine-tuning after pre-training, a GAN's adversarial loop after
its warm-up, an actor update after the critic's) gets the diagnosis it gets in a first one:
a traced step's host escape is GC105, not "failed after its checked steps"; a zero gradient
is not withheld because an earlier training's updates were skipped when its cause does not
depend on them; and training in a worker thread is recorded as in the main thread."""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.conftest import run_cli

PRETRAIN_THEN = """\
    import keras
    import numpy as np
    import tensorflow as tf

    w1 = tf.Variable(tf.ones((4, 1)), name="w1")
    w2 = tf.Variable(tf.ones((4, 1)), name="w2")
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, name="m")])
    opt = keras.optimizers.SGD(0.01)
    x = np.random.default_rng(0).normal(size=(16, 4)).astype("float32")


    {decorator}
    def pretrain_step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.matmul(x, w1) ** {power})
        grads = tape.gradient(loss, [w1])
        opt.apply_gradients(zip(grads, [w1]))


    {decorator}
    def finetune_step():
        with tf.GradientTape() as tape:
            out = {escape}
            loss = tf.reduce_mean(out ** 2)
        grads = tape.gradient(loss, {sources})
        opt.apply_gradients(zip(grads, {sources}))


    for step in range(3):
        pretrain_step()
    for step in range(3):
        finetune_step()
    """
ESCAPES = {
    "numpy-method": ("tf.constant(tf.matmul(x, w2).numpy())", "[w2]", ["w2"]),
    "numpy-call": ("tf.constant(np.tanh(tf.matmul(x, w2)))", "[w2]", ["w2"]),
    "predict": (
        "tf.constant(model.predict(x, verbose=0))",
        "model.trainable_variables",
        ["sequential/m/bias", "sequential/m/kernel"],
    ),
}


def _source(template: str, **fields) -> str:
    return textwrap.dedent(template).format(**fields)


@pytest.mark.parametrize("escape", sorted(ESCAPES))
@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf.function"])
def test_a_host_escape_in_a_later_training_is_gc105(run_script, escape, decorator):
    """In a traced step the escape fails while tracing, before the gradient is asked: that
    failure is the later training's GC105, as it would be the first's, not a GC905 "failed
    after its checked steps". Eagerly it does not fail, and is found at the gradient."""
    expression, sources, variables = ESCAPES[escape]
    # a power of its own: in one process autograph reuses the conversion of an equal code
    # object, whose source map names the file that first traced it
    power = 2 + sorted(ESCAPES).index(escape)
    source = _source(PRETRAIN_THEN, decorator=decorator, escape=expression, sources=sources, power=power)
    result = run_script(source)
    assert result.error is None, result.error
    assert [(f.code, f.line, f.variables) for f in result.findings] == [("GC105", 23, variables)]
    if decorator:  # the traced step failed, as under python: its gradient was never asked
        assert result.status == "partial"
        assert [e.line for e in result.not_reached] == [25]
        assert "host escape of line 23 (GC105)" in result.ended
    else:
        assert result.status == "checked"


FIT_THEN_FIT = """\
import keras
import numpy as np
import tensorflow as tf

x = np.random.default_rng(1).normal(size=(32, 4)).astype("float32")
y = np.zeros((32, 1), "float32")
baseline = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
baseline.compile(optimizer="sgd", loss="mse")
baseline.fit(x, y, epochs=1, batch_size=16, verbose=0)


class Distilled(keras.Model):
    def __init__(self):
        super().__init__()
        self.encoder = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, name="enc")])
        self.head = keras.layers.Dense(1)

    def call(self, inputs):
        return self.head(self.encoder(inputs))

    def train_step(self, data):
        inputs, targets = data
        with tf.GradientTape() as tape:
            h = self.encoder.predict(inputs, verbose=0)
            loss = tf.reduce_mean((self.head(h) - targets) ** 2)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


model = Distilled()
model.compile(optimizer="sgd")
model.fit(x, y, epochs=1, batch_size=16, verbose=0)
"""


def test_predict_inside_a_later_fits_train_step_is_gc105(run_script):
    """``fit`` traces ``train_step``: ``predict`` there fails (under python too) with an
    error of Keras's own, before the gradient is asked. After a first ``fit`` that ended at
    its checked step, it is the second training's GC105 at the ``predict``."""
    result = run_script(FIT_THEN_FIT)
    assert result.error is None, result.error
    assert [(f.code, f.line, f.variables) for f in result.findings] == [
        ("GC105", 24, ["sequential_1/enc/bias", "sequential_1/enc/kernel"])
    ]


WARMUP_THEN = """\
    import keras
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(7)
    cond = rng.normal(size=(32, 4)).astype("float32")
    real = rng.normal(size=(32, 8)).astype("float32")
    generator = keras.Sequential([keras.Input((4,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(8)])
    critic = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])
    opt = keras.optimizers.Adam(1e-3)

    for step in range(3):  # the warm-up: its skipped updates leave the generator untrained
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
    "bug,variant",
    [("tf.sign(fake)", "step"), ("fake * tf.cast(fake > 1e9, fake.dtype)", "zero-mask")],
    ids=["sign", "threshold-mask"],
)
@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf.function"])
def test_a_zero_gradient_after_a_warm_up_is_reported(run_script, bug, variant, decorator):
    """The warm-up's updates were skipped, so the generator holds values the program would
    not (``values.frozen``). A step function's zero holds for every value, and a mask no
    value within the activations' own scale opens is closed whatever training made of
    them: neither is the check's doing."""
    result = run_script(_source(WARMUP_THEN, decorator=decorator, bug=bug))
    assert result.error is None, result.error
    assert [(f.code, f.line, f.fields.get("variant")) for f in result.findings] == [("GC201", 23, variant)]
    assert len(result.findings[0].variables) == 4


def test_a_confidence_mask_an_untrained_model_does_not_open_is_withheld(run_script):
    """The same mask with a threshold trained values could reach (a confident prediction):
    closed on the values the check left untrained, but training would open it. The zero is
    the check's doing, and not reported; on a first training it is."""
    confident = "fake * tf.cast(tf.nn.sigmoid(fake) > 0.999, fake.dtype)"
    result = run_script(_source(WARMUP_THEN, decorator="", bug=confident))
    assert result.error is None, result.error
    assert result.findings == []
    first = _source(WARMUP_THEN, decorator="", bug=confident).replace("range(3):  # the warm-up", "range(0):  #")
    result = run_script(first)
    assert [(f.code, f.line) for f in result.findings] == [("GC201", 23)]


ACTOR_UPDATE = """\
    import keras
    import numpy as np
    import tensorflow as tf

    actor = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, activation="softmax", name="pi")])
    critic = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, name="q")])
    states = np.random.default_rng(2).random((8, 4)).astype("float32")


    {decorator}
    def actor_step():
        with tf.GradientTape() as tape:
            probs = {probs}
            critic_q = critic(states)
            expected_q = tf.reduce_sum(probs * {q}, axis=1)
            loss = -tf.reduce_mean(expected_q)
        return tape.gradient(loss, {sources})


    actor_step()
    """


@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf.function"])
def test_the_critic_asked_of_an_expected_value_loss_is_the_wrong_source(run_script, decorator):
    """``sum(probs * stop_gradient(q))`` is the policy's expected value: the stop keeps the
    critic's values a constant weight on purpose, so the critic's variables asked of it are
    the wrong sources (GC108 at the request), not a stop to remove (GC104)."""
    q = "tf.stop_gradient(critic_q)"
    source = _source(
        ACTOR_UPDATE, decorator=decorator, probs="actor(states)", q=q, sources="critic.trainable_variables"
    )
    result = run_script(source)
    assert result.error is None, result.error
    assert [(f.code, f.line, f.fields.get("variant")) for f in result.findings] == [("GC108", 17, "stopped-target")]
    assert result.findings[0].variables == ["sequential_1/q/bias", "sequential_1/q/kernel"]


def test_a_stop_on_the_policy_in_the_same_loss_is_still_gc104(run_script):
    probs = "tf.stop_gradient(actor(states))"
    source = _source(ACTOR_UPDATE, decorator="", probs=probs, q="critic_q", sources="actor.trainable_variables")
    result = run_script(source)
    assert result.error is None, result.error
    assert [(f.code, f.line) for f in result.findings] == [("GC104", 13)]


THREAD_TRAINING = """\
import threading

import tensorflow as tf

w = tf.Variable(tf.ones((4, 1)), name="w")
x = tf.random.normal((16, 4))


def train():
    for step in range(3):
        with tf.GradientTape() as tape:
            out = tf.round(tf.matmul(x, w))
            loss = tf.reduce_mean(out**2)
        grads = tape.gradient(loss, [w])


worker = threading.Thread(target=train)
worker.start()
worker.join()
"""


def _in_own_process(tmp_path, source: str) -> list[tuple]:
    """The check in a process of its own (as the CLI runs it): threads a program starts must
    not outlive into the test process, where they slowed every later in-process check."""
    script = tmp_path / "threads.py"
    script.write_text(source, encoding="utf-8")
    proc = run_cli(str(script), "--format", "json", cwd=tmp_path)
    [result] = json.loads(proc.stdout)["files"]
    assert result.get("error") is None, result
    return [(f["code"], f["line"], f["variables"]) for f in result["findings"]]


def test_training_in_a_worker_thread_is_recorded(tmp_path):
    """TensorFlow's op callbacks are per thread: the worker thread gets the recorder's too,
    so the cut is named (GC102), not taken for a variable the loss never read (GC108)."""
    assert _in_own_process(tmp_path, THREAD_TRAINING) == [("GC102", 12, ["w"])]


TWO_THREADS = """\
import threading

import tensorflow as tf

wa = tf.Variable(tf.ones((4, 1)), name="wa")
wb = tf.Variable(tf.ones((4, 1)), name="wb")
x = tf.random.normal((16, 4))
a_in_backward, b_forward_done = threading.Event(), threading.Event()


@tf.custom_gradient
def handoff(v):
    def grad(dy):  # thread a's backward pass waits here for thread b's forward pass
        a_in_backward.set()
        b_forward_done.wait()
        return dy

    return tf.identity(v), grad


def train_a():
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(handoff(tf.matmul(x, wa)))
    tape.gradient(loss, [wa])


def train_b():
    a_in_backward.wait()
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.round(tf.matmul(x, wb)) ** 2)
    b_forward_done.set()
    tape.gradient(loss, [wb])


threads = [threading.Thread(target=train_a), threading.Thread(target=train_b)]
for t in threads:
    t.start()
for t in threads:
    t.join()
"""


def test_a_pause_in_one_thread_does_not_hide_another_threads_ops(tmp_path):
    """Thread b runs its forward pass while thread a's gradient is being computed, which the
    recorder does not record (its backward ops): that pause is thread a's, and b's rounding
    is recorded and named."""
    assert _in_own_process(tmp_path, TWO_THREADS) == [("GC102", 30, ["wb"])]
