"""GC1xx cuts that TensorFlow hides behind zeros. A path from the sources to the loss cut by
an op with no gradient (``tf.round``, a cast to int, ``argmax``, ``tf.stop_gradient``, a
NumPy function) gives them None, unless something sums it with live paths first: a
``tf.while_loop`` or ``TensorArray`` (the loop's gradient is computed for all its inputs at
once, and a missing output gradient is filled with zeros: the actor head of an episode
rolled out in a loop), a function call, ``unconnected_gradients=ZERO``. The sources then
get zeros, no frontier of values explains them, and the cut is what to name, with the code
and the fix it has when TensorFlow says None.

A cut is an edge where the loss's gradient stops: the consumer's output has a gradient and
its input from the zero sources has none (TensorFlow's own answer, not a value that happens
to be zero). An integer taken back to floats (``tf.cast(x > 0, tf.float32)``, a
``tf.one_hot`` of an ``argmax``) is walked back to where the floats became integers."""

from __future__ import annotations

from gradcheck.rules import classify_op
from gradcheck.trace.diagnose.cuts import BLOCK, BOUNDARY, Cut, Level
from gradcheck.trace.values.frontier.analysis import Analysis, Cause
from gradcheck.trace.values.frontier.ops import LOOPS

#: ops that take an integer or boolean tensor back to floats as a value (not an index or a
#: shape): a cut upstream of them is on the value's path
_BACK_TO_FLOAT = frozenset({"Cast", "OneHot"})


def hidden_cuts(a: Analysis, region: set[int], tensor_mask, zero_mask: int, keys=()) -> list[tuple[Cause, int]]:
    """The cuts on the paths of the zero sources in ``zero_mask`` (a mask of ``tensor_mask``'s
    bits over ``keys``, the sources' keys): (cause, the sources behind it). As the None
    diagnosis does, sources no cut on a data path explains are looked for again along every
    edge: an index taken back to floats (``tf.one_hot(tf.argmax(q), n)``) joins the argmax
    to the loss by no data edge."""
    out = _hidden_cuts(a, region, tensor_mask, zero_mask, True)
    rest = zero_mask
    for _, mask in out:
        rest &= ~mask
    if rest and keys:
        flow = a.flow
        bits = {k: 1 << i for i, k in enumerate(keys) if (1 << i) & rest}
        cone = flow.backward_cone(a.targets, data=False)
        every = {i for i in flow.forward_cone(bits, within=cone, data=False) if flow.ops[i].recorded}
        masks = flow.reach_masks(bits, every, data=False)

        def every_mask(k) -> int:
            p = flow.producer.get(k)
            return bits.get(k, 0) | (masks.get(p, 0) if p is not None else 0)

        out += _hidden_cuts(a, every, every_mask, rest, False)
    return out


def _hidden_cuts(a: Analysis, region: set[int], tensor_mask, zero_mask: int, data: bool) -> list[tuple[Cause, int]]:
    flow = a.flow
    on_path = {
        k
        for i in region
        for k in (*flow.ops[i].outputs, *flow.inputs_of(flow.ops[i], data))
        if tensor_mask(k) & zero_mask
    }
    level = Level(flow, region, on_path, data)
    for c in sorted(region):
        op = flow.ops[c]
        if not op.recorded or not any(a.grad(k) is not None for k in op.outputs):
            continue
        for t in dict.fromkeys(flow.inputs_of(op, data)):
            if t not in on_path or t in flow.resources or flow.producer.get(t) is None:
                continue
            if flow.is_differentiable(t):
                # TensorFlow has no gradient for it here (asked, and None), though it has one
                # for the op's output: an op without a gradient, of a kind a rule names
                if a.values.has_grad(t) and a.grad(t) is None and classify_op(op.type):
                    level.add(BLOCK, c, [t])
            elif not data or (op.type in _BACK_TO_FLOAT and op.data and op.data[0] == t):
                level.walk_integer_region(flow.producer[t])
    out = []
    for (kind, culprit), inputs in level.found.items():
        if kind not in (BLOCK, BOUNDARY) or not classify_op(flow.ops[culprit].type):
            continue  # only an op a rule names: an integer stacked in a loop is no cut
        if not all(_dead_back_to_sources(a, k, on_path) for k in inputs):
            continue
        mask = 0
        for k in inputs or flow.ops[culprit].outputs:
            mask |= tensor_mask(k)
        mask &= zero_mask
        if mask:
            # the code is the cut's own, chosen by ``cut_finding`` (``report._finding``)
            out.append((Cause("GC1", "hidden-cut", culprit, culprit, "", fields={"cut_kind": kind}), mask))
    return out


def _dead_back_to_sources(a: Analysis, t, on_path: set) -> bool:
    """The loss has no gradient anywhere between the cut and the sources: walking back from
    ``t``, every value is without one until the sources, or until the op that sums the dead
    path with live ones (a loop with another output the loss uses). A value with a gradient
    on the way means the path was alive past it, and only this op stops it there (a
    ``tf.stop_gradient`` on a target made from a value the loss also trains)."""
    flow = a.flow
    stack, seen = [t], set()
    while stack:
        k = stack.pop()
        if k in seen:
            continue
        seen.add(k)
        if a.values.has_grad(k) and a.grad(k) is not None:
            return False
        p = flow.producer.get(k)
        if p is None or flow.ops[p].type in LOOPS or any(a.grad(o) is not None for o in flow.ops[p].outputs):
            continue  # a source, or the op that sums it with live paths (a loop, a function call)
        stack.extend(d for d in flow.ops[p].data if d in on_path)
    return True


def hidden_cut_cut(a: Analysis, cause: Cause, sources) -> Cut:
    """The ``Cut`` the None diagnosis would have found for ``cause``."""
    keys = {s.key for s in sources}
    return Cut(cause.fields["cut_kind"], cause.blame, keys, [], set(), a.targets, True)
