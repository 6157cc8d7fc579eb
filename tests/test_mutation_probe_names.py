"""The benchmark probe's names for gradient sources: a variable by its path or name; a tensor
has no name of the program's (a graph tensor's ``name`` is its op's, ``Cast``, ``add``), so it is
``<tensor i>`` in graph mode as in eager, which the score leaves out of "every starved variable
is named" (smoke_wgan_gp ``watch_int``: gradcheck says ``interpolated``, the probe said ``Cast``)."""

from __future__ import annotations

import importlib.util

import keras
import tensorflow as tf

from benchmarks.mutation import score

_spec = importlib.util.spec_from_file_location(
    "gcm_probe", score.__file__.replace("score.py", "probe/sitecustomize.py")
)
probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(probe)


def test_variables_keep_their_names_and_tensors_are_unnamed_in_both_modes():
    dense = keras.layers.Dense(2)
    dense.build((None, 3))
    plain = tf.Variable([1.0], name="x")
    seen = {}

    @tf.function
    def step(x):
        y = tf.cast(x, tf.float32) * 2.0
        seen["graph"] = [probe._name(y, 0), probe._name(plain, 1), probe._name(dense.kernel, 2)]
        return y

    step(tf.constant([1]))
    assert seen["graph"] == ["<tensor 0>", "x", dense.kernel.path]
    assert [probe._name(tf.constant([1.0]), 0), probe._name(plain, 1)] == ["<tensor 0>", "x"]
