"""Install and remove the tracer's hooks on TensorFlow and Keras (see ``session``):
``with tracing(session):`` runs the user's code with them."""

from __future__ import annotations

import os
import sys
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from functools import cached_property

from gradcheck import sourcemap
from gradcheck.trace import _tf, frames
from gradcheck.trace import graph as graph_mode
from gradcheck.trace.session import Session, StopCheck


def _strict() -> bool:
    """In gradcheck's own tests an engine error must fail loudly, not be a warning."""
    return os.environ.get("GRADCHECK_STRICT") == "1"


_ACTIVE: Session | None = None


def activate(session: Session) -> None:
    """Install the hooks for ``session`` (one session at a time)."""
    global _ACTIVE
    if _ACTIVE is not None:
        raise RuntimeError("a gradcheck session is already active")
    install(session)
    _ACTIVE = session


def deactivate(session: Session) -> None:
    global _ACTIVE
    if _ACTIVE is session:
        _ACTIVE = None
        uninstall(session)


@contextmanager
def tracing(session: Session) -> Iterator[Session]:
    activate(session)
    try:
        yield session
    finally:
        deactivate(session)


def install(session: Session) -> None:
    tape_cls = _tf.GradientTape
    orig_push, orig_pop = tape_cls._push_tape, tape_cls._pop_tape
    orig_watch, orig_gradient = tape_cls.watch, tape_cls.gradient
    recorder = session.recorder

    def _push_tape(self):
        creating = self._tape is None
        orig_push(self)
        session.on_push(self, creating)

    def _pop_tape(self):
        orig_pop(self)
        session.on_pop(self)

    def watch(self, tensor):
        orig_watch(self, tensor)
        state = session.tape_state(self)
        if state is not None:
            for t in _tf.tf.nest.flatten(tensor):
                if _tf.is_tensor(t) and not _tf.is_variable(t):
                    state.watched.append(t)
                    if state.shadow is not None:
                        _tf.watch_tensor(state.shadow, t)

    def gradient(
        self,
        target,
        sources,
        output_gradients=None,
        unconnected_gradients=_tf.UNCONNECTED_NONE,
    ):
        state = session.tape_state(self)
        if state is None or state.shadow is None or getattr(_inside, "jacobian", 0):
            return orig_gradient(self, target, sources, output_gradients, unconnected_gradients)
        zero = _tf.unconnected(unconnected_gradients) == _tf.UNCONNECTED_ZERO
        # ZERO hides disconnection: ask for None, diagnose, then fill zeros as TF would.
        unconnected = _tf.UNCONNECTED_NONE if zero else unconnected_gradients
        grads = _request(
            self,
            state,
            sys._getframe(1),
            target,
            sources,
            output_gradients,
            lambda: orig_gradient(self, target, sources, output_gradients, unconnected),
        )
        return _fill_zeros(sources, grads) if zero else grads

    def _jacobian_hook(orig):
        """``tape.jacobian`` / ``batch_jacobian`` ask TensorFlow for one gradient per row
        (inside a ``pfor`` function): to the user it is one request, checked as such."""

        def jacobian(self, target, sources, *args, **kwargs):
            state = session.tape_state(self)
            if state is None or state.shadow is None or getattr(_inside, "jacobian", 0):
                return orig(self, target, sources, *args, **kwargs)

            def compute():
                _inside.jacobian = getattr(_inside, "jacobian", 0) + 1
                try:
                    return orig(self, target, sources, *args, **kwargs)
                finally:
                    _inside.jacobian -= 1

            return _request(self, state, sys._getframe(1), target, sources, None, compute, jacobian=True)

        return jacobian

    def _request(self, state, caller, target, sources, output_gradients, compute, jacobian=False):
        """One gradient request of the user's: compute it, diagnose every None gradient
        (for a Jacobian, every source the target is not connected to on the tape), then
        the degenerate ones."""
        from gradcheck.trace import analyze, degenerate

        eager = _tf.executing_eagerly()
        call = CallSite(caller, eager)
        if eager:
            # per thread: under a MirroredStrategy each replica runs the same call once a step
            session._before_eager_gradient((caller.f_code, caller.f_lasti, threading.get_ident()))
        session.flush_watch()
        graph = None if eager else _tf.default_graph()
        upto = graph_mode.graph_mark(graph) if graph is not None else None
        # Backward ops of a first-order gradient are noise to the recorder; under an outer
        # tape (higher-order gradients) they are part of what that tape will differentiate.
        pause = session.paused() if not any(s is not state for s in session.recording) else nullcontext()
        try:
            try:
                with pause:
                    result = compute()
                if eager and not session.recording:
                    _record_gradient_call(session, target, sources, output_gradients, result)
            except LookupError as error:
                with session.paused():
                    findings = _guard(
                        session,
                        lambda err=error: analyze.no_gradient_registered(
                            session, self, state, target, sources, err, graph, upto, call
                        ),
                    )
                session.add_findings(findings)
                if findings and session.check_mode:
                    raise StopCheck() from error
                raise
            with session.paused():
                grads = _connected(state, target, sources) if jacobian else result
                findings = _guard(
                    session,
                    lambda: analyze.analyse(session, self, state, target, sources, grads, graph, upto, call),
                )
            session.add_findings(findings)
            if not jacobian:
                # GC2xx/GC301: gradients that exist but are degenerate (None ones are diagnosed above)
                degenerate.after_gradient(
                    session, self, state, target, sources, output_gradients, grads, graph, upto, call
                )
            if graph is not None:
                session.checked_graphs.setdefault(graph_mode.outermost_graph(graph), 0)
            return result
        finally:
            if not self._persistent:
                session.release(self)

    session.patch(tape_cls, "_push_tape", _push_tape)
    session.patch(tape_cls, "_pop_tape", _pop_tape)
    session.patch(tape_cls, "watch", watch)
    session.patch(tape_cls, "gradient", gradient)
    session.patch(tape_cls, "jacobian", _jacobian_hook(tape_cls.jacobian))
    session.patch(tape_cls, "batch_jacobian", _jacobian_hook(tape_cls.batch_jacobian))

    # Tensors leaving TensorFlow: .numpy(), __array__, float(), int(), bool() all call _numpy.
    orig_numpy = _tf.EagerTensorBase._numpy

    def _numpy(self):
        if not recorder.paused:
            recorder.note_escape(self)
        return orig_numpy(self)

    session.patch(_tf.EagerTensorBase, "_numpy", _numpy)

    # NumPy functions on eager tensors (np.mean(t), np.clip(t, ...)) read them through the
    # buffer protocol, which no Python method sees; NEP 18 dispatch lets us note the escape
    # and then compute exactly what NumPy would have.
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

    session.patch(_tf.EagerTensorBase, "__array_function__", __array_function__)
    _wrap_numpy_constructors(session)

    # In eager mode tf.numpy_function is plain Python: its result is a new constant. Record
    # it as the PyFunc op it is in graph mode, so GC106 names it.
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

    session.patch(constant_module, "_constant_eager_impl", _constant_eager_impl)

    # tf.custom_gradient records one tape op for its whole body in eager mode.
    record_module = _tf.record_operation_module()
    orig_record = record_module.record_operation

    def record_operation(op_type, output_tensors, input_tensors, backward_function, forward_function=None):
        if sys._getframe(1).f_code.co_filename.endswith("custom_gradient.py") and _tf.executing_eagerly():
            recorder.record_custom_gradient(op_type, output_tensors, input_tensors)
        return orig_record(op_type, output_tensors, input_tensors, backward_function, forward_function)

    session.patch(record_module, "record_operation", record_operation)

    orig_stop_recording = record_module.stop_recording

    @contextmanager
    def stop_recording():
        with orig_stop_recording():
            yield
        session.flush_watch()  # outputs made while paused (tf.stop_gradient's) are watched now

    session.patch(record_module, "stop_recording", stop_recording)

    # Graph-mode step accounting: a checked traced function about to run again.
    orig_call_flat = _tf.ConcreteFunction._call_flat

    def _call_flat(self, tensor_inputs, captured_inputs):
        session.note_function(self)
        session.before_function_call(self)
        return orig_call_flat(self, tensor_inputs, captured_inputs)

    session.patch(_tf.ConcreteFunction, "_call_flat", _call_flat)

    # Where variables are created (GC114 points there; GC116 needs "inside a trace").
    for cls in (_tf.ResourceVariable, _tf.UninitializedVariable, _tf.KerasVariable):
        if cls is not None:
            _wrap_init(session, cls)

    mapper = _tf.autograph_mapper_class()
    if mapper is not None:
        _wrap_autograph_mapper(session, mapper)
    for layer_cls in _tf.keras_layer_classes():
        _wrap_layer_init(session, layer_cls)
    for model_cls in _tf.keras_model_classes():
        _wrap_compile(session, model_cls)
    if _tf.KerasOptimizer is not None:
        _wrap_optimizer(session, _tf.KerasOptimizer)
    _wrap_legacy_optimizers(session)

    recorder.passed_variables = _tf.passed_variables
    _tf.add_op_callback(recorder.callback)


class CallSite:
    """The user's ``tape.gradient`` call, resolved only if a diagnosis needs it (most calls
    have no None gradient, and then cost nothing here). Valid during the call only."""

    def __init__(self, caller, eager: bool) -> None:
        self._caller, self._eager = caller, eager

    @cached_property
    def location(self):
        """Where the call is. While tracing, autograph runs a generated copy of the user's
        function; TensorFlow's own stack extraction maps it back to the user's file."""
        if self._eager:
            frame = frames.user_frame(self._caller)
            return frames.site_location(frames.frame_site(frame)) if frame is not None else None
        location = frames.stack_user_location(_tf.extract_stack())
        if location is None:
            return None
        node = sourcemap.call_node(location.path, location.line, "gradient")
        if node is not None:
            end = (node.end_col_offset or 0) + 1
            return frames.Location(location.path, location.line, node.col_offset + 1, node.end_lineno, end)
        # the gradient is taken inside a framework (model.fit): point at the user's call
        expr = sourcemap.expression_at(location.path, location.line)
        if expr is not None and expr.line == location.line:
            return frames.Location(location.path, location.line, expr.column, expr.end_line, expr.end_column)
        return location

    @cached_property
    def scope(self) -> tuple[str, str] | None:
        """The user function (file, name) that called ``tape.gradient`` itself, not through
        a framework (``model.fit``'s own train step): a forward pass that ran outside the
        tape is attributed to its call in that function."""
        if self._eager:
            code = self._caller.f_code
            return (code.co_filename, code.co_name) if frames.is_user_file(code.co_filename) else None
        stack = list(_tf.extract_stack())
        mine = [i for i, f in enumerate(stack) if f.name == "gradient" and f.filename == __file__]
        if not mine or mine[-1] == 0:
            return None
        caller = stack[mine[-1] - 1]  # autograph's copy of the user's function maps back to it
        return (caller.filename, caller.name) if frames.is_user_file(caller.filename) else None

    @cached_property
    def frames(self) -> list[frames.UserFrame]:
        """The user frames of the call, innermost first."""
        if self._eager:
            out, frame = [], self._caller
            while frame is not None:
                if frames.is_user_file(frame.f_code.co_filename):
                    out.append(frames.sites_frames(((frame.f_code, frame.f_lasti),))[0])
                frame = frame.f_back
            return out
        return frames.stack_frames(_tf.extract_stack())

    @cached_property
    def tensor_names(self) -> dict[int, str]:
        """id(tensor) -> the name the calling code gives it (for sources that are tensors),
        from the nearest frame that is not TensorFlow's (autograph's copy keeps names)."""
        frame = self._caller
        while frame is not None and not (
            frames.is_user_file(frame.f_code.co_filename) or "__autograph_generated_file" in frame.f_code.co_filename
        ):
            frame = frame.f_back
        names: dict[int, str] = {}
        if frame is not None:
            for scope in (frame.f_globals, frame.f_locals):
                for name, value in scope.items():
                    if _tf.is_tensor(value) and not name.startswith("_"):
                        names[id(value)] = name
        return names


#: NumPy's array constructors read an eager tensor through the buffer protocol (no Python
#: method of the tensor runs, and they do not dispatch on ``__array_function__``).
_NUMPY_CONSTRUCTORS = ("array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray")


def _wrap_numpy_constructors(session: Session) -> None:
    import functools

    import numpy as np

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

        session.patch(np, name, functools.wraps(original)(constructor))


def _numpy_function_inputs(frame, depth: int = 16):
    """The tensors passed to an eager ``tf.numpy_function`` converting its result now."""
    while frame is not None and depth:
        code = frame.f_code
        if code.co_name == "numpy_function" and code.co_filename.endswith("script_ops.py"):
            return [t for t in _tf.tf.nest.flatten(frame.f_locals.get("inp") or []) if _tf.is_tensor(t)]
        frame, depth = frame.f_back, depth - 1
    return None


def _fill_zeros(sources, grads):
    """What ``UnconnectedGradients.ZERO`` returns: zeros shaped like each unconnected source."""
    tf = _tf.tf
    flat_sources, flat_grads = tf.nest.flatten(sources), tf.nest.flatten(grads)
    filled = [
        g if g is not None else tf.zeros(s.shape, s.dtype) if _tf.is_variable(s) else tf.zeros_like(s)
        for s, g in zip(flat_sources, flat_grads, strict=False)
    ]
    return tf.nest.pack_sequence_as(sources, filled)


def _wrap_init(session: Session, cls) -> None:
    orig_init = cls.__init__

    def __init__(self, *args, **kwargs):
        orig_init(self, *args, **kwargs)
        session.note_variable(self)

    session.patch(cls, "__init__", __init__)


def _wrap_compile(session: Session, cls) -> None:
    """Where the user compiled each model, with the losses and loss weights given: an output
    left without a loss starves the layers that compute only it (GC108 points there)."""
    orig_compile = cls.compile

    def compile(self, *args, **kwargs):
        site = frames.current_user_site()
        result = orig_compile(self, *args, **kwargs)
        loss = kwargs.get("loss", args[1] if len(args) > 1 else None)
        session.compiled[id(self)] = (weakref.ref(self), site, loss, kwargs.get("loss_weights"))
        return result

    session.patch(cls, "compile", compile)


def _wrap_autograph_mapper(session: Session, cls) -> None:
    """Keep every source map autograph makes (see ``frames.AUTOGRAPH_LINES``)."""
    orig_init = cls.__init__

    def __init__(self, converted_fn, *args, **kwargs):
        orig_init(self, converted_fn, *args, **kwargs)
        for loc, origin in (getattr(converted_fn, "ag_source_map", None) or {}).items():
            key = (loc.filename, loc.lineno)
            if key not in frames.AUTOGRAPH_LINES:
                frames.AUTOGRAPH_LINES[key] = (origin.loc.filename, origin.loc.lineno, origin.function_name)

    session.patch(cls, "__init__", __init__)


def _wrap_layer_init(session: Session, cls) -> None:
    """Where the user created each Keras layer, and where user code first applied it
    (``y = Embedding(...)(x)`` in a functional model): ``frames.layer_site`` reads them."""
    orig_init, orig_call = cls.__init__, cls.__call__

    def __init__(self, *args, **kwargs):
        orig_init(self, *args, **kwargs)
        _note_site(self, "_gc_site", frames.current_user_site())

    def __call__(self, *args, **kwargs):
        if getattr(self, "_gc_call_site", None) is None:
            caller = sys._getframe(1)
            if frames.is_user_file(caller.f_code.co_filename):
                _note_site(self, "_gc_call_site", frames.frame_site(caller))
        return orig_call(self, *args, **kwargs)

    session.patch(cls, "__init__", __init__)
    session.patch(cls, "__call__", __call__)


def _note_site(layer, attribute: str, site) -> None:
    if site is not None and getattr(layer, attribute, None) is None:
        try:
            object.__setattr__(layer, attribute, site)  # past Keras's attribute tracking
        except (AttributeError, TypeError):
            pass


def _wrap_optimizer(session: Session, cls) -> None:
    orig_apply = cls.apply

    def apply(self, grads, trainable_variables=None):
        if session.skip_updates:
            return None  # a check must not train: the checked step leaves weights unchanged
        try:
            return orig_apply(self, grads, trainable_variables)
        except ValueError as error:
            if "No gradients provided" in str(error) and session.findings:
                from gradcheck.output.text import render_findings

                diagnosis = render_findings(session.findings[-5:], color=False)
                raise ValueError(f"{error}\n\ngradcheck diagnosis:\n{diagnosis}") from error
            raise

    session.patch(cls, "apply", apply)


def _wrap_legacy_optimizers(session: Session) -> None:
    """tf_keras (Keras 2) optimizers skip their update during a check too: the new-style
    ``Optimizer.apply_gradients`` and the legacy ``OptimizerV2.apply_gradients`` (both
    reached by ``minimize`` and by ``fit``'s train step). Patched when ``tf.keras`` is
    tf_keras (``TF_USE_LEGACY_KERAS=1``) or tf_keras is already imported: importing it
    costs a second, so a Keras 3 check does not."""
    if not (_tf.legacy_keras() or "tf_keras" in sys.modules):
        return
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
    for cls in classes:
        orig_apply = cls.apply_gradients

        def apply_gradients(self, grads_and_vars, *args, _orig=orig_apply, **kwargs):
            if session.skip_updates:
                return None  # a check must not train: the checked step leaves weights unchanged
            try:
                return _orig(self, grads_and_vars, *args, **kwargs)
            except ValueError as error:
                if "No gradients provided" in str(error) and session.findings:
                    from gradcheck.output.text import render_findings

                    diagnosis = render_findings(session.findings[-5:], color=False)
                    raise ValueError(f"{error}\n\ngradcheck diagnosis:\n{diagnosis}") from error
                raise

        session.patch(cls, "apply_gradients", apply_gradients)


def uninstall(session: Session) -> None:
    try:
        _tf.remove_op_callback(session.recorder.callback)
    except (KeyError, ValueError):
        pass
    session.restore()


#: Per thread: inside a ``tape.jacobian``, whose own gradient calls are not the user's.
_inside = threading.local()


def _connected(state, target, sources):
    """For each source, whether the target is connected to it on the tape: the gradient of
    its sum from the shadow tape (None where unconnected), as a Jacobian is None (or, from
    ``batch_jacobian``, zeros) exactly where these are."""
    tf = _tf.tf
    flat = tf.nest.flatten(sources)
    asked = [_tf.handle_of(s) if _tf.is_variable(s) else s for s in flat]
    return _tf.imperative_gradient(state.shadow, [target], asked)


def _record_gradient_call(session, target, sources, output_gradients, grads) -> None:
    """Eager, after the tape stopped recording: keep the path from what was differentiated
    to the gradients (``forces = -tape.gradient(energy, x)`` then a loss on ``forces``)."""
    tf = _tf.tf
    inputs = [
        _tf.handle_of(t) if _tf.is_variable(t) else t
        for t in tf.nest.flatten([target, sources, output_gradients])
        if _tf.is_tensor(t) or _tf.is_variable(t)
    ]
    outputs = [g for g in tf.nest.flatten(grads) if _tf.is_tensor(g)]
    if inputs and outputs:
        session.recorder.record_gradient_call(inputs, outputs)


def _guard(session: Session, fn):
    """Run the diagnosis; an error in gradcheck itself must not break the user's step."""
    try:
        return fn()
    except StopCheck:
        raise
    except Exception as error:
        if _strict():
            raise
        message = f"gradcheck: internal error while diagnosing a gradient: {type(error).__name__}: {error}"
        session.internal_errors.append(message)
        print(message, file=sys.stderr)
        return []
