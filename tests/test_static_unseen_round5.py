"""Issue 39, round 5: the static engine on progF's misses and false alarm
(docs/accuracy-progF.md, "Static engine: 6 of 17 not all right"). Each bug is written in two
spellings or places, each with correct look-alikes that must stay silent. INVALID sources
mark each culprit with ``# expect: GCxxx``; the findings must be exactly those."""

from __future__ import annotations

import pytest

from tests.test_static_engine import expected, found

INVALID: dict[str, str] = {}
VALID: dict[str, str] = {}

# --- item 8: a momentum encoder built non-trainable is not trained by fit -----------------
# MoCo's key encoder is handed to the training model's constructor (kept as
# ``self.momentum_encoder``) after being made non-trainable: ``trainable=False`` in its own
# constructor call (Keras's keyword, on a class of the file or a built-in layer), or
# ``.trainable = False`` set on it before. ``fit`` asks only for trainable variables, so the
# ``stop_gradient`` on its keys starves nothing. Left trainable, its variables get no gradient.

_MOCO = """\
import numpy as np
{imports}


class Head({keras}.layers.Layer):
    def __init__(self, backbone, features, **kwargs):
        super().__init__(**kwargs)
        self.backbone = backbone
        self.fc = {keras}.layers.Dense(features)

    def call(self, inputs):
        return self.fc(self.backbone(inputs))


class MoCo({keras}.Model):
    def __init__(self, encoder, momentum_encoder):
        super().__init__()
        self.encoder = encoder
        self.momentum_encoder = momentum_encoder

    def call(self, inputs):
        query, key = inputs[0], inputs[1]
        q = self.encoder(query)
        k = self.momentum_encoder(key)
        k = {stop}(k){mark}
        return {ops}.reduce_sum(q * k, axis=-1, keepdims=True)


backbone = {keras}.Sequential([{keras}.layers.Dense(8, activation="relu")])
momentum_backbone = {keras}.Sequential([{keras}.layers.Dense(8, activation="relu")])
{frozen_backbone}
encoder = Head(backbone, 4, name="encoder")
momentum_encoder = {momentum}
{frozen_encoder}
model = MoCo({passed})
{train}
"""
_FIT = """\
model.compile(optimizer="sgd", loss="mse")
model.fit((np.zeros((8, 3), "float32"), np.zeros((8, 3), "float32")), np.zeros((8, 1), "float32"), epochs=1)"""
_LOOP = """\
optimizer = {keras}.optimizers.SGD()
x = (np.zeros((8, 3), "float32"), np.zeros((8, 3), "float32"))
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(model(x))
grads = tape.gradient(loss, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))"""
_SPELLINGS = {
    "tf_keras": dict(imports="import tensorflow as tf", keras="tf.keras", stop="tf.stop_gradient", ops="tf.math"),
    "keras3": dict(
        imports="import keras\nimport tensorflow as tf",
        keras="keras",
        stop="keras.ops.stop_gradient",
        ops="tf.math",
    ),
}
_FROZEN = {  # how the momentum encoder is made non-trainable -> (momentum, frozen_backbone, frozen_encoder)
    "keyword-on-own-class": ('Head(momentum_backbone, 4, name="momentum", trainable=False)', True, ""),
    "attribute-set-before": ("Head(momentum_backbone, 4)", True, "momentum_encoder.trainable = False"),
    "frozen-backbone-itself": ("momentum_backbone", True, ""),
    "keyword-on-built-in-layer": ("{keras}.layers.Dense(4, trainable=False)", False, ""),
}
_TRAINABLE = {  # the same encoders left trainable: the stop starves them
    "own-class": ("Head(momentum_backbone, 4)", False, ""),
    "own-class-frozen-backbone-only": ("Head(momentum_backbone, 4)", True, ""),  # its own ``fc`` trains
    "built-in-layer": ("{keras}.layers.Dense(4)", False, ""),
}
for _sp, _words in _SPELLINGS.items():
    for _how, _train in (("fit", _FIT), ("loop", _LOOP)):
        for _passed in ("encoder, momentum_encoder", "encoder=encoder, momentum_encoder=momentum_encoder"):
            _kw = "kw" if "=" in _passed else "pos"
            for _name, (_momentum, _fb, _fe) in _FROZEN.items():
                VALID[f"moco-{_name}-{_sp}-{_how}-{_kw}"] = _MOCO.format(
                    **_words,
                    mark="",
                    momentum=_momentum.format(**_words),
                    frozen_backbone="momentum_backbone.trainable = False" if _fb else "",
                    frozen_encoder=_fe,
                    passed=_passed,
                    train=_train.format(**_words),
                )
            for _name, (_momentum, _fb, _fe) in _TRAINABLE.items():
                INVALID[f"moco-{_name}-{_sp}-{_how}-{_kw}"] = _MOCO.format(
                    **_words,
                    mark="  # expect: GC104",
                    momentum=_momentum.format(**_words),
                    frozen_backbone="momentum_backbone.trainable = False" if _fb else "",
                    frozen_encoder=_fe,
                    passed=_passed,
                    train=_train.format(**_words),
                )


# --- item 4: a ``compute_loss`` override is the inside of fit's tape -----------------------
# ``fit``'s ``train_step`` calls ``compute_loss`` under its tape (Keras 3 by keyword, tf_keras
# by position) and asks for every trainable variable of the model: the teacher kept in
# ``self.teacher`` (passed to the constructor) included. Its forward pass there trains it, so
# a host escape, an index op or a rounding on the teacher's path, or its term dropped from the
# loss, starve it. Frozen before ``fit``, it is not asked for: nothing to report.

_DISTILLER = """\
import numpy as np
{imports}


class Distiller({keras}.Model):
    def __init__(self, student, teacher):
        super().__init__()
        self.teacher = teacher
        self.student = student

    def compile(self, optimizer, student_loss_fn, distillation_loss_fn, alpha=0.1, temperature=3):
        super().compile(optimizer=optimizer)
        self.student_loss_fn = student_loss_fn
        self.distillation_loss_fn = distillation_loss_fn
        self.alpha = alpha
        self.temperature = temperature

    def compute_loss(self, {signature}):
        teacher_pred = {teacher}{mark_teacher}
        student_loss = self.student_loss_fn({y}, {y_pred})
        distillation_loss = self.distillation_loss_fn({mark_dead}
            {ops}.softmax({soft} / self.temperature, axis=1),{mark_soft}
            {ops}.softmax({y_pred} / self.temperature, axis=1),
        )
        loss = {loss}
        return loss

    def call(self, x):
        return self.student(x)


teacher = {keras}.Sequential([{keras}.layers.Dense(8, activation="relu"), {keras}.layers.Dense(4)])
student = {keras}.Sequential([{keras}.layers.Dense(4)])
{frozen}
distiller = Distiller({passed})
distiller.compile(
    optimizer="adam",
    student_loss_fn={keras}.losses.SparseCategoricalCrossentropy(from_logits=True),
    distillation_loss_fn={keras}.losses.KLDivergence(),
    alpha=0.1,
    temperature=10,
)
distiller.fit(np.zeros((16, 16), "float32"), np.zeros((16,), "int32"), epochs=1)
"""
_KERAS3 = dict(
    imports="import keras",
    keras="keras",
    ops="keras.ops",
    signature="x=None, y=None, y_pred=None, sample_weight=None, training=True",
    y="y",
    y_pred="y_pred",
)
_TF_KERAS = dict(  # tf_keras passes them by position: other names work there
    imports="import tensorflow as tf",
    keras="tf.keras",
    ops="tf.nn",
    signature="data, labels, predictions, sample_weight=None",
    y="labels",
    y_pred="predictions",
)
_BOTH = "self.alpha * student_loss + (1 - self.alpha) * distillation_loss"
_CUTS = {  # name -> (teacher, soft, loss, which line is marked, code)
    "predict": ("self.teacher.predict({x}, verbose=0)", "teacher_pred", _BOTH, "teacher", "GC105"),
    "numpy": ("self.teacher({x}).numpy()", "teacher_pred", _BOTH, "teacher", "GC105"),
    "np-call": ("np.asarray(self.teacher({x}))", "teacher_pred", _BOTH, "teacher", "GC105"),
    "round": ("self.teacher({x})", "{round}(teacher_pred)", _BOTH, "soft", "GC102"),
    # the dead end: the term computed from the teacher, never read again
    "dropped-term": ("self.teacher({x})", "teacher_pred", "self.alpha * student_loss", "dead", "GC108"),
}
for _sp, _words in (("keras3", _KERAS3), ("tf_keras", _TF_KERAS)):
    _x = "x" if _sp == "keras3" else "data"
    _round = "keras.ops.round" if _sp == "keras3" else "tf.math.round"
    for _passed in ("student, teacher", "student=student, teacher=teacher"):
        _kw = "kw" if "=" in _passed else "pos"

        def _distiller(teacher, soft, loss, marked="", code="", frozen=""):
            return _DISTILLER.format(
                **_words,
                teacher=teacher.format(x=_x),
                soft=soft.format(round=_round),
                loss=loss,
                mark_teacher=f"  # expect: {code}" if marked == "teacher" else "",
                mark_soft=f"  # expect: {code}" if marked == "soft" else "",
                mark_dead=f"  # expect: {code}" if marked == "dead" else "",
                frozen=frozen,
                passed=_passed,
            )

        VALID[f"distiller-{_sp}-{_kw}"] = _distiller("self.teacher({x})", "teacher_pred", _BOTH)
        VALID[f"distiller-stopped-frozen-teacher-{_sp}-{_kw}"] = _distiller(
            "self.teacher({x})", "teacher_pred", _BOTH, frozen="teacher.trainable = False"
        )
        for _name, (_teacher, _soft, _loss, _marked, _code) in _CUTS.items():
            INVALID[f"distiller-{_name}-{_sp}-{_kw}"] = _distiller(_teacher, _soft, _loss, _marked, _code)
            VALID[f"distiller-{_name}-frozen-teacher-{_sp}-{_kw}"] = _distiller(
                _teacher, _soft, _loss, frozen="teacher.trainable = False"
            )


# --- item 6: ``.variables`` of a model whose class the file cannot read -------------------
# ``from gan import Discriminator``: nothing says what the class holds, but the step asks for
# ``m.variables`` and applies the gradients to ``m.trainable_variables``: the two lists differ
# by the non-trainable variables (a BatchNormalization's statistics), whose gradients are None.
# A class the file shows is judged by what it holds; a request and an update that agree, or a
# ``.variables`` with no trainable list beside it, say nothing.

_UNTYPED = """\
import numpy as np
import tensorflow as tf
{imports}

{made}
optimizer = tf.keras.optimizers.Adam()


{decorator}
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square({name}(x, training=True) - y))
    {request}
    {update}
    return loss


train_step(np.zeros((8, 4), "float32"), np.zeros((8, 1), "float32"))
"""
_SEEN_CLASS = """\
class Critic(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(8, activation="relu")
        self.out = tf.keras.layers.Dense(1)

    def call(self, x, training=None):
        return self.out(self.hidden(x))


critic = Critic()"""
_SEEN_MODULE = """\
class Critic(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(tf.ones((4, 1)))
        self.b = tf.Variable(tf.zeros((1,)))

    def __call__(self, x, training=None):
        return tf.matmul(x, self.w) + self.b


critic = Critic()"""
_APPLY = "optimizer.apply_gradients(zip(grads, {name}.{trainable}))"
for _name, _imports, _made in (
    ("discriminator", "from gan import Discriminator", "discriminator = Discriminator()"),
    ("model", "from models import build_model", "model = build_model(4)"),
):
    for _all, _trainable in (("variables", "trainable_variables"), ("weights", "trainable_weights")):
        for _decorator in ("", "@tf.function"):
            _id = f"{_name}-{_all}-{'graph' if _decorator else 'eager'}"

            def _untyped(request, update, *, _name=_name, _imports=_imports, _made=_made, _decorator=_decorator):
                return _UNTYPED.format(
                    imports=_imports, made=_made, name=_name, decorator=_decorator, request=request, update=update
                )

            _update = _APPLY.format(name=_name, trainable=_trainable)
            INVALID[f"untyped-{_id}"] = _untyped(
                f"grads = tape.gradient(loss, {_name}.{_all})  # expect: GC115", _update
            )
            INVALID[f"untyped-bound-{_id}"] = _untyped(
                f"params = {_name}.{_all}  # expect: GC115\n    grads = tape.gradient(loss, params)", _update
            )
            VALID[f"untyped-trainable-{_id}"] = _untyped(f"grads = tape.gradient(loss, {_name}.{_trainable})", _update)
            VALID[f"untyped-no-trainable-list-{_id}"] = _untyped(
                f"grads = tape.gradient(loss, {_name}.{_all})", f"optimizer.apply_gradients(zip(grads, {_name}.{_all}))"
            )
for _seen, _class in (("keras-model", _SEEN_CLASS), ("tf-module", _SEEN_MODULE)):
    VALID[f"seen-class-all-trainable-{_seen}"] = _UNTYPED.format(
        imports="",
        made=_class,
        name="critic",
        decorator="",
        request="grads = tape.gradient(loss, critic.variables)",
        update=_APPLY.format(name="critic", trainable="trainable_variables"),
    )


# --- item 7: where GC110 points (the trace engine's convention) -------------------------
# The trace engine names an unwatched tensor where it was made: the last assignment to its
# name before the request, else the request itself (a parameter of the step: the attack's
# ``delta``). The static engine points at the same line; the tape's body, where the watch
# goes, is what the fix says.

_PGD = """\
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


{decorator}
def pgd_step(x, y, delta, alpha=0.01, epsilon=0.1):
    {made}
    with tf.GradientTape() as tape:
        {watch}
        loss = loss_fn(y, model(x + delta))
    grad = tape.gradient(loss, delta){mark_request}
    return tf.clip_by_value(delta + alpha * tf.sign(grad), -epsilon, epsilon)


x = np.random.rand(4, 8, 8).astype("float32")
y = np.zeros((4,), "int32")
delta = pgd_step(x, y, tf.zeros_like(x))
"""
for _decorator in ("", "@tf.function"):
    _mode = "graph" if _decorator else "eager"
    INVALID[f"pgd-parameter-unwatched-{_mode}"] = _PGD.format(
        decorator=_decorator, made="", watch="pass", mark_request="  # expect: GC110"
    )
    INVALID[f"pgd-local-unwatched-{_mode}"] = _PGD.format(
        decorator=_decorator,
        made="delta = tf.random.uniform(tf.shape(x), -epsilon, epsilon)  # expect: GC110",
        watch="pass",
        mark_request="",
    )
    VALID[f"pgd-parameter-watched-{_mode}"] = _PGD.format(
        decorator=_decorator, made="", watch="tape.watch(delta)", mark_request=""
    )
    VALID[f"pgd-local-watched-{_mode}"] = _PGD.format(
        decorator=_decorator,
        made="delta = tf.random.uniform(tf.shape(x), -epsilon, epsilon)",
        watch="tape.watch(delta)",
        mark_request="",
    )


# --- batch 16 (1060): an optimizer's update inside a tape that is asked again -------------
# ``apply_gradients(zip(grads, copy.trainable_variables))`` under the outer tape writes into
# the copy's variables: the query loss read from them afterwards holds the inner gradients by
# assignment, no path back to the meta-model (GC113 at the update). Fast weights computed as
# tensors train it; an update after the tape's last request, or between two requests of a
# persistent tape whose losses were computed before it, changes nothing asked.

_MAML = """\
import numpy as np
import tensorflow as tf


def make():
    return tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(1)])


model = make()
model.build((None, 1))
inner = tf.keras.optimizers.SGD(0.01)
outer = tf.keras.optimizers.Adam(0.001)


{decorator}
def meta_step(x, y, x_test, y_test):
    with tf.GradientTape() as test_tape:
        with tf.GradientTape() as train_tape:
            train_loss = tf.reduce_mean(tf.square(model(x) - y))
        gradients = train_tape.gradient(train_loss, model.trainable_variables)
{inner}
    meta_gradients = test_tape.gradient(test_loss, model.trainable_variables)
    outer.apply_gradients(zip(meta_gradients, model.trainable_variables))
    return test_loss


x = np.random.rand(10, 1).astype("float32")
meta_step(x, x, x, x)
"""
_COPY_APPLY = """\
        copy = make()
        copy.build((None, 1))
        {apply}  # expect: GC113
        test_loss = tf.reduce_mean(tf.square(copy(x_test) - y_test))"""
_FAST_WEIGHTS = """\
        kernel, bias, kernel2, bias2 = [v - 0.01 * g for v, g in zip(model.trainable_variables, gradients)]
        hidden = tf.nn.relu(tf.matmul(x_test, kernel) + bias)
        test_loss = tf.reduce_mean(tf.square(tf.matmul(hidden, kernel2) + bias2 - y_test))"""
for _decorator in ("", "@tf.function"):
    _mode = "graph" if _decorator else "eager"
    for _spelling, _apply in (
        ("positional", "inner.apply_gradients(zip(gradients, copy.trainable_variables))"),
        ("keyword", "inner.apply_gradients(grads_and_vars=zip(gradients, copy.trainable_weights))"),
    ):
        INVALID[f"maml-copy-apply-gradients-{_spelling}-{_mode}"] = _MAML.format(
            decorator=_decorator, inner=_COPY_APPLY.format(apply=_apply)
        )
    VALID[f"maml-fast-weights-{_mode}"] = _MAML.format(decorator=_decorator, inner=_FAST_WEIGHTS)

_PLAIN_LOOP = """\
import numpy as np
import tensorflow as tf

generator = tf.keras.Sequential([tf.keras.layers.Dense(4)])
discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])
g_opt, d_opt = tf.keras.optimizers.Adam(), tf.keras.optimizers.Adam()
z = np.random.rand(8, 2).astype("float32")
for step in range(3):
    with tf.GradientTape(persistent=True) as tape:
        fake = generator(z)
        d_loss = tf.reduce_mean(discriminator(fake))
        g_loss = -d_loss
        d_grads = tape.gradient(d_loss, discriminator.trainable_variables)
        d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables))
        g_grads = tape.gradient(g_loss, generator.trainable_variables)
        g_opt.apply_gradients(zip(g_grads, generator.trainable_variables))
    del tape
"""
VALID["apply-gradients-inside-the-tape-after-the-losses"] = _PLAIN_LOOP


# --- batch 16 (1054): a column picked out of the input, asked for and never used ----------
# ``x0 = tf.gather(inputs, [0], axis=1)`` (or ``inputs[:, 0:1]``) is a new tensor: the model
# ran on ``inputs``, so its output does not depend on ``x0`` (GC108 where ``x0`` was made).
# The correct twin splits first and builds the model's input from the columns it asks for.

_PINN = """\
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="tanh"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam()
inputs = tf.convert_to_tensor(np.random.rand(32, 2).astype("float32"))


{decorator}
def step(inputs):
    with tf.GradientTape() as outer:
        with tf.GradientTape() as tape:
{body}
        du_dx = tape.gradient(u, x0)
        loss = tf.reduce_mean(tf.square(du_dx - 1.0)) + tf.reduce_mean(tf.square(u))
    grads = outer.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


step(inputs)
"""
_PICKED = """\
            tape.watch(inputs)
            u = model(inputs)
            x0 = {pick}  # expect: GC108"""
_SPLIT = """\
            x0 = {pick}
            x1 = inputs[:, 1:2]
            tape.watch(x0)
            u = model(tf.concat([x0, x1], axis=1))"""
for _decorator in ("", "@tf.function"):
    _mode = "graph" if _decorator else "eager"
    for _spelling, _pick in (("gather", "tf.gather(inputs, [0], axis=1)"), ("slice", "inputs[:, 0:1]")):
        INVALID[f"picked-column-{_spelling}-{_mode}"] = _PINN.format(
            decorator=_decorator, body=_PICKED.format(pick=_pick)
        )
        VALID[f"split-column-{_spelling}-{_mode}"] = _PINN.format(decorator=_decorator, body=_SPLIT.format(pick=_pick))


# --- batch 16 (1058): the penalty's interpolate, watched, while the critic scores another --
# The batch comes from NumPy's ``Generator`` (``rng.integers``): host data, nothing unseen, so
# the whole target is known. ``averaged_samples`` is made on the tape and never consumed:
# GC108 where it was made (the trace engine's line). Scoring that very tensor trains it.

_GP = """\
import numpy as np
import tensorflow as tf

critic = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.RMSprop()
{rng}
data = np.random.rand(64, 4).astype("float32")


def interpolate(real, fake):
    alpha = tf.random.uniform((tf.shape(real)[0], 1))
    return alpha * real + (1 - alpha) * fake


for step in range(2):
    real = data[{pick}]
    fake = tf.random.normal((16, 4))
    with tf.GradientTape() as tape:
        with tf.GradientTape() as gp_tape:
            averaged = interpolate(real, fake){mark}
            gp_tape.watch(averaged)
            scored = critic({scored})
        gradients = gp_tape.gradient(scored, averaged)
        penalty = tf.reduce_mean(tf.square(tf.norm(gradients, axis=1) - 1.0))
        loss = tf.reduce_mean(critic(fake)) - tf.reduce_mean(critic(real)) + 10.0 * penalty
    grads = tape.gradient(loss, critic.trainable_variables)
    optimizer.apply_gradients(zip(grads, critic.trainable_variables))
"""
for _name, _rng, _pick in (
    ("generator", "rng = np.random.default_rng(0)", "rng.integers(0, 64, 16)"),
    ("legacy", "rng = np.random.RandomState(0)", "rng.randint(0, 64, 16)"),
):
    INVALID[f"penalty-other-interpolate-{_name}"] = _GP.format(
        rng=_rng, pick=_pick, mark="  # expect: GC108", scored="interpolate(real, fake)"
    )
    VALID[f"penalty-same-interpolate-{_name}"] = _GP.format(rng=_rng, pick=_pick, mark="", scored="averaged")

# --- 577, 272: what an update or a state write carries, read back under the tape ----------
# A learning rate computed from a variable reaches the model only through the optimizer's
# update (an assignment): meta-SGD's ``log_lr`` gets no gradient (GC113 at the update). The
# encoder's final state written into a stateful decoder's ``states`` and read by its next
# call: GC113 at the write. Passing the state as ``initial_state`` trains the encoder.

_META_LR = """\
import numpy as np
import tensorflow as tf
import keras

log_lr = tf.Variable(np.log(0.05), dtype=tf.float32)
inner = keras.optimizers.SGD(learning_rate={rate})
outer = keras.optimizers.Adam(1e-3)
model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(8, activation="tanh"), keras.layers.Dense(1)])
inner.build(model.trainable_variables)
x = np.random.rand(10, 1).astype("float32")
with tf.GradientTape() as outer_tape:
    with tf.GradientTape() as inner_tape:
        support = tf.reduce_mean(tf.square(model(x) - x))
    grads = inner_tape.gradient(support, model.trainable_variables)
{update}
    query = tf.reduce_mean(tf.square(model(x) - x))
meta = outer_tape.gradient(query, [log_lr] + model.trainable_variables)
"""
_FAST = """\
    adapted = [w - tf.exp(log_lr) * g for w, g in zip(model.trainable_variables, grads)]
    query_extra = tf.add_n([tf.reduce_sum(a) for a in adapted])"""
INVALID["meta-lr-schedule-through-apply-gradients"] = _META_LR.format(
    rate="lambda: tf.exp(log_lr)",
    update="    inner.apply_gradients(zip(grads, model.trainable_variables))  # expect: GC113",
)
VALID["meta-lr-fast-weights"] = _META_LR.format(rate="0.05", update=_FAST).replace(
    "query = tf.reduce_mean(tf.square(model(x) - x))", "query = tf.reduce_mean(tf.square(model(x) - x)) + query_extra"
)

_STATEFUL = """\
import numpy as np
import tensorflow as tf
import keras
from keras import layers

enc_in = keras.Input((6,))
_, h, c = layers.LSTM(8, return_state=True)(layers.Embedding(20, 4)(enc_in))
encoder = keras.Model(enc_in, [h, c])
dec_in = keras.Input(batch_shape=(4, 5))
{decoder}
optimizer = keras.optimizers.Adam()
variables = encoder.trainable_variables + decoder.trainable_variables
src = np.random.randint(1, 20, size=(4, 6))
tgt = tf.constant(np.random.randint(1, 20, size=(4, 5)))
with tf.GradientTape() as tape:
    h, c = encoder(src)
{feed}
    loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(tgt, logits, from_logits=True))
grads = tape.gradient(loss, variables)
optimizer.apply_gradients(zip(grads, variables))
"""
_STATEFUL_DECODER = """\
seq = layers.LSTM(8, return_sequences=True, stateful=True, name="decoder_lstm")(layers.Embedding(20, 4)(dec_in))
decoder = keras.Model(dec_in, layers.Dense(20)(seq))
decoder_lstm = decoder.get_layer("decoder_lstm")"""
_STATE_DECODER = """\
h_in, c_in = keras.Input(batch_shape=(4, 8)), keras.Input(batch_shape=(4, 8))
seq = layers.LSTM(8, return_sequences=True)(layers.Embedding(20, 4)(dec_in), initial_state=[h_in, c_in])
decoder = keras.Model([dec_in, h_in, c_in], layers.Dense(20)(seq))"""
INVALID["encoder-state-assigned-into-stateful-decoder"] = _STATEFUL.format(
    decoder=_STATEFUL_DECODER,
    feed="""\
    for state, value in zip(decoder_lstm.states, (h, c)):
        state.assign(value)  # expect: GC113
    logits = decoder(tgt)""",
)
VALID["encoder-state-passed-as-initial-state"] = _STATEFUL.format(
    decoder=_STATE_DECODER, feed="    logits = decoder([tgt, h, c])"
)


# --- the teacher in a ``train_step``: the file's one instance says what ``self`` holds ------
# ``train_step`` is read on its own, ``self`` standing for any instance; the file builds one,
# so ``self.teacher`` is the model that call passed. Its soft targets computed before the
# tape on purpose, while the step asks for ``self.trainable_variables``: the list is what to
# change (GC108 there, as the trace engine's ``source_list``). A helper loss method the step
# calls inside its tape is in the tape: a ``predict`` or an ``argmax`` on the teacher there
# starves it.

_TEACHER_STEP = """\
import numpy as np
{imports}


class Distiller({keras}.Model):
    def __init__(self, student, teacher):
        super().__init__()
        self.teacher = teacher
        self.student = student
        self.loss_fn = {keras}.losses.KLDivergence()

    def soft_loss(self, x, y_pred):
        teacher_pred = {helper}{mark_helper}
        return self.loss_fn(tf.nn.softmax(teacher_pred / 3.0), tf.nn.softmax(y_pred / 3.0))

    def train_step(self, data):
        x, y = data
        {before}
        with tf.GradientTape() as tape:
            y_pred = self.student(x, training=True)
            loss = {loss}
        variables = {sources}{mark_sources}
        grads = tape.gradient(loss, variables)
        self.optimizer.apply_gradients(zip(grads, variables))
        return {{"loss": loss}}


teacher = {keras}.Sequential([{keras}.layers.Dense(8, activation="relu"), {keras}.layers.Dense(3)])
student = {keras}.Sequential([{keras}.layers.Dense(3)])
distiller = Distiller({passed})
distiller.compile(optimizer="adam")
distiller.fit(np.zeros((16, 6), "float32"), np.zeros((16,), "int32"), epochs=1)
"""
_BEFORE = "teacher_soft = self.teacher(x, training=False)"
_SOFT_LOSS = "self.loss_fn(tf.nn.softmax(teacher_soft / 3.0), tf.nn.softmax(y_pred / 3.0))"
for _sp, _imports, _keras in (
    ("keras3", "import keras\nimport tensorflow as tf", "keras"),
    ("tf_keras", "import tensorflow as tf", "tf.keras"),
):
    for _passed in ("student, teacher", "student=student, teacher=teacher"):
        _kw = "kw" if "=" in _passed else "pos"

        def _step(
            before="",
            loss="self.soft_loss(x, y_pred)",
            helper="self.teacher(x)",
            sources="self.trainable_variables",
            mark_helper="",
            mark_sources="",
            _imports=_imports,
            _keras=_keras,
            _passed=_passed,
        ):
            return _TEACHER_STEP.format(
                imports=_imports,
                keras=_keras,
                passed=_passed,
                before=before,
                loss=loss,
                helper=helper,
                sources=sources,
                mark_helper=mark_helper,
                mark_sources=mark_sources,
            )

        INVALID[f"teacher-before-tape-self-variables-{_sp}-{_kw}"] = _step(
            before=_BEFORE, loss=_SOFT_LOSS, mark_sources="  # expect: GC108"
        )
        VALID[f"teacher-before-tape-student-variables-{_sp}-{_kw}"] = _step(
            before=_BEFORE, loss=_SOFT_LOSS, sources="self.student.trainable_variables"
        )
        VALID[f"teacher-in-helper-{_sp}-{_kw}"] = _step()
        INVALID[f"teacher-predict-in-helper-{_sp}-{_kw}"] = _step(
            helper="self.teacher.predict(x, verbose=0)", mark_helper="  # expect: GC105"
        )
        INVALID[f"teacher-argmax-in-helper-{_sp}-{_kw}"] = _step(
            helper="tf.cast(tf.argmax(self.teacher(x), axis=-1), tf.float32)", mark_helper="  # expect: GC101"
        )


# --- progG: a file class's own method named like a Keras one (a PINN's ``evaluate``) -------
# ``self.evaluate(x)`` on a ``tf.Module`` of the file that defines ``evaluate`` runs the file's
# method (here the network), not Keras's ``Model.evaluate`` (which returns NumPy: GC105).

_OWN_METHOD = """\
import numpy as np
import tensorflow as tf


class Net({base}):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(tf.random.normal([1, 8]))
        self.v = tf.Variable(tf.random.normal([8, 1]))

    def {name}(self, x):
        return tf.tanh(x @ self.w) @ self.v

    def step(self, x, opt):
        with tf.GradientTape() as tape:
            u = {use}
            loss = tf.reduce_mean(tf.square(u - 1.0))
        grads = tape.gradient(loss, self.trainable_variables)
        opt.apply_gradients(zip(grads, self.trainable_variables))


net = Net()
net.step(tf.constant(np.linspace(0, 1, 16, dtype="float32")[:, None]), tf.keras.optimizers.Adam())
"""
for _name in ("evaluate", "predict"):
    for _base in ("tf.Module", "tf.keras.Model"):
        _b = _base.split(".")[-1]
        VALID[f"own-method-{_name}-{_b}"] = _OWN_METHOD.format(base=_base, name=_name, use=f"self.{_name}(x)")
        INVALID[f"own-method-{_name}-numpy-{_b}"] = _OWN_METHOD.format(
            base=_base, name=_name, use=f"tf.constant(self.{_name}(x).numpy())  # expect: GC105"
        )


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in INVALID.items()])
def test_invalid_shape_is_found_exactly(source):
    assert expected(source), "an invalid shape must mark its culprits"
    assert found(source) == expected(source)


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in VALID.items()])
def test_valid_look_alike_is_silent(source):
    assert found(source) == []
