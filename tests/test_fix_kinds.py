"""Each patch kind on small sources: libcst only, no TensorFlow, nothing run.

A finding is built the way the engines build them (the culprit's span, ``call``, the
template fields), the kind proposes its candidates, and the patched source must be
exactly the expected one: the culprit rewritten in the user's own names, everything else
(comments, blank lines, formatting) byte for byte as it was.
"""

from __future__ import annotations

import textwrap

import pytest

from gradcheck.findings import Finding
from gradcheck.fix import registry
from gradcheck.fix.numpy_tf import Translator
from gradcheck.fix.patch import apply, line_map, replacements, unified_diff
from gradcheck.fix.source import Source


def finding_at(source: str, snippet: str, code: str, nth: int = 1, **fields) -> Finding:
    """A finding whose span is the ``nth`` occurrence of ``snippet`` (on one line)."""
    seen = 0
    for number, line in enumerate(source.splitlines(), start=1):
        start = line.find(snippet)
        while start >= 0:
            seen += 1
            if seen == nth:
                f = Finding(
                    code=code,
                    message="m",
                    path="train.py",
                    line=number,
                    column=start + 1,
                    end_line=number,
                    end_column=start + len(snippet) + 1,
                    variables=fields.pop("variables", ["dense/kernel"]),
                )
                f.fields = dict(fields)
                return f
            start = line.find(snippet, start + 1)
    raise AssertionError(f"{snippet!r} not in the source")


def patched(source: str, finding: Finding, which: int = 0) -> str:
    src = Source(source, "train.py")
    found = registry.candidates(src, finding)
    assert found, "no candidate"
    return apply(src, [found[which]])


def no_patch(source: str, finding: Finding) -> bool:
    return registry.candidates(Source(source, "train.py"), finding) == []


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# -- GC101 ----------------------------------------------------------------------------------
DQN = dedent(
    """
    import keras
    import tensorflow as tf


    class QNetwork(keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)  # Q-values
                metric = tf.math.argmin(y_pred, axis=1)
                loss = keras.losses.mean_squared_error(y, metric)
            return {"loss": loss}
    """
)


def test_gc101_q_learning_selects_the_chosen_q_value_with_gather():
    finding = finding_at(DQN, "tf.math.argmin(y_pred, axis=1)", "GC101", arg="y_pred")
    assert patched(DQN, finding) == DQN.replace(
        "metric = tf.math.argmin(y_pred, axis=1)",
        "metric = tf.gather(y_pred, tf.math.argmin(y_pred, axis=1), batch_dims=1)",
    )


def test_gc101_q_learning_uses_the_steps_own_actions():
    source = DQN.replace("x, y = data", "(x, actions), y = data")
    finding = finding_at(source, "tf.math.argmin(y_pred, axis=1)", "GC101")
    assert "metric = tf.gather(y_pred, actions, batch_dims=1)" in patched(source, finding)


def test_gc101_position_regression_gets_the_soft_argmax():
    source = dedent(
        """
        import tensorflow as tf


        def index_loss(y_true, y_pred):
            pred_idx = tf.cast(tf.argmax(y_pred, axis=-1), tf.float32)
            return tf.reduce_mean(tf.square(pred_idx - y_true))
        """
    )
    finding = finding_at(source, "tf.argmax(y_pred, axis=-1)", "GC101")
    soft = (
        "tf.reduce_sum(tf.nn.softmax(y_pred, axis=-1) * tf.cast(tf.range(tf.shape(y_pred)[-1]), y_pred.dtype), axis=-1)"
    )
    assert patched(source, finding) == source.replace("tf.argmax(y_pred, axis=-1)", soft)


def test_gc101_soft_argmin_negates_and_names_an_expression_once():
    source = dedent(
        """
        import tensorflow as tf


        def loss_fn(model, x, y):
            idx = tf.argmin(model(x), axis=1)
            return tf.reduce_mean(tf.square(tf.cast(idx, tf.float32) - y))
        """
    )
    out = patched(source, finding_at(source, "tf.argmin(model(x), axis=1)", "GC101"))
    assert "    scores = model(x)\n" in out
    assert "idx = tf.reduce_sum(tf.nn.softmax(-scores, axis=1) * " in out
    assert out.count("model(x)") == 1  # the model is still called once


def test_gc101_ids_for_a_lookup_and_the_default_batch_axis_get_no_patch():
    source = "import tensorflow as tf\n\ntokens = tf.argmax(logits, axis=-1)\nz = tf.argmax(q)\n"
    assert no_patch(source, finding_at(source, "tf.argmax(logits, axis=-1)", "GC101", variant="indices"))
    assert no_patch(source, finding_at(source, "tf.argmax(q)", "GC101"))


def test_gc101_keras_ops_file_without_tensorflow():
    source = "from keras import ops\n\n\ndef loss(y_true, y_pred):\n    return ops.mean(ops.argmax(y_pred, axis=-1) - y_true)\n"
    out = patched(source, finding_at(source, "ops.argmax(y_pred, axis=-1)", "GC101"))
    assert (
        "ops.sum(ops.softmax(y_pred, axis=-1) * ops.cast(ops.arange(ops.shape(y_pred)[-1]), y_pred.dtype), axis=-1)"
        in out
    )


# -- GC102 / GC103 ----------------------------------------------------------------------------
def test_gc102_straight_through_keeps_the_users_call_and_precedence():
    source = "import tensorflow as tf\n\nloss = tf.reduce_mean(tf.abs(y - 2.0 * tf.round(pred)))  # rounded\n"
    out = patched(source, finding_at(source, "tf.round(pred)", "GC102", fn="round"))
    assert out == source.replace("tf.round(pred)", "(pred + tf.stop_gradient(tf.round(pred) - pred))")


def test_gc102_a_random_argument_is_drawn_once():
    source = dedent(
        """
        import tensorflow as tf


        def sample(x):
            return tf.floor(x + tf.random.uniform(tf.shape(x), 0, 1))
        """
    )
    out = patched(source, finding_at(source, "tf.floor(x + tf.random.uniform(tf.shape(x), 0, 1))", "GC102"))
    assert out == source.replace(
        "    return tf.floor(x + tf.random.uniform(tf.shape(x), 0, 1))\n",
        "    unfloored = x + tf.random.uniform(tf.shape(x), 0, 1)\n"
        "    return unfloored + tf.stop_gradient(tf.floor(unfloored) - unfloored)\n",
    )


def test_gc102_keras_backend_round():
    source = "from keras import backend as K\n\n\ndef loss(t, p):\n    return K.mean(K.abs(t - K.round(p)))\n"
    out = patched(source, finding_at(source, "K.round(p)", "GC102"))
    assert "K.abs(t - (p + K.stop_gradient(K.round(p) - p)))" in out


def test_gc103_int_cast_inside_a_float_cast():
    source = "import tensorflow as tf\n\ndecision = tf.minimum(tf.cast(tf.cast(score, tf.int32), tf.float32), 1.0)\n"
    out = patched(source, finding_at(source, "tf.cast(score, tf.int32)", "GC103"))
    assert out == (
        "import tensorflow as tf\n\ndecision = tf.minimum(score + tf.stop_gradient("
        "tf.cast(tf.cast(score, tf.int32), tf.float32) - score), 1.0)\n"
    )


def test_gc103_comparison_estimates_through_the_operand_that_is_not_random():
    source = 'from keras import ops\nimport keras\n\nout = x1 * ops.cast(keras.random.uniform(shape=ops.shape(x2)) <= x2, "float32")\n'
    out = patched(
        source, finding_at(source, 'ops.cast(keras.random.uniform(shape=ops.shape(x2)) <= x2, "float32")', "GC103")
    )
    assert (
        'x1 * (x2 + ops.stop_gradient(ops.cast(keras.random.uniform(shape=ops.shape(x2)) <= x2, "float32") - x2))'
        in out
    )


def test_gc103_int_kept_as_int_and_ids_get_no_patch():
    source = "import tensorflow as tf\n\nids = tf.cast(scores, tf.int32)\n"
    assert no_patch(source, finding_at(source, "tf.cast(scores, tf.int32)", "GC103"))
    assert no_patch(source, finding_at(source, "tf.cast(scores, tf.int32)", "GC103", variant="indices"))


# -- GC104 ----------------------------------------------------------------------------------
def test_gc104_stop_gradient_moves_to_the_target_only_branch():
    source = "import tensorflow as tf\n\nerror = tf.stop_gradient(target_q - q_taken)\n"
    out = patched(source, finding_at(source, "tf.stop_gradient(target_q - q_taken)", "GC104"))
    assert out == "import tensorflow as tf\n\nerror = tf.stop_gradient(target_q) - q_taken\n"


def test_gc104_lambda_freeze_layer_loses_its_stop():
    source = 'x = layers.Lambda(lambda t: tf.stop_gradient(t), name="freeze")(x)\n'
    source = "import tensorflow as tf\nfrom keras import layers\n\n" + source
    out = patched(source, finding_at(source, "tf.stop_gradient(t)", "GC104"))
    assert 'x = layers.Lambda(lambda t: t, name="freeze")(x)' in out


# -- GC105 ----------------------------------------------------------------------------------
def test_gc105_numpy_and_a_numpy_helper_become_tensorflow():
    source = dedent(
        """
        import numpy as np
        import tensorflow as tf


        def summary(samples):
            centred = samples - samples.mean()
            return np.array([samples.mean(), np.sqrt((centred ** 2).mean())], dtype="float32")


        with tf.GradientTape() as tape:
            generated = generator(noise)
            stats = summary(generated.numpy().ravel())
            loss = critic(stats[None, :])
        """
    )
    out = patched(source, finding_at(source, "generated.numpy", "GC105"))
    assert "    centred = samples - tf.reduce_mean(samples)\n" in out
    assert (
        '    return tf.cast(tf.stack([tf.reduce_mean(samples), tf.sqrt(tf.reduce_mean(centred ** 2))]), "float32")\n'
        in out
    )
    assert "    stats = summary(tf.reshape(generated, [-1]))\n" in out


def test_gc105_predict_becomes_a_call_and_later_numpy_on_its_result_too():
    source = dedent(
        """
        import numpy as np
        import tensorflow as tf

        with tf.GradientTape() as tape:
            for t in range(3):
                probs = actor.predict(state, verbose=0)
                action = rng.choice(2, p=np.squeeze(probs))
                history.append(np.log(probs[0, action]))
            loss = -tf.add_n(history)
        """
    )
    out = patched(source, finding_at(source, "actor.predict(state, verbose=0)", "GC105"))
    assert "probs = actor(state, training=False)" in out
    assert "history.append(tf.math.log(probs[0, action]))" in out
    assert "rng.choice(2, p=np.squeeze(probs))" in out  # sampling stays on the host


def test_gc105_float_and_constant_wrapper():
    source = dedent(
        """
        import numpy as np
        import tensorflow as tf


        def loss_fn(pred, target):
            return np.mean(np.abs(pred - target)) + 0.1 * np.mean(pred > target)


        with tf.GradientTape() as tape:
            loss = tf.constant(loss_fn(pred.numpy(), y), dtype=tf.float32)
            total = float(a + b)
        """
    )
    out = patched(source, finding_at(source, "pred.numpy", "GC105"))
    assert "loss = tf.cast(loss_fn(pred, y), tf.float32)" in out
    assert "tf.reduce_mean(tf.abs(pred - target)) + 0.1 * tf.reduce_mean(tf.cast(pred > target, tf.float32))" in out
    assert "    total = a + b\n" in patched(source, finding_at(source, "float(a + b)", "GC105"))


def test_gc105_helper_with_numpy_that_has_no_counterpart_gets_no_patch():
    source = dedent(
        """
        import numpy as np
        import tensorflow as tf


        def spread(values):
            hist, _ = np.histogram(values)
            return np.std(hist)


        with tf.GradientTape() as tape:
            loss = tf.constant(spread(out.numpy()))
        """
    )
    assert no_patch(source, finding_at(source, "out.numpy", "GC105"))


# -- GC106 ----------------------------------------------------------------------------------
def test_gc106_numpy_function_is_inlined_and_translated():
    source = dedent(
        """
        import numpy as np
        import tensorflow as tf


        def call(X):
            def fn(X):
                return np.sinh(X)
            return tf.reshape(tf.numpy_function(fn, [X], tf.float32), (-1, 4))
        """
    )
    out = patched(source, finding_at(source, "tf.numpy_function(fn, [X], tf.float32)", "GC106"))
    assert "        return tf.sinh(X)\n" in out
    assert "    return tf.reshape(fn(X), (-1, 4))\n" in out


# -- GC109 ----------------------------------------------------------------------------------
def test_gc109_forward_pass_and_its_loop_move_into_the_tape():
    source = dedent(
        """
        import tensorflow as tf

        buffer = []
        for t in range(3):
            probs = agent(state)  # act
            buffer.append(tf.math.log(probs[0, 0]))

        returns = compute(buffer)
        with tf.GradientTape() as tape:
            loss = -tf.add_n(buffer)
        grads = tape.gradient(loss, agent.trainable_variables)
        """
    )
    out = patched(source, finding_at(source, "agent(state)", "GC109", when="before"))
    assert out == dedent(
        """
        import tensorflow as tf

        buffer = []
        with tf.GradientTape() as tape:
            for t in range(3):
                probs = agent(state)  # act
                buffer.append(tf.math.log(probs[0, 0]))

            returns = compute(buffer)
            loss = -tf.add_n(buffer)
        grads = tape.gradient(loss, agent.trainable_variables)
        """
    )


def test_gc109_moved_after_the_tapes_watch_and_persistent_when_asked_twice():
    source = dedent(
        """
        import tensorflow as tf

        v_r = tf.add(v, r)
        with tf.GradientTape() as tape:
            tape.watch(r)
            loss = f(v_r)
        g1 = tape.gradient(loss, r)
        g2 = tape.gradient(loss, w)
        """
    )
    out = patched(source, finding_at(source, "tf.add(v, r)", "GC109", when="before"))
    assert out == dedent(
        """
        import tensorflow as tf

        with tf.GradientTape(persistent=True) as tape:
            tape.watch(r)
            v_r = tf.add(v, r)
            loss = f(v_r)
        g1 = tape.gradient(loss, r)
        g2 = tape.gradient(loss, w)
        """
    )


def test_gc109_negation_in_the_gradient_call_moves_into_the_tape():
    source = dedent(
        """
        import tensorflow as tf

        with tf.GradientTape() as ae_tape, tf.GradientTape() as disc_tape:
            recon, latent = compute(x)
        grads = disc_tape.gradient(-latent, disc.trainable_variables)
        """
    )
    finding = finding_at(source, "disc_tape.gradient(-latent, disc.trainable_variables)", "GC109", when="after")
    assert patched(source, finding) == dedent(
        """
        import tensorflow as tf

        with tf.GradientTape() as ae_tape, tf.GradientTape() as disc_tape:
            recon, latent = compute(x)
            objective = -latent
        grads = disc_tape.gradient(objective, disc.trainable_variables)
        """
    )


def test_gc109_build_variant_and_a_tape_in_another_function_get_no_patch():
    source = "import tensorflow as tf\n\nlogits = model(images)\ntrain_step(logits, labels)\n"
    assert no_patch(source, finding_at(source, "model(images)", "GC109", when="before"))
    assert no_patch(source, finding_at(source, "model(images)", "GC109", variant="build"))


def test_gc109_value_computed_in_build_moves_to_call():
    source = dedent(
        """
        import tensorflow as tf


        class NoisyDense:
            def build(self, shape):
                self.mu = self.add_weight(shape=(4, 2))
                self.kernel = self.mu + 0.5 * self.eps  # once
                self.bias = self.add_weight(shape=(2,))

            def call(self, inputs):
                \"\"\"Forward.\"\"\"
                return tf.matmul(inputs, self.kernel) + self.bias
        """
    )
    finding = finding_at(source, "self.mu + 0.5 * self.eps", "GC109", variant="build", method="build")
    assert patched(source, finding) == source.replace(
        "        self.kernel = self.mu + 0.5 * self.eps  # once\n", ""
    ).replace(
        "        return tf.matmul(inputs, self.kernel) + self.bias",
        "        kernel = self.mu + 0.5 * self.eps\n        return tf.matmul(inputs, kernel) + self.bias",
    )


def test_gc109_build_value_from_a_local_of_build_gets_no_patch():
    source = dedent(
        """
        import tensorflow as tf


        class Cell:
            def build(self, shape):
                k = self.add_weight(shape=(4, 2))
                self.kernel = tf.concat([k, k], axis=0)

            def call(self, inputs):
                return tf.matmul(inputs, self.kernel)
        """
    )
    assert no_patch(source, finding_at(source, "tf.concat([k, k], axis=0)", "GC109", variant="build", method="build"))


def test_gc109_precomputed_cost_goes_into_the_loss_callable():
    source = dedent(
        """
        import tensorflow as tf

        w = tf.Variable([1.0, 2.0])
        cost = -tf.reduce_mean(tf.math.log(w))
        loss = lambda: cost
        tf.keras.optimizers.Adam(0.5).minimize(loss, var_list=[w])
        """
    )
    out = patched(source, finding_at(source, "-tf.reduce_mean(tf.math.log(w))", "GC109", when="before"))
    assert out == source.replace("cost = -tf.reduce_mean(tf.math.log(w))\n", "").replace(
        "lambda: cost", "lambda: -tf.reduce_mean(tf.math.log(w))"
    )


# -- GC108 ----------------------------------------------------------------------------------
def test_gc108_layers_applied_to_the_raw_input_are_chained():
    source = dedent(
        """
        class Regressor:
            def call(self, inputs):
                h = self.fc1(inputs)
                h = self.fc2(inputs)
                h = self.head(inputs, training=False)
                return h
        """
    )
    notes = [f"regressor/fc{i}/kernel is read at line {i + 2}, but that result never reaches the loss" for i in (1, 2)]
    finding = finding_at(source, "h = self.fc1(inputs)", "GC108")
    finding.notes = notes
    assert patched(source, finding) == source.replace("fc2(inputs)", "fc2(h)").replace(
        "head(inputs, training=False)", "head(h, training=False)"
    )
    finding.notes = ["regressor/fc1/kernel is never read while the tape records"]
    assert no_patch(source, finding)


# -- GC202, GC203 ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("before", "after", "variant"),
    [
        ("tf.norm(a - p, axis=1)", "tf.sqrt(tf.reduce_sum(tf.square(a - p), axis=1) + 1e-12)", "norm"),
        ("tf.sqrt(s)", "tf.sqrt(s + 1e-12)", "sqrt"),
        ("tf.math.log(p)", "tf.math.log(p + 1e-7)", "log"),
        ("x / n", "tf.math.divide_no_nan(x, n)", "div"),
        (
            "tf.where(h > 0.0, tf.math.log(h), tf.zeros_like(h))",
            "tf.where(h > 0.0, tf.math.log(tf.where(h > 0.0, h, tf.ones_like(h))), tf.zeros_like(h))",
            "where",
        ),
    ],
)
def test_gc202_keeps_the_ops_input_where_its_derivative_is_finite(before, after, variant):
    source = f"import tensorflow as tf\n\nd = {before}\n"
    culprit = "tf.math.log(h)" if variant == "where" else before
    assert patched(source, finding_at(source, culprit, "GC202", variant=variant)) == source.replace(before, after)


def test_gc202_exp_overflow_gets_no_patch():
    source = "import tensorflow as tf\n\nd = tf.exp(x)\n"
    assert no_patch(source, finding_at(source, "tf.exp(x)", "GC202", variant="exp"))


def test_gc203_td_error_stops_only_its_target_side_and_tuples_get_no_patch():
    source = "import tensorflow as tf\n\ntd_error = reward + LAM * v_ - v\nz1, z2 = enc(a), enc(b)\n"
    td = finding_at(source, "reward + LAM * v_ - v", "GC203", variant="td")
    assert "td_error = tf.stop_gradient(reward + LAM * v_) - v\n" in patched(source, td)
    assert no_patch(source, finding_at(source, "enc(a), enc(b)", "GC203", variant="distill"))


def test_gc203_td_target_and_advantage_are_stopped():
    source = dedent(
        """
        import tensorflow as tf

        with tf.GradientTape() as tape:
            target = rewards + 0.99 * tf.reduce_max(q_net(next_states), axis=1)
            terms.append(-log_p * (ret - v) + huber(ret, v))
        """
    )
    td = finding_at(source, "rewards + 0.99 * tf.reduce_max(q_net(next_states), axis=1)", "GC203", variant="td")
    assert "    target = tf.stop_gradient(rewards + 0.99 * tf.reduce_max(q_net(next_states), axis=1))\n" in patched(
        source, td
    )
    advantage = finding_at(source, "terms.append(-log_p * (ret - v) + huber(ret, v))", "GC203", variant="advantage")
    assert "    terms.append(-log_p * tf.stop_gradient(ret - v) + huber(ret, v))\n" in patched(source, advantage)


# -- GC110 ----------------------------------------------------------------------------------
def test_gc110_each_unwatched_source_gets_a_watch_on_its_tape():
    source = dedent(
        """
        import tensorflow as tf

        image = tf.constant(a)
        kernel = tf.constant(b)
        with tf.GradientTape(persistent=True) as tape:
            total = tf.reduce_sum(tf.nn.conv2d(image, kernel, 1, "VALID"))
        d_image = tape.gradient(total, image)
        d_kernel = tape.gradient(total, [kernel])
        """
    )
    src = Source(source, "train.py")
    image = finding_at(source, "tf.constant(a)", "GC110", variables=["image"])
    kernel = finding_at(source, "tf.constant(b)", "GC110", variables=["kernel"])
    both = apply(src, registry.candidates(src, image) + registry.candidates(src, kernel))
    assert both == source.replace("    total =", "    tape.watch(image)\n    tape.watch(kernel)\n    total =")


# -- GC114, GC115, GC116 ------------------------------------------------------------------------
def test_gc114_counter_becomes_state_and_weight_becomes_float():
    source = dedent(
        """
        import tensorflow as tf


        class Layer:
            def build(self, shape):
                self._counter = self.add_weight("counter", shape=(), dtype=tf.int32, initializer="zeros")
                self.scale = self.add_weight(shape=(1,), dtype="int32", name="scale")
        """
    )
    counter = finding_at(source, 'self.add_weight("counter", shape=(), dtype=tf.int32, initializer="zeros")', "GC114")
    assert 'initializer="zeros", trainable=False)' in patched(source, counter)
    assert "dtype=tf.float32" in patched(source, counter, which=1)
    scale = finding_at(source, 'self.add_weight(shape=(1,), dtype="int32", name="scale")', "GC114")
    assert 'dtype="float32", name="scale")' in patched(source, scale)


def test_gc115_trainable_variables_in_the_call_and_where_zipped_with_the_gradients():
    source = dedent(
        """
        import tensorflow as tf

        with tf.GradientTape() as tape:
            loss = f(model(x))
        grads = tape.gradient(loss, model.variables)
        optimizer.apply_gradients(zip(grads, model.variables))
        print(len(model.variables))
        """
    )
    out = patched(source, finding_at(source, "tape.gradient(loss, model.variables)", "GC115"))
    assert "tape.gradient(loss, model.trainable_variables)" in out
    assert "zip(grads, model.trainable_variables)" in out
    assert "print(len(model.variables))" in out  # not paired with the gradients: unchanged


def test_gc116_decorator_removed():
    source = dedent(
        """
        import tensorflow as tf


        class Net:
            # traced by the outer step
            @tf.function
            def call(self, x):
                return self.dense(x)
        """
    )
    out = patched(source, finding_at(source, "tf.function", "GC116"))
    assert out == source.replace("    @tf.function\n", "")


def test_codes_without_a_kind_have_none():
    source = "import tensorflow as tf\n\nw.assign(x)\n"
    assert not registry.kinds_for(finding_at(source, "w.assign(x)", "GC113"))


# -- the machinery ----------------------------------------------------------------------------
def test_patches_of_one_file_combine_in_one_pass():
    source = "import tensorflow as tf\n\na = tf.round(x)\nb = tf.round(y)\n"
    src = Source(source, "train.py")
    first = registry.candidates(src, finding_at(source, "tf.round(x)", "GC102"))
    second = registry.candidates(src, finding_at(source, "tf.round(y)", "GC102"))
    out = apply(src, first + second)
    assert out.splitlines()[2:] == [
        "a = x + tf.stop_gradient(tf.round(x) - x)",
        "b = y + tf.stop_gradient(tf.round(y) - y)",
    ]


def test_crlf_line_ends_and_comments_survive():
    source = "import tensorflow as tf\r\n\r\n# keep me\r\ny = tf.round(x)  # and me\r\n"
    out = patched(source, finding_at(source, "tf.round(x)", "GC102"))
    assert out == "import tensorflow as tf\r\n\r\n# keep me\r\ny = x + tf.stop_gradient(tf.round(x) - x)  # and me\r\n"


def test_unified_diff_and_its_replacements():
    old = "a\nb\nc\n"
    new = "a\nB\nc\nd"
    diff = unified_diff(old, new, "./pkg/train.py")
    assert diff.startswith("--- a/pkg/train.py\n+++ b/pkg/train.py\n@@ -1,3 +1,4 @@\n")
    assert diff.endswith("+d\n\\ No newline at end of file\n")
    assert replacements(diff) == [(2, ["b\n"], ["B\n"]), (4, [], ["d"])]
    assert line_map(old, new) == {1: 1, 3: 3}


@pytest.mark.parametrize(
    ("numpy", "tensorflow"),
    [
        ("np.mean(x, axis=1)", "tf.reduce_mean(x, axis=1)"),
        ("np.std(x)", "tf.math.reduce_std(x)"),
        ("np.log(p + 1e-8)", "tf.math.log(p + 1e-8)"),
        ("np.clip(x, 0, 1)", "tf.clip_by_value(x, 0, 1)"),
        ("np.sum(x > 0)", "tf.reduce_sum(tf.cast(x > 0, tf.float32))"),
        ("np.asarray(x, dtype='float32')", "tf.cast(x, 'float32')"),
        ("x.astype('float32').ravel()", "tf.reshape(tf.cast(x, 'float32'), [-1])"),
        ("(x - m).mean(axis=0)", "tf.reduce_mean(x - m, axis=0)"),
    ],
)
def test_numpy_translation(numpy, tensorflow):
    source = Source(f"import numpy as np\nimport tensorflow as tf\n\ny = {numpy}\n")
    translator = Translator(source, "tf", methods=True)
    out = source.module.visit(translator)
    assert out.code.splitlines()[-1] == f"y = {tensorflow}"
    assert not translator.missed


def test_numpy_without_a_counterpart_is_reported_missed():
    source = Source("import numpy as np\n\ny = np.histogram(x)\n")
    translator = Translator(source, "tf")
    source.module.visit(translator)
    assert translator.missed == ["np.histogram"]


def test_importing_the_fix_package_imports_no_tensorflow():
    import subprocess
    import sys

    code = "import sys, gradcheck.fix.plan, gradcheck.fix.registry; registry = gradcheck.fix.registry; registry._load(); print('tensorflow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_every_registered_kind_is_in_docs_fixes_md():
    from pathlib import Path

    registry._load()
    text = (Path(__file__).resolve().parents[1] / "docs" / "fixes.md").read_text(encoding="utf-8")
    for code, _variant in registry.KINDS:
        assert code in text, code
