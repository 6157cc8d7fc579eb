"""GC203 unstopped-bootstrap-target: a regression (or distillation) target built from the
trained network inside the tape, so the gradient flows through the target too.

Found by structure, no value needed: a comparison on the way to the loss (``a - b``, a
squared difference, a cross-entropy's labels, a cosine's product) whose two sides both
reach the same trained variables through ops the tape recorded, and through which the
gradient really flows (the shadow tape is asked: a ``tf.stop_gradient`` or a target
computed before the tape leaves the target side without one). Which side is the target:

- a temporal-difference target ``r + γ·V(s')``: between the network's output and the
  comparison, that side adds a tensor that does not depend on any trained variable (the
  reward); the prediction side does not;
- a self-distillation target (BYOL/SimSiam, a teacher that is the student itself): the
  two sides come from separate calls of the network, and one of them uses a strict subset
  of the other's variables (the prediction side has an extra predictor head); for a
  cross-entropy, the side that is not under the log.

A loop or a function call is one op of the data flow reading every weight it uses: for an
advantage read back from an episode loop (two ``TensorArray``s stacked after a
``tf.while_loop``), which variables each output depends on is read in the loop's body
(``_loop_output_inputs``), so the critic's values are told from the actor's probabilities.

A Siamese or triplet distance (same network, same variables on both sides, no reward), two
views compared through the same squash (no side sharper than the other), an entropy bonus (``p * log p`` of one call) and a correct DQN / Double DQN / actor-critic
(target built before the tape, stopped, or from a target network) stay silent. So does an
advantage that still carries the critic's gradient into a policy-gradient loss
(``-log π · (G - V(s))``, keras-io#194): it is no regression target, and the project's
shared actor-critic controls use that form.
"""

from __future__ import annotations

import hashlib

import numpy as np

from gradcheck.findings import Finding
from gradcheck.trace.diagnose.cuts import BLOCK, Cut
from gradcheck.trace.diagnose.describe import chain, make, merge
from gradcheck.trace.diagnose.roles import LOG_PASS as _LOG_PASS
from gradcheck.trace.diagnose.roles import LOG_PROBS as _LOG_PROBS
from gradcheck.trace.diagnose.roles import LOGS as _LOGS
from gradcheck.trace.diagnose.roles import SHAPE_ONLY as _SHAPE_ONLY
from gradcheck.trace.diagnose.roles import is_error
from gradcheck.trace.record import _tf
from gradcheck.trace.record.call import GradientCall
from gradcheck.trace.record.dataflow import TAG_READ
from gradcheck.trace.record.errors import internal_error
from gradcheck.trace.record.registry import register
from gradcheck.trace.values.checked import Checked, checked_call, derivative_keys, note_derivatives
from gradcheck.trace.values.layers import blame_location
from gradcheck.trace.values.sharpening import constant_of, logits_scale, sharpening

__all__ = ["find"]

_ADDS = frozenset({"Add", "AddV2", "AddN", "Sub"})
_REDUCTIONS = frozenset({"Sum", "Mean", "Prod"})
_COMPARISONS = frozenset({"Sub", "SquaredDifference", "SoftmaxCrossEntropyWithLogits", "Mul"})
#: Elementwise ops an advantage goes through on its way into a policy loss (a positive part,
#: a clip, a scale): walked back to where it is made (``_Study._advantage_op``).
_ADVANTAGE_TRANSFORMS = frozenset(
    {
        "Softplus", "Exp", "Relu", "Elu", "Selu", "Tanh", "Sigmoid", "Abs", "Maximum", "Minimum", "ClipByValue",
        "Mul", "RealDiv", "Neg", "Identity", "Cast", "Reshape", "Squeeze", "ExpandDims", "StridedSlice",
    }
)  # fmt: skip
_ADVANTAGE_HOPS = 6


def _random(op_type: str) -> bool:
    """An op that draws random numbers (input noise, a dropout mask)."""
    return "Random" in op_type or "TruncatedNormal" in op_type


@register("values", "GC203")
def check(call: GradientCall) -> list[Finding]:
    """GC203 on ``call``: structural, read from the data-flow graph of its first step."""
    checked = checked_call(call)
    findings = find(checked) if checked is not None else []
    try:
        note_derivatives(call)  # whatever the dedup said: an inner call feeds a later outer one
    except Exception as error:  # noqa: BLE001 - never lose the findings (or the later checks) for it
        internal_error(error)
    return findings


def find(checked: Checked) -> list[Finding]:
    ctx = checked.ctx
    flow = ctx.flow
    sources = [s for s in ctx.sources if s.key is not None and s.is_variable]
    if not sources or not ctx.target_keys:
        return []
    cone = flow.backward_cone(ctx.target_keys, data=True)
    recorded = {i for i in cone if flow.ops[i].recorded}
    if not any(flow.ops[i].type in _COMPARISONS for i in recorded):
        return []
    bits = {s.key: 1 << i for i, s in enumerate(sources)}
    masks = flow.reach_masks(bits, recorded, data=True)

    def tmask(k) -> int:
        p = flow.producer.get(k)
        return bits.get(k, 0) | (masks.get(p, 0) if p is not None and p in recorded else 0)

    study = _Study(checked, sources, bits, masks, tmask, recorded)
    # what an earlier tape.gradient differentiated, and its backward ops: the model (and
    # its derivatives) of a physics-informed or meta-learning loss, never a comparison
    derivatives = [k for k in derivative_keys(checked) if k in flow.producer]
    differentiated = flow.backward_cone(derivatives, data=True) if derivatives else set()
    network = _inside_network(flow, recorded)
    findings = []
    reported: set = set()
    for c in sorted(recorded, reverse=True):  # nearest the loss first
        op = flow.ops[c]
        if op.type not in _COMPARISONS or len(op.data) < 2 or c in differentiated or c in network:
            continue
        verdict = study.judge(c)
        if verdict is None:
            continue
        target_side, blame, common, how = verdict
        if blame in reported or study.derived(op.data[:2]):
            continue  # a residual built from the network's own derivatives has no target
        live = study.live_sources(target_side, common)
        if not live:
            continue
        prediction = next((k for k in op.data[:2] if k != target_side), None)
        if prediction is not None and not study.live_sources(prediction, study.tmask(prediction)):
            continue  # nothing trained is compared with the target: a cut made it a constant
        reported.add(blame)
        findings.append(study.finding(c, target_side, blame, live, how))
    return merge(findings)


#: ops that apply a trained weight to their input: a layer of the network
_LAYER_OPS = frozenset(
    {
        "MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3", "Conv1D", "Conv2D", "Conv3D",
        "DepthwiseConv2dNative", "Einsum", "BiasAdd",
    }
)  # fmt: skip


#: ops that run a body of their own (a recurrent layer's loop, a nested function): layers
#: too, when what they compute depends on the weights
_CALLS = frozenset(
    {"While", "StatelessWhile", "If", "StatelessIf", "Case", "PartitionedCall", "StatefulPartitionedCall"}
)


def _body_of(graph_op):
    """(the graph a loop or function call runs, whether its outputs are carried back to its
    inputs: a ``while_loop``) or None. Input i of the op is the body's input i, output j
    its output j (a while loop's body, a ``tf.function`` or the tape's wrapper of a loop)."""
    body = getattr(graph_op, "_body_graph", None)
    if body is not None:
        return body, True
    try:
        fn = graph_op.graph._get_function(graph_op.get_attr("f").name)
    except Exception:  # noqa: BLE001 - no function attribute, or not in this graph's library
        return None
    body = getattr(fn, "graph", None)
    if body is None or len(body.inputs) != len(graph_op.inputs) or len(body.outputs) != len(graph_op.outputs):
        return None
    return body, False


def _loop_output_inputs(graph_op, j: int, depth: int = 0) -> set[int] | None:
    """The inputs of a loop or call op that its output ``j`` depends on, read in its body
    (nested loops and calls read in theirs; a loop's carried values followed around it);
    None when the body is not known."""
    known = _body_of(graph_op) if depth < 6 else None
    if known is None:
        return None
    body, carried = known
    if j >= len(body.outputs):
        return None
    position = {id(t): i for i, t in enumerate(body.inputs)}

    def direct(out: int) -> set[int]:
        found, stack, seen = set(), [body.outputs[out]], set()
        while stack:
            t = stack.pop()
            if id(t) in seen:
                continue
            seen.add(id(t))
            if id(t) in position:
                found.add(position[id(t)])
                continue
            inner = _loop_output_inputs(t.op, t.value_index, depth + 1) if t.op.type in _CALLS else None
            ins = t.op.inputs if inner is None else [t.op.inputs[i] for i in inner if i < len(t.op.inputs)]
            stack.extend(ins)
        return found

    if not carried:
        return direct(j)
    memo: dict[int, set[int]] = {}
    deps, todo = set(), [j]
    while todo:
        out = todo.pop()
        if out in memo or out >= len(body.outputs):
            continue
        memo[out] = direct(out)
        deps |= memo[out]
        todo.extend(memo[out])
    return deps


def _inside_network(flow, recorded: set[int]) -> set[int]:
    """The recorded ops whose output goes on into a layer (an op that applies a trained
    weight): part of a forward pass, such as a recurrent cell's gated state update, not a
    comparison of the network's outputs. A loss weighted by a learned scalar (``loss *
    exp(-s)``) is still after the network: a product is no layer. One pass in reverse
    execution order."""

    def applies_weight(j: int) -> bool:
        op = flow.ops[j]
        return op.type in _LAYER_OPS and any(
            (p := flow.producer.get(d)) is not None and flow.ops[p].tag == TAG_READ for d in op.data
        )

    inside: set[int] = set()
    for i in sorted(recorded, reverse=True):
        if any(
            j in recorded and (j in inside or applies_weight(j))
            for k in flow.ops[i].outputs
            for j in flow.data_consumers.get(k, ())
        ):
            inside.add(i)
    return inside


class _Study:
    def __init__(self, checked, sources, bits, masks, tmask, recorded) -> None:
        self.checked, self.ctx, self.flow = checked, checked.ctx, checked.ctx.flow
        self.sources, self.bits, self.masks, self.tmask, self.recorded = sources, bits, masks, tmask, recorded
        self.constant = constant_of(self.ctx, tmask)
        self._loop_memo: dict = {}

    def judge(self, c: int):
        """(target side key, op to point at, common source bits, kind) or None; a
        distillation target must be computed by layers (``_by_layers``)."""
        verdict = self._judge(c)
        if verdict is not None and verdict[3] == "distill" and not self._by_layers(verdict[0], verdict[2]):
            # the weights alone: a learned coefficient (`(1 - gamma) * s`), an embedding row
            # looked up by a label (`table[ids]`), not the output of a network run on an input
            return None
        return verdict

    def _by_layers(self, k, common: int) -> bool:
        """``k`` is computed by a layer (an op applying weights to an input, or a loop or
        call that reads them), not from the weights alone."""
        flow = self.flow
        return any(
            flow.ops[i].type in _LAYER_OPS or flow.ops[i].type in _CALLS for i in self._side_ops(k, common, False)
        )

    def _judge(self, c: int):
        """(target side key, op to point at, common source bits, kind) or None. The cheap
        tests come first: whether the sides are network outputs, a marker in the short
        chain after the network; only then the walk that tells separate calls apart."""
        op = self.flow.ops[c]
        a, b = op.data[0], op.data[1]
        ma, mb = self.tmask(a), self.tmask(b)
        common = ma & mb
        if op.type == "Mul":
            if common:  # a sharpened prediction times a log-probability: a pseudo-label's
                la, lb = self._under_log(a), self._under_log(b)
                if la != lb:
                    target = b if la else a
                    sharp = self._sharper_side(target, a if target is b else b)
                    if sharp is not None and self._network_side(target, common):
                        return target, sharp, common, "consistency"
            weighted = self._weighted_log_prob(a, b, ma, mb)
            if weighted is not None:
                return weighted
        if not common:
            return self._trained_target_network(c, a, b, ma, mb)
        if not (self._network_side(a, common) and self._network_side(b, common)):
            return None  # one side is a weight itself (an inner SGD step), not a network's output
        if op.type == "SoftmaxCrossEntropyWithLogits":
            # (logits, labels): labels sharper than the logits, or built by a separate call
            sharp = self._sharper(b, logits_scale(self.flow, a, self.constant))
            if sharp is not None:
                return b, sharp, common, "consistency"
            if self._separate(a, b, common):
                return b, self._network_output(b, common), common, "distill"
            return None
        if op.type == "Mul":
            la, lb = self._under_log(a), self._under_log(b)
            target = (b if la else a) if la != lb else None
            if target is None and not la and not lb:
                target = self._subset_side(a, b, ma, mb)
            if target is not None and self._separate(a, b, common):
                return target, self._network_output(target, common), common, "distill"
            return None
        # Sub / SquaredDifference
        if op.type == "Sub" and not is_error(self.flow, c):
            return None  # a difference that is no error (a KL term's `log_var - mu**2`, a log-density)
        if self._loss_term(a, common) or self._loss_term(b, common):
            return None  # `policy_loss + value_loss - entropy`: loss terms combined, not compared
        td_a, td_b = self._td_marker(a, common), self._td_marker(b, common)
        if (td_a is None) != (td_b is None):
            side, (marker, batched, reward) = (a, td_a) if td_a is not None else (b, td_b)
            if self._feeds(reward, b if side is a else a, common):
                # the "reward" is a label on both sides (a soft IoU's union minus its
                # intersection, ``sum(y + p) - sum(y * p)``): set algebra, no TD target
                return None
            # A reward that is one number (a single transition) looks like a constant (the
            # `1 +` of a VAE's KL term): then the sides must come from separate calls of the
            # network (V(s') beside V(s)).
            if batched or self._separate(a, b, common):
                return side, marker, common, "td"
            return None
        if td_a is None and td_b is None:
            teacher = self._averaged_weights_side(a, b, common)
            if teacher is not None:
                layers = [i for i in self._side_ops(teacher, common, False) if self.flow.ops[i].type in _LAYER_OPS]
                return teacher, max(layers), common, "distill"
            subset = self._subset_side(a, b, ma, mb)
            if subset is not None and self._separate(a, b, common):
                return subset, self._network_output(subset, common), common, "distill"
            if subset is None:
                for side, other in ((a, b), (b, a)):
                    sharp = self._sharper_side(side, other)
                    if sharp is not None:
                        return side, sharp, common, "consistency"
                clean = self._clean_side(a, b, common) if ma == mb else None
                if clean is not None:
                    return clean, self._network_output(clean, common), common, "consistency"
        return None

    def _trained_target_network(self, c: int, a, b, ma: int, mb: int):
        """A TD target computed by a target network whose variables are trained with the
        online network's (a Double DQN differentiating ``self.trainable_variables``): the
        sides reach disjoint trained variables, one side adds a per-sample reward to its
        network's output, the other does not, and the two networks are copies (the same
        variable shapes). The optimizer then moves the target towards the prediction. A
        target network left out of the trained variables reaches none: silent."""
        if not ma or not mb or ma & mb or self.flow.ops[c].type not in ("Sub", "SquaredDifference"):
            return None
        if self.flow.ops[c].type == "Sub" and not is_error(self.flow, c):
            return None
        for side, mask, other, other_mask in ((a, ma, b, mb), (b, mb, a, ma)):
            if not (self._network_side(side, mask) and self._network_side(other, other_mask)):
                continue
            td = self._td_marker(side, mask)
            if td is None or not td[1] or self._td_marker(other, other_mask) is not None:
                continue
            if self._feeds(td[2], other, other_mask) or self._shapes(mask) != self._shapes(other_mask):
                continue
            if not self._by_layers(side, mask):
                continue
            return side, td[0], mask, "target-network"
        return None

    def _averaged_weights_side(self, a, b, common: int):
        """The teacher side of a mean teacher whose EMA weights are computed inside the tape
        (``decay * teacher + (1 - decay) * student``, then a functional call with them): the
        two sides are separate calls, and only this one's layers apply weights that are a
        sum of a trained variable and a tensor no trained variable made."""
        if not self._separate(a, b, common):
            return None
        averaged = [self._averaged_weights(k, common) for k in (a, b)]
        if averaged[0] == averaged[1]:
            return None
        return a if averaged[0] else b

    def _averaged_weights(self, k, common: int) -> bool:
        flow = self.flow
        for i in self._side_ops(k, common, False):
            op = flow.ops[i]
            if op.type not in _LAYER_OPS:
                continue
            for d in op.data[1:]:
                p = flow.producer.get(d)
                if p is None or p not in self.recorded or flow.ops[p].type not in _ADDS:
                    continue
                parts = [self.tmask(x) for x in flow.ops[p].data]
                if any(parts) and not all(parts):
                    return True
        return False

    def _shapes(self, mask: int) -> list:
        """The sorted shapes of the trained variables in ``mask``: a network's architecture."""
        shapes = []
        for s in self.sources:
            if self.bits[s.key] & mask:
                shape = getattr(s.value, "shape", None)
                shapes.append(tuple(shape.as_list()) if hasattr(shape, "as_list") else tuple(shape or ()))
        return sorted(shapes)

    def _clean_side(self, a, b, common: int):
        """The clean prediction of a consistency loss (the Pi-model, VAT, UDA): the two sides
        are separate calls of the network on the same batch, and only the other one draws
        random numbers of its own (input noise, dropout: the perturbed view). Two views
        both perturbed, or calls on different inputs (a GAN's real and fake batches), have
        no clean side."""
        if not self._separate(a, b, common):
            return None
        ins_a, random_a = self._side_inputs(a)
        ins_b, random_b = self._side_inputs(b)
        if not ins_a or ins_a != ins_b:
            return None
        own_a, own_b = random_a - random_b, random_b - random_a
        if own_b and not own_a:
            return a
        if own_a and not own_b:
            return b
        return None

    def _side_inputs(self, k) -> tuple[frozenset, frozenset]:
        """(the batched tensors the tape did not compute that ``k`` is made from, the random
        ops drawn on its way)."""
        flow = self.flow
        # a dropout mask enters through a condition or a comparison: every input counts
        randoms = {i for i in flow.backward_cone([k]) if flow.ops[i].recorded and _random(flow.ops[i].type)}
        inputs = set()
        for i in flow.backward_cone([k], data=True) & self.recorded:
            op = flow.ops[i]
            for d in op.data:
                p = flow.producer.get(d)
                outside = p is None or p not in self.recorded or not flow.ops[p].inputs
                if outside and not self.tmask(d) and not self._is_weight(d) and self._batched(d):
                    inputs.add(self._signature(d))
        return frozenset(inputs), frozenset(randoms)

    def _signature(self, k):
        """What tells two input tensors apart: their values when known here (a NumPy batch
        converted at each call is a new tensor of the same values), else the tensor."""
        tensor = self.ctx.tensors.get(k)
        if tensor is None and self.checked.eager:
            tensor = self.ctx.session.recorder.orphans.get(k)
        try:
            value = _tf.tf.get_static_value(tensor) if tensor is not None else None
        except Exception:  # noqa: BLE001 - no value known here
            value = None
        if value is None:
            return ("tensor", k)
        value = np.asarray(value)
        return ("value", value.shape, value.dtype.str, hashlib.sha1(value.tobytes()).hexdigest())

    def _sharper_side(self, side, other) -> int | None:
        """The op sharpening ``side`` when it is sharper than ``other`` (``sharpening``)."""
        theirs = sharpening(self.flow, other, self.constant)
        return self._sharper(side, theirs.factor if theirs is not None else 1.0)

    def _sharper(self, side, than: float) -> int | None:
        """The op sharpening ``side`` when its factor exceeds both 1 and ``than``."""
        mine = sharpening(self.flow, side, self.constant)
        if mine is None or mine.factor <= 1.0 or mine.factor <= than * (1 + 1e-6):
            return None
        return mine.op

    def _weighted_log_prob(self, a, b, ma: int, mb: int):
        """A log-probability (or a ratio of probabilities) times its weight, the advantage of
        a policy gradient: the weight is the target. It is one when the weight depends on
        the trained variables and is not a function of the distribution under the log
        itself (``p * log p``, a focal factor ``(1 - p)**γ``, a KL's ``p``)."""
        la, lb = self._log_prob(a), self._log_prob(b)
        if la == lb:
            return None
        log_side, weight, wmask = (a, b, mb) if la else (b, a, ma)
        if not wmask or not self._network_side(weight, wmask):
            return None
        mask = wmask | self.tmask(log_side)
        weight_layers = self._layer_outputs(weight, mask)
        log_layers = self._layer_outputs(log_side, mask)
        if not weight_layers:
            return None
        if weight_layers <= log_layers:
            if not self._own_loop_head(weight, log_side, weight_layers):
                return None  # the weight is computed from the policy itself
            wmask = self._loop_mask(weight)  # what the loop used for the weight, not all it reads
        if self._under_log(weight) or self._log_prob(weight):
            return None  # a log-likelihood times a log-likelihood: no advantage
        return weight, self._advantage_op(weight), wmask, "advantage"

    def _own_loop_head(self, weight, log_side, layers: frozenset) -> bool:
        """Both sides come out of the same loop (an episode rolled out in a ``tf.while_loop``,
        the probabilities and the values stacked from two ``TensorArray``s): the loop is one
        op reading every weight, so which head each output used is read inside its body. The
        weight is an advantage when it uses trained variables the log-probability does not
        (the critic's head)."""
        if not all(self.flow.ops[i].type in _CALLS for i in layers):
            return False
        w, lp = self._loop_mask(weight), self._loop_mask(log_side)
        return bool(w & ~lp)

    def _loop_mask(self, k) -> int:
        """``tmask(k)``, with each output of a ``while_loop`` made from the loop inputs its
        body really uses for it (followed around the loop's carried values), not from all."""
        flow, memo = self.flow, self._loop_memo
        stack, order = [k], []
        while stack:
            key = stack.pop()
            p = flow.producer.get(key)
            if key in memo or p is None or p not in self.recorded:
                continue
            memo[key] = None
            order.append(key)
            stack.extend(flow.ops[p].inputs)
        for key in reversed(order):
            p = flow.producer[key]
            op = flow.ops[p]
            deps = _loop_output_inputs(op.site, list(op.outputs).index(key)) if op.type in _CALLS else None
            ins = op.inputs if deps is None else [op.inputs[i] for i in deps if i < len(op.inputs)]
            mask = 0
            for d in ins:
                if d in self.bits:
                    mask |= self.bits[d]
                elif flow.producer.get(d) in self.recorded:
                    mask |= memo.get(d) or 0
            memo[key] = mask & self.tmask(key) if deps is None else mask
        return self.bits.get(k, 0) | (memo.get(k) or 0)

    def _advantage_op(self, k) -> int:
        """Where the advantage is made: past the transforms applied to it on its way into
        the policy loss (``softplus(advantages)``, a clip, a scale by a constant), the sum or
        difference that combines the network's value with what it does not compute (``rewards
        - values``). Else the op that computes ``k`` (``_statement_op``)."""
        flow, key = self.flow, k
        for _ in range(_ADVANTAGE_HOPS):
            p = flow.producer.get(key)
            if p is None or p not in self.recorded:
                break
            op = flow.ops[p]
            trained = [d for d in op.data if self.tmask(d)]
            if op.type in _ADDS:
                if len(trained) < len(op.data):
                    return p  # a return or a reward beside the network's value
                break
            if op.type not in _ADVANTAGE_TRANSFORMS or len(trained) != 1:
                break
            key = trained[0]
        return self._statement_op(k)

    def _log_prob(self, k, hops: int = 8) -> bool:
        """``k`` is a log-probability of the network's output (or ``exp`` of a difference of
        them, a probability ratio): a log op within a few selection / reduction / scaling ops."""
        flow, stack, seen = self.flow, [(k, 0)], set()
        while stack:
            k, depth = stack.pop()
            p = flow.producer.get(k)
            if p is None or p in seen or p not in self.recorded or depth > hops:
                continue
            seen.add(p)
            op = flow.ops[p]
            if op.type in _LOG_PROBS:
                return True
            if op.type not in _LOG_PASS:
                continue
            stack.extend((d, depth + 1) for d in op.data if self.tmask(d))
        return False

    def _layer_outputs(self, k, mask: int) -> frozenset:
        """The ops reading a trained weight nearest ``k`` (the network's outputs it uses)."""
        chain = self._side_ops(k, mask, stop_at_layers=True)
        return frozenset(i for i in chain if any(self._is_weight(d) for d in self.flow.ops[i].data))

    def _statement_op(self, k) -> int:
        """The op that computes ``k``, past ops that only reshape or select it."""
        flow = self.flow
        p = flow.producer.get(k, -1)
        while p >= 0 and flow.ops[p].type in _SHAPE_ONLY and flow.ops[p].data:
            q = flow.producer.get(flow.ops[p].data[0])
            if q is None or q not in self.recorded:
                break
            p = q
        return p

    def derived(self, sides) -> bool:
        """Whether a side is made from a derivative of the network (an earlier
        ``tape.gradient``'s result): a physics-informed residual, a gradient penalty."""
        keys = derivative_keys(self.checked)
        if not keys:
            return False
        flow = self.flow
        cone = flow.backward_cone(sides, data=True)
        return any(k in keys for k in sides) or any(
            k in keys for i in cone for k in (*flow.ops[i].data, *flow.ops[i].outputs)
        )

    def _network_side(self, k, common: int) -> bool:
        """``k`` is computed by ops depending on the common variables (not a bare read)."""
        p = self.flow.producer.get(k)
        return (
            p is not None
            and p in self.recorded
            and bool(self.masks.get(p, 0) & common)
            and (self.flow.ops[p].tag != TAG_READ)
        )

    def _network_output(self, k, common: int) -> int:
        """The last op of the network on this side (the one reading a weight), where the
        target is computed: its statement is what to wrap in tf.stop_gradient."""
        flow = self.flow
        chain = self._side_ops(k, common, stop_at_layers=True)
        layer_ops = [i for i in chain if any(self._is_weight(d) for d in flow.ops[i].data)]
        return max(layer_ops) if layer_ops else self._top(k)

    @staticmethod
    def _subset_side(a, b, ma: int, mb: int):
        if ma != mb and ma & mb == ma:
            return a
        if ma != mb and ma & mb == mb:
            return b
        return None

    def _top(self, k) -> int:
        return self.flow.producer.get(k, -1)

    def _side_ops(self, k, common: int, stop_at_layers: bool) -> set[int]:
        """Ops on the side ending at ``k`` that depend on the common sources; with
        ``stop_at_layers``, only those after the network (not past an op reading a weight)."""
        flow = self.flow
        out: set[int] = set()
        stack = [flow.producer.get(k)]
        while stack:
            i = stack.pop()
            if i is None or i in out or i not in self.recorded or not (self.masks.get(i, 0) & common):
                continue
            op = flow.ops[i]
            if op.tag == TAG_READ:
                continue
            out.add(i)
            if stop_at_layers and any(self._is_weight(d) for d in op.data):
                continue
            stack.extend(flow.producer.get(d) for d in op.data)
        return out

    def _is_weight(self, k) -> bool:
        if k in self.bits:
            return True
        p = self.flow.producer.get(k)
        return p is not None and self.flow.ops[p].tag == TAG_READ

    def _td_marker(self, k, common: int):
        """(the op adding a tensor independent of every trained variable, a reward, to the
        network's output on this side; whether that tensor is per sample; the tensor), or None."""
        flow = self.flow
        found = None
        ops = self._side_ops(k, common, stop_at_layers=True)
        # a layer that applies computed weights (an EMA of the trained ones) is not a
        # boundary of the walk: an add before the last layer makes weights, adds no reward
        last_layer = max((i for i in ops if flow.ops[i].type in _LAYER_OPS), default=-1)
        for i in sorted(ops, reverse=True):
            op = flow.ops[i]
            if op.type not in _ADDS or i < last_layer:
                continue
            for d in op.data:
                if self.tmask(d) != 0 or not flow.is_differentiable(d) or self._is_weight(d):
                    continue
                if self._batched(d):
                    return i, True, d
                found = found or (i, False, d)
        return found

    def _feeds(self, k, side, common: int) -> bool:
        """Whether tensor ``k`` is also an input of the network's ops on ``side``."""
        return any(k in self.flow.ops[i].data for i in self._side_ops(side, common, stop_at_layers=True))

    def _loss_term(self, k, common: int) -> bool:
        """A side that already reduced the batch to one number (a loss term)."""
        for i in self._side_ops(k, common, stop_at_layers=True):
            op = self.flow.ops[i]
            if op.type in _REDUCTIONS and op.outputs:
                tensor = self.ctx.tensors.get(op.outputs[0])
                shape = getattr(tensor, "shape", None)
                if shape is not None and getattr(shape, "rank", None) == 0:
                    return True
        return False

    def _batched(self, k) -> bool:
        """A per-sample tensor (a batch of rewards), not a constant (the `1 +` of a VAE's KL
        term, an epsilon): at least one element per sample."""
        tensor = self.ctx.tensors.get(k)
        if tensor is None and self.checked.eager:
            tensor = self.ctx.session.recorder.orphans.get(k)
        shape = getattr(tensor, "shape", None)
        if shape is None:
            return False
        if getattr(shape, "rank", 0) is None:
            return True  # unknown (a tf.numpy_function's result): maybe a batch
        dims = shape.as_list() if hasattr(shape, "as_list") else list(shape)
        return len(dims) >= 1 and dims[0] != 1

    def _separate(self, a, b, common: int) -> bool:
        """The two sides come from separate calls of the network: no op depending on the
        common variables (other than their reads) is shared."""
        return not (self._side_ops(a, common, False) & self._side_ops(b, common, False))

    def _under_log(self, k, hops: int = 3) -> bool:
        return self.flow.producer_through(k, _LOGS, ("Identity", "Maximum", "Minimum", "Cast", "Neg"), hops) is not None

    def live_sources(self, target_key, common: int):
        """The common sources that get a gradient through the target side (the shadow tape
        answers: a stop_gradient or a target built before the tape gives None)."""
        ctx = self.ctx
        tensor = ctx.tensors.get(target_key)
        chosen = [s for s in self.sources if common & self.bits[s.key]]
        if tensor is None or not chosen or not _tf.is_differentiable_dtype(tensor.dtype):
            return []
        handles = [_tf.handle_of(s.value) for s in chosen]
        grads = _tf.imperative_gradient(ctx.state.shadow, [tensor], handles)
        return [s for s, g in zip(chosen, grads, strict=False) if g is not None]

    def _shared_entry(self, target_key, blame: int) -> int | None:
        """Where the target enters the loss, when the value it is made from is needed
        elsewhere too: the op of the target side that first consumes ``blame``'s output,
        when that output also feeds the loss another way (SimSiam's ``z`` is the target of
        one term and the predictor's input in the other; a critic's value is a prediction
        and, in the λ-return, a target). A ``tf.stop_gradient`` where the value is made
        would cut the other path; it belongs where the target enters. None otherwise."""
        flow = self.flow
        side = flow.backward_cone([target_key], data=True) & self.recorded
        entries, elsewhere = [], False
        for key in flow.ops[blame].outputs:
            for consumer in flow.data_consumers.get(key, ()):
                if consumer in side:
                    entries.append(consumer)
                elif consumer in self.recorded:
                    elsewhere = True
        return min(entries) if entries and elsewhere else None

    def finding(self, c: int, target_key, blame: int, sources, how: str) -> Finding:
        ctx = self.ctx
        location = None
        if blame >= 0:
            frame = ctx.caller_level_frame(blame) if ctx.call_scope is not None else None
            location = blame_location(self.checked, blame)
            at_step_level = frame is not None and frame.scope == ctx.call_scope and location is not None
            # inside a model's forward pass (a layer's `call`), the statement in the train step
            # is what to change; a helper of the user's (`compute_loss`) keeps the target's own line
            innermost = ctx.op_frames(blame)[:1]
            helper = bool(innermost) and innermost[0].scope != ctx.call_scope
            helper = helper and innermost[0].function not in ("call", "__call__", "build")
            if at_step_level and not helper and (location.path, location.line) != (frame.path, frame.line):
                location = ctx.frame_location(frame)
            entry = self._shared_entry(target_key, blame)
            if entry is not None:
                location = ctx.op_location(entry) or location
        location = location or ctx.call_location
        own = _expression(ctx, blame, location) if how == "consistency" else None
        location, subject = own if own is not None else _statement(location)
        region = self.recorded
        first = min(sources, key=lambda s: s.index)
        cut = Cut(BLOCK, blame if blame >= 0 else c, {s.key for s in sources}, [], region, ctx.target_keys, True)
        finding = make(
            ctx,
            "GC203",
            location,
            [s.name for s in sources],
            chain=chain(ctx, cut, first.key),
            call=subject,
            variant=how,
            what=_WHAT[how],
            effect=_EFFECT[how],
        )
        if finding.chain:
            finding.chain_source = first.name
        compare = ctx.op_location(c)
        if compare is not None and how == "target-network":
            finding.notes.append(
                f"the target is compared with the prediction at line {compare.line}; the target network's "
                f"{len(sources)} variable{'s' if len(sources) != 1 else ''} are among the trained ones"
            )
        elif compare is not None:
            finding.notes.append(
                f"the target is compared with the prediction at line {compare.line}; both sides reach "
                f"{len(sources)} trained variable{'s' if len(sources) != 1 else ''}"
            )
        return finding


_WHAT = {
    "advantage": "the weight (advantage) of a log-probability",
    "td": "a temporal-difference target",
    "distill": "a distillation target",
    "target-network": "a temporal-difference target from a target network that is trained too",
    "consistency": "a consistency (pseudo-label) target, the network's own prediction sharpened",
}
_EFFECT = {
    "advantage": "pushed by the policy loss through the weight as well (the policy gradient is biased)",
    "td": "pulled towards a moving target",
    "distill": "pulled towards a target that moves with them (representations collapse)",
    "target-network": "moved towards the online network's prediction by the same step (the target is no longer fixed)",
    "consistency": "pulled towards a target that moves with them (the sharpened side is pushed back towards the prediction)",
}


_SHARPEN_CALLS = ("softmax", "log_softmax", "sigmoid", "pow")


def _expression(ctx, blame: int, location):
    """The expression that makes the sharpened target (inside a longer statement, ``loss +
    mse(softmax(z), softmax(z / 0.5))``), and its text; None when it cannot be told. Eager
    locations span the op's own expression; a graph's hold only the line, where the op is
    the call of its kind in the order the line's ops of that type ran."""
    import ast

    from gradcheck import sourcemap
    from gradcheck.trace.record.frames import Location

    if location is None:
        return None
    node = None if ctx.eager else _nth_call(ctx, blame, location)
    if node is None and location.end_column and location.end_line in (None, location.line):
        expr = sourcemap.expression_at(
            location.path, location.line, location.column, location.end_line, location.end_column
        )
        node = expr.node if expr is not None else None
    if not isinstance(node, ast.expr):
        return None
    text = ast.unparse(node)
    if len(text) > 60:
        return None
    span = Location(location.path, node.lineno, node.col_offset + 1, node.end_lineno, (node.end_col_offset or 0) + 1)
    return span, f"`{text}`"


def _nth_call(ctx, blame: int, location):
    """The call on ``location``'s line that made op ``blame``: the n-th call named like a
    sharpening when ``blame`` is the n-th op of its type that line ran."""
    import ast

    from gradcheck import sourcemap

    flow = ctx.flow
    kind = flow.ops[blame].type
    rank = 0
    for i in range(blame):
        if flow.ops[i].type == kind:
            other = ctx.op_location(i)
            if other is not None and (other.path, other.line) == (location.path, location.line):
                rank += 1
    tree = sourcemap._parse(location.path)
    if tree is None:
        return None
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.lineno == location.line:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in _SHARPEN_CALLS:
                calls.append(node)
    calls.sort(key=lambda n: (n.lineno, n.col_offset))
    return calls[rank] if rank < len(calls) else None


def _statement(location):
    """The whole statement that builds the target, and how to name it: the assigned name
    (`td_target`), else the expression."""
    import ast

    from gradcheck import sourcemap
    from gradcheck.trace.record.frames import Location

    if location is None:
        return None, None
    node = sourcemap._statements_by_line(location.path).get(location.line)
    value = getattr(node, "value", None)
    if not isinstance(value, ast.expr):
        return location, None
    span = Location(
        location.path, value.lineno, value.col_offset + 1, value.end_lineno, (value.end_col_offset or 0) + 1
    )
    targets = getattr(node, "targets", None) or ([node.target] if getattr(node, "target", None) is not None else [])
    if len(targets) == 1 and isinstance(targets[0], (ast.Name, ast.Attribute)):
        return span, f"`{ast.unparse(targets[0])}`"
    text = ast.unparse(value)
    return span, f"`{text}`" if len(text) <= 60 else "this expression"
