"""GC201 zero-gradient and GC202 non-finite-gradient: gradients that exist but are all
zero or not finite. ``check`` flags them and ``frontier`` finds the op where they began.
It runs in the ``values`` phase, after the GC1xx diagnosis of the None ones: a source whose
gradient is None is never looked at here, so ``unconnected_gradients=ZERO`` cannot turn a
GC1xx into a GC201.

What it costs:

- GC201/GC202 look at the gradients the user's step already computed, on the first step of
  each ``tape.gradient`` call site only: in eager mode one pass over them on the host; in
  a traced function (``tf.function``, ``model.fit``) two reductions per gradient inside the
  graph, and a ``tf.cond`` whose branch runs only when a gradient is all zero or not finite
  while the loss is finite. Only then is more computed: the gradient of the loss with
  respect to every tensor on the way (one more backward pass, asked of gradcheck's shadow
  tape), which is what locates the op where the gradient became zero or non-finite.
- Memory: a traced step's check holds, until its gradients are known, only the leaves of
  the forward values a diagnosis reads (variable reads, random draws, the batch); the
  activations are computed again from them on a degenerate step (``recompute``), and only
  on the degenerate sources' own paths.

Graphs compiled with XLA (``jit_compile=True``) cannot call back into Python: in a check
they are traced without XLA (``capture/hooks/functions.py``), so their values are checked;
under ``install()``/``watch()`` they are not, and ``xla.in_xla`` warns once (GC203,
structural, is checked at trace time either way).
"""

from __future__ import annotations

import numpy as np

from gradcheck.findings import Finding
from gradcheck.trace.record import _tf, hostpoint
from gradcheck.trace.record.call import GradientCall
from gradcheck.trace.record.dataflow import WriteKey
from gradcheck.trace.record.errors import internal_error
from gradcheck.trace.record.registry import register
from gradcheck.trace.values import frontier, mailbox, recompute
from gradcheck.trace.values.checked import Checked, checked_call, region, unscaled_loss
from gradcheck.trace.values.frozen import judge
from gradcheck.trace.values.layers import layers_by_source
from gradcheck.trace.values.replay import GraphValues, Values, dense_full, key_of_graph, mock_vjp, replay_backward
from gradcheck.trace.values.xla import in_xla

__all__ = ["check"]

#: At most this many tensors are evaluated to locate a degenerate gradient (a very large
#: step keeps the ones nearest the sources and the loss: enough to find the op).
MAX_TENSORS = 6000


@register("values", "GC201", "GC202")
def check(call: GradientCall) -> list[Finding]:
    """GC201/GC202 on ``call``: eager, now; in a traced function, when it runs (the check is
    added to the graph, and its findings come through ``session.add_value_findings``)."""
    checked = checked_call(call)
    if checked is None:
        return []
    frozen = dict(call.session.frozen)  # as the call finds them: later skips come after it
    if checked.eager:
        return _eager_values(checked, frozen)
    if not in_xla(call.graph, call.session):
        _graph_values(checked, call.session, call.upto, frozen)
    return []


# -- flags: which gradients are degenerate -----------------------------------------------
def _dense(g):
    """A gradient as a tensor (IndexedSlices: its values, which is all that is nonzero)."""
    if isinstance(g, _tf.tf.IndexedSlices):
        return g.values
    return g


def _considered(checked: Checked) -> list[int]:
    """Indices of the sources with a float gradient to look at."""
    out = []
    for i, (source, g) in enumerate(zip(checked.ctx.sources, checked.flat_grads, strict=False)):
        if g is None or source.key is None:
            continue
        dtype = getattr(g, "dtype", None)
        if dtype is None or not _tf.is_differentiable_dtype(dtype) or _tf.tf.as_dtype(dtype).is_complex:
            continue
        out.append(i)
    return out


def _eager_values(checked: Checked, frozen: dict[int, int]) -> list[Finding]:

    considered = _considered(checked)
    if not considered:
        return []
    zero, nonfinite = [], []
    for i in considered:
        value = np.asarray(_dense(checked.flat_grads[i])._numpy())
        if value.size and not np.isfinite(value).all():
            nonfinite.append(i)
        elif not value.any():
            zero.append(i)
    if not zero and not nonfinite:
        return []
    if nonfinite and not _targets_finite_eager(checked):
        nonfinite = []  # the loss itself is not finite: a forward problem, not GC202
    if nonfinite:
        nonfinite = _unscaled_nonfinite(checked, nonfinite)
    if not zero and not nonfinite:
        return []
    values = EagerValues(checked, [checked.ctx.sources[i] for i in zero + nonfinite])
    zero_sources = [checked.ctx.sources[i] for i in zero]
    return frontier.findings(
        checked, values, zero_sources, [checked.ctx.sources[i] for i in nonfinite], judge(checked, frozen)
    )


def _unscaled_nonfinite(checked: Checked, nonfinite: list[int]) -> list[int]:
    """Under dynamic loss scaling (a LossScaleOptimizer's scaled loss is the target), the
    sources whose gradient of the *unscaled* loss is not finite either: an overflow of the
    scaled gradients is how the optimizer finds its scale (it skips that step)."""
    loss = unscaled_loss(checked.gradient_call)
    if loss is None:
        return nonfinite
    sources = [checked.ctx.sources[i] for i in nonfinite]
    try:
        grads = _imperative(
            checked.ctx.state.shadow, [loss], [_tf.handle_of(s.value) if s.is_variable else s.value for s in sources]
        )
    except Exception:  # noqa: BLE001 - cannot ask: the optimizer judges the step
        return []
    return [
        i
        for i, g in zip(nonfinite, grads, strict=False)
        if g is not None and not np.isfinite(np.asarray(_dense(g)._numpy())).all()
    ]


def _targets_finite_eager(checked: Checked) -> bool:
    for t in checked.ctx.flat_targets:
        dtype = getattr(t, "dtype", None)
        if dtype is None or not _tf.is_differentiable_dtype(dtype):
            continue
        if not np.isfinite(np.asarray(t._numpy())).all():
            return False
    return True


# -- which tensors to evaluate -----------------------------------------------------------
def _wanted_keys(flow, targets, source_keys, ops: set[int]) -> tuple[list, list]:
    """(keys whose forward value is wanted, keys whose gradient is wanted): those of ``ops``,
    the ops on data paths from the sources to the targets, nearest the loss first when
    there are too many, then those on the other paths (an index taken back to floats, where a cut
    hidden behind zeros is looked for, ``hidden_cuts``)."""
    values, grads = [], []
    seen_v, seen_g = set(), set()
    target_set = set(targets)
    every = region(flow, targets, source_keys, data=False) - ops
    for i in [*sorted(ops, reverse=True), *sorted(every, reverse=True)]:
        op = flow.ops[i]
        for k in (*op.outputs, *op.inputs):
            if k in flow.resources or isinstance(k, WriteKey):
                continue
            if k not in seen_v:
                seen_v.add(k)
                values.append(k)
        for k in (*op.outputs, *op.data):
            if k in seen_g or k in target_set or k in flow.resources or not flow.is_differentiable(k):
                continue
            seen_g.add(k)
            grads.append(k)
    return values[:MAX_TENSORS], grads[:MAX_TENSORS]


class EagerValues(Values):
    """Values read from the eager tensors the recorder kept; gradients asked of the shadow
    tape, which recorded every op of the step."""

    def __init__(self, checked: Checked, bad_sources) -> None:
        super().__init__()
        ctx = checked.ctx
        self._ctx = ctx
        self._eager_grads: dict = {}
        flow = ctx.flow
        keys = [s.key for s in bad_sources]
        want_values, want_grads = _wanted_keys(flow, ctx.target_keys, keys, region(flow, ctx.target_keys, keys))
        orphans = ctx.session.recorder.orphans
        source_values = {s.key: s.value for s in ctx.sources if s.key is not None}

        def tensor(k):
            t = ctx.tensors.get(k)
            if t is None:
                t = orphans.get(k)
            return t

        for k in want_values:
            t = tensor(k)
            if t is not None and hasattr(t, "_numpy"):
                try:
                    self.forward[k] = np.asarray(t._numpy())
                except (ValueError, TypeError):  # strings, resources
                    continue
        for s in ctx.sources:
            if s.key is not None and s.is_variable:
                self.forward.setdefault(s.key, np.asarray(s.value.numpy()))
        for source, g in zip(ctx.sources, checked.flat_grads, strict=False):
            if source.key is not None and g is not None:
                self.grads[source.key] = np.asarray(dense_full(g)._numpy())
        candidates = [(k, tensor(k)) for k in want_grads if k not in source_values]
        candidates = [(k, t) for k, t in candidates if t is not None and _tf.is_differentiable_dtype(t.dtype)]
        targets = [t for t in ctx.flat_targets if _tf.is_tensor(t)]
        out_grads = checked.output_gradients
        grads = _imperative(ctx.state.shadow, targets, [t for _, t in candidates], out_grads)
        for (k, _), g in zip(candidates, grads, strict=False):
            if g is None:
                self.grads[k] = None
                continue
            g = dense_full(g)
            self._eager_grads[k] = g
            self.grads[k] = np.asarray(g._numpy())
        for k, t in zip(ctx.target_keys, targets, strict=False):
            g = out_grads[ctx.target_keys.index(k)] if out_grads else _tf.tf.ones_like(t)
            self._eager_grads[k] = g
            self.grads[k] = np.asarray(_tf.tf.convert_to_tensor(g)._numpy())
        self._tensor = tensor

    def own_vjp(self, op_index: int, input_key):
        """The op's registered gradient function on the recorded values (attributes
        inferred from the inputs' dtypes); else the shadow tape from the op's outputs to
        that input (which also counts paths through the op's other inputs)."""
        op = self._ctx.flow.ops[op_index]
        local = self._registered(op, input_key)
        if local is not None:
            return local
        outs = [(self._tensor(k), self._eager_grads.get(k)) for k in op.outputs]
        outs = [(t, g) for t, g in outs if t is not None and g is not None]
        source = self._tensor(input_key)
        if not outs or source is None:
            return None
        try:
            (g,) = _imperative(self._ctx.state.shadow, [t for t, _ in outs], [source], [g for _, g in outs])
        except Exception:  # noqa: BLE001 - a question we could not ask
            return None
        return None if g is None else np.asarray(dense_full(g)._numpy())

    def _registered(self, op, input_key):
        ins = [self._tensor(k) for k in op.inputs]
        outs = [self._tensor(k) for k in op.outputs]
        if any(t is None for t in ins + outs) or input_key not in op.inputs:
            return None
        grads = []
        for k, t in zip(op.outputs, outs, strict=False):
            g = self._eager_grads.get(k)
            grads.append(g if g is not None else _tf.tf.zeros_like(t))
        attrs = _inferred_attrs(op.type, ins)
        if attrs is None:
            return None
        try:
            ins_np = [np.asarray(t._numpy()) for t in ins]
            outs_np = [np.asarray(t._numpy()) for t in outs]
            grads_np = [np.asarray(_tf.tf.convert_to_tensor(g)._numpy()) for g in grads]
        except (ValueError, TypeError):
            return None
        return mock_vjp(op.type, attrs, ins_np, outs_np, grads_np, list(op.inputs).index(input_key))


def _inferred_attrs(op_type: str, inputs) -> list | None:
    """The type attributes of an eager op, from its inputs' dtypes (the recorder keeps no
    attributes; the gradient functions of elementwise ops need no others)."""
    from tensorflow.python.framework import op_def_registry

    op_def = op_def_registry.get(op_type)
    if op_def is None or len(op_def.input_arg) != len(inputs):
        return None
    attrs: list = []
    for arg, tensor in zip(op_def.input_arg, inputs, strict=False):
        if arg.type_attr and arg.type_attr not in attrs[::2]:
            attrs += [arg.type_attr, tensor.dtype]
    return attrs


def _imperative(tape, targets, sources, output_gradients=None):
    """Gradients from gradcheck's persistent shadow tape (None where unconnected)."""
    if not sources:
        return []
    outputs = list(output_gradients) if output_gradients is not None else None
    return _tf.imperative_gradient(tape, list(targets), list(sources), outputs)


# -- graph mode: check when the traced function runs ---------------------------------------
def _graph_values(checked: Checked, session, upto, frozen: dict[int, int]) -> None:
    """Add, to the function being traced, a check of the gradient values that runs when the
    function does (see the module docstring)."""

    tf = _tf.tf
    ctx = checked.ctx
    considered = _considered(checked)
    if not considered:
        return
    sources = [ctx.sources[i] for i in considered]
    grads = [_dense(checked.flat_grads[i]) for i in considered]
    targets = [t for t in ctx.flat_targets if _tf.is_tensor(t) and getattr(t, "graph", None) is ctx.graph]
    if not targets:
        return
    layers_by_source(checked)  # now, while the user's frames are alive
    probe = _GraphProbe(checked, sources, considered, upto, frozen)
    if session.check_mode and session.steps is not None:
        # a check runs the function a step or two: hand the gradients and values to the host
        # callback, which computes the flags itself and returns at once when all is well
        # (nothing else is added to the graph: the guarded branch below costs a check more
        # at trace time than it saves in one execution, bench_degenerate.py)
        probe.build(None, targets, grads, None, None, None)
        return
    # What every step pays: one fused reduction per gradient (``_square_sums``) and a
    # branch. A sum of squares is positive and finite exactly when the gradient is neither
    # all zero nor holds an inf or a NaN, save an underflow or an overflow of the sum itself,
    # which the exact flags then tell apart (no finding, nothing more computed). A session
    # that stays on (install(), watch()) puts no Python op in the step's graph (``mailbox``).
    mail = mailbox.open_for(session, probe.receive)
    sums = _square_sums(grads)
    healthy = tf.reduce_all(tf.logical_and(sums > 0, sums < float("inf")))

    def exact():
        zero_flags = tf.stack([tf.logical_not(tf.reduce_any(tf.not_equal(g, tf.zeros([], g.dtype)))) for g in grads])
        finite_flags = tf.stack([tf.reduce_all(tf.math.is_finite(g)) for g in grads])
        target_finite = tf.reduce_all(
            tf.stack(
                [tf.reduce_all(tf.math.is_finite(t)) for t in targets if _tf.is_differentiable_dtype(t.dtype)] or [True]
            )
        )
        bad = tf.logical_or(
            tf.reduce_any(zero_flags), tf.logical_and(target_finite, tf.reduce_any(tf.logical_not(finite_flags)))
        )
        # a watched run goes on for many steps: only the first degenerate one is diagnosed
        if mail is None:
            armed = tf.reshape(tf.py_function(probe.armed, [], tf.bool), [])
        else:
            armed = mail.armed()

        def diagnose():
            probe.build(None, targets, grads, zero_flags, finite_flags, target_finite, mail)
            return tf.constant(True)

        return tf.cond(tf.logical_and(bad, armed), diagnose, lambda: tf.constant(False))

    # Kept a function call (an ``If`` left unlowered): lowered to Switch/Merge, a branch costs
    # each step a dead tensor through every op it holds, taken or not, and the diagnosis
    # holds thousands (the values shipped, the shadow tape's backward pass).
    _unlowered(tf.cond(healthy, lambda: tf.constant(False), exact))


def _square_sums(grads):
    """``sum(g**2) / 2`` of each gradient as a float32 vector: one fused reduction each
    (``L2Loss``, no temporary; half precision summed in float32, where the squares do not
    overflow). A segment sum over their concatenation has fewer kernels, and costs more."""
    tf = _tf.tf

    def one(g):
        if g.dtype in (tf.float16, tf.bfloat16):
            g = tf.cast(g, tf.float32)
        s = tf.nn.l2_loss(g)
        return s if s.dtype == tf.float32 else tf.cast(s, tf.float32)

    return tf.stack([one(g) for g in grads])


def _unlowered(out):
    """``out``, the result of a ``tf.cond``, with its ``If`` op kept a function call."""
    from tensorflow.core.framework import attr_value_pb2

    op = out.op
    while op.type == "Identity" and op.inputs:
        op = op.inputs[0].op
    if op.type in ("If", "StatelessIf"):
        op._set_attr("_lower_using_switch_merge", attr_value_pb2.AttrValue(b=False))
    return out


class _GraphProbe:
    """The host side of a traced function's value check: receives the values when the
    function runs, and turns them into findings."""

    def __init__(self, checked: Checked, sources, considered: list[int], upto, frozen: dict[int, int]) -> None:
        self.checked = checked
        self.frozen = frozen
        self.sources = sources
        self.considered = considered
        self.upto = upto
        self.done = False
        self.layout: tuple = ()
        self.host_flags = False
        self.recompute: recompute.Plan | None = None

    def armed(self):
        return not self.done

    def build(self, bad, targets, grads, zero_flags, finite_flags, target_finite, mail=None) -> None:
        """The host callback and what it is fed: ``bad`` first (None inside a branch that
        runs only when it is true), the flags, the gradients, then the forward values of the
        tensors on the way. The loss's gradient with respect to each of them is computed on
        the host, only when ``bad``, by running each op's own registered gradient function
        backwards over those values (``replay_backward``): nothing more is traced. Around
        control flow, functions and custom gradients (whose gradient functions need their
        graph) the shadow tape is asked instead, and its gradients are fed too."""
        tf = _tf.tf
        ctx = self.checked.ctx
        flow = ctx.flow
        keys = [s.key for s in self.sources]
        ops = region(flow, ctx.target_keys, keys)
        want_values, want_grads = _wanted_keys(flow, ctx.target_keys, keys, ops)
        values = [(k, ctx.tensors.get(k)) for k in want_values]
        values = [(k, t) for k, t in values if t is not None and _shippable(t)]
        # fed: the leaves of the wanted values; the rest is computed again from them on a
        # degenerate step only (``recompute``: nothing more is held while the step runs)
        self.recompute = recompute.plan([t for _, t in values], ctx.graph, {t.name for t in targets})
        if self.recompute is not None:
            values = [(key_of_graph(t), t) for t in self.recompute.leaves]
        kept, unconnected = [], []
        self.replay = not any(_needs_graph(flow.ops[i]) for i in ops)
        if not self.replay:
            candidates = [(k, ctx.tensors.get(k)) for k in want_grads]
            candidates = [(k, t) for k, t in candidates if t is not None and _tf.is_differentiable_dtype(t.dtype)]
            region_grads = _imperative(
                ctx.state.shadow, targets, [t for _, t in candidates], self.checked.output_gradients
            )
            pairs = list(zip(candidates, region_grads, strict=False))
            kept = [(k, tf.convert_to_tensor(g)) for (k, _), g in pairs if g is not None]
            unconnected = [k for (k, _), g in pairs if g is None]
        target_grads = self.checked.output_gradients or [tf.ones_like(t) for t in targets]
        self.host_flags = zero_flags is None
        if self.host_flags:  # computed from the values on the host (see receive)
            zero_flags = finite_flags = target_finite = tf.constant(False)
        flat = [zero_flags, finite_flags, tf.convert_to_tensor(target_finite)]
        flat += [tf.convert_to_tensor(g) for g in grads]
        flat += [t for _, t in values]
        flat += [g for _, g in kept]
        flat += [tf.convert_to_tensor(g) for g in target_grads]
        self.layout = (
            len(grads),
            [k for k, _ in values],
            [k for k, _ in kept],
            unconnected,
            list(ctx.target_keys[: len(target_grads)]),
        )
        if mail is not None:  # delivered when the host next looks (``mailbox.poll``)
            mail.store(flat)
            return
        flat = [tf.constant(True) if bad is None else bad, *flat]
        tf.py_function(self.receive, flat, [tf.int32])

    def receive(self, bad, zero_flags, finite_flags, target_finite, *rest):
        if self.done or not bool(bad.numpy()):
            return np.int32(0)
        self.done = True
        session = self.checked.session
        findings: list[Finding] = []
        try:
            # a host callback in TensorFlow's runtime: nothing of gradcheck's is raised into
            # it, and a stop met here waits for a host point
            with hostpoint.deferring_stop(session), session.paused():
                findings = self._findings(zero_flags, finite_flags, target_finite, rest)
            session.add_value_findings(findings)
        except Exception as error:  # noqa: BLE001
            internal_error(error)
        return np.int32(0)

    def _findings(self, zero_flags, finite_flags, target_finite, rest) -> list[Finding]:

        n, value_keys, grad_keys, unconnected, target_keys = self.layout
        source_grads, rest = rest[:n], rest[n:]
        if self.host_flags:
            arrays = [np.asarray(g.numpy()) for g in source_grads]
            finite_flags = np.array([bool(np.isfinite(a).all()) for a in arrays])
            zero_flags = np.array([not a.any() for a in arrays])
            if finite_flags.all() and not zero_flags.any():
                return []  # the common case: healthy, and nothing else is read
            forward_targets = [v for k, v in zip(value_keys, rest[: len(value_keys)], strict=False) if k in target_keys]
            target_finite = all(np.isfinite(np.asarray(v.numpy())).all() for v in forward_targets)
        else:
            zero_flags, finite_flags = zero_flags.numpy(), finite_flags.numpy()
            target_finite = bool(target_finite.numpy())
        forward, rest = rest[: len(value_keys)], rest[len(value_keys) :]
        region_grads, target_grads = rest[: len(grad_keys)], rest[len(grad_keys) :]
        zero, nonfinite = [], []
        for j, source in enumerate(self.sources):
            if not finite_flags[j]:
                nonfinite.append(source)
            elif zero_flags[j]:
                zero.append(source)
        if not target_finite:
            nonfinite = []
        if nonfinite and unscaled_loss(self.checked.gradient_call) is not None:
            # dynamic loss scaling in a traced step: the optimizer skips a step whose scaled
            # gradients overflow (that is how it finds its scale), so none is applied
            nonfinite = []
        if not zero and not nonfinite:
            return []
        # only the paths of the degenerate sources: every consumer of a tensor on them that
        # reaches the loss is on them too, so their gradients are whole (as in eager mode)
        flow, targets = self.checked.ctx.flow, self.checked.ctx.target_keys
        bad = [s.key for s in zero + nonfinite]
        ops = region(flow, targets, bad)
        values = GraphValues(self.checked.ctx)
        for k, v in zip(value_keys, forward, strict=False):
            values.forward[k] = np.asarray(v.numpy())
        if self.recompute is not None:
            wanted, _ = _wanted_keys(flow, targets, bad, ops)
            try:
                values.forward.update(self.recompute.run(list(forward), wanted))
            except Exception as error:  # noqa: BLE001 - diagnose from the fed values alone
                internal_error(error)
        for k, g in zip(grad_keys, region_grads, strict=False):
            values.grads[k] = np.asarray(g.numpy())
        for k in unconnected:
            values.grads[k] = None
        for k, g in zip(target_keys, target_grads, strict=False):
            values.grads[k] = np.asarray(g.numpy())
        if self.replay:
            replay_backward(flow, ops, values)
        for source, g in zip(self.sources, source_grads, strict=False):
            values.grads[source.key] = np.asarray(g.numpy())
        return frontier.findings(self.checked, values, zero, nonfinite, judge(self.checked, self.frozen))


#: Ops whose registered gradient function builds graph structure of its own (loops,
#: branches, function calls) or that stand for a custom gradient: not replayed on the host.
_GRAPH_GRADIENTS = frozenset(
    {"While", "StatelessWhile", "If", "StatelessIf", "Case", "PartitionedCall", "StatefulPartitionedCall"}
)


def _needs_graph(op) -> bool:
    from gradcheck.trace.record.dataflow import TAG_CUSTOM_GRADIENT, TAG_FUNCTION

    return (
        op.type in _GRAPH_GRADIENTS
        or op.tag in (TAG_CUSTOM_GRADIENT, TAG_FUNCTION)
        or op.type.startswith(("TensorList", "TensorArray"))
    )


def _shippable(t) -> bool:
    dtype = t.dtype
    return not (dtype == _tf.tf.resource or dtype == _tf.tf.variant or dtype == _tf.tf.string)
