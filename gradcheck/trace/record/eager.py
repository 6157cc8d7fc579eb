"""Eager mode: record every op as it runs, with the user's line and the tapes recording it.

An op callback (``op_callbacks.add_op_callback``; registering one turns off the eager
fast path, so every op is seen) stores each executed op's input and output tensor ids
(``EagerTensor._id``), the innermost user frame, and which checked tapes were recording.
Outputs of ops run while a tape records can later be asked about (does the loss have a
gradient with respect to them, what was their value): the output of a stateless op is held
until a taped op consumes it, then by weak reference, with the op's attributes to compute it
again once freed (``eager_freed``); the others (variable reads, random draws, function calls), and the
inputs no recorded op produced, are held. Ops run outside every tape keep
ids only: they are what shows a forward pass done before the tape opened (GC109).
Tensors that leave TensorFlow (``.numpy()``, ``float()``, NumPy calls) are noted too.
"""

from __future__ import annotations

import sys
import threading
import weakref
from dataclasses import dataclass

from gradcheck.trace.record import frames
from gradcheck.trace.record.dataflow import GRADIENT_CALL, TAG_ASSIGN, TAG_CUSTOM_GRADIENT, TAG_FUNCTION, TAG_READ, Flow
from gradcheck.trace.record.eager_freed import StepTensors, deref

#: DataType enums (types.proto) that carry gradients: half, float, double, bfloat16, complex.
_DIFFERENTIABLE_ENUMS = frozenset({1, 2, 8, 14, 18, 19})
_RESOURCE_ENUM = 20
_VARIANT_ENUM = 21  # TensorList handles: a while loop's values, and their gradients
_ASSIGN_OPS = frozenset(
    {
        "AssignVariableOp",
        "AssignAddVariableOp",
        "AssignSubVariableOp",
        "ResourceScatterUpdate",
        "ResourceScatterAdd",
        "ResourceScatterSub",
        "ResourceScatterNdUpdate",
        "ResourceScatterNdAdd",
        "ResourceStridedSliceAssign",  # ``v[i, a:b].assign(x)``
    }
)
#: An optimizer's fused update (tf_keras's and the legacy optimizers' ``ResourceApplyAdam``,
#: ``ResourceApplyGradientDescent`` ...) writes its first input from the gradient it is given:
#: an assignment, as Keras 3's ``assign_sub`` is.
_APPLY_PREFIXES = ("ResourceApply", "ResourceSparseApply")


def is_assign(op_type: str) -> bool:
    """``op_type`` writes a value into the variable its first input names."""
    return op_type in _ASSIGN_OPS or op_type.startswith(_APPLY_PREFIXES)


_READ_OPS = frozenset({"ReadVariableOp", "ResourceGather", "ResourceGatherNd"})


@dataclass(slots=True)
class Record:
    seq: int
    type: str
    inputs: tuple
    outputs: tuple
    site: tuple | None  # frames.Sites: the user frames, innermost first
    tapes: tuple  # ids of the checked tapes recording when the op ran
    tag: str = ""
    # the output tensors while a tape may ask about them; with ``attrs``, a list whose
    # entries become weak references once a taped op consumes them (``_consumed``)
    refs: tuple | list | None = None
    metric: bool = False  # an assignment a Keras metric made (its running state)
    attrs: tuple | None = None  # a stateless op's attributes: a freed output can be computed again


#: op type -> whether running it again gives the same outputs (a stateless registered op)
_REPEATABLE: dict[str, bool] = {}


def _tf_should_record(inputs) -> bool:
    """Whether a tape recording now records an op on ``inputs`` (False when they are paused:
    ``tf.stop_gradient``, gradcheck's own work)."""
    from tensorflow.python import pywrap_tfe

    return pywrap_tfe.TFE_Py_TapeSetShouldRecordBackprop(inputs)


def _repeatable(op_type: str) -> bool:
    known = _REPEATABLE.get(op_type)
    if known is None:
        from tensorflow.python.framework import op_def_registry

        op_def = op_def_registry.get(op_type)
        known = _REPEATABLE[op_type] = op_def is not None and not op_def.is_stateful
    return known


def _key(t) -> int | None:
    return getattr(t, "_id", None)


def _eager_is_float(t) -> bool:
    return t._datatype_enum() in _DIFFERENTIABLE_ENUMS


def _graph_is_float(t) -> bool:
    dtype = t.dtype
    return dtype.is_floating or dtype.is_complex


def _user_sites(frame, limit: int = 8):
    """``frames.current_user_sites`` from ``frame``, inlined: it runs for every eager op, over
    the 30-50 TensorFlow and Keras frames between the op and the user's code."""
    known = frames._USER_CODE
    out = []
    while frame is not None:
        code = frame.f_code
        user = known.get(code)
        if user is None:
            user = frames._is_user_code(code)
        if user:
            out.append((code, frame.f_lasti))
            if len(out) == limit:
                break
        frame = frame.f_back
    return tuple(out) or None


class _PerThread(threading.local):
    """What the recorder knows of one thread: the checked tapes recording in it (tapes are
    per thread, as TensorFlow's tape stack and op callbacks are), and whether gradcheck's
    own work in it pauses recording. A training run in a worker thread is its own."""

    def __init__(self) -> None:
        self.active: tuple[int, ...] = ()
        self.paused = 0


class EagerRecorder:
    def __init__(self, session, limit: int = 400_000) -> None:
        self.session = session
        self.records: list[Record] = []
        self._released = 0  # records[:_released] keep no tensors (release_before went past them)
        self.seq = 0
        self.limit = limit
        self._thread = _PerThread()
        self.dtypes: dict[int, int] = {}  # tensor id -> DataType enum
        # tensor id -> [(seq, user site, code)] where its value left TensorFlow, oldest first
        self.escapes: dict[int, list[tuple[int, tuple, str]]] = {}
        self.producer_seq: dict[int, int] = {}  # tensor id -> seq of its producing record
        # Float inputs of in-tape ops that no recorded op produced: constants, and the
        # variable reads TensorFlow's C++ fast path performs without any callback.
        self.orphans: dict[int, object] = {}
        # Inputs of in-tape ops not held by their producer's record (constants, the batch,
        # values computed before the tape): what a freed value is computed again from.
        self.held: dict[int, object] = {}
        #: ``(op_type, positions, n_inputs) -> {position: variable}``: the variables passed
        #: straight to the op being executed (set by the hooks; see ``_tf.passed_variables``).
        self.passed_variables = None

    @property
    def active(self) -> tuple[int, ...]:
        """Ids of the checked tapes recording now, in this thread."""
        return self._thread.active

    @active.setter
    def active(self, value: tuple[int, ...]) -> None:
        self._thread.active = value

    @property
    def paused(self) -> int:
        return self._thread.paused

    @paused.setter
    def paused(self, value: int) -> None:
        self._thread.paused = value

    # -- the op callback --------------------------------------------------------------
    def callback(self, op_type, inputs, attrs, outputs, op_name=None, graph=None):
        if self.paused:
            return None
        if self.session.recording:
            self.session.watch_outputs(outputs or (), _graph_is_float if graph is not None else _eager_is_float)
        if graph is not None:
            if self.session.recording and outputs:
                site = frames.layer_site(sys._getframe(1))
                if site is not None:
                    outputs[0].op._gc_layer_site = site  # see Context.op_location
            return None
        if isinstance(op_type, bytes):
            op_type = op_type.decode()
        tag = ""
        if op_type in _READ_OPS:
            tag = TAG_READ
        elif is_assign(op_type):
            tag = TAG_ASSIGN
        elif op_type.startswith(("__inference_", "__forward_")):
            tag = TAG_FUNCTION
        if self.passed_variables is not None and not tag:
            self._note_hidden_reads(op_type, inputs)
        self._add(op_type, inputs, outputs or (), tag, attrs)
        if self.active and inputs and _tf_should_record(inputs):
            self._consumed(inputs)
        return None

    def _consumed(self, inputs) -> None:
        """A taped op consumed ``inputs``: the shadow tape's entry for that op counts them as
        used, so it keeps their producers' entries (TensorFlow's tape forgets an op only once
        all its outputs are dead and unconsumed). Only from here on may the recorder hold
        them weakly: an output that nothing taped consumed (a cut's ``argmax``, a value that
        left TensorFlow, the input of a ``stop_gradient``) is held, so the shadow keeps the
        chain that ends in it, which the diagnosis asks about."""
        for t in inputs:
            rec = self.producer(_key(t))
            if rec is not None and rec.attrs is not None and rec.refs is not None:
                i = rec.outputs.index(t._id)
                if not isinstance(rec.refs[i], weakref.ReferenceType):
                    rec.refs[i] = weakref.ref(t)

    def _note_hidden_reads(self, op_type: str, inputs) -> None:
        """A variable given straight to an op is read in C++ with no callback: its value
        arrives with no producer. Record the read it was, from the variable's handle."""
        producer = self.producer_seq
        orphans = [i for i, t in enumerate(inputs) if _key(t) not in producer and _eager_is_float(t)]
        if not orphans:
            return
        for i, variable in self.passed_variables(op_type, orphans, len(inputs)).items():
            try:
                handle = variable.handle
            except (AttributeError, ValueError):
                continue
            self._add("ReadVariableOp", [handle], [inputs[i]], TAG_READ)

    def _add(self, op_type: str, inputs, outputs, tag: str, attrs=None) -> None:
        dtypes = self.dtypes
        active = self.active
        in_keys = []
        for t in inputs:
            k = _key(t)
            if k is not None:
                in_keys.append(k)
                if k not in dtypes:
                    dtypes[k] = t._datatype_enum()
                if active and self._unheld(k):
                    # a freed value is computed again from its producer's inputs: an input
                    # that no weakly held output is must be held (a constant, the batch)
                    self.held[k] = t
                    if k not in self.producer_seq and dtypes[k] in _DIFFERENTIABLE_ENUMS:
                        self.orphans[k] = t
        out_keys = []
        for t in outputs:
            k = _key(t)
            if k is not None:
                out_keys.append(k)
                dtypes[k] = t._datatype_enum()
        site = _user_sites(sys._getframe(1))
        keep = None
        if not active:
            attrs = None
        elif attrs is not None and not tag and len(out_keys) == len(outputs) and _repeatable(op_type):
            keep = list(outputs)  # held until a taped op consumes them (``_consumed``)
        else:
            attrs = None
            keep = tuple(outputs)
        rec = Record(self.seq, op_type, tuple(in_keys), tuple(out_keys), site, active, tag, keep, attrs=attrs)
        if tag == TAG_ASSIGN:
            rec.metric = frames.in_keras_metric(f.f_code.co_filename for f in frames.stack(sys._getframe(1)))
        self.seq += 1
        for k in out_keys:
            self.producer_seq[k] = rec.seq
        self.records.append(rec)
        if len(self.records) > self.limit:
            self._trim()

    def _trim(self) -> None:
        drop = len(self.records) // 2
        for rec in self.records[:drop]:
            for k in rec.outputs:
                if self.producer_seq.get(k) == rec.seq:
                    del self.producer_seq[k]
        del self.records[:drop]
        self._released = max(0, self._released - drop)
        kept = {k for rec in self.records for k in rec.inputs + rec.outputs}
        self.dtypes = {k: v for k, v in self.dtypes.items() if k in kept}

    def record_custom_gradient(self, name: str, outputs, inputs) -> None:
        """``tf.custom_gradient`` records one tape op from its inputs to its outputs."""
        if not self.paused:
            self._add(f"CustomGradient:{name}", inputs, outputs, TAG_CUSTOM_GRADIENT)

    def record_host_function(self, op_type: str, inputs, outputs) -> None:
        """An op TensorFlow runs as plain Python in eager mode (``tf.numpy_function``):
        recorded as a virtual op so the path through it exists, and is cut at it."""
        if not self.paused:
            self._add(op_type, inputs, outputs, "")

    def record_gradient_call(self, inputs, outputs) -> None:
        """A ``tape.gradient`` computed while no tape recorded: its backward ops were not
        recorded (the recorder pauses for them), so one virtual op from what it
        differentiated to the gradients keeps the path, and shows that it ran outside."""
        if not self.paused:
            self._add(GRADIENT_CALL, inputs, outputs, "")

    def note_escape(self, tensor) -> None:
        """``tensor``'s value is leaving TensorFlow here (GC105), or, inside the Python
        function of a ``tf.numpy_function``, there (GC106, at the ``tf.numpy_function`` call)."""
        k = _key(tensor)
        if k is None or not (self.active or k in self.producer_seq):
            # only a recorded op's output or a value made on a tape can be on a diagnosed
            # path; a step function's loss read for a log line, outside any tape, is not
            return
        code, site = "GC105", frames.current_user_site(converted=True)
        host = frames.numpy_function_caller(sys._getframe(1))
        if host is not None:
            code, site = "GC106", host
        if site is None:
            return
        seen = self.escapes.get(k)
        if seen is None:
            if len(self.escapes) >= self.limit:  # a long warm-up loop: forget the oldest half
                for old in list(self.escapes)[: self.limit // 2]:
                    del self.escapes[old]
            self.escapes[k] = [(self.seq, site, code)]
        elif seen[-1][1] != site:
            seen.append((self.seq, site, code))

    def release_before(self, seq: int) -> None:
        """Drop kept tensors of ops older than ``seq`` (no unreleased tape needs them).
        Runs at every new tape: it starts where the previous call stopped, so a long eager
        loop does not walk all its records again at each step."""
        records, i = self.records, self._released
        while i < len(records) and records[i].seq < seq:
            records[i].refs = None
            i += 1
        self._released = i
        if not self.active:
            self.orphans.clear()
            self.held.clear()

    def _unheld(self, k: int) -> bool:
        """``k`` is held by no record that a tape may ask about, nor by ``held``."""
        if k in self.held:
            return False
        rec = self.producer(k)
        return rec is None or rec.refs is None

    def producer(self, k: int) -> Record | None:
        seq = self.producer_seq.get(k)
        if seq is None or not self.records:
            return None
        i = seq - self.records[0].seq
        return self.records[i] if 0 <= i < len(self.records) else None

    def live_value(self, k: int):
        """The tensor ``k`` if something still holds it (a record, ``held``), else None."""
        t = self.held.get(k)
        if t is not None:
            return t
        rec = self.producer(k)
        if rec is None or rec.refs is None:
            return self.orphans.get(k)
        for out_key, ref in zip(rec.outputs, rec.refs, strict=False):
            if out_key == k:
                return deref(ref)
        return None

    def execute_again(self, rec: Record, inputs) -> list:
        """Run ``rec``'s op again on ``inputs``: recorded by no tape and no callback."""
        from tensorflow.python.eager import context, execute, record

        self.paused += 1
        try:
            with record.stop_recording():
                try:
                    return execute.execute(rec.type, len(rec.outputs), inputs, rec.attrs, context.context())
                except Exception:  # TensorFlow's errors differ by op and version
                    # an empty list attribute can reach the op callback as None (``Squeeze``'s
                    # ``squeeze_dims`` of ``tf.squeeze(x)``), which ``execute`` refuses
                    if rec.attrs is None or None not in rec.attrs[1::2]:
                        raise
                    attrs = tuple([] if i % 2 and a is None else a for i, a in enumerate(rec.attrs))
                    return execute.execute(rec.type, len(rec.outputs), inputs, attrs, context.context())
        finally:
            self.paused -= 1

    def producing_records(self, keys) -> list[Record]:
        """The records that computed ``keys`` and everything they depend on, oldest first:
        how an eager tensor a traced function captured (a value computed in ``build()``)
        came to be."""
        records = self.records
        if not records:
            return []
        base = records[0].seq
        found: dict[int, Record] = {}
        stack = [self.producer_seq.get(k) for k in keys]
        while stack:
            seq = stack.pop()
            if seq is None or seq in found or not 0 <= seq - base < len(records):
                continue
            rec = found[seq] = records[seq - base]
            stack.extend(self.producer_seq.get(k) for k in rec.inputs)
        return [found[seq] for seq in sorted(found)]

    # -- building the data-flow graph ---------------------------------------------------
    def build_flow(
        self, tape_id: int, extra_tensors: dict[int, object], nondata=lambda op_type, n: frozenset()
    ) -> tuple[Flow, dict[int, object]]:
        """Flow over every kept record; ``recorded`` means recorded by tape ``tape_id``;
        ``nondata(op_type, n_inputs)`` names the inputs that never carry a gradient.
        Returns the flow and the tensors (by key) TensorFlow can be asked about."""
        flow = Flow()
        held: dict[int, object] = dict(extra_tensors)
        weak: dict[int, tuple] = {}
        dtypes = self.dtypes
        for rec in self.records:
            recorded = tape_id in rec.tapes
            flow.add(
                rec.type,
                rec.inputs,
                rec.outputs,
                recorded=recorded,
                site=rec.site,
                tag=rec.tag,
                name=rec.type,
                nondata=nondata(rec.type, len(rec.inputs)),
                attrs={"metric": True} if rec.metric else None,
            )
            if recorded and rec.refs is not None:
                if rec.attrs is None:
                    for k, t in zip(rec.outputs, rec.refs, strict=False):
                        held[k] = t
                else:
                    for k, ref in zip(rec.outputs, rec.refs, strict=False):
                        if k not in held:
                            weak[k] = (ref, rec)
        for k, enum in dtypes.items():
            if enum == _RESOURCE_ENUM:
                flow.resources.add(k)
                flow.differentiable[k] = False
            elif enum not in _DIFFERENTIABLE_ENUMS and enum != _VARIANT_ENUM:
                flow.differentiable[k] = False
        return flow, StepTensors(held, weak, self)
