"""Hook step: tensors leaving TensorFlow. ``.numpy()``, ``__array__``, ``float()``, ``int()``
and ``bool()`` all call ``_numpy``; NumPy functions and array constructors read an eager
tensor without any Python method of it running; an eager ``tf.numpy_function`` returns a
new constant. Each is noted by the recorder, so a host escape is found where it happened."""

from __future__ import annotations

import functools
import sys

import numpy as np

from gradcheck.trace.capture.patches import Patches
from gradcheck.trace.capture.session import Session
from gradcheck.trace.record import _tf
from gradcheck.trace.record import graph as graph_mode

#: NumPy's array constructors read an eager tensor through the buffer protocol (no Python
#: method of the tensor runs, and they do not dispatch on ``__array_function__``).
_NUMPY_CONSTRUCTORS = ("array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray")


def install(session: Session, patches: Patches) -> None:
    _patch_numpy_method(session, patches)
    _patch_array_function(session, patches)
    _patch_numpy_constructors(session, patches)
    _patch_numpy_ufuncs(session, patches)
    _patch_numpy_function_results(session, patches)
    _patch_dataset_functions(session, patches)


def uninstall(session: Session, patches: Patches) -> None:
    session.__dict__.get("ufunc_notes", {})["on"] = False
    patches.restore()


def pipeline_reads(session: Session) -> dict:
    """id(variable handle) -> the user's line where a ``tf.data`` function reads it."""
    return session.__dict__.setdefault("pipeline_reads", {})


def _patch_dataset_functions(session: Session, patches: Patches) -> None:
    """Values leaving the tape the other way: a ``tf.data`` function (``dataset.map(f)``)
    that reads a trained variable runs in the input pipeline, and the batches reach the
    tape as constants. Note which variables each traced pipeline function captures."""
    cls = _tf.dataset_function_class()
    if cls is None:
        return
    orig_init = cls.__init__

    def __init__(self, *args, **kwargs):
        orig_init(self, *args, **kwargs)
        try:
            graph = self.function.graph
            graph_mode.note_pipeline_reads(pipeline_reads(session), graph, session.variables_by_handle())
        except Exception:  # noqa: BLE001 - noting is best effort; the user's pipeline must not fail
            pass

    patches.set(cls, "__init__", __init__)


def _patch_numpy_method(session: Session, patches: Patches) -> None:
    recorder, orig_numpy = session.recorder, _tf.EagerTensorBase._numpy

    def _numpy(self):
        if not recorder.paused:
            recorder.note_escape(self)
        return orig_numpy(self)

    patches.set(_tf.EagerTensorBase, "_numpy", _numpy)


def _patch_array_function(session: Session, patches: Patches) -> None:
    """NumPy functions on eager tensors (np.mean(t), np.clip(t, ...)) read them through the
    buffer protocol, which no Python method sees; NEP 18 dispatch lets us note the escape
    and then compute exactly what NumPy would have."""
    recorder, orig_numpy = session.recorder, _tf.EagerTensorBase._numpy

    def __array_function__(self, func, types, args, kwargs):
        flat = _tf.tf.nest.flatten((args, kwargs))
        tensors = [t for t in flat if isinstance(t, _tf.EagerTensorBase)]
        if not recorder.paused:
            for t in tensors:
                recorder.note_escape(t)
        args, kwargs = _tf.tf.nest.map_structure(
            lambda v: orig_numpy(v) if isinstance(v, _tf.EagerTensorBase) else v, (args, kwargs)
        )
        return func(*args, **kwargs)

    patches.set(_tf.EagerTensorBase, "__array_function__", __array_function__)


def _patch_numpy_constructors(session: Session, patches: Patches) -> None:
    recorder, tensor_type = session.recorder, _tf.EagerTensorBase

    def note(value) -> None:
        if isinstance(value, tensor_type):
            recorder.note_escape(value)
        elif isinstance(value, (list, tuple)) and len(value) <= 64:
            for item in value:
                if isinstance(item, tensor_type):
                    recorder.note_escape(item)

    for name in _NUMPY_CONSTRUCTORS:
        original = getattr(np, name, None)
        if original is None:
            continue

        def constructor(*args, _original=original, **kwargs):
            if args and not recorder.paused:
                note(args[0])
            return _original(*args, **kwargs)

        patches.set(np, name, functools.wraps(original)(constructor))


class _NotingUfunc:
    """``np.maximum`` and every other ufunc of NumPy's namespace, noting the eager tensors it
    is called on. A ufunc reads a tensor through the buffer protocol, which no Python method
    sees, and ``__array_ufunc__`` on the tensor would change what ``ndarray + tensor`` is (a
    Tensor today, through the tensor's ``__radd__``). Everything but the call is the ufunc's
    own (``.reduce``, ``.outer``, ``.nin``...), and the call computes exactly what it did."""

    __slots__ = ("__wrapped__", "_note", "_ufunc")

    def __init__(self, ufunc: np.ufunc, note) -> None:
        self._ufunc = ufunc
        self._note = note
        self.__wrapped__ = ufunc

    def __call__(self, *args, **kwargs):
        self._note(args)  # (in a tf.function the arguments are symbolic: nothing to note)
        return self._ufunc(*args, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self._ufunc, name)

    def __repr__(self) -> str:
        return repr(self._ufunc)


setattr(_NotingUfunc, _tf.AUTOGRAPH_ARTIFACT, frozenset())  # called as it is inside a tf.function


def _patch_numpy_ufuncs(session: Session, patches: Patches) -> None:
    recorder, tensor_type = session.recorder, _tf.EagerTensorBase
    # a module that did `from numpy import maximum` while the hooks were in keeps the proxy:
    # once they come off (``uninstall``) it only computes
    active = session.__dict__.setdefault("ufunc_notes", {"on": True})

    def note(args) -> None:
        if recorder.paused or not active["on"]:
            return
        for value in args:
            if isinstance(value, tensor_type):
                recorder.note_escape(value)

    for name, value in list(vars(np).items()):
        if isinstance(value, np.ufunc) and not name.startswith("_"):
            patches.set(np, name, _NotingUfunc(value, note))


def _patch_numpy_function_results(session: Session, patches: Patches) -> None:
    """In eager mode tf.numpy_function is plain Python: its result is a new constant. Record
    it as the PyFunc op it is in graph mode, so GC106 names it."""
    recorder = session.recorder
    constant_module = _tf.constant_module()
    orig_constant = constant_module._constant_eager_impl

    def _constant_eager_impl(ctx, value, dtype, shape, verify_shape):
        tensor = orig_constant(ctx, value, dtype, shape, verify_shape)
        if session.recording and not recorder.paused:
            inputs = _numpy_function_inputs(sys._getframe(1))
            if inputs is not None:
                recorder.record_host_function("PyFunc", inputs, [tensor])
                session.watch_outputs([tensor], lambda t: _tf.is_differentiable_dtype(t.dtype))
        return tensor

    patches.set(constant_module, "_constant_eager_impl", _constant_eager_impl)


def _numpy_function_inputs(frame, depth: int = 16):
    """The tensors passed to an eager ``tf.numpy_function`` converting its result now."""
    while frame is not None and depth:
        code = frame.f_code
        if code.co_name == "numpy_function" and code.co_filename.endswith("script_ops.py"):
            return [t for t in _tf.tf.nest.flatten(frame.f_locals.get("inp") or []) if _tf.is_tensor(t)]
        frame, depth = frame.f_back, depth - 1
    return None
