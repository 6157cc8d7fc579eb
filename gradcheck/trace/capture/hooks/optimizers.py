"""Hook step: optimizers. A check must not train, so the checked step applies no update
(``skip_updates``); and when Keras says "No gradients provided", the diagnosis so far is
added to its message. Keras 3's ``Optimizer.apply`` always; tf_keras's new-style and legacy
``apply_gradients`` when tf_keras is what ``tf.keras`` is, or is already imported."""

from __future__ import annotations

import sys

from gradcheck.trace.capture.patches import Patches
from gradcheck.trace.capture.session import Session
from gradcheck.trace.record import _tf


def install(session: Session, patches: Patches) -> None:
    if _tf.KerasOptimizer is not None:
        patches.set(_tf.KerasOptimizer, "apply", _skipping(session, _tf.KerasOptimizer.apply))
    # importing tf_keras costs a second, so a Keras 3 check does not
    if _tf.legacy_keras() or "tf_keras" in sys.modules:
        for cls in _legacy_optimizer_classes():
            patches.set(cls, "apply_gradients", _skipping(session, cls.apply_gradients))


def _skipping(session: Session, orig):
    """``orig`` (an optimizer method), doing nothing while updates are skipped."""

    def apply(self, *args, **kwargs):
        if session.skip_updates:
            return None  # a check must not train: the checked step leaves weights unchanged
        try:
            return orig(self, *args, **kwargs)
        except ValueError as error:
            if "No gradients provided" in str(error) and session.findings:
                from gradcheck.output.text import render_findings

                diagnosis = render_findings(session.findings[-5:], color=False)
                raise ValueError(f"{error}\n\ngradcheck diagnosis:\n{diagnosis}") from error
            raise

    return apply


def _legacy_optimizer_classes() -> list:
    classes = []
    try:
        from tf_keras.src.optimizers.optimizer import Optimizer

        classes.append(Optimizer)
    except ImportError:  # pragma: no cover - tf_keras missing or moved
        pass
    try:
        from tf_keras.src.optimizers.legacy.optimizer_v2 import OptimizerV2

        classes.append(OptimizerV2)
    except ImportError:  # pragma: no cover
        pass
    return classes
