"""Where a gradient that exists became useless: the op at which it turned identically zero
(GC201) or stopped being finite (GC202), and why.

Given the forward values and the loss gradients of the tensors between the sources and the
loss (``degenerate.Values``), a *frontier* is an op whose outputs carry a usable gradient
(nonzero; finite) while one of its inputs on a source's path does not: walking back from the
loss, that op's own gradient is where the gradient died. No list of ops decides that, the
values do; when a tensor feeds several such ops, each one's own gradient (``own_vjp``) tells
which one produced the NaN, or that two nonzero contributions cancel exactly.

Naming the cause, and telling a structural zero from one by chance, does need the op's
meaning: a dead ReLU, a saturated softmax or sigmoid, a clip or a ``tf.where`` that never
lets the gradient through, a factor that is zero (a mask, a constant, a weight that never
moves), two paths that cancel, a loop whose body cut the value. A zero is structural when
it survives perturbing the op's input (a 1% relative jitter: a ReLU dead by a wide margin
stays dead, a saturated softmax stays saturated) and does not come from the batch itself
(an all-zero input batch is chance, the next batch differs); only structural zeros are
reported. A zero factor that is a trained weight which does get a gradient (a LoRA ``B``
or a ReZero ``alpha`` initialised to 0) is transient: the first update moves it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gradcheck import sourcemap
from gradcheck.findings import Finding
from gradcheck.trace.cuts import BLOCK, Cut
from gradcheck.trace.dataflow import TAG_FUNCTION, TAG_READ
from gradcheck.trace.describe import chain, make, merge, op_label

__all__ = ["findings"]

_RNG_SEED = 20260101
_JITTER = 0.01  # relative perturbation of an op's input for the structural test
_DEAD_MIN_SAMPLES = 4  # a ReLU unit off on fewer samples than this is not dead for sure
_DEAD_MARGIN = 0.05  # ... nor one whose largest input is within 5% of the inputs' RMS of zero

_PASS_THROUGH = frozenset(
    {
        "Identity",
        "IdentityN",
        "Reshape",
        "Transpose",
        "ExpandDims",
        "Squeeze",
        "StridedSlice",
        "Slice",
        "GatherV2",
        "Gather",
        "GatherNd",
        "Tile",
        "BroadcastTo",
        "ConcatV2",
        "Pack",
        "Unpack",
        "Split",
        "SplitV",
        "Neg",
        "Sum",
        "Mean",
        "Cast",
        "AddV2",
        "Add",
        "AddN",
        "BiasAdd",
        "Sub",
        "Pad",
        "PadV2",
        "MirrorPad",
        "Max",
        "Min",
        "MaxPool",
        "AvgPool",
        "EnsureShape",
        "Square",
        "Abs",
    }
)
_PRODUCTS = frozenset(
    {
        "Mul",
        "MatMul",
        "BatchMatMul",
        "BatchMatMulV2",
        "BatchMatMulV3",
        "Conv2D",
        "Conv3D",
        "Conv1D",
        "DepthwiseConv2dNative",
        "Einsum",
        "MulNoNan",
        "TensorDot",
    }
)
_CONSTANTS = frozenset({"Const", "Fill", "ZerosLike", "Zeros", "OnesLike"})
_MASKS = frozenset(
    {
        "OneHot",
        "Equal",
        "NotEqual",
        "Less",
        "LessEqual",
        "Greater",
        "GreaterEqual",
        "LogicalAnd",
        "LogicalOr",
        "LogicalNot",
        "SequenceMask",
    }
)
_SQUASH = frozenset({"Sigmoid", "Softmax", "Tanh"})
#: Ops whose gradient to an input does not depend on any value (so paths cancelling through
#: them cancel for every batch).
_ADDITIVE = frozenset({"Add", "AddV2", "AddN", "Sub", "Neg", "Identity", "BiasAdd"})
_LOOPS = frozenset({"While", "StatelessWhile", "If", "StatelessIf", "PartitionedCall", "StatefulPartitionedCall"})
_LIST_OPS_PREFIX = "TensorList"


@dataclass
class Cause:
    code: str
    variant: str
    blame: int  # the op to point at
    frontier: int  # the op where the gradient died
    reason: str
    notes: list[str] = field(default_factory=list)
    fields: dict = field(default_factory=dict)

    @property
    def key(self) -> tuple:
        return (self.code, self.variant, self.blame)


def findings(checked, values, zero_sources, nonfinite_sources) -> list[Finding]:
    analysis = _Analysis(checked, values)
    out: list[Finding] = []
    if nonfinite_sources:
        out += analysis.report(nonfinite_sources, analysis.nonfinite_causes)
    if zero_sources:
        out += analysis.report(zero_sources, analysis.zero_causes)
    return merge(out)


class _Analysis:
    def __init__(self, checked, values) -> None:
        from gradcheck.trace.degenerate import region

        self.checked, self.values = checked, values
        self.ctx = checked.ctx
        self.flow = checked.ctx.flow
        self.targets = list(self.ctx.target_keys)
        self._region_of = region
        self.rng = np.random.default_rng(_RNG_SEED)

    # -- shared -----------------------------------------------------------------------
    def report(self, sources, find_causes) -> list[Finding]:
        flow = self.flow
        keys = [s.key for s in sources]
        region = self._region_of(flow, self.targets, keys)
        bits = {k: 1 << i for i, k in enumerate(keys)}
        masks = flow.reach_masks(bits, region, data=True)

        def tensor_mask(k) -> int:
            p = flow.producer.get(k)
            return bits.get(k, 0) | (masks.get(p, 0) if p is not None else 0)

        causes = find_causes(region, tensor_mask)
        # A source is reported only when every frontier on its paths is explained and
        # structural: one zero by chance (the batch) makes the whole zero possibly chance.
        unexplained = 0
        for cause, mask in causes:
            if cause is None:
                unexplained |= mask
        by_key: dict[tuple, tuple[Cause, int]] = {}
        for cause, mask in causes:
            if cause is None:
                continue
            mask &= ~unexplained
            key = cause.key
            if key in by_key:
                by_key[key] = (by_key[key][0], by_key[key][1] | mask)
            else:
                by_key[key] = (cause, mask)
        out = []
        for cause, mask in by_key.values():
            named = [s for s in sources if mask & bits[s.key]]
            if named:
                out.append(self._finding(cause, named, region))
        return out

    def _finding(self, cause: Cause, sources, region) -> Finding:
        ctx = self.ctx
        location = None
        if cause.variant == "zero-weight":
            location = _weight_location(self.checked, cause.blame)  # where its initialiser is chosen
        location = location or blame_location(self.checked, cause.blame) or ctx.call_location
        first = min(sources, key=lambda s: s.index)
        reach = self.flow.forward_cone([first.key], within=region | {cause.blame}, data=True)
        marked = cause.blame if cause.blame in reach else cause.frontier
        cut = Cut(BLOCK, marked, {s.key for s in sources}, [], region | {cause.blame}, self.targets, True)
        label = op_label(self.flow.ops[cause.blame].type)
        if cause.code == "GC202":
            grads = [self.grad(s.key) for s in sources]
            cause.fields["kind"] = "NaN" if any(g is not None and np.isnan(g).any() for g in grads) else "infinite"
        finding = make(
            ctx,
            cause.code,
            location,
            [s.name for s in sources],
            op=label,
            chain=chain(ctx, cut, first.key),
            notes=list(cause.notes),
            reason=cause.reason,
            variant=cause.variant,
            **cause.fields,
        )
        if finding.chain:
            finding.chain_source = first.name
        return finding

    def grad(self, k):
        return self.values.grad(k)

    def value(self, k):
        return self.values.value(k)

    def line_of(self, op_index: int) -> str:
        location = self.ctx.op_location(op_index)
        return f"line {location.line}" if location is not None else "an op"

    def _output_grad(self, op_index: int):
        """The gradient of the op's first float output with a gradient (None: none)."""
        for k in self.flow.ops[op_index].outputs:
            g = self.grad(k)
            if g is not None:
                return g
        return None

    def _call_text(self, op_index: int) -> str:
        """The user's expression for an op (`tf.where(...)`, `actions - mu`)."""
        location = self.ctx.op_location(op_index)
        fallback = op_label(self.flow.ops[op_index].type) or "this op"
        if location is None:
            return fallback
        if location.end_column and (location.end_line in (None, location.line)):
            text = sourcemap.source_line(location.path, location.line)[location.column - 1 : location.end_column - 1]
            if text.strip() and len(text) <= 60:
                return f"`{text.strip()}`"
        expr = sourcemap.expression_at(
            location.path, location.line, location.column, location.end_line, location.end_column
        )
        if expr is not None and len(expr.text) <= 60:
            return f"`{expr.text}`"
        return fallback

    # -- GC201 ------------------------------------------------------------------------
    def zero_causes(self, region, tensor_mask):
        flow = self.flow

        def zero(k) -> bool:
            g = self.grad(k)
            return g is not None and not g.any()

        def nonzero(k) -> bool:
            g = self.grad(k)
            return g is not None and bool(g.any())

        frontier: dict = {}
        for c in sorted(region):
            op = flow.ops[c]
            if not any(nonzero(o) for o in op.outputs):
                continue
            for t in dict.fromkeys(op.data):
                if tensor_mask(t) and zero(t):
                    frontier.setdefault(t, []).append(c)
        out = []
        for t, consumers in frontier.items():
            mask = tensor_mask(t)
            if len(consumers) >= 2:
                cancel = self._cancellation(t, consumers)
                if cancel is not None:
                    out.append((cancel, mask))
                    continue
            for c in consumers:
                out.append((self._explain_zero(c, t), mask))
        return out

    def _cancellation(self, t, consumers) -> Cause | None:
        """Two or more paths whose own gradients are nonzero and sum to zero. Only paths
        entering additively count (their gradient does not depend on any value, so they
        cancel for every batch); two products of equal inputs cancel by chance."""
        if not all(self.flow.ops[c].type in _ADDITIVE for c in consumers):
            return None
        contributions = [(c, self._additive_vjp(c, t)) for c in consumers]
        nonzero = [c for c, g in contributions if g is not None and g.any()]
        if len(nonzero) < 2:
            return None
        lines = sorted({self.line_of(c) for c in nonzero})
        blame = max(nonzero)
        first = min(nonzero)
        reason = (
            f"the gradients reaching this value through {self._call_text(first)} and {self._call_text(blame)} "
            "cancel exactly"
        )
        notes = [f"each path alone carries a gradient ({' and '.join(lines)}); their sum is zero for every element"]
        if self.flow.ops[blame].type in ("Sub", "SquaredDifference") or self.flow.ops[first].type in ("AddV2", "Add"):
            notes.append(
                "a sample built from the parameters (`mean + std * eps`) compared again with the same "
                "parameters (`sample - mean` in its log-probability) is the classic case"
            )
        return Cause("GC201", "cancel", blame, blame, reason, notes)

    def _additive_vjp(self, c: int, t):
        """The gradient an additive op sends to its input ``t``: ±(its output's gradient),
        summed over the axes it broadcast ``t`` along."""
        op = self.flow.ops[c]
        g = self._output_grad(c)
        value = self.value(t)
        if g is None:
            return None
        sign = -1.0 if (op.type == "Neg" or (op.type == "Sub" and list(op.inputs).index(t) == 1)) else 1.0
        out = sign * g
        shape = value.shape if value is not None else out.shape
        while out.ndim > len(shape):
            out = out.sum(axis=0)
        for axis, size in enumerate(shape):
            if size == 1 and out.shape[axis] != 1:
                out = out.sum(axis=axis, keepdims=True)
        return out

    def _explain_zero(self, c: int, t) -> Cause | None:
        op = self.flow.ops[c]
        kind = op.type
        g = self._output_grad(c)
        if g is None:
            return None
        if kind in ("Relu", "Relu6"):
            return self._dead_relu(c, t, g)
        if kind in _SQUASH:
            return self._saturated(c, t, g)
        if kind in ("Maximum", "Minimum", "ClipByValue"):
            return self._clipped(c, t, g)
        if kind in ("Select", "SelectV2"):
            return self._masked(c, t, g)
        if kind in _PRODUCTS or kind in ("RealDiv", "Div", "DivNoNan"):
            return self._zero_factor(c, t)
        if kind in ("Square", "Abs"):
            return self._zero_value(t, c)
        if kind in _LOOPS or op.tag == TAG_FUNCTION or kind.startswith(_LIST_OPS_PREFIX):
            return self._loop(c, t)
        return None

    def _jitter(self, x: np.ndarray) -> np.ndarray:
        x = x.astype(np.float64)
        scale = float(np.sqrt(np.mean(np.square(x)))) if x.size else 0.0
        noise = self.rng.standard_normal(x.shape)
        return x + _JITTER * (np.abs(x) + scale) * noise

    def _dead_relu(self, c: int, t, g) -> Cause | None:
        x = self.value(t)
        if x is None or x.shape != g.shape:
            return None
        upper = 6.0 if self.flow.ops[c].type == "Relu6" else None
        live = g != 0

        def dead(v) -> bool:
            off = v[live] <= 0
            if upper is not None:
                off |= v[live] >= upper
            return bool(off.all())

        if not dead(x):
            return None
        if not x.any():
            return self._zero_value(t, c)  # exactly zero input: why is it zero?
        if not dead(self._jitter(x)):
            return None  # at the edge: a perturbation revives it (chance)
        if not _off_by_structure(x, x[live], upper):
            return None
        top = float(np.max(x[live]))
        n = int(live.sum())
        reason = (
            f"relu is dead on the whole batch: each of its {n} inputs that matter is ≤ 0 (the largest is {top:.3g})"
        )
        return Cause("GC201", "dead-relu", c, c, reason)

    def _saturated(self, c: int, t, g) -> Cause | None:
        kind = self.flow.ops[c].type
        y = self.value(self.flow.ops[c].outputs[0])
        x = self.value(t)
        if y is None or y.shape != g.shape:
            return None

        def local(out) -> np.ndarray:
            out = out.astype(np.float32)
            if kind == "Sigmoid":
                return out * (np.float32(1) - out) * g
            if kind == "Tanh":
                return (np.float32(1) - out * out) * g
            return out * (g - np.sum(out * g, axis=-1, keepdims=True))

        if local(y).any():
            return None
        if x is not None and x.shape == y.shape:
            perturbed = _squash(kind, self._jitter(x).astype(np.float32))
            if local(perturbed).any():
                return None
        name = {"Sigmoid": "sigmoid", "Tanh": "tanh", "Softmax": "softmax"}[kind]
        ends = "-1 or 1" if kind == "Tanh" else "0 or 1"
        reason = (
            f"{name} is saturated on the whole batch (its outputs are exactly {ends}), so its gradient is exactly zero"
        )
        notes = []
        if x is not None and x.size:
            notes.append(f"its inputs reach {float(np.max(np.abs(x))):.3g} in magnitude")
        return Cause("GC201", "saturated", c, c, reason, notes, {"act": name})

    def _clipped(self, c: int, t, g) -> Cause | None:
        op = self.flow.ops[c]
        kind = op.type
        ins = [self.value(k) for k in op.inputs]
        if any(v is None for v in ins):
            return None
        position = list(op.inputs).index(t)

        def passes(values) -> np.ndarray:
            if kind == "ClipByValue":
                x, lo, hi = values
                return np.broadcast_to((x >= lo) & (x <= hi), g.shape) if position == 0 else np.zeros(g.shape, bool)
            x, y = values
            xmask = (x >= y) if kind == "Maximum" else (x <= y)
            mine = xmask if position == 0 else ~xmask
            try:
                return np.broadcast_to(mine, g.shape)
            except ValueError:
                return np.ones(g.shape, bool)

        live = g != 0
        if (passes(ins) & live).any():
            return None
        squash = self._producer_through(t, _SQUASH)
        jittered = list(ins)
        squashed_input = self.value(self.flow.ops[squash].data[0]) if squash is not None else None
        if squashed_input is not None and squashed_input.shape == ins[position].shape:
            # perturb where the value comes from (the logits), not the probability itself
            kind_of = self.flow.ops[squash].type
            jittered[position] = _squash(kind_of, self._jitter(squashed_input).astype(np.float32))
        else:
            jittered[position] = self._jitter(ins[position]).astype(ins[position].dtype)
        if (passes(jittered) & live).any():
            return None
        if squash is not None:
            name = {"Sigmoid": "sigmoid", "Tanh": "tanh", "Softmax": "softmax"}[self.flow.ops[squash].type]
            reason = (
                f"{name}'s outputs are saturated (exactly 0 or 1) and the loss clips them to [ε, 1-ε], "
                "where the gradient is zero"
            )
            notes = [f"the clip is {self._call_text(c)} ({self.line_of(c)})"] if self.ctx.op_location(c) else []
            return Cause("GC201", "saturated-clipped", squash, c, reason, notes, {"act": name})
        reason = f"{self._call_text(c)} clips every value of the batch, where the gradient is zero"
        return Cause("GC201", "clipped", c, c, reason)

    def _producer_through(self, k, kinds, hops: int = 6):
        flow = self.flow
        for _ in range(hops):
            p = flow.producer.get(k)
            if p is None:
                return None
            op = flow.ops[p]
            if op.type in kinds:
                return p
            if op.type not in ("Identity", "Maximum", "Minimum", "ClipByValue", "Cast", "Reshape", "RealDiv", "Div"):
                return None
            if not op.data:
                return None
            k = op.data[0]  # a division: the normalisation `p / sum(p)` a probability loss applies
        return None

    def _masked(self, c: int, t, g) -> Cause | None:
        op = self.flow.ops[c]
        cond = self.value(op.inputs[0])
        if cond is None:
            return None
        position = list(op.inputs).index(t)
        if position not in (1, 2):
            return None
        chosen = cond.astype(bool) if position == 1 else ~cond.astype(bool)
        if cond.ndim == 1 and g.ndim > 1 and op.type == "Select" and cond.shape[0] == g.shape[0]:
            chosen = chosen.reshape((-1,) + (1,) * (g.ndim - 1))
        try:
            chosen = np.broadcast_to(chosen, g.shape)
        except ValueError:
            return None
        if (chosen & (g != 0)).any():
            return None
        branch = "true" if position == 1 else "false"
        reason = (
            f"{self._call_text(c)} never takes its {branch} branch on the batch (the condition is "
            f"{'False' if position == 1 else 'True'} everywhere), so no gradient flows back through that branch"
        )
        return Cause("GC201", "masked", c, c, reason)

    def _zero_factor(self, c: int, t) -> Cause | None:
        op = self.flow.ops[c]
        others = [k for k in op.data if k != t]
        if op.type in ("RealDiv", "Div", "DivNoNan"):
            if list(op.inputs).index(t) == 0:
                return None  # the numerator's gradient is g / y: never zero for a nonzero g
            others = [op.inputs[0]]
        for k in others:
            v = self.value(k)
            if v is not None and v.size and not v.any():
                return self._zero_value(k, c)
        return None

    def _zero_value(self, k, consumer: int, depth: int = 0) -> Cause | None:
        """Why the value ``k`` is identically zero, when that is structural (None: by chance,
        e.g. an all-zero input batch, or a zero-initialised weight that the first update
        moves)."""
        flow = self.flow
        if depth > 12:
            return None
        p = flow.producer.get(k)
        if p is None:
            return None  # an input of the step: the batch is zero by chance
        op = flow.ops[p]
        kind = op.type
        if op.tag == TAG_READ or kind in ("ReadVariableOp", "ResourceGather"):
            return self._zero_weight(p, consumer)
        if kind in ("Relu", "Relu6"):
            x = self.value(op.data[0]) if op.data else None
            if x is None:
                return None
            if not x.any():
                return self._zero_value(op.data[0], consumer, depth + 1)
            if (self._jitter(x) > 0).any() or not _off_by_structure(x, x.ravel(), None):
                return None
            n = x.size
            reason = (
                f"relu is dead on the whole batch: all {n} of its inputs are ≤ 0 (the largest is {float(x.max()):.3g})"
            )
            return Cause("GC201", "dead-relu", p, p, reason)
        if kind in _CONSTANTS:
            reason = f"{self._call_text(consumer)} multiplies the gradient by a constant zero"
            return Cause("GC201", "zero-constant", consumer, consumer, reason)
        if kind in _SQUASH:
            reason = f"{kind.lower()} outputs exactly 0 on the whole batch (saturated)"
            return Cause("GC201", "saturated", p, consumer, reason, [], {"act": kind.lower()})
        if kind in _MASKS or (kind == "Cast" and op.inputs and not flow.is_differentiable(op.inputs[0])):
            reason = (
                f"the mask {self._call_text(p)} is zero everywhere on the batch, so what it multiplies gets no gradient"
            )
            return Cause("GC201", "zero-mask", p, consumer, reason)
        if kind in ("Select", "SelectV2"):
            return self._select_zero(p, consumer, depth)
        if kind in _PRODUCTS or kind in ("RealDiv", "Div"):
            # one zero factor makes the product zero: the first one decides
            for d in op.data if kind in _PRODUCTS else op.data[:1]:
                v = self.value(d)
                if v is not None and v.size and not v.any():
                    return self._zero_value(d, consumer, depth + 1)
            return None
        if kind in _PASS_THROUGH:
            # A sum, a concatenation or a copy is structurally zero only when every part is:
            # `prediction - y` is zero when the two agree on this batch, which is chance.
            causes = []
            for d in op.data:
                v = self.value(d)
                if v is None or not v.size:
                    continue
                cause = self._zero_value(d, consumer, depth + 1) if not v.any() else None
                if cause is None:
                    return None
                causes.append(cause)
            return causes[0] if causes else None
        return None

    def _select_zero(self, p: int, consumer: int, depth: int) -> Cause | None:
        """A tf.where whose output is zero: it took a zero branch everywhere. When the
        other branch is never taken, that is the cause (the trained branch is masked out)."""
        op = self.flow.ops[p]
        cond = self.value(op.inputs[0]) if op.inputs else None
        if cond is None or len(op.inputs) < 3:
            return None
        cond = cond.astype(bool)
        for position, taken in ((1, cond), (2, ~cond)):
            if not taken.any():
                branch = "true" if position == 1 else "false"
                reason = (
                    f"{self._call_text(p)} never takes its {branch} branch on the batch (the condition is "
                    f"{'False' if position == 1 else 'True'} everywhere), so its result is the other branch's zeros"
                )
                return Cause("GC201", "masked", p, consumer, reason)
        return None

    def _zero_weight(self, read_op: int, consumer: int) -> Cause | None:
        """A factor that is a variable equal to zero: structural only when that variable
        gets no (or a zero) gradient itself, so it never moves."""
        op = self.flow.ops[read_op]
        handle = op.inputs[0] if op.inputs else None
        source = next((s for s in self.ctx.sources if s.key == handle), None)
        if source is not None:
            g = self.grad(handle)
            if g is not None and g.any():
                return None  # zero-initialised, and trained: the first update moves it
            name = source.name
        else:
            name = "a weight that is not trained here"
        reason = (
            f"{name} is zero and gets no gradient itself, so what it multiplies gets none either and neither ever moves"
        )
        notes = ["zero-initialising every weight of a chain (or a frozen zero weight) leaves the chain stuck at zero"]
        return Cause("GC201", "zero-weight", read_op, consumer, reason, notes, {"weight": name})

    def _loop(self, c: int, t) -> Cause | None:
        op = self.flow.ops[c]
        inner = _inner_cut(op.site)
        what = "tf.while_loop" if op.type in ("While", "StatelessWhile") else op_label(op.type) or op.type
        if op.type.startswith(_LIST_OPS_PREFIX):
            what = "TensorArray"
        reason = f"the gradient through this {what} is all zero: inside it, the value that reaches the loss does not depend on this input"
        notes = []
        if inner is not None:
            notes.append(
                f"inside the loop body, {inner} cuts the path; in a traced function that gives zeros, not None"
            )
        return Cause("GC201", "loop", c, c, reason, notes)

    # -- GC202 ------------------------------------------------------------------------
    def nonfinite_causes(self, region, tensor_mask):
        flow = self.flow

        def bad(k) -> bool:
            g = self.grad(k)
            return g is not None and not np.isfinite(g).all()

        def finite_outputs(c) -> bool | None:
            known = [self.grad(o) for o in flow.ops[c].outputs if self.grad(o) is not None]
            if not known:
                return None
            return all(np.isfinite(g).all() for g in known)

        frontier: dict = {}
        for c in sorted(region):
            op = flow.ops[c]
            if not finite_outputs(c):
                continue
            for t in dict.fromkeys(op.data):
                if tensor_mask(t) and bad(t):
                    frontier.setdefault(t, []).append(c)
        out = []
        for t, consumers in frontier.items():
            others = [j for j in flow.data_consumers.get(t, ()) if j in region and j not in consumers]
            if any(finite_outputs(j) is False for j in others):
                continue  # the NaN reached t from another consumer: it was born further down
            if len(consumers) > 1:
                own = [(c, self.values.own_vjp(c, t)) for c in consumers]
                culprits = [c for c, g in own if g is not None and not np.isfinite(g).all()]
                if culprits:
                    consumers = culprits
            for c in consumers:
                out.append((self._explain_nonfinite(c, t), tensor_mask(t)))
        return out

    def _explain_nonfinite(self, c: int, t) -> Cause:
        op = self.flow.ops[c]
        kind = op.type
        x = self.value(t)
        call = self._call_text(c)
        blame = c
        variant, reason = "", f"the gradient of {call} is not finite at the values of this batch"
        notes: list[str] = []
        zeros = int((x == 0).sum()) if x is not None else 0
        if kind in ("Sqrt", "Rsqrt"):
            variant = "norm" if _mentions_norm(call) else "sqrt"
            what = "tf.norm" if variant == "norm" else "sqrt"
            reason = f"the derivative of {what} at 0 is infinite, and {zeros or 'some'} of its inputs are exactly 0"
        elif kind == "EuclideanNorm":
            variant = "norm"
            reason = "the derivative of the Euclidean norm of a zero vector is 0/0"
        elif kind in ("Log", "Log1p"):
            variant = "log"
            edge = "0" if kind == "Log" else "-1"
            count = zeros if kind == "Log" else (int((x == -1).sum()) if x is not None else 0)
            reason = (
                f"the derivative of log at {edge} is infinite, and {count or 'some'} of its inputs are exactly {edge}"
            )
        elif kind in ("RealDiv", "Div", "Reciprocal", "Inv", "FloorDiv", "Xdivy"):
            variant = "div"
            denominator = self.value(op.inputs[1]) if kind not in ("Reciprocal", "Inv") and len(op.inputs) > 1 else x
            count = int((denominator == 0).sum()) if denominator is not None else 0
            reason = f"{call} divides by zero ({count or 'some'} denominators are exactly 0), so its gradient is infinite there"
        elif kind == "Pow":
            variant = "pow"
            reason = f"the derivative of {call} at a zero base is infinite (or log(0) for the exponent)"
        elif kind in ("Exp", "Expm1"):
            variant = "exp"
            reason = f"{call} overflows to inf on this batch, and inf times a zero gradient is NaN"
        elif kind in ("Acos", "Asin"):
            variant = "acos"
            reason = f"the derivative of {kind.lower()} at ±1 is infinite, and some of its inputs are exactly ±1"
        elif kind == "Atan2":
            variant = "atan2"
            reason = "the derivative of atan2 at (0, 0) is 0/0"
        elif kind in _PRODUCTS:
            other = next((k for k in op.data if k != t), None)
            v = self.value(other) if other is not None else None
            if v is not None and not np.isfinite(v).all():
                origin = self._nonfinite_origin(other)
                if origin is not None:
                    blame = origin
                    call = self._call_text(origin)
                variant = "inf-factor"
                reason = f"{call} is inf or NaN on this batch, and the gradient through it multiplies that value by 0"
        guard = self._guarding_where(c)
        if guard is not None:
            notes.append(
                f"the non-finite value is discarded by {self._call_text(guard)} ({self.line_of(guard)}) in the forward "
                "pass, but not in the backward pass: tf.where sends a zero gradient to the unused branch, "
                "and 0 × inf is NaN"
            )
            variant = "where"
        return Cause("GC202", variant, blame, c, reason, notes, {"kind": _kind_word(self.grad(t))})

    def _nonfinite_origin(self, k, hops: int = 20):
        flow = self.flow
        found = None
        for _ in range(hops):
            p = flow.producer.get(k)
            if p is None:
                return found
            found = p
            nxt = [d for d in flow.ops[p].data if self.value(d) is not None and not np.isfinite(self.value(d)).all()]
            if not nxt:
                return p
            k = nxt[0]
        return found

    def _guarding_where(self, c: int, hops: int = 8):
        """A tf.where downstream of ``c`` that takes its value as a branch."""
        flow = self.flow
        keys, seen = list(flow.ops[c].outputs), set()
        for _ in range(hops):
            nxt = []
            for k in keys:
                for j in flow.data_consumers.get(k, ()):
                    if j in seen:
                        continue
                    seen.add(j)
                    op = flow.ops[j]
                    if op.type in ("Select", "SelectV2") and k in op.inputs[1:]:
                        return j
                    if op.type in _PASS_THROUGH or op.type in _PRODUCTS or op.type in ("Mul", "Neg", "Log", "Sqrt"):
                        nxt.extend(op.outputs)
            keys = nxt
            if not keys:
                break
        return None


def _off_by_structure(x: np.ndarray, values: np.ndarray, upper: float | None) -> bool:
    """Whether a ReLU's inputs ``values`` (those of ``x`` that matter) are off by structure:
    each unit on several samples, and by a margin. Units all negative on one or two samples,
    or just below zero, are a draw of the initialisation and the batch (a GAN's one-sample
    step), not a dead layer."""
    samples = x.size // x.shape[-1] if x.ndim >= 2 and x.shape[-1] else x.size
    if not values.size or samples < _DEAD_MIN_SAMPLES:
        return False
    gap = -values if upper is None else np.where(values <= 0, -values, values - upper)
    return float(np.min(gap)) >= _DEAD_MARGIN * float(np.sqrt(np.mean(np.square(values))))


def _squash(kind: str, x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", under="ignore"):
        if kind == "Sigmoid":
            return (np.float32(1) / (np.float32(1) + np.exp(-x))).astype(np.float32)
        if kind == "Tanh":
            return np.tanh(x).astype(np.float32)
        shifted = x - np.max(x, axis=-1, keepdims=True)
        e = np.exp(shifted)
        return (e / np.sum(e, axis=-1, keepdims=True)).astype(np.float32)


def _mentions_norm(call: str) -> bool:
    return "norm" in call.lower() or "distance" in call.lower()


def _kind_word(g) -> str:
    if g is None:
        return "not finite"
    if np.isnan(g).any():
        return "NaN"
    return "infinite"


def _inner_cut(graph_op) -> str | None:
    """Inside a while loop's body (a traced function): an op that cuts the gradient."""
    if graph_op is None or isinstance(graph_op, tuple):
        return None
    from gradcheck.rules import classify_op

    for attr in ("body", "f", "then_branch", "else_branch"):
        try:
            function = graph_op.get_attr(attr)
        except (ValueError, AttributeError):
            continue
        name = getattr(function, "name", None)
        if not name:
            continue
        try:
            body = graph_op.graph._get_function(name)
        except Exception:  # noqa: BLE001
            body = None
        graph = getattr(body, "graph", None)
        if graph is None:
            continue
        for inner in graph.get_operations():
            if inner.type in ("StopGradient", "PreventGradient") or classify_op(inner.type):
                return f"{op_label(inner.type)}"
    return None


# -- where to point: the Keras layer an op ran inside ------------------------------------
def blame_location(checked, op_index: int):
    """The user's line for an op. An op that ran inside a built-in Keras layer (a ReLU or
    softmax activation, a Dense's MatMul) has no line of the user's but the model's call;
    the layer's own line (where it was created, or first applied by the user) is where
    its activation and initialisers are chosen: point there."""
    from gradcheck.trace import frames

    ctx = checked.ctx
    op = ctx.flow.ops[op_index]
    site = op.site
    if site is not None and not isinstance(site, tuple):
        layer_site = getattr(site, "_gc_layer_site", None)
        if layer_site is not None:
            return frames.site_location(layer_site)
        return ctx.op_location(op_index)
    location = ctx.op_location(op_index)
    if not checked.eager or site is None:
        return location
    layer = _eager_layer(checked, op_index)
    if layer is None:
        return location
    layer_site = getattr(layer, "_gc_call_site", None) or getattr(layer, "_gc_site", None)
    return frames.site_location(layer_site) if layer_site is not None else location


def _weight_location(checked, read_op: int):
    """Where the layer owning the variable a read op reads was created."""
    from gradcheck.trace import frames

    op = checked.ctx.flow.ops[read_op]
    if not op.inputs:
        return None
    layer = layers_by_source(checked).get(op.inputs[0])
    site = getattr(layer, "_gc_site", None) or getattr(layer, "_gc_call_site", None)
    return frames.site_location(site) if site is not None else None


def layers_by_source(checked) -> dict:
    """Flow key of each variable source -> the innermost Keras layer owning it (computed
    once per check, while the user's frames are alive: at trace time in graph mode)."""
    cached = getattr(checked, "_layers", None)
    if cached is None:
        by_handle = _layers_by_handle(checked)
        cached = {}
        from gradcheck.trace import _tf

        for source in checked.ctx.sources:
            if source.key is None or not source.is_variable:
                continue
            try:
                layer = by_handle.get(id(_tf.handle_of(source.value)))
            except (AttributeError, ValueError, TypeError):
                layer = None
            if layer is not None:
                cached[source.key] = layer
        checked._layers = cached
    return cached


def _eager_layer(checked, op_index: int, hops: int = 6):
    """The Keras layer an eager op ran inside, when it ran inside one called by Keras
    (not by the user's own code): the layer owning the nearest variable read before it
    at the same user site."""
    flow = checked.ctx.flow
    op = flow.ops[op_index]
    keys, seen = list(op.data), set()
    handles = [op.inputs[0]] if op.tag == TAG_READ and op.inputs else []
    for _ in range(hops if not handles else 0):
        nxt = []
        for k in keys:
            p = flow.producer.get(k)
            if p is None or p in seen:
                continue
            seen.add(p)
            prev = flow.ops[p]
            if prev.site != op.site:
                continue
            if prev.tag == TAG_READ and prev.inputs:
                handles.append(prev.inputs[0])
            else:
                nxt.extend(prev.data)
        if handles:
            break
        keys = nxt
    if not handles:
        return None
    layers = layers_by_source(checked)
    for handle in handles:
        layer = layers.get(handle)
        if layer is not None:
            return layer
    return None


def _layers_by_handle(checked) -> dict:
    """id(variable handle) -> the innermost Keras layer owning it, for the layers and
    models the user's frames hold (locals, and module globals)."""
    from gradcheck.trace import _tf

    classes = tuple(_tf.keras_layer_classes())
    call = checked.call
    frame = getattr(call, "_caller", None)
    if not classes or frame is None:
        return {}
    from gradcheck.trace import frames

    roots, seen = [], set()
    depth = 0
    while frame is not None and depth < 40:
        scopes = [frame.f_locals]
        if frames.is_user_file(frame.f_code.co_filename):
            scopes.append(frame.f_globals)
        for scope in scopes:
            for value in list(scope.values()):
                if isinstance(value, classes) and id(value) not in seen:
                    seen.add(id(value))
                    roots.append(value)
        frame, depth = frame.f_back, depth + 1
    out: dict = {}
    for root in roots:
        try:
            layers = list(root._flatten_layers(include_self=True, recursive=True))
        except Exception:  # noqa: BLE001 - not a standard layer
            layers = [root]
        for layer in layers:
            own = list(getattr(layer, "_trainable_variables", None) or getattr(layer, "_trainable_weights", None) or [])
            own += list(getattr(layer, "_non_trainable_variables", None) or [])
            for variable in own:
                try:
                    out[id(_tf.handle_of(variable))] = layer  # deeper layers come later and win
                except (AttributeError, ValueError, TypeError):
                    continue
    return out
