"""Run one Keras training step as ``model.fit`` would (the Python API's ``check_model`` and a
``FILE::build`` returning ``(model, batch)``)."""

from __future__ import annotations

from typing import Any


def run_train_step(model: Any, batch: Any) -> None:
    """One ``model.train_step(batch)`` as ``fit`` runs it: traced with ``tf.function``
    unless the model was compiled with ``run_eagerly=True``."""
    import tensorflow as tf

    if getattr(model, "optimizer", None) is None:
        raise ValueError("check_model needs a compiled model: call model.compile(optimizer=..., loss=...) first")
    data = tf.nest.map_structure(lambda t: tf.convert_to_tensor(t) if not tf.is_tensor(t) else t, batch)
    data = tuple(data) if isinstance(data, list) else data
    step = model.train_step if getattr(model, "run_eagerly", False) else tf.function(model.train_step)
    try:
        step(data)
    finally:
        if hasattr(model, "reset_metrics"):
            model.reset_metrics()
