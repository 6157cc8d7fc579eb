"""What a check holds while the user's step runs (issue 35: peak memory against plain
python, ``benchmarks/bench_memory.py``). No memory figure is asserted here: each test names
a value the check must not hold, or must compute again exactly instead of holding.

- graph mode: the value check's host callback is fed the leaves of the values a diagnosis
  may read (variable reads, random draws, the batch), never the activations computed from
  them, which a degenerate step computes again (``values/recompute.py``);
- a degenerate gradient is diagnosed on its own paths only: the activations of the rest of
  the network are not computed again for it;
- eager mode: the recorder holds the outputs of stateless ops by weak reference, and a
  diagnosis computes a freed one again from its producer's inputs (``record/eager_freed.py``).
"""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

DEAD_RELU = """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential(
    [
        keras.Input((4,)),
        keras.layers.Dense(8),
        keras.layers.Dense(8, activation="relu", bias_initializer=keras.initializers.Constant(-100.0)),
        keras.layers.Dense(1),
    ]
)
opt = keras.optimizers.SGD(0.1)
x = np.random.rand(16, 4).astype("float32")
y = np.random.rand(16, 1).astype("float32")


@tf.function
def step(x, y):
    noise = tf.random.normal(tf.shape(x)) * 0.01  # a random draw on the diagnosed path
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x + noise) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for _ in range(3):
    step(x, y)
"""


def test_a_degenerate_graph_step_is_diagnosed_from_recomputed_values(run_script):
    """The dead ReLU's pre-activations are not fed to the callback: they are computed
    again from the fed random draw and variable reads, and the diagnosis is the same."""
    result = run_script(DEAD_RELU)
    assert result.error is None, result.error
    assert [f.code for f in result.findings] == ["GC201"]
    assert "relu is dead on the whole batch" in result.findings[0].message
    assert result.findings[0].line == 9


def _traced_step(record_graph: list):
    import keras
    import tensorflow as tf

    keras.backend.clear_session()
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
    opt = keras.optimizers.SGD(0.1)

    @tf.function
    def step(x, y):
        record_graph.append(tf.compat.v1.get_default_graph())
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return step


def _fed_to_the_check(graph) -> set:
    """The tensors of ``graph`` held for the value check: the host callback's inputs (a
    check), or those of the branch that would call it (``check_step``, ``install()``)."""
    return {t.ref() for op in graph.get_operations() if op.type in _HOLDERS for t in op.inputs}


_HOLDERS = ("EagerPyFunc", "If", "StatelessIf")


def _activations(graph) -> set:
    """The forward activations: the Dense layers' products, sums and ReLU (not the ops of
    the user's gradient, whose results, the gradients, the check does read)."""
    out = set()
    for op in graph.get_operations():
        if op.type in ("MatMul", "Add", "AddV2", "BiasAdd", "Relu") and not op.name.startswith("gradient_tape/"):
            out |= {t.ref() for t in op.outputs}
    return out


def test_check_step_holds_no_activation_for_the_value_check():
    import gradcheck

    graphs: list = []
    step = _traced_step(graphs)
    x = np.random.default_rng(0).random((8, 4), dtype=np.float32)
    y = np.ones((8, 1), np.float32)
    report = gradcheck.check_step(step, x, y)
    assert report.files[0].findings == []
    (graph,) = graphs
    fed = _fed_to_the_check(graph)
    assert fed, "the value check is in the traced step"
    assert _activations(graph)
    assert not fed & _activations(graph)  # before recompute, every one was held


PROBED = """import keras
import numpy as np
import tensorflow as tf

import memory_release_probe

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
opt = keras.optimizers.SGD(0.1)


@tf.function
def step(x, y):
    memory_release_probe.graphs.append(tf.compat.v1.get_default_graph())
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for _ in range(3):
    step(np.random.rand(8, 4).astype("float32"), np.ones((8, 1), "float32"))
"""


def test_a_check_feeds_its_host_callback_no_activation(run_script, monkeypatch):
    """The CLI's check (a step budget): the host callback runs on every checked step."""
    probe = types.ModuleType("memory_release_probe")
    probe.graphs = []
    monkeypatch.setitem(sys.modules, "memory_release_probe", probe)
    result = run_script(PROBED)
    assert result.error is None, result.error
    assert result.findings == []
    (graph,) = probe.graphs
    callbacks = [op for op in graph.get_operations() if op.type == "EagerPyFunc"]
    assert callbacks, "the value check's host callback is in the traced step"
    assert _activations(graph)
    assert not _fed_to_the_check(graph) & _activations(graph)


def test_recomputed_values_are_the_step_values_exactly():
    """A plan feeds the random draw and the variable read, and gives back, from them, the
    same values the traced function computed."""
    import tensorflow as tf

    from gradcheck.trace.record import graph as graph_mode
    from gradcheck.trace.values import recompute

    w = tf.Variable(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
    plans: list = []

    @tf.function
    def f(x):
        noise = tf.random.normal([5, 3])
        h = tf.nn.relu(tf.matmul(x + noise, w))
        out = tf.reduce_sum(tf.exp(-h) * 3.0)
        wanted = [h, out, h.op.inputs[0]]
        plan = recompute.plan(wanted, tf.compat.v1.get_default_graph(), keep={out.name})
        plans.append((plan, [graph_mode.key(t) for t in wanted]))
        return plan.leaves, wanted

    leaves, wanted = f(tf.ones([5, 3]))
    ((plan, keys),) = plans
    types = {t.op.type for t in plan.leaves}
    assert "RandomStandardNormal" in types and "ReadVariableOp" in types
    assert not types & {"Relu", "MatMul"}  # computed again, not held
    got = plan.run(list(leaves), keys)
    assert set(got) == set(keys[:1] + keys[2:])  # the kept output is a leaf, not recomputed
    np.testing.assert_array_equal(got[keys[0]], wanted[0].numpy())
    np.testing.assert_array_equal(got[keys[2]], wanted[2].numpy())


CANCELLING_BIAS = """\
import keras
import numpy as np
import tensorflow as tf

critic = keras.Sequential([keras.Input((6,)), keras.layers.Dense(32, activation="tanh"), keras.layers.Dense(1)])
real = np.random.rand(8, 6).astype("float32")
fake = np.random.rand(8, 6).astype("float32")


@tf.function
def step():
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(critic(fake)) - tf.reduce_mean(critic(real))  # the last bias cancels
    return tape.gradient(loss, critic.trainable_variables)


step()
"""


def test_a_zero_gradient_is_diagnosed_on_its_own_paths_only(run_script, monkeypatch):
    """A WGAN critic's output bias gets an exactly zero gradient on every step (it cancels
    between the two terms): its diagnosis computes again the values near that bias, not the
    whole critic's activations (which held 1 GB a critic step on a WGAN-GP)."""
    from gradcheck.trace.values import recompute

    asked: list = []
    run = recompute.Plan.run

    def spy(self, leaf_values, keys):
        out = run(self, leaf_values, keys)
        asked.append(({t.op.type for t in self.fetch.values()}, {self.fetch[k].op.type for k in out}))
        return out

    monkeypatch.setattr(recompute.Plan, "run", spy)
    result = run_script(CANCELLING_BIAS)
    assert result.error is None, result.error
    assert result.findings == []  # a cancellation by chance is no finding
    assert asked, "the zero gradient was diagnosed"
    planned, computed = asked[0]
    assert "Tanh" in planned  # the first layer's activation could have been computed ...
    assert "Tanh" not in computed  # ... but is not on the bias's paths


FREED_IN_THE_STEP = """\
import gc
import weakref

import memory_release_probe as probe
import tensorflow as tf

w = tf.Variable(tf.ones((3, 2)))
x = tf.ones((4, 3))
with tf.GradientTape() as tape:
    h = tf.matmul(x, w)  # the gradient of `tanh(h)` needs no `h`: the program frees it below
    probe.ref = weakref.ref(h)
    y = tf.tanh(h)
    del h
    gc.collect()
    probe.alive = probe.ref() is not None
    loss = tf.reduce_sum(y)
grads = tape.gradient(loss, [w])
"""


def test_an_eager_check_holds_no_value_the_program_freed(run_script, monkeypatch):
    """Under plain python the matmul's output is freed inside the tape (TensorFlow's tape does
    not keep it); the check's recorder must not keep it alive either."""
    probe = types.ModuleType("memory_release_probe")
    monkeypatch.setitem(sys.modules, "memory_release_probe", probe)
    result = run_script(FREED_IN_THE_STEP)
    assert result.error is None, result.error
    assert result.findings == []
    assert probe.alive is False


DEAD_RELU_EAGER = """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential(
    [
        keras.Input((4,)),
        keras.layers.Dense(8),
        keras.layers.Dense(8, activation="relu", bias_initializer=keras.initializers.Constant(-100.0)),
        keras.layers.Dense(1),
    ]
)
opt = keras.optimizers.SGD(0.1)
x = np.random.rand(16, 4).astype("float32")
y = np.random.rand(16, 1).astype("float32")
for _ in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
"""


def test_an_eager_diagnosis_computes_freed_values_again(run_script, monkeypatch):
    """The dead ReLU's pre-activations (which its gradient does not need, so the program
    frees them) are computed again from the recorded op and its inputs, and the diagnosis
    is the one the held values gave, exactly."""
    from gradcheck.trace.record import eager

    again: list = []
    execute_again = eager.EagerRecorder.execute_again

    def spy(self, rec, inputs):
        again.append(rec.type)
        return execute_again(self, rec, inputs)

    monkeypatch.setattr(eager.EagerRecorder, "execute_again", spy)
    result = run_script(DEAD_RELU_EAGER)
    assert result.error is None, result.error
    assert [f.code for f in result.findings] == ["GC201"]
    assert "relu is dead on the whole batch" in result.findings[0].message
    assert again, "a freed value was computed again"


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__, "-q"])
