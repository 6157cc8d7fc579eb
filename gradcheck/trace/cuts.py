"""Find the op that cut each path from a starved source to the loss.

A tensor is *live* when the loss has a non-None gradient with respect to it; TensorFlow's
own gradient machinery answers that (``live_fn``), so no hand-written list of
non-differentiable ops decides anything here. On every path from a starved source to the
target, liveness flips from dead to live at a *frontier* edge ``t → op``. The culprit is:

- ``op`` itself when ``t`` is a float tensor (``op`` has no gradient for it: Round,
  StopGradient, PyFunc, a custom gradient returning None...);
- when ``t`` is an integer/bool tensor, the op upstream that turned a float into it
  (ArgMax, Cast, Equal, Multinomial...), found by walking back through the integer region;
- the first op that ran outside the tape's recording when ``t`` (or ``op``) did;
- the assignment when ``t`` is a value written into a variable.

A blocked op may itself sit behind an earlier one (``equal(round(p), y)``), so the finder
recurses with the blocked op's float input as the new target and reports the earliest
cut on each path, keeping the later ones as notes. Everything is O(ops + edges) per level.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from gradcheck.trace.dataflow import Flow, Key, WriteKey

#: Cut kinds.
BLOCK = "block"  # op has no gradient for a float input
BOUNDARY = "boundary"  # op turned a float into an integer/bool
OUTSIDE = "outside"  # op ran while the tape was not recording
ASSIGN = "assign"  # value written into a variable and read back
UNWATCHED = "unwatched"  # variable read with no watch (non-trainable / watch_accessed_variables=False)
UNKNOWN = "unknown"  # the gradient is None but no frontier was found

LiveFn = Callable[[list[Key], set[Key]], set[Key]]
MAX_DEPTH = 6


@dataclass
class Cut:
    kind: str
    op: int
    sources: set = field(default_factory=set)
    later: list[int] = field(default_factory=list)  # cuts further down the same paths
    region: set[int] = field(default_factory=set)  # ops on the starved paths (for chains)
    targets: list[Key] = field(default_factory=list)


@dataclass
class CutResult:
    cuts: list[Cut]
    unreached: set  # sources with no data-flow path to the targets at all


def find_cuts(flow: Flow, targets: list[Key], sources: Iterable[Key], live_fn: LiveFn) -> CutResult:
    return _find(flow, list(targets), set(sources), live_fn, 0)


def _find(flow: Flow, targets: list[Key], sources: set, live_fn: LiveFn, depth: int) -> CutResult:
    cone = flow.backward_cone(targets)
    paths = {s: flow.forward_cone([s], within=cone) for s in sources}
    unreached = {s for s in sources if not paths[s]}
    connected = sources - unreached
    if not connected:
        return CutResult([], unreached)
    region: set[int] = set().union(*(paths[s] for s in connected))
    target_set = set(targets)
    on_path: set[Key] = set(connected)
    for i in region:
        for key in flow.ops[i].outputs:
            if key in target_set or any(c in region for c in flow.consumers.get(key, ())):
                on_path.add(key)
    live = live_fn(targets, on_path)
    live |= {t for t in targets if flow.is_differentiable(t)}

    found: dict[tuple[str, int], set[Key]] = {}  # (kind, culprit op) -> float inputs to recurse on

    def add(kind: str, op: int, inputs: Iterable[Key] = ()) -> None:
        found.setdefault((kind, op), set()).update(inputs)

    for i in sorted(region):
        op = flow.ops[i]
        if not any(k in live for k in op.outputs if k in on_path):
            continue
        for t in op.inputs:
            if t in on_path and t not in live:
                _classify(flow, t, i, region, on_path, add)
    for t in targets:  # an integer loss: walk back from it like from an integer input
        if not flow.is_differentiable(t) and t in flow.producer and flow.producer[t] in region:
            _walk_integer_region(flow, flow.producer[t], region, on_path, add)

    # An integer side input (a shape, an index, a where-condition) is no cut for a source
    # that also reaches the target through floats: its float path died of another cause.
    float_path = {s for s in connected if _has_float_path(flow, s, region, target_set)}
    cuts: list[Cut] = []
    for (kind, culprit), inputs in found.items():
        owners = {s for s in connected if culprit in paths[s]}
        if kind == BOUNDARY:
            owners -= float_path
        if not owners:
            continue
        if kind in (BLOCK, BOUNDARY) and inputs and depth < MAX_DEPTH:
            inner = _find(flow, sorted(inputs, key=repr), owners, live_fn, depth + 1)
            earlier = set()
            for cut in inner.cuts:
                cut.later.append(culprit)
                earlier |= cut.sources
                cuts.append(cut)
            owners -= earlier
        if owners:
            cuts.append(Cut(kind, culprit, owners, [], region, targets))
    blamed = set().union(*(c.sources for c in cuts)) if cuts else set()
    stray = connected - blamed - live  # a live source is not cut at this level
    if stray:
        cuts.append(Cut(UNKNOWN, -1, stray, [], region, targets))
    if depth == 0:  # chains run from a source through the cut to the real loss
        for cut in cuts:
            cut.region, cut.targets = region, targets
    return CutResult(_merge(cuts), unreached)


def _has_float_path(flow: Flow, source: Key, region: set[int], targets: set) -> bool:
    """Whether ``source`` reaches a target through float (or written) tensors only."""
    seen: set[int] = set()
    stack = list(flow.consumers.get(source, ()))
    while stack:
        i = stack.pop()
        if i in seen or i not in region:
            continue
        seen.add(i)
        for key in flow.ops[i].outputs:
            if key in targets:
                return True
            if flow.is_differentiable(key) or isinstance(key, WriteKey):
                stack.extend(flow.consumers.get(key, ()))
    return False


def _classify(flow: Flow, t: Key, consumer: int, region: set[int], on_path: set[Key], add) -> None:
    op = flow.ops[consumer]
    producer = flow.producer.get(t)
    if not op.recorded:
        add(OUTSIDE, consumer)
    elif isinstance(t, WriteKey):
        add(ASSIGN, flow.producer[t])
    elif producer is not None and not flow.ops[producer].recorded:
        for entry in _outside_entries(flow, producer, region):
            add(OUTSIDE, entry)
    elif producer is None or t in flow.resources:
        add(UNWATCHED, consumer)
    elif flow.is_differentiable(t):
        add(BLOCK, consumer, [t])
    else:
        _walk_integer_region(flow, producer, region, on_path, add)


def _walk_integer_region(flow: Flow, start: int, region: set[int], on_path: set[Key], add) -> None:
    """From an op producing an integer/bool tensor, find where floats became integers."""
    seen: set[int] = set()
    stack = [start]
    while stack:
        i = stack.pop()
        if i in seen or i not in region:
            continue
        seen.add(i)
        op = flow.ops[i]
        if not op.recorded:
            for entry in _outside_entries(flow, i, region):
                add(OUTSIDE, entry)
            continue
        float_inputs = [k for k in op.inputs if k in on_path and flow.is_differentiable(k) and k not in flow.resources]
        if float_inputs:
            add(BOUNDARY, i, float_inputs)
        for key in op.inputs:
            if key in on_path and not flow.is_differentiable(key):
                if isinstance(key, WriteKey):
                    add(ASSIGN, flow.producer[key])
                elif key in flow.producer:
                    stack.append(flow.producer[key])


def _outside_entries(flow: Flow, start: int, region: set[int]) -> list[int]:
    """The earliest ops of the out-of-tape stretch ending at ``start``: where the forward
    pass left (or never entered) the tape."""
    entries, seen, stack = [], set(), [start]
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        upstream = [
            flow.producer[k]
            for k in flow.ops[i].inputs
            if k in flow.producer and flow.producer[k] in region and not flow.ops[flow.producer[k]].recorded
        ]
        if upstream:
            stack.extend(upstream)
        else:
            entries.append(i)
    return entries


def _merge(cuts: list[Cut]) -> list[Cut]:
    merged: dict[tuple[str, int], Cut] = {}
    for cut in cuts:
        key = (cut.kind, cut.op)
        if key in merged:
            merged[key].sources |= cut.sources
            merged[key].later += [x for x in cut.later if x not in merged[key].later]
            merged[key].region |= cut.region
        else:
            merged[key] = cut
    return list(merged.values())
