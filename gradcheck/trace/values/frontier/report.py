"""The last step of each pass: its causes, one per frontier, turned into findings. A cause
names the sources whose paths it lies on; several frontiers with the same cause make one
finding."""

from __future__ import annotations

import numpy as np

from gradcheck.findings import Finding
from gradcheck.trace.diagnose.cut_findings import cut_finding
from gradcheck.trace.diagnose.cuts import BLOCK, Cut
from gradcheck.trace.diagnose.describe import chain, make, op_label
from gradcheck.trace.values.checked import region as region_of
from gradcheck.trace.values.frontier.analysis import Analysis, Cause, union
from gradcheck.trace.values.frontier.hidden_cuts import hidden_cut_cut
from gradcheck.trace.values.frontier.loops import dropped_loops
from gradcheck.trace.values.layers import blame_location, weight_location


def report(a: Analysis, sources, find_causes, hidden=None) -> list[Finding]:
    """``find_causes(a, region, tensor_mask)`` is a pass: (cause or None, sources mask) pairs.
    ``hidden(a, region, tensor_mask, mask, keys)``: causes for the sources no frontier of the
    pass reached (``hidden_cuts``)."""
    flow = a.flow
    keys = [s.key for s in sources]
    region = region_of(flow, a.targets, keys)
    bits = {k: 1 << i for i, k in enumerate(keys)}
    masks = flow.reach_masks(bits, region, data=True)

    def tensor_mask(k) -> int:
        p = flow.producer.get(k)
        return bits.get(k, 0) | (masks.get(p, 0) if p is not None else 0)

    causes = find_causes(a, region, tensor_mask)
    if hidden is not None:
        # Sources no frontier explains (none reached them, or only ones zero by chance): a
        # cut, TensorFlow's own None at an op a rule names and dead back to them, is their
        # cause. A frontier zero by chance on their way (a loop mixes every output's
        # sources) does not make the cut's zero possibly chance.
        explained = 0
        for cause, mask in causes:
            if cause is not None:
                explained |= mask
        unexplained = sum(bits.values()) & ~explained
        if unexplained:
            cuts = hidden(a, region, tensor_mask, unexplained, keys)
            cut = union(mask for _, mask in cuts)
            causes = [(c, m if c is not None else m & ~cut) for c, m in causes] + cuts
            rest = unexplained & ~cut & ~union(m for c, m in causes if c is None)
            if rest:
                causes += dropped_loops(a, region, tensor_mask, rest)
    # A source is reported only when every frontier on its paths is explained and
    # structural: one zero by chance (the batch) makes the whole zero possibly chance.
    unexplained = 0
    for cause, mask in causes:
        if cause is None:
            unexplained |= mask
    # A secondary cause (a tf.sign inside a mask) names only the sources no other cause names.
    primary = 0
    for cause, mask in causes:
        if cause is not None and not cause.secondary:
            primary |= mask
    by_key: dict[tuple, tuple[Cause, int]] = {}
    for cause, mask in causes:
        if cause is None:
            continue
        mask &= ~unexplained
        if cause.secondary:
            mask &= ~primary
        key = cause.key
        if key in by_key:
            by_key[key] = (by_key[key][0], by_key[key][1] | mask)
        else:
            by_key[key] = (cause, mask)
    out = []
    for cause, mask in by_key.values():
        named = [s for s in sources if mask & bits[s.key]]
        if named:
            out.append(_finding(a, cause, named, region))
    return out


def _finding(a: Analysis, cause: Cause, sources, region) -> Finding:
    ctx = a.ctx
    if cause.variant == "hidden-cut":
        finding = cut_finding(ctx, hidden_cut_cut(a, cause, sources), list(sources))
        finding.notes += cause.notes or [
            "TensorFlow gives these variables zeros, not None: the cut path is summed with live ones "
            "(a loop, a function call) before it reaches them"
        ]
        return finding
    location = cause.location
    if location is None and cause.variant == "zero-weight":
        location = weight_location(a.checked, cause.blame)  # where its initialiser is chosen
    location = location or blame_location(a.checked, cause.blame) or ctx.call_location
    first = min(sources, key=lambda s: s.index)
    reach = a.flow.forward_cone([first.key], within=region | {cause.blame}, data=True)
    marked = cause.blame if cause.blame in reach else cause.frontier
    cut = Cut(BLOCK, marked, {s.key for s in sources}, [], region | {cause.blame}, a.targets, True)
    label = cause.label or op_label(a.flow.ops[cause.blame].type)
    if cause.code == "GC202":
        grads = [a.grad(s.key) for s in sources]
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
