"""A first gradient request that asks for no sources spends no step (progG's first run: a
DQN and a TD3 agent read ``model.trainable_variables`` before the model's first call, so the
first update asks ``tape.gradient(loss, [])`` and later ones ask for every variable; the
one-step check was spent on the empty request and the bug in the next one was never seen,
a false all-clear)."""

from __future__ import annotations

import importlib.util
import json

import pytest

from tests.conftest import run_cli

TF_KERAS = pytest.mark.skipif(importlib.util.find_spec("tf_keras") is None, reason="tf_keras is not installed")

AGENT = """\
import numpy as np
import tensorflow as tf
import {keras} as keras

keras.utils.set_random_seed(0)


class QNet(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(16, activation="relu")
        self.out = keras.layers.Dense(2)

    def call(self, x):
        return self.out(self.hidden(x))


model = QNet()


def update(states, actions, targets):
    params = model.trainable_variables  # empty before the model's first call
    with tf.GradientTape() as tape:
        q = model(states)
        chosen = {chosen}
        loss = tf.reduce_mean(tf.square(targets - chosen))
    grads = tape.gradient(loss, params)
    for g, v in zip(grads, params):
        v.assign_sub(0.01 * g)


rng = np.random.default_rng(0)
for step in range(4):
    update(rng.random((8, 4), dtype="float32"), rng.integers(0, 2, 8), rng.random(8, dtype="float32"))
"""
BUG = "tf.cast(tf.argmax(q, axis=1), tf.float32)"
FIXED = "tf.reduce_sum(q * tf.one_hot(actions, 2), axis=1)"


def _found(result) -> list[tuple]:
    assert result.error is None, result.error
    return [(f.code, f.line) for f in result.findings]


@pytest.mark.parametrize("chosen, expected", [(BUG, [("GC101", 25)]), (FIXED, [])], ids=["argmax", "one-hot"])
def test_an_empty_first_request_leaves_the_check_to_the_next(run_script, chosen, expected):
    result = run_script(AGENT.format(keras="keras", chosen=chosen))
    assert _found(result) == expected
    assert result.steps_checked >= 1


def test_a_request_that_is_only_ever_empty_is_not_a_checked_step(run_script):
    # nothing is asked, nothing trains: no "No findings" claim that a training was checked
    source = AGENT.format(keras="keras", chosen=FIXED).replace("params = model.trainable_variables", "params = []")
    result = run_script(source)
    assert result.findings == [] and result.steps_checked == 0


@pytest.mark.keras2
@TF_KERAS
@pytest.mark.parametrize("chosen, expected", [(BUG, [("GC101", 25)]), (FIXED, [])], ids=["argmax", "one-hot"])
def test_an_empty_first_request_under_tf_keras(tmp_path, chosen, expected):
    script = tmp_path / "agent.py"
    script.write_text(AGENT.format(keras="tf_keras", chosen=chosen), encoding="utf-8")
    proc = run_cli(str(script), "--format", "json", env={"TF_USE_LEGACY_KERAS": "1"})
    (record,) = json.loads(proc.stdout)["files"]
    assert record["error"] is None, record["error"]
    assert [(f["code"], f["line"]) for f in record["findings"]] == expected
    assert record["steps_checked"] >= 1
