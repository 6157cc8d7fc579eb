"""Hook step: optimizers. A check must not train, so the checked step applies no update
(``skip_updates``); and when Keras says "No gradients provided", the diagnosis so far is
added to its message. Keras 3's ``Optimizer.apply`` always; tf_keras's new-style and legacy
``apply_gradients`` when tf_keras is what ``tf.keras`` is, or is already imported.

Each update is also noted for GC117 (``values.updates``: which variables the step's
optimizers update, and manual ``assign_sub``/``assign_add`` on variables), and the step is
judged when the hooks are removed (the checked step is over)."""

from __future__ import annotations

import sys
import threading

from gradcheck.trace.capture.patches import Patches
from gradcheck.trace.capture.session import Session
from gradcheck.trace.diagnose import applied
from gradcheck.trace.record import _tf
from gradcheck.trace.record.errors import internal_error
from gradcheck.trace.values import updates
from gradcheck.trace.values.checked import note_scaled_loss


def install(session: Session, patches: Patches) -> None:
    if _tf.KerasOptimizer is not None:
        patches.set(_tf.KerasOptimizer, "apply", _skipping(session, _tf.KerasOptimizer.apply, pairs=False))
    # importing tf_keras costs a second, so a Keras 3 check does not
    if _tf.legacy_keras() or "tf_keras" in sys.modules:
        for cls in _legacy_optimizer_classes():
            patches.set(cls, "apply_gradients", _skipping(session, cls.apply_gradients, pairs=True))
    for cls, name in _loss_scale_methods():
        patches.set(cls, name, _scaling(session, getattr(cls, name)))
    # the base class of tf.Variable's resource variables (Keras 3 variables assign through it)
    variable = next((c for c in _tf.ResourceVariable.__mro__ if c.__name__ == "BaseResourceVariable"), None)
    variable = variable or _tf.ResourceVariable
    for name in ("assign_sub", "assign_add"):
        orig = getattr(variable, name, None)
        if orig is not None:
            patches.set(variable, name, _noting(session, orig))


def uninstall(session: Session, patches: Patches) -> None:
    """Put the methods back, then judge the step (GC117)."""
    patches.restore()
    try:
        session.add_value_findings(updates.report(session))
    except Exception as error:  # noqa: BLE001 - gradcheck must not break the user's run
        internal_error(error)


def _noting(session: Session, orig):
    def assign(self, *args, **kwargs):
        updates.note_assign(session, self)
        return orig(self, *args, **kwargs)

    return assign


_NESTED = threading.local()


def _note(session: Session, optimizer, args, kwargs, pairs: bool):
    """Note an update for GC117; returns the arguments to pass on (a ``zip`` is read once).
    An update inside another (``apply_gradients`` calling ``apply``, a LossScaleOptimizer
    calling its inner optimizer) is the same update: only the outermost is noted."""
    if getattr(_NESTED, "depth", 0):
        return args, kwargs
    try:
        if pairs:
            grads_and_vars = list(args[0] if args else kwargs.pop("grads_and_vars"))
            args = (grads_and_vars, *args[1:])
            grads = [g for g, _ in grads_and_vars]
            variables = [v for _, v in grads_and_vars]
        else:
            grads = list(args[0] if args else kwargs.get("grads", ()))
            variables = list(args[1] if len(args) > 1 else kwargs.get("trainable_variables") or ())
        if variables:
            updates.note_update(session, variables, grads, optimizer)
            # gradients paired with variables other than the ones they were asked for (GC108)
            session.add_value_findings(applied.check_update(session, grads, variables))
    except Exception as error:  # noqa: BLE001
        internal_error(error)
    return args, kwargs


def _skipping(session: Session, orig, pairs: bool = False):
    """``orig`` (an optimizer method), doing nothing while updates are skipped."""

    def apply(self, *args, **kwargs):
        args, kwargs = _note(session, self, args, kwargs, pairs)
        if session.skip_updates and not session.recording:
            # a check must not train: the checked step leaves weights unchanged. An update
            # made while a tape records (a meta-learning inner step) is part of what that
            # tape is asked to differentiate: it runs, as under python.
            return None
        _NESTED.depth = getattr(_NESTED, "depth", 0) + 1
        try:
            return orig(self, *args, **kwargs)
        except ValueError as error:
            if "No gradients provided" in str(error) and session.findings:
                # only what starved this update's variables: not an earlier, unrelated finding
                starved = _starved(args, kwargs, pairs)
                mine = [f for f in session.findings if starved & set(f.variables)]
                if mine:
                    from gradcheck.output.text import render_findings

                    diagnosis = session.describe(mine) if session.describe else render_findings(mine, color=False)
                    raise ValueError(f"{error}\n\ngradcheck diagnosis:\n{diagnosis}") from error
            raise
        finally:
            _NESTED.depth -= 1

    return apply


def _starved(args, kwargs, pairs: bool) -> set[str]:
    """The names of the variables an update got a None gradient for."""
    from gradcheck.trace.record._tf import variable_name

    if pairs:
        grads_and_vars = list(args[0] if args else kwargs.get("grads_and_vars", ()))
    else:
        grads = list(args[0] if args else kwargs.get("grads", ()))
        variables = list(args[1] if len(args) > 1 else kwargs.get("trainable_variables") or ())
        grads_and_vars = list(zip(grads, variables, strict=False))
    return {variable_name(v) for g, v in grads_and_vars if g is None}


def _loss_scale_methods() -> list:
    """The methods that multiply a loss by a LossScaleOptimizer's dynamic loss scale."""
    out = []
    if "keras" in sys.modules:  # a tf_keras program never imports Keras 3 (nor does gradcheck for it)
        try:
            from keras.optimizers import LossScaleOptimizer

            out.append((LossScaleOptimizer, "scale_loss"))
        except ImportError:  # pragma: no cover - no Keras 3
            pass
    if "tf_keras" in sys.modules:
        try:
            from tf_keras.src.mixed_precision.loss_scale_optimizer import LossScaleOptimizer as Legacy

            out.append((Legacy, "get_scaled_loss"))
        except ImportError:  # pragma: no cover
            pass
    return out


def _scaling(session: Session, orig):
    """``orig`` (a loss-scaling method), noting which tensor is a scaled loss (GC202 judges
    the gradients of the unscaled one: an overflow of the scaled gradients is how dynamic
    loss scaling finds its scale, and the optimizer skips that step)."""

    def scale(self, loss, *args, **kwargs):
        scaled = orig(self, loss, *args, **kwargs)
        try:
            note_scaled_loss(session, scaled, loss)
        except Exception as error:  # noqa: BLE001
            internal_error(error)
        return scaled

    return scale


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
