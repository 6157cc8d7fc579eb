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
model.fit(np.zeros((2, 8, 3), "float32"), np.zeros((8, 1), "float32"), epochs=1)"""
_LOOP = """\
optimizer = {keras}.optimizers.SGD()
x = np.zeros((2, 8, 3), "float32")
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(model(x))
grads = tape.gradient(loss, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))"""
_SPELLINGS = {
    "tf_keras": dict(
        imports="import tensorflow as tf", keras="tf.keras", stop="tf.stop_gradient", ops="tf.math"
    ),
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


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in INVALID.items()])
def test_invalid_shape_is_found_exactly(source):
    assert expected(source), "an invalid shape must mark its culprits"
    assert found(source) == expected(source)


@pytest.mark.parametrize("source", [pytest.param(s, id=k) for k, s in VALID.items()])
def test_valid_look_alike_is_silent(source):
    assert found(source) == []
