"""Issue 36 §2, round 5: the line a user changes, on code nobody here has seen (trace engine).
Each test is a mechanism (where a finding points, how a cause is named), with a correct
look-alike that stays silent, eagerly and in a ``tf.function``, under Keras 3 and tf_keras
where the shape exists there."""

from __future__ import annotations

import pytest

from tests.test_lines_unseen3 import MODES, TF_KERAS, _cli_found, _found, _source

# -- 1. a loss term left out: the loss line, not the term's ---------------------------------

AUX_TERM = """\
    import keras
    import numpy as np
    import tensorflow as tf

    keras.utils.set_random_seed(0)
    inputs = keras.Input((6,))
    h = keras.layers.Dense(8, activation="tanh", name="trunk")(inputs)
    main = keras.layers.Dense(1, name="main")(h)
    aux = keras.layers.Dense(3, name="aux")(h)
    model = keras.Model(inputs, [main, aux])
    opt = keras.optimizers.SGD(1e-3)
    x = tf.constant(np.random.default_rng(0).normal(size=(16, 6)).astype("float32"))
    y = tf.constant(np.random.default_rng(1).normal(size=(16, 1)).astype("float32"))


    def penalty(values):
        return tf.reduce_mean(tf.square(values))


    {decorator}
    def step(x, y):
        with tf.GradientTape() as tape:
            pred, pred_aux = model(x)
            main_loss = tf.reduce_mean(tf.square(pred - y))
            aux_loss = {aux}
            loss = {loss}
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))


    for _ in range(2):
        step(x, y)
    """
AUX = ["aux/bias", "aux/kernel"]


@MODES
@pytest.mark.parametrize("aux", ["tf.reduce_mean(tf.square(pred_aux))", "penalty(pred_aux)"], ids=["inline", "helper"])
def test_a_loss_term_left_out_of_the_loss_is_gc108_at_the_loss_line(run_script, decorator, aux):
    """``loss = main_loss`` after ``aux_loss = ...``: the auxiliary term (a reduced scalar)
    is computed and left out; the user adds it to the loss (line 26), not at its own line
    (25). The same with the term computed by a helper the line calls."""
    result = run_script(_source(AUX_TERM, decorator=decorator, aux=aux, loss="main_loss"))
    assert _found(result) == [("GC108", 26, AUX)]
    (finding,) = result.findings
    assert finding.fields["variant"] == "dropped-term"
    assert any("`aux_loss` is computed from them at line 25" in note for note in finding.notes)


@MODES
def test_a_scaled_loss_that_leaves_a_term_out_is_gc108_at_its_line(run_script, decorator):
    result = run_script(_source(AUX_TERM, decorator=decorator, aux="penalty(pred_aux)", loss="0.5 * main_loss"))
    assert _found(result) == [("GC108", 26, AUX)]


@MODES
def test_a_loss_that_sums_every_term_is_silent(run_script, decorator):
    source = _source(AUX_TERM, decorator=decorator, aux="penalty(pred_aux)", loss="main_loss + 0.1 * aux_loss")
    assert _found(run_script(source)) == []


@MODES
def test_an_unused_head_output_keeps_its_own_line(run_script, decorator):
    """Not a loss term: the head's output (a batch of predictions) is left at the model call
    itself (line 23), no term was computed from it."""
    source = _source(AUX_TERM, decorator=decorator, aux="0.0", loss="main_loss")
    assert _found(run_script(source)) == [("GC108", 23, AUX)]


LAYER_CHAIN = """\
    import keras
    import numpy as np
    import tensorflow as tf


    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.a = keras.layers.Dense(8, name="a")
            self.b = keras.layers.Dense(8, name="b")
            self.head = keras.layers.Dense(1, name="head")

        def call(self, x):
            x = self.a(x)
            {chain}
            return self.head(x)


    keras.utils.set_random_seed(0)
    model = Net()
    opt = keras.optimizers.SGD(1e-3)
    x = tf.constant(np.random.default_rng(0).normal(size=(16, 4)).astype("float32"))
    y = tf.constant(np.random.default_rng(1).normal(size=(16, 1)).astype("float32"))
    model(x)


    {decorator}
    def step(x, y):
        with tf.GradientTape() as tape:
            main_loss = tf.reduce_mean(tf.square(model(x) - y))
            reg = tf.add_n([tf.reduce_sum(tf.square(w)) for w in model.trainable_variables])
            loss = main_loss + 1e-4 * reg
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))


    step(x, y)
    """


@MODES
@pytest.mark.parametrize(
    "chain", ["x_b = self.b(x)", "spread = tf.reduce_mean(tf.square(self.b(x)))"], ids=["activation", "scalar"]
)
def test_a_layer_result_dropped_from_the_chain_keeps_the_producer_line(run_script, decorator, chain):
    """``drop_layer_result``: ``x_b = self.b(x)`` in ``call()``, and the head takes ``x``. The
    line to change is the dropped result's (15), though the loss the step builds (line 32)
    sums terms: an activation is no loss term. A scalar left in ``call()`` keeps its line too:
    ``call()`` returns the model's output, not a loss that should have summed it."""
    source = _source(LAYER_CHAIN, decorator=decorator, chain=chain)
    source = source.replace("for w in model.trainable_variables", "for w in model.a.trainable_variables")
    assert _found(run_script(source)) == [("GC108", 15, ["net/b/bias", "net/b/kernel"])]


DISTILLER = """\
    import keras
    import numpy as np


    class Distiller(keras.Model):
        def __init__(self, student, teacher):
            super().__init__()
            self.teacher = teacher
            self.student = student

        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, allow_empty=False):
            teacher_pred = self.teacher(x, training=False)
            student_loss = keras.ops.mean(keras.losses.sparse_categorical_crossentropy(y, y_pred, from_logits=True))
            distillation_loss = keras.losses.KLDivergence()(
                keras.ops.softmax(teacher_pred / 3.0, axis=1),
                keras.ops.softmax(y_pred / 3.0, axis=1),
            ) * 9.0
            loss = {loss}
            return loss

        def call(self, x):
            return self.student(x)


    keras.utils.set_random_seed(0)
    teacher = keras.Sequential([keras.Input((16,)), keras.layers.Dense(4, name="t")], name="teacher")
    student = keras.Sequential([keras.Input((16,)), keras.layers.Dense(4, name="s")], name="student")
    model = Distiller(student, teacher)
    model.compile(optimizer="sgd")
    x = np.random.default_rng(0).normal(size=(64, 16)).astype("float32")
    y = np.random.default_rng(1).integers(0, 4, (64,))
    model.fit(x, y, epochs=1, batch_size=32, verbose=0)
    """


@pytest.mark.parametrize("dropped", [True, False], ids=["dropped", "summed"])
def test_a_distillation_term_left_out_in_compute_loss_is_gc108_at_the_loss_line(run_script, dropped):
    """progF's ``distiller_compute_loss`` under ``drop_loss_term``: Keras 3 ``fit`` with a
    ``compute_loss`` override; the teacher's variables reach the loss only through the
    distillation term. The finding is at ``loss = ...`` (line 18), which ``return loss`` hands to
    fit, not at the term (line 14)."""
    loss = "0.1 * student_loss" if dropped else "0.1 * student_loss + 0.9 * distillation_loss"
    found = _found(run_script(_source(DISTILLER, loss=loss)))
    assert found == ([("GC108", 18, ["teacher/t/bias", "teacher/t/kernel"])] if dropped else [])


DISTILLER_TF_KERAS = """\
    import numpy as np
    import tensorflow as tf
    from tensorflow import keras


    class Distiller(keras.Model):
        def __init__(self, student, teacher):
            super().__init__()
            self.teacher = teacher
            self.student = student

        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                teacher_pred = self.teacher(x, training=False)
                y_pred = self.student(x, training=True)
                student_loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(y, y_pred, from_logits=True))
                distillation_loss = keras.losses.KLDivergence()(tf.nn.softmax(teacher_pred), tf.nn.softmax(y_pred))
                loss = {loss}
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            return {{"loss": loss}}


    tf.random.set_seed(0)
    teacher = keras.Sequential([keras.Input((16,)), keras.layers.Dense(4, name="t")], name="teacher")
    student = keras.Sequential([keras.Input((16,)), keras.layers.Dense(4, name="s")], name="student")
    model = Distiller(student, teacher)
    model.compile(optimizer="sgd")
    x = np.random.default_rng(0).normal(size=(64, 16)).astype("float32")
    y = np.random.default_rng(1).integers(0, 4, (64,))
    model.fit(x, y, epochs=1, batch_size=32, verbose=0)
    """


@pytest.mark.keras2
@TF_KERAS
@pytest.mark.parametrize("dropped", [True, False], ids=["dropped", "summed"])
def test_a_distillation_term_left_out_in_a_tf_keras_train_step(tmp_path, dropped):
    script = tmp_path / "distill.py"
    loss = "student_loss" if dropped else "student_loss + distillation_loss"
    script.write_text(_source(DISTILLER_TF_KERAS, loss=loss), encoding="utf-8")
    found, record = _cli_found(script, env={"TF_USE_LEGACY_KERAS": "1"})
    assert record["error"] is None, record["error"]
    assert found == ([("GC108", 19, ["t/bias", "t/kernel"])] if dropped else [])


# -- 2. a second derivative through relu: the activation's line ----------------------------

PINN = """\
    import keras
    import numpy as np
    import tensorflow as tf

    keras.utils.set_random_seed(0)
    hidden = [keras.layers.Dense(16, activation="{activation}") for _ in range(2)]
    model = keras.Sequential([keras.Input((1,)), *hidden, keras.layers.Dense(1)])
    k = tf.Variable(1.0, name="diffusivity")
    x_col = tf.random.uniform((32, 1))
    x_obs = tf.random.uniform((8, 1))
    u_obs = tf.sin(np.pi * x_obs)
    opt = keras.optimizers.Adam(1e-2)
    variables = model.trainable_variables + [k]


    {decorator}
    def step():
        with tf.GradientTape() as tape:
            with tf.GradientTape() as tape_xx:
                tape_xx.watch(x_col)
                with tf.GradientTape() as tape_x:
                    tape_x.watch(x_col)
                    u = model(x_col)
                u_x = tape_x.gradient(u, x_col)
            u_xx = tape_xx.gradient(u_x, x_col)
            residual = tf.reduce_mean(tf.square(k * u_xx + tf.sin(np.pi * x_col)))
            loss = residual + tf.reduce_mean(tf.square(model(x_obs) - u_obs))
        grads = tape.gradient(loss, variables)
        opt.apply_gradients(zip(grads, variables))


    for _ in range(2):
        step()
    """


@MODES
def test_a_relu_pinn_second_derivative_is_gc201_at_the_activation(run_script, decorator):
    """Issue 36 §2 class 4 (case 490): ``u_xx`` of a relu network is zero, so the coefficient
    ``k`` multiplying it gets an all-zero gradient. Both the inner request (``x_col``, line 25)
    and the outer one (``diffusivity``, line 28, through the zero factor ``u_xx`` the inner
    request returned) point at the layers' ``activation="relu"`` (line 6), not at the inner
    ``tape.gradient`` that made the ReluGrad ops (line 24)."""
    result = run_script(_source(PINN, decorator=decorator, activation="relu"))
    found = _found(result)
    assert sorted(found) == [("GC201", 6, ["diffusivity"]), ("GC201", 6, ["x_col"])]
    outer = next(f for f in result.findings if f.variables == ["diffusivity"])
    assert "computed earlier (line 25)" in outer.message and "relu" in outer.message


@MODES
def test_a_smooth_pinn_is_silent(run_script, decorator):
    assert _found(run_script(_source(PINN, decorator=decorator, activation="tanh"))) == []


@pytest.mark.keras2
@TF_KERAS
@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_a_relu_pinn_under_tf_keras(tmp_path, activation):
    script = tmp_path / "pinn.py"
    source = _source(PINN, decorator="@tf.function", activation=activation)
    source = source.replace("import keras\n", "from tensorflow import keras\n").replace(
        "keras.utils.set_random_seed(0)", "tf.random.set_seed(0)"
    )
    script.write_text(source, encoding="utf-8")
    found, record = _cli_found(script, env={"TF_USE_LEGACY_KERAS": "1"})
    assert record["error"] is None, record["error"]
    expected = [("GC201", 6, ["diffusivity"]), ("GC201", 6, ["x_col"])] if activation == "relu" else []
    assert sorted(found) == expected


# -- 3. a request of a deliberately stopped target: the program's own check ----------------

PROBE = """\
    import keras
    import numpy as np
    import tensorflow as tf

    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, name="d")], name="net")
    opt = keras.optimizers.SGD(1e-3)
    x = tf.constant(np.random.default_rng(0).normal(size=(8, 4)).astype("float32"))
    y = tf.constant(np.random.default_rng(1).normal(size=(8, 1)).astype("float32"))


    {decorator}
    def step(x, y):
        with tf.GradientTape(persistent=True) as tape:
            pred = model(x)
            target = tf.stop_gradient(pred)
            loss = {loss}
        {probe}
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))


    for _ in range(2):
        step(x, y)
    """
NET = ["net/d/bias", "net/d/kernel"]


@MODES
@pytest.mark.parametrize(
    "probe",
    [
        "probe = tape.gradient(target, model.trainable_variables)\n    assert all(g is None for g in probe)",
        "assert tape.gradient(tf.stop_gradient(pred), model.trainable_variables)[0] is None",
    ],
    ids=["bound", "inline"],
)
def test_a_check_that_a_stopped_target_has_no_gradient_is_silent(run_script, decorator, probe):
    """Issue 36 §2 class 6: the program asks for the gradient of its own stopped target to
    check that none flows (its Nones are what it asserts). Not GC104 at the stop (line 16):
    the training request (line 19) is healthy."""
    source = _source(PROBE, decorator=decorator, loss="tf.reduce_mean(tf.square(pred - y))", probe=probe)
    assert _found(run_script(source)) == []


@MODES
def test_a_loss_stopped_by_mistake_and_applied_stays_gc104(run_script, decorator):
    """The look-alike: the training loss itself is a stop's output, and its gradients go to
    the update: GC104 at the stop (line 17)."""
    source = _source(
        PROBE, decorator=decorator, loss="tf.stop_gradient(tf.reduce_mean(tf.square(pred - y)))", probe="pass"
    )
    assert _found(run_script(source)) == [("GC104", 17, NET)]


PROBE_FIT = """\
    import numpy as np
    import tensorflow as tf
    {keras_import}


    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.d = keras.layers.Dense(1, name="d")

        def call(self, x):
            return self.d(x)

        def train_step(self, data):
            x, y = data
            with tf.GradientTape(persistent=True) as tape:
                pred = self(x, training=True)
                target = tf.stop_gradient(pred)
                loss = tf.reduce_mean(tf.square(pred - y))
            probe = tape.gradient(target, self.trainable_variables)
            tf.debugging.assert_equal(len([g for g in probe if g is None]), len(probe))
            grads = tape.gradient({asked}, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            return {{"loss": loss}}


    model = Net()
    model.compile(optimizer="sgd")
    x = np.random.default_rng(0).normal(size=(16, 4)).astype("float32")
    y = np.random.default_rng(1).normal(size=(16, 1)).astype("float32")
    model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    """


@pytest.mark.parametrize("asked", ["loss", "target"])
def test_a_probe_in_a_fit_train_step(run_script, asked):
    """Keras 3 ``fit``: the probe (line 20) is silent; the training request asking for the
    stopped target instead of the loss (line 22, applied) is GC104 at the stop (line 18)."""
    source = _source(PROBE_FIT, keras_import="import keras", asked=asked)
    expected = [] if asked == "loss" else [("GC104", 18, ["net/d/bias", "net/d/kernel"])]
    assert _found(run_script(source)) == expected


@pytest.mark.keras2
@TF_KERAS
@pytest.mark.parametrize("asked", ["loss", "target"])
def test_a_probe_in_a_tf_keras_train_step(tmp_path, asked):
    script = tmp_path / "probe.py"
    script.write_text(_source(PROBE_FIT, keras_import="from tensorflow import keras", asked=asked), encoding="utf-8")
    found, record = _cli_found(script, env={"TF_USE_LEGACY_KERAS": "1"})
    assert record["error"] is None, record["error"]
    assert found == ([] if asked == "loss" else [("GC104", 18, ["net/d/bias", "net/d/kernel"])])


# -- 4. a non-finite or zero gradient inside an eagerly called tf.function -----------------

HELPER = """\
    import tensorflow as tf


    @tf.function
    def magnitude(v):
        v = tf.square(v)
        v = {op}
        return tf.reduce_sum(v, axis=-1)


    x = tf.Variable([[1.0, 0.0]], name="x")


    {decorator}
    def step():
        with tf.GradientTape() as tape:
            z = magnitude(x)
            loss = tf.nn.l2_loss(z)
        return tape.gradient(loss, [x])


    for _ in range(2):
        step()
    """


@MODES
def test_a_nan_gradient_inside_a_tf_function_helper_is_gc202_at_its_op(run_script, decorator):
    """Case 1059: ``tf.sqrt(tf.square(v))`` at an exact 0 in a ``tf.function`` helper. Called
    eagerly, the helper is one op of the record; the finding is at the sqrt inside it (line 7),
    not at the call (line 17). Traced into the step, the helper's ops are the step's."""
    result = run_script(_source(HELPER, decorator=decorator, op="tf.sqrt(v)"))
    assert _found(result) == [("GC202", 7, ["x"])]
    assert "sqrt" in result.findings[0].message


@MODES
def test_a_zero_gradient_inside_a_tf_function_helper_is_gc201_at_its_op(run_script, decorator):
    """The zero twin: ``tf.sign`` (a step function) inside the helper, at line 7."""
    result = run_script(_source(HELPER, decorator=decorator, op="tf.sign(v)"))
    assert _found(result) == [("GC201", 7, ["x"])]


@MODES
def test_a_safe_tf_function_helper_is_silent(run_script, decorator):
    assert _found(run_script(_source(HELPER, decorator=decorator, op="tf.sqrt(v + 1e-12)"))) == []


@pytest.mark.keras2
@TF_KERAS
def test_a_nan_gradient_inside_a_tf_function_helper_under_tf_keras(tmp_path):
    """The same with the case's tf_keras optimizer applying the NaN (``TF_USE_LEGACY_KERAS``)."""
    source = _source(HELPER, decorator="", op="tf.sqrt(v)").replace(
        "return tape.gradient(loss, [x])",
        "grads = tape.gradient(loss, [x])\n    tf.keras.optimizers.SGD(0.1).apply_gradients(zip(grads, [x]))",
    )
    script = tmp_path / "helper.py"
    script.write_text(source, encoding="utf-8")
    found, record = _cli_found(script, env={"TF_USE_LEGACY_KERAS": "1"})
    assert record["error"] is None, record["error"]
    assert found == [("GC202", 7, ["x"])]


# -- 5. an optimizer's update into a model's copy, inside the outer tape (MAML) ------------

MAML = """\
    import numpy as np
    import tensorflow as tf
    {keras_import}

    tf.random.set_seed(0)
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(8, activation="tanh"), keras.layers.Dense(1)])
    copy = keras.Sequential([keras.Input((1,)), keras.layers.Dense(8, activation="tanh"), keras.layers.Dense(1)])
    inner_opt = {optimizer}
    meta_opt = keras.optimizers.SGD(1e-3)
    x = tf.constant(np.linspace(-1, 1, 16, dtype="float32")[:, None])
    y = tf.sin(x)


    def forward(weights, x):
        h = tf.tanh(x @ weights[0] + weights[1])
        return h @ weights[2] + weights[3]


    for _ in range(2):
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                inner_loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = inner.gradient(inner_loss, model.trainable_variables)
            {adapt}
        meta_grads = outer.gradient(meta_loss, model.trainable_variables)
        meta_opt.apply_gradients(zip(meta_grads, model.trainable_variables))
    """
COPY_UPDATE = (
    "for c, w in zip(copy.trainable_variables, model.trainable_variables):\n"
    "            c.assign(w)\n"
    "        inner_opt.apply_gradients(zip(grads, copy.trainable_variables))\n"
    "        meta_loss = tf.reduce_mean(tf.square(copy(x) - y))"
)
FAST_WEIGHTS = (
    "fast = [w - 0.01 * g for w, g in zip(model.trainable_variables, grads)]\n"
    "        meta_loss = tf.reduce_mean(tf.square(forward(fast, x) - y))"
)


@pytest.mark.parametrize("adapt", [COPY_UPDATE, FAST_WEIGHTS], ids=["copy-updated", "fast-weights"])
def test_an_inner_optimizer_update_into_a_copy_is_gc113_at_the_update(run_script, adapt):
    """Keras 3: the inner step is ``inner_opt.apply_gradients`` on a copy (its ``assign_sub``)
    after the copy was assigned the weights: both writes cut the meta-gradient, and the update
    (line 26), which consumes the inner gradients, is the last; fast weights are silent."""
    source = _source(MAML, keras_import="import keras", optimizer="keras.optimizers.SGD(0.01)", adapt=adapt)
    found = _found(run_script(source))
    assert [(code, line) for code, line, _ in found] == ([("GC113", 26)] if adapt == COPY_UPDATE else [])


@pytest.mark.keras2
@TF_KERAS
@pytest.mark.parametrize("adapt", [COPY_UPDATE, FAST_WEIGHTS], ids=["copy-updated", "fast-weights"])
@pytest.mark.parametrize("optimizer", ["keras.optimizers.legacy.SGD(0.01)", "keras.optimizers.Adam(0.01)"])
def test_a_fused_optimizer_update_into_a_copy_under_tf_keras(tmp_path, adapt, optimizer):
    """Case 1060: tf_keras's optimizers update with fused kernels (``ResourceApplyGradientDescent``,
    ``ResourceApplyAdam``), written into the copy's variable from the gradient as an
    ``assign_sub`` is: GC113 at the update (line 26), as under Keras 3, not a host escape or
    the copy's ``assign`` before it."""
    script = tmp_path / "maml.py"
    source = _source(MAML, keras_import="from tensorflow import keras", optimizer=optimizer, adapt=adapt)
    script.write_text(source, encoding="utf-8")
    found, record = _cli_found(script, env={"TF_USE_LEGACY_KERAS": "1"})
    assert record["error"] is None, record["error"]
    assert [(code, line) for code, line, _ in found] == ([("GC113", 26)] if adapt == COPY_UPDATE else [])


APPLY_IN_TAPE = """\
    import numpy as np
    import tensorflow as tf
    from tensorflow import keras

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    opt = {optimizer}
    x = tf.constant(np.random.default_rng(0).normal(size=(8, 4)).astype("float32"))
    y = tf.constant(np.random.default_rng(1).normal(size=(8, 1)).astype("float32"))
    for _ in range(2):
        with tf.GradientTape(persistent=True) as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            after = tf.reduce_mean(tf.square(model(x) - y))
        del tape
    """


@pytest.mark.keras2
@TF_KERAS
@pytest.mark.parametrize("optimizer", ["keras.optimizers.legacy.SGD(0.01)", "keras.optimizers.Adam(0.01)"])
def test_an_update_inside_a_persistent_tape_is_silent_under_tf_keras(tmp_path, optimizer):
    """The look-alike: the update runs while a persistent tape records, and a forward pass
    reads the updated weights after it; no request differentiates through the write."""
    script = tmp_path / "in_tape.py"
    script.write_text(_source(APPLY_IN_TAPE, optimizer=optimizer), encoding="utf-8")
    found, record = _cli_found(script, env={"TF_USE_LEGACY_KERAS": "1"})
    assert record["error"] is None, record["error"]
    assert found == []


# -- 6. tapes opened together, one loss built from the wrong output ------------------------

GAN = """\
    import numpy as np
    import tensorflow as tf
    {keras_import}

    tf.random.set_seed(0)
    generator = keras.Sequential([keras.Input((4,)), keras.layers.Dense(6, name="g")], name="generator")
    discriminator = keras.Sequential([keras.Input((6,)), keras.layers.Dense(1, name="d")], name="discriminator")
    g_opt = keras.optimizers.SGD(1e-3)
    d_opt = keras.optimizers.SGD(1e-3)
    images = tf.constant(np.random.default_rng(0).normal(size=(8, 6)).astype("float32"))


    {decorator}
    def step(noise):
        with {tapes}:
            fake = generator(noise, training=True)
            real_output = discriminator(images, training=True)
            fake_output = discriminator(fake, training=True)
            gen_loss = -tf.reduce_mean({scored})
            divergence = tf.reduce_mean(tf.nn.relu(1 + real_output) + tf.nn.relu(1 - fake_output))
            disc_loss = divergence
        g_grads = gen_tape.gradient(gen_loss, generator.trainable_variables)
        d_grads = disc_tape.gradient(disc_loss, discriminator.trainable_variables)
        g_opt.apply_gradients(zip(g_grads, generator.trainable_variables))
        d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables))


    for _ in range(2):
        step(tf.random.normal((8, 4)))
    """
TOGETHER = "tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape"
GENERATOR_VARS = ["generator/g/bias", "generator/g/kernel"]


@MODES
@pytest.mark.parametrize("scored", ["real_output", "fake_output"], ids=["real", "fake"])
def test_a_generator_loss_from_the_real_scores_is_gc108_at_the_loss(run_script, decorator, scored):
    """Case 479: with both tapes opened in one ``with``, each trains one model; the generator
    ran on its tape, its output went only into the discriminator's loss (line 20, bound again
    at 21), and ``gen_loss`` scores the real images (line 19). The request is right, the loss
    is not: GC108 at ``gen_loss = ...``, not at the other loss's term. Scoring the fakes is
    silent."""
    source = _source(GAN, keras_import="import keras", decorator=decorator, tapes=TOGETHER, scored=scored)
    result = run_script(source)
    assert _found(result) == ([("GC108", 19, GENERATOR_VARS)] if scored == "real_output" else [])
    if result.findings:
        assert result.findings[0].fields["variant"] == "other-loss"


@MODES
def test_a_loss_from_the_wrong_output_under_one_tape_each_keeps_the_dead_end(run_script, decorator):
    """The look-alike without tapes opened together: one tape records for the generator's
    request only, so no "each tape trains one model" reading holds; the dead end stays (the
    discriminator's term at line 20)."""
    source = _source(
        GAN,
        keras_import="import keras",
        decorator=decorator,
        tapes="tf.GradientTape(persistent=True) as gen_tape",
        scored="real_output",
    ).replace("disc_tape.gradient", "gen_tape.gradient")
    assert [(code, line) for code, line, _ in _found(run_script(source))] == [("GC108", 20)]


@pytest.mark.keras2
@TF_KERAS
@pytest.mark.parametrize("scored", ["real_output", "fake_output"], ids=["real", "fake"])
def test_a_generator_loss_from_the_real_scores_under_tf_keras(tmp_path, scored):
    script = tmp_path / "gan.py"
    source = _source(
        GAN, keras_import="from tensorflow import keras", decorator="@tf.function", tapes=TOGETHER, scored=scored
    )
    script.write_text(source, encoding="utf-8")
    found, record = _cli_found(script, env={"TF_USE_LEGACY_KERAS": "1"})
    assert record["error"] is None, record["error"]
    assert found == ([("GC108", 19, ["g/bias", "g/kernel"])] if scored == "real_output" else [])


# -- 7. an inner gradient taken after the outer tape closed: every variable at that line ---

FORCES = """\
    import numpy as np
    import tensorflow as tf
    {keras_import}

    tf.random.set_seed(0)
    potential = keras.Sequential(
        [keras.Input((6,)), keras.layers.Dense(8, activation="tanh", name="h"), keras.layers.Dense(1, use_bias=False, name="e")],
        name="potential",
    )
    opt = keras.optimizers.Adam(1e-3)
    x = tf.constant(np.random.default_rng(0).normal(size=(8, 6)).astype("float32"))
    f_true = -2.0 * x


    {decorator}
    def step(x):
        with tf.GradientTape() as tape:
            with tf.GradientTape() as tape_x:
                tape_x.watch(x)
                energy = potential(x, training=True)
            {inside}
        {outside}
        grads = tape.gradient(loss, potential.trainable_variables)
        opt.apply_gradients(zip(grads, potential.trainable_variables))


    for _ in range(2):
        step(x)
    """
FORCE = "forces = -tape_x.gradient(energy, x)\n{indent}loss = tf.reduce_mean(tf.square(forces - f_true))"


@MODES
@pytest.mark.parametrize("after", [True, False], ids=["after-the-tape", "inside"])
def test_an_inner_gradient_after_the_outer_tape_is_gc109_for_every_layer(run_script, decorator, after):
    """Case 560: the forces (``-tape_x.gradient(energy, x)``, line 22) are taken after the
    outer tape closed. The output layer's kernel enters that backward pass directly, the hidden
    layer through its TanhGrad; both are cut where the stretch off the tape began (line 22), not
    the hidden one a GC111 without an op at the outer request. Inside the tape it is silent."""
    source = _source(
        FORCES,
        keras_import="import keras",
        decorator=decorator,
        inside="pass" if after else FORCE.format(indent=" " * 8),
        outside=FORCE.format(indent=" " * 4) if after else "pass",
    )
    found = _found(run_script(source))
    expected = ["potential/e/kernel", "potential/h/bias", "potential/h/kernel"]
    assert found == ([("GC109", 22, expected)] if after else [])


@pytest.mark.keras2
@TF_KERAS
def test_an_inner_gradient_after_the_outer_tape_under_tf_keras(tmp_path):
    script = tmp_path / "forces.py"
    source = _source(
        FORCES,
        keras_import="from tensorflow import keras",
        decorator="@tf.function",
        inside="pass",
        outside=FORCE.format(indent=" " * 4),
    )
    script.write_text(source, encoding="utf-8")
    found, record = _cli_found(script, env={"TF_USE_LEGACY_KERAS": "1"})
    assert record["error"] is None, record["error"]
    assert found == [("GC109", 22, ["e/kernel", "h/bias", "h/kernel"])]


DEAD_HEAD_OVER_EMBEDDING = """\
    import keras
    import numpy as np
    import tensorflow as tf

    keras.utils.set_random_seed(0)
    embedding = keras.layers.Embedding(10, 4, name="emb")
    head = keras.layers.Dense(1, activation="relu", bias_initializer=keras.initializers.Constant(-100.0), name="head")
    ids = tf.constant(np.random.default_rng(0).integers(0, 10, (8, 3)))


    {decorator}
    def step(ids):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(head(tf.reduce_sum(embedding(ids), axis=1)))
        return tape.gradient(loss, embedding.trainable_variables + head.trainable_variables)


    step(ids)
    """


@MODES
def test_a_zero_gradient_given_as_indexed_slices_is_still_reported(run_script, decorator):
    """Case 586's shape: an embedding's gradient is IndexedSlices; remembering the request's
    zero gradients for a later one (``frontier.earlier``) must not cost this request's own
    finding (GC201 at the dead relu head, line 7)."""
    found = _found(run_script(_source(DEAD_HEAD_OVER_EMBEDDING, decorator=decorator)))
    assert [(code, line) for code, line, _ in found] == [("GC201", 7)]
