"""Hook step: ``tf.GradientTape``. Pushing and popping a tape keeps gradcheck's shadow tape
beside it, ``watch`` is mirrored on the shadow, and each ``gradient`` / ``jacobian`` /
``batch_jacobian`` request becomes one ``GradientCall`` run through the registered checks."""

from __future__ import annotations

import sys
import threading
from contextlib import nullcontext
from dataclasses import replace
from functools import cached_property

from gradcheck import sourcemap
from gradcheck.trace.capture.patches import Patches
from gradcheck.trace.capture.session import Session
from gradcheck.trace.diagnose import applied
from gradcheck.trace.diagnose.escape import host_target
from gradcheck.trace.record import _tf, frames, hostpoint, registry, restop
from gradcheck.trace.record import graph as graph_mode
from gradcheck.trace.record.call import GradientCall
from gradcheck.trace.record.errors import StopCheck, internal_error, stop_program, strict

#: Per thread: inside a ``tape.jacobian``, whose own gradient calls are not the user's.
_inside = threading.local()


def install(session: Session, patches: Patches) -> None:
    tape_cls = _tf.GradientTape
    orig_push, orig_pop = tape_cls._push_tape, tape_cls._pop_tape
    orig_watch, orig_gradient = tape_cls.watch, tape_cls.gradient

    def _push_tape(self):
        creating = self._tape is None
        orig_push(self)
        session.on_push(self, creating)
        state = session.tape_state(self)
        if state is not None and state.opened_at is None:
            _note_opening(session, state)

    def _pop_tape(self):
        orig_pop(self)
        error = sys.exc_info()[1]
        if error is not None and _tf.executing_eagerly():
            # the `with` block is left by an exception: which tape recorded when it was raised
            # (a crash that is a host escape's consequence is diagnosed from it, escape.py)
            state = session.tape_state(self)
            if state is not None and state in session.recording:
                # the error's id, not the error: its traceback would keep the step's tensors alive
                session.__dict__["tape_at_error"] = (id(error), state, session.recorder.seq)
        session.on_pop(self)

    def watch(self, tensor):
        orig_watch(self, tensor)
        state = session.tape_state(self)
        if state is not None:
            flat = [t for t in _tf.tf.nest.flatten(tensor) if _tf.is_tensor(t) and not _tf.is_variable(t)]
            for t in flat:
                state.watched.append(t)
                if state.shadow is not None:
                    _tf.watch_tensor(state.shadow, t)
            if flat:
                state.watch_sites.append((frames.current_user_site(), flat))

    def gradient(
        self,
        target,
        sources,
        output_gradients=None,
        unconnected_gradients=_tf.UNCONNECTED_NONE,
    ):
        state = session.tape_state(self)
        _mark_reached(session, sys._getframe(1))
        if (
            state is None
            or state.shadow is None
            or getattr(_inside, "jacobian", 0)
            or getattr(_inside, "request", 0)
            or hostpoint.in_own_work()
        ):
            # inside another request's computation (a custom gradient's backward function
            # asking a tape of its own), or a value check's own (its host callback calling a
            # custom gradient again): part of that, neither a step nor a check
            return orig_gradient(self, target, sources, output_gradients, unconnected_gradients)
        zero = _tf.unconnected(unconnected_gradients) == _tf.UNCONNECTED_ZERO
        # ZERO hides disconnection: ask for None, diagnose, then fill zeros as TF would.
        unconnected = _tf.UNCONNECTED_NONE if zero else unconnected_gradients
        grads = _request(
            session,
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
            _mark_reached(session, sys._getframe(1))
            if state is None or state.shadow is None or getattr(_inside, "jacobian", 0) or hostpoint.in_own_work():
                return orig(self, target, sources, *args, **kwargs)

            def compute():
                _inside.jacobian = getattr(_inside, "jacobian", 0) + 1
                try:
                    return orig(self, target, sources, *args, **kwargs)
                finally:
                    _inside.jacobian -= 1

            return _request(session, self, state, sys._getframe(1), target, sources, None, compute, jacobian=True)

        return jacobian

    patches.set(tape_cls, "_push_tape", _push_tape)
    patches.set(tape_cls, "_pop_tape", _pop_tape)
    patches.set(tape_cls, "watch", watch)
    patches.set(tape_cls, "gradient", gradient)
    patches.set(tape_cls, "jacobian", _jacobian_hook(tape_cls.jacobian))
    patches.set(tape_cls, "batch_jacobian", _jacobian_hook(tape_cls.batch_jacobian))


def _note_opening(session: Session, state) -> None:
    """Where the user opened the tape, and whether a tape still recording was opened by the
    same line: tapes opened together record one forward pass for two models (a GAN's
    ``with tf.GradientTape() as d_tape, tf.GradientTape() as g_tape:``)."""
    site = frames.current_user_site(converted=True)
    if site is None:
        return
    location = frames.site_location(site)
    state.opened_at = (location.path, location.line)
    for other in session.recording:
        if other is not state and other.opened_at == state.opened_at:
            other.together = state.together = True


def _request(session, tape, state, caller, target, sources, output_gradients, compute, jacobian=False):
    """One gradient request of the user's: compute it, diagnose every None gradient (for a
    Jacobian, every source the target is not connected to on the tape), then the
    degenerate ones: the ``lookup``, ``none`` and ``values`` phases of the registry."""
    eager = _tf.executing_eagerly()
    if eager and not jacobian and not _tf.tf.nest.flatten(sources):
        # asks for nothing (``model.trainable_variables`` read before the model's first call,
        # so empty at the first update only): it checks nothing, so it spends no step
        return compute()
    if eager and not _count_eager_call(session, caller, state):
        return compute()  # an inner call repeated under a recording outer tape: checked once
    session.flush_watch()
    graph = None if eager else _tf.default_graph()
    call = GradientCall(
        session,
        tape,
        state,
        target,
        sources,
        output_gradients,
        CallSite(caller, eager),
        graph=graph,
        upto=graph_mode.graph_mark(graph) if graph is not None else None,
        jacobian=jacobian,
    )
    # Backward ops of a first-order gradient are noise to the recorder; under an outer
    # tape (higher-order gradients) they are part of what that tape will differentiate.
    pause = session.paused() if not any(s is not state for s in session.recording) else nullcontext()
    # what runs from here on (the gradient, the diagnosis's own questions to the shadow
    # tape) may call a custom gradient's backward function, and the tape it opens: part of
    # this request, neither a step of the user's nor a request to check
    _inside.request = getattr(_inside, "request", 0) + 1
    try:
        try:
            with pause:
                result = compute()
            if eager and not session.recording:
                _record_gradient_call(session, target, sources, output_gradients, result)
        except (AttributeError, TypeError, ValueError) as error:
            if not host_target(call.flat_targets):
                raise
            # A loss computed with NumPy (``np.mean(np.abs(p - y))``): TensorFlow fails on the
            # host value. Every source gets no gradient; the diagnosis says why (GC105).
            failed = call.with_gradients([None] * len(call.flat_sources))
            with session.paused(), hostpoint.own_work():
                findings = _guard(session, lambda: registry.run("none", failed))
            session.add_findings(findings)
            if findings and session.check_mode:
                raise stop_program() from error
            raise
        except LookupError as error:
            failed = replace(call, error=error, memo=call.memo)
            with session.paused(), hostpoint.own_work():
                findings = _guard(session, lambda: registry.run("lookup", failed))
            session.add_findings(findings)
            if findings and session.check_mode:
                raise stop_program() from error
            raise
        # gradcheck's own questions from here on (``hooks.distribute``: in a replica they
        # never synchronise the replicas)
        with session.paused(), hostpoint.own_work():
            call = call.with_gradients(_connected(state, target, sources) if jacobian else result)
            findings = _guard(session, lambda: registry.run("none", call))
            if not jacobian:  # which source each gradient is for: the optimizer hook asks (diagnose.applied)
                _guard(session, lambda: applied.note_request(session, call, result) or [])
        session.add_findings(findings)
        if not jacobian:
            # GC2xx/GC301: gradients that exist but are degenerate (None ones are diagnosed above)
            _values_phase(session, call)
        if graph is not None:
            session.checked_graphs.setdefault(graph_mode.outermost_graph(graph), 0)
        return result
    finally:
        _inside.request -= 1
        # the value checks' Checked holds a Context that holds this call: a cycle, which
        # kept every tensor of the step the Context had looked up alive until a full
        # collection (+230 MB a critic step on a WGAN-GP)
        call.memo.clear()
        if not tape._persistent:
            session.release(tape)


def _mark_reached(session: Session, caller) -> None:
    """The file's training entry points on the stack are reached (``capture.reach``), also by
    a request inside another's computation (a custom gradient's own tape); a traced step's
    own lines are in TensorFlow's stack, which autograph's copy hides from the live frames.
    Not by gradcheck's own work (a value check calling a custom gradient again)."""
    if session.reach is None or hostpoint.in_own_work():
        return
    traced = () if _tf.executing_eagerly() else [(f.filename, f.lineno) for f in _tf.extract_stack()]
    session.reach.mark_stack(caller, traced)


def _count_eager_call(session: Session, caller, state) -> bool:
    """Count an eager gradient call as a step (``Session._before_eager_gradient``): True to
    check it. Per thread: under a MirroredStrategy each replica runs the same call once a
    step. A stop the budget calls for inside a Python callback of TensorFlow's runtime (a
    step run through a ``py_function``) would crash the user's graph there: it is deferred
    to a host point, and this call runs on unchecked (``record.hostpoint``)."""
    try:
        return session._before_eager_gradient((caller.f_code, caller.f_lasti, hostpoint.thread_key()), state)
    except StopCheck:
        if hostpoint.at_host_point():
            raise
        hostpoint.defer_stop(session)
        restop.resume()  # deferred: not raised again inside the callback (restop), only at the host point
        return False


def _values_phase(session: Session, call: GradientCall) -> None:
    """The ``values`` checks; they never raise into the user's step (except under
    ``GRADCHECK_STRICT=1``, in tests) and their findings add to the None diagnosis."""
    if call.state is None or call.state.shadow is None:
        return
    try:
        with session.paused(), _tf.stop_recording(), hostpoint.own_work():
            findings = registry.run("values", call)
    except Exception as error:  # noqa: BLE001 - gradcheck must not break the user's step
        internal_error(error)
        return
    session.add_value_findings(findings)


class CallSite:
    """The user's ``tape.gradient`` call, resolved only if a diagnosis needs it (most calls
    have no None gradient, and then cost nothing here). Valid during the call only."""

    def __init__(self, caller, eager: bool) -> None:
        self._caller, self._eager = caller, eager

    @property
    def caller(self):
        """The calling frame (eager mode: alive during the check)."""
        return self._caller

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


def _fill_zeros(sources, grads):
    """What ``UnconnectedGradients.ZERO`` returns: zeros shaped like each unconnected source."""
    tf = _tf.tf
    flat_sources, flat_grads = tf.nest.flatten(sources), tf.nest.flatten(grads)
    filled = [
        g if g is not None else tf.zeros(s.shape, s.dtype) if _tf.is_variable(s) else tf.zeros_like(s)
        for s, g in zip(flat_sources, flat_grads, strict=False)
    ]
    return tf.nest.pack_sequence_as(sources, filled)


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
        if strict():
            raise
        message = f"gradcheck: internal error while diagnosing a gradient: {type(error).__name__}: {error}"
        session.internal_errors.append(message)
        print(message, file=sys.stderr)
        return []
