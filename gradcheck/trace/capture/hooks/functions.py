"""Hook step: functions and recording scopes. ``tf.custom_gradient`` records one tape op for
its whole body in eager mode (noted as such), ``stop_recording`` flushes the outputs made
while paused, a traced function about to run counts the graph-mode steps, every source
map autograph makes is kept (``frames.AUTOGRAPH_LINES``), and in a check a function asked to
compile with XLA (``tf.function(jit_compile=True)``, ``model.compile(jit_compile=True)``,
which makes one) is traced without it: an XLA cluster cannot call back into Python, so its
gradient values (GC201, GC202, GC204) could not be checked. The check stops after its
steps; what XLA changes is how the same ops are fused, not what they compute."""

from __future__ import annotations

import sys
from contextlib import contextmanager

from gradcheck.trace.capture.patches import Patches
from gradcheck.trace.capture.session import Session
from gradcheck.trace.record import _tf, frames, hostpoint
from gradcheck.trace.record.errors import StopCheck, stop_program


def install(session: Session, patches: Patches) -> None:
    _patch_record_operation(session, patches)
    _patch_stop_recording(session, patches)
    _patch_function_calls(session, patches)
    if session.check_mode:
        _patch_jit_compile(session, patches)
    mapper = _tf.autograph_mapper_class()
    if mapper is not None:
        _patch_autograph_mapper(patches, mapper)


def _patch_record_operation(session: Session, patches: Patches) -> None:
    record_module = _tf.record_operation_module()
    orig_record = record_module.record_operation

    def record_operation(op_type, output_tensors, input_tensors, backward_function, forward_function=None):
        if sys._getframe(1).f_code.co_filename.endswith("custom_gradient.py") and _tf.executing_eagerly():
            session.recorder.record_custom_gradient(op_type, output_tensors, input_tensors)
        return orig_record(op_type, output_tensors, input_tensors, backward_function, forward_function)

    patches.set(record_module, "record_operation", record_operation)


def _patch_stop_recording(session: Session, patches: Patches) -> None:
    record_module = _tf.record_operation_module()
    orig_stop_recording = record_module.stop_recording

    @contextmanager
    def flushing():
        with orig_stop_recording():
            yield
        session.flush_watch()  # outputs made while paused (tf.stop_gradient's) are watched now

    def stop_recording():
        # every traced function's call pauses the tapes: with none recording, nothing to watch
        return flushing() if session.recording else orig_stop_recording()

    patches.set(record_module, "stop_recording", stop_recording)


def _patch_function_calls(session: Session, patches: Patches) -> None:
    """Graph-mode step accounting: a checked traced function about to run again."""
    orig_call_flat = _tf.ConcreteFunction._call_flat

    recorder = session.recorder

    def _call_flat(self, tensor_inputs, captured_inputs):
        if session.stop_pending is not None and hostpoint.stop_due(session, self):
            session.stop_pending = None
            raise stop_program()  # called for in a callback of its last run (``hostpoint``)
        session.note_function(self)
        runs = _count_run(session, self)
        if runs > 0:
            session.poll_values(runs)
        # which function a Python callback of its run belongs to (``hostpoint.defer_stop``):
        # one the user's threads call, not one called inside such a callback
        host = hostpoint.thread_key() != 0 and not hostpoint.in_own_work()
        if host:
            session.host_calls.append(self)
        try:
            if runs <= 0 or session.recording:
                return orig_call_flat(self, tensor_inputs, captured_inputs)
            # A training step run again outside any tape: its call op was recorded on its
            # first run, and what it holds is checked in its graph; recording it at every
            # step of a long ``fit`` would cost a stack walk and a record per step for nothing.
            recorder.paused += 1
            try:
                return orig_call_flat(self, tensor_inputs, captured_inputs)
            finally:
                recorder.paused -= 1
        finally:
            if host:
                session.host_calls.pop()

    patches.set(_tf.ConcreteFunction, "_call_flat", _call_flat)


def _count_run(session: Session, concrete) -> int:
    """``Session.before_function_call``, save in gradcheck's own work (a value check's host
    callback calling a function again) and inside a Python callback of TensorFlow's runtime,
    where a stop would crash the user's graph: there it waits for the next host point."""
    if hostpoint.in_own_work():
        return -1
    try:
        return session.before_function_call(concrete)
    except StopCheck:
        if hostpoint.at_host_point():
            raise
        hostpoint.defer_stop(session)
        return -1


def _patch_jit_compile(session: Session, patches: Patches) -> None:
    try:  # private; a TensorFlow without it keeps its XLA functions (their values unchecked)
        from tensorflow.python.eager.polymorphic_function.polymorphic_function import Function
    except ImportError:
        return
    orig_init = Function.__init__

    def __init__(self, *args, **kwargs):
        orig_init(self, *args, **kwargs)
        if getattr(self, "_jit_compile", None):
            self._jit_compile = None

    patches.set(Function, "__init__", __init__)


def _patch_autograph_mapper(patches: Patches, cls) -> None:
    """Keep every source map autograph makes (see ``frames.AUTOGRAPH_LINES``)."""
    orig_init = cls.__init__

    def __init__(self, converted_fn, *args, **kwargs):
        orig_init(self, converted_fn, *args, **kwargs)
        for loc, origin in (getattr(converted_fn, "ag_source_map", None) or {}).items():
            key = (loc.filename, loc.lineno)
            if key not in frames.AUTOGRAPH_LINES:
                frames.AUTOGRAPH_LINES[key] = (origin.loc.filename, origin.loc.lineno, origin.function_name)

    patches.set(cls, "__init__", __init__)
