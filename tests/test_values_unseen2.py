"""Degenerate gradients, non-finite losses and GC301's re-runs on code nobody here has seen,
round 3 (issue 36 §3, issue 38): each mechanism with the shape that went wrong, and a
correct look-alike, in eager code and in a ``tf.function`` (and under tf_keras where the
shape exists there)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

needs_tf_keras = pytest.mark.skipif(importlib.util.find_spec("tf_keras") is None, reason="tf_keras is not installed")


# -- 1. GC301's default check re-runs a custom-gradient forward that draws random numbers --
# The re-run must leave every random state as it found it: what the program draws after
# the checked step is what it draws under python (a Keras SeedGenerator, dropout, the
# legacy tf.random ops under a global seed, a tf.random.Generator, NumPy, Python's random).
RANDOM_FORWARD = """\
import os
import random

import numpy as np
import tensorflow as tf
{keras_import}

keras.utils.set_random_seed(0)
generator = tf.random.Generator.from_seed(5)
tf.random.set_global_generator(tf.random.Generator.from_seed(7))  # its default is not reproducible
{seed_generator}


@tf.custom_gradient
def noisy_relu(x):
    y = tf.nn.relu(x) + 0.01 * tf.random.normal(tf.shape(x)) + 0.01 * generator.normal(tf.shape(x))
    y = tf.nn.dropout(y, 0.2) + 0.01 * tf.random.get_global_generator().normal(tf.shape(x))
    y = y + 0.01 * float(np.random.rand()) + 0.01 * random.random(){keras_noise}

    def grad(upstream):
        return upstream * tf.cast(x > 0, upstream.dtype)

    return y, grad


model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(8), keras.layers.Dropout(0.5), keras.layers.Dense(1)])
opt = keras.optimizers.SGD(0.1)
# built here: a first traced call that creates the optimizer's variables is traced twice
# under python (and once under gradcheck, which skips the update): the forward's NumPy and
# Python draws happen at tracing
opt.build(model.trainable_variables)
x = np.ones((4, 3), "float32")
y = np.zeros((4, 1), "float32")


{decorator}
def step():
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(noisy_relu(model(x, training=True)) - y))
    opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


for _ in range(2):
    step()
    draws = [
        tf.random.normal((2,)),
        generator.normal((2,)),
        tf.random.get_global_generator().normal((2,)),
        np.random.rand(2),
        random.random(),
        model.layers[1](tf.ones((1, 8)), training=True),{keras_draw}
    ]
    with open(os.environ["DRAWS_OUT"], "a") as out:  # outside the project: the sandbox keeps it
        out.write(repr([np.round(np.asarray(d, np.float64), 6).tolist() for d in draws]) + "\\n")
"""

KERAS3 = {
    "keras_import": "import keras",
    "seed_generator": "noise = keras.random.SeedGenerator(1)",
    "keras_noise": " + 0.01 * keras.random.normal(tf.shape(x), seed=noise)",
    "keras_draw": "\n        keras.random.normal((2,), seed=noise),",
}
TF_KERAS = {"keras_import": "import tf_keras as keras", "seed_generator": "", "keras_noise": "", "keras_draw": ""}


def _first_draws(tmp_path, script, python: str, env: dict) -> tuple[str, str]:
    """The program's draws after its first step under python, and under gradcheck."""
    out = []
    (tmp_path / "out").mkdir(exist_ok=True)
    for name, command in (("python", [python, str(script)]), ("gradcheck", [python, "-m", "gradcheck", str(script)])):
        draws = tmp_path / "out" / f"draws_{name}.txt"  # not the script's folder: the sandbox's
        proc = subprocess.run(
            command,
            cwd=ROOT,
            env=dict(os.environ, **env, DRAWS_OUT=str(draws)),
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert draws.exists(), proc.stdout + proc.stderr
        out.append(draws.read_text().splitlines()[0])
        if name == "gradcheck":
            assert "No findings in 1 checked file" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return out[0], out[1]


@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf_function"])
def test_custom_gradient_rerun_leaves_random_state(tmp_path, decorator):
    (tmp_path / "project").mkdir()
    script = tmp_path / "project" / "random_forward.py"
    script.write_text(RANDOM_FORWARD.format(decorator=decorator, **KERAS3))
    under_python, under_gradcheck = _first_draws(tmp_path, script, sys.executable, {})
    assert under_gradcheck == under_python


@pytest.mark.keras2
@needs_tf_keras
@pytest.mark.parametrize("decorator", ["", "@tf.function"], ids=["eager", "tf_function"])
def test_tf_keras_custom_gradient_rerun_leaves_random_state(tmp_path, decorator):
    (tmp_path / "project").mkdir()
    script = tmp_path / "project" / "random_forward.py"
    script.write_text(RANDOM_FORWARD.format(decorator=decorator, **TF_KERAS))
    under_python, under_gradcheck = _first_draws(tmp_path, script, sys.executable, {"TF_USE_LEGACY_KERAS": "1"})
    assert under_gradcheck == under_python
