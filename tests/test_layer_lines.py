"""A degenerate gradient made inside a built-in Keras layer points at the line where the
layer was created (where its activation is chosen), also when the layer's weights are not
among the request's sources (Grad-CAM asks for a conv output's gradient) and when the user
applied the layer elsewhere (a loop re-applying a Sequential's layers): real-world 1044."""

from __future__ import annotations

import pytest

GRADCAM = """\
import keras
import numpy as np
import tensorflow as tf
from keras import layers

keras.utils.set_random_seed(0)
base = keras.Sequential([keras.Input((8, 8, 3)), layers.Conv2D(4, 3, activation="relu")], name="base")
model = keras.Sequential([
    base,
    layers.Flatten(),
    layers.Dense(6, activation="{activation}"),
])
w, b = model.layers[-1].get_weights()
model.layers[-1].set_weights([w * 400.0, b])
inp = keras.Input((8, 8, 3))
conv_outputs = base(inp)
x = conv_outputs
for layer in model.layers[1:]:
    x = layer(x)
grad_model = keras.Model(inp, [conv_outputs, x])
image = np.random.default_rng(0).uniform(0, 255, size=(1, 8, 8, 3)).astype("float32")
with tf.GradientTape() as tape:
    conv_out, preds = grad_model(image)
    score = preds[:, int(tf.argmax(preds[0]))]
grads = tape.gradient(score, conv_out)
"""
DENSE_LINE = 11


def test_a_saturated_softmax_in_a_layer_the_request_does_not_train_is_at_its_creation(run_script):
    result = run_script(GRADCAM.format(activation="softmax"))
    assert result.error is None, result.error
    assert [(f.code, f.line) for f in result.findings] == [("GC201", DENSE_LINE)], [
        f"{f.line}: {f.code} {f.message}" for f in result.findings
    ]
    assert result.findings[0].variables == ["conv_out"]


@pytest.mark.parametrize("activation", ["linear"])
def test_the_logit_target_is_silent(run_script, activation):
    result = run_script(GRADCAM.format(activation=activation))
    assert result.error is None and result.findings == [], [f"{f.line}: {f.code} {f.message}" for f in result.findings]
