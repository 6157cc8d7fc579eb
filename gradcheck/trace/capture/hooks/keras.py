"""Hook step: where things were made. Variable constructors (GC114 points at a variable's
creation; GC116 needs "created inside a trace"), Keras layers (where the user created each
one and first applied it) and ``Model.compile`` (the losses given to each output)."""

from __future__ import annotations

import sys
import weakref

from gradcheck.trace.capture.patches import Patches
from gradcheck.trace.capture.session import Session
from gradcheck.trace.record import _tf, frames


def install(session: Session, patches: Patches) -> None:
    for cls in (_tf.ResourceVariable, _tf.UninitializedVariable, _tf.KerasVariable):
        if cls is not None:
            _patch_variable_init(session, patches, cls)
    if _tf.KerasVariable is not None and isinstance(vars(_tf.KerasVariable).get("value"), property):
        _patch_placeholder_value(patches, _tf.KerasVariable)
    for layer_cls in _tf.keras_layer_classes():
        _patch_layer(patches, layer_cls)
    for model_cls in _tf.keras_model_classes():
        _patch_compile(session, patches, model_cls)
    if _tf.KerasOptimizer is not None:
        _patch_optimizer(session, patches, _tf.KerasOptimizer)


def _patch_optimizer(session: Session, patches: Patches, cls) -> None:
    """A Keras optimizer's update (some 30 eager ops per variable, every step) is not
    recorded while no tape records: its ops read the gradients and write the variables
    in place, so no later forward pass or diagnosis can see a tensor they make; under a
    tape (an update inside a differentiated step) it is recorded as any op."""
    orig_apply = cls.apply

    def apply(self, *args, **kwargs):
        if session.recording or not _tf.executing_eagerly():
            return orig_apply(self, *args, **kwargs)
        with session.paused():
            return orig_apply(self, *args, **kwargs)

    patches.set(cls, "apply", apply)


def _patch_variable_init(session: Session, patches: Patches, cls) -> None:
    orig_init = cls.__init__

    def __init__(self, *args, **kwargs):
        orig_init(self, *args, **kwargs)
        session.note_variable(self)

    patches.set(cls, "__init__", __init__)


def _patch_placeholder_value(patches: Patches, cls) -> None:
    """A Keras 3 variable read before it was initialized gives its initializer's value, a
    constant (a layer built inside a trace, read by a nested ``tf.function`` traced then):
    where that first happened in a function's trace, on the variable (GC116 points there)."""
    orig = vars(cls)["value"]

    def value(self):
        unread = getattr(self, "_value", True) is None and getattr(self, "_gc_placeholder_read", None) is None
        if unread and _tf.inside_function():
            try:
                self._gc_placeholder_read = tuple(frames.stack_frames(_tf.extract_stack()))
            except (AttributeError, TypeError):
                pass
        return orig.fget(self)

    patches.set(cls, "value", property(value, orig.fset, orig.fdel, orig.__doc__))


def _patch_compile(session: Session, patches: Patches, cls) -> None:
    """Where the user compiled each model, with the losses and loss weights given: an output
    left without a loss starves the layers that compute only it (GC108 points there)."""
    orig_compile = cls.compile

    def compile(self, *args, **kwargs):
        site = frames.current_user_site()
        result = orig_compile(self, *args, **kwargs)
        loss = kwargs.get("loss", args[1] if len(args) > 1 else None)
        session.compiled[id(self)] = (weakref.ref(self), site, loss, kwargs.get("loss_weights"))
        return result

    patches.set(cls, "compile", compile)


def _patch_layer(patches: Patches, cls) -> None:
    """Where the user created each Keras layer, and where user code first applied it
    (``y = Embedding(...)(x)`` in a functional model): ``frames.layer_site`` reads them."""
    orig_init, orig_call = cls.__init__, cls.__call__

    def __init__(self, *args, **kwargs):
        orig_init(self, *args, **kwargs)
        _note_site(self, "_gc_site", frames.creation_site(self))

    def __call__(self, *args, **kwargs):
        if getattr(self, "_gc_call_site", None) is None:
            caller = sys._getframe(1)
            if frames.is_user_file(caller.f_code.co_filename):
                _note_site(self, "_gc_call_site", frames.frame_site(caller))
        return orig_call(self, *args, **kwargs)

    patches.set(cls, "__init__", __init__)
    patches.set(cls, "__call__", __call__)


def _note_site(layer, attribute: str, site) -> None:
    if site is not None and getattr(layer, attribute, None) is None:
        try:
            object.__setattr__(layer, attribute, site)  # past Keras's attribute tracking
        except (AttributeError, TypeError):
            pass
