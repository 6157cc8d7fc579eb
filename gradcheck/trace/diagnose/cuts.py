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

The walk follows only inputs that can carry a gradient (``Op.data``: never a
``tf.where`` condition, gather indices or a shape), so a Huber loss's condition does not
lead it to a cut that is none, nor to a target correctly built before the tape. A source
whose every path to the loss runs through such inputs (``one_hot(argmax(q))``) is walked
again over all inputs. A cut inside the tape outranks a path that never entered it: a TD
target built from the same network before the tape is a constant on purpose.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from gradcheck.trace.record.dataflow import CUSTOM_GRADIENT_RESULTS, TAG_CUSTOM_GRADIENT, Flow, Key, WriteKey

#: Cut kinds.
BLOCK = "block"  # op has no gradient for a float input
BOUNDARY = "boundary"  # op turned a float into an integer/bool
OUTSIDE = "outside"  # op ran while the tape was not recording
ASSIGN = "assign"  # value written into a variable and read back
UNWATCHED = "unwatched"  # variable read with no watch (non-trainable / watch_accessed_variables=False)
UNKNOWN = "unknown"  # the gradient is None but no frontier was found
#: at most this many places where starved paths leave the tape are walked back (``_left_the_tape``)
_MAX_ENTRIES = 64

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
    data: bool = True  # found walking data edges only (chains walk the same edges)
    inputs: set = field(default_factory=set)  # BLOCK/BOUNDARY: the inputs through which it was reached


@dataclass
class CutResult:
    cuts: list[Cut]
    unreached: set  # sources with no data-flow path to the targets at all


def find_cuts(
    flow: Flow,
    targets: list[Key],
    sources: Iterable[Key],
    live_fn: LiveFn,
    watched: Iterable[Key] = (),
    intended: Callable[[int], bool] = lambda op: False,
) -> CutResult:
    """``watched``: the tensors the user's tape watched (a cut at a tensor made outside
    TensorFlow is "unwatched" only when the tape did not watch it). ``intended(op)``: the
    op (a ``tf.stop_gradient`` on a TD target) cuts on purpose, so a float path through it
    does not excuse an integer cut on the prediction's path."""
    targets, watched = list(targets), frozenset(watched)
    walk = _Walk(flow, _memo_live(live_fn), watched, intended)
    result = walk.find(targets, set(sources), 0, True)
    if result.unreached:
        rest = walk.find(targets, result.unreached, 0, False)
        result = CutResult(_merge(result.cuts + rest.cuts), rest.unreached)
    return CutResult(_prefer_inside(result.cuts, intended), result.unreached)


def _prefer_inside(cuts: list[Cut], intended: Callable[[int], bool]) -> list[Cut]:
    """A source cut inside the tape is reported there only: a path of it that never
    entered the tape (a target built before it) or that no frontier explains is no cause.
    A stop on a target inside the tape is no cut of the prediction's path: when that path
    ran before the tape (the DQN's ``q = online(states)`` hoisted above it), it is the cause."""
    causes = [c for c in cuts if not (c.kind == BLOCK and c.op >= 0 and intended(c.op))]
    inside = set().union(*(c.sources for c in causes if c.kind not in (OUTSIDE, UNKNOWN))) if causes else set()
    out = []
    for cut in cuts:
        if cut.kind in (OUTSIDE, UNKNOWN):
            cut.sources -= inside
        if cut.sources:
            out.append(cut)
    return out


def _memo_live(live_fn: LiveFn) -> LiveFn:
    """Liveness asked once per set of targets where it can be: a later question about the
    same targets is answered from the earlier one, or asks about the tensors of both (one
    gradient request costs about the same whatever it asks about: in a ``tf.function`` it
    builds the whole backward pass)."""
    answers: dict[frozenset, tuple[set, set]] = {}  # targets -> (keys asked, keys live)

    def live(targets: list[Key], keys: set[Key]) -> set[Key]:
        index = frozenset(targets)
        known = answers.get(index)
        if known is None or not keys <= known[0]:
            asked = set(keys) | (known[0] if known is not None else set())
            known = answers[index] = (asked, set(live_fn(targets, asked)))
        return known[1] & keys

    return live


class _Walk:
    """One diagnosis: the flow, liveness and the levels already walked. A level is keyed
    by its targets, sources and edge kind: the culprits of one level often lead to the same
    earlier cut (every Swish after an attention block cut by an ArgMax leads back to that
    ArgMax), and walking it again for each, at each depth, made the walk exponential in the
    number of such culprits."""

    def __init__(self, flow: Flow, live_fn: LiveFn, watched: frozenset, intended: Callable[[int], bool]) -> None:
        self.flow, self.live_fn, self.watched, self.intended = flow, live_fn, watched, intended
        self.levels: dict[tuple, CutResult | None] = {}

    def find(self, targets: list[Key], sources: set, depth: int, data: bool) -> CutResult:
        key = (frozenset(targets), frozenset(sources), data)
        if key in self.levels:
            done = self.levels[key]
            if done is None:  # asked again from inside its own walk: nothing new there
                return CutResult([], set())
            return CutResult([_copy(c) for c in done.cuts], set(done.unreached))
        self.levels[key] = None
        result = _find(self, targets, sources, depth, data)
        self.levels[key] = CutResult([_copy(c) for c in result.cuts], set(result.unreached))
        return result


def _copy(cut: Cut) -> Cut:
    return Cut(
        cut.kind,
        cut.op,
        set(cut.sources),
        list(cut.later),
        set(cut.region),
        list(cut.targets),
        cut.data,
        set(cut.inputs),
    )


def _find(walk: _Walk, targets: list[Key], sources: set, depth: int, data: bool) -> CutResult:
    flow, live_fn, watched = walk.flow, walk.live_fn, walk.watched
    cone = flow.backward_cone(targets, data)
    # Which sources reach each op of the cone, all sources in one pass (bit i of an op's
    # mask stands for the i-th source): one forward walk per source is O(sources x ops).
    bits = {s: 1 << i for i, s in enumerate(sources)}
    masks = flow.reach_masks(bits, cone, data=data)
    reached = 0
    for mask in masks.values():
        reached |= mask
    unreached = {s for s in sources if not reached & bits[s]}
    connected = sources - unreached
    if not connected:
        return CutResult([], unreached)
    region: set[int] = set(masks)
    target_set = set(targets)
    on_path: set[Key] = set(connected)
    consumers = flow.data_consumers if data else flow.consumers
    for i in region:
        for key in flow.ops[i].outputs:
            if key in target_set:
                on_path.add(key)
                continue
            for c in consumers.get(key, ()):
                if c in region:
                    on_path.add(key)
                    break
    live = live_fn(targets, on_path)
    live |= {t for t in targets if flow.is_differentiable(t)}

    level = Level(flow, region, on_path, data, watched)
    for i in sorted(region):
        op = flow.ops[i]
        for k in op.outputs:
            if k in live and k in on_path:
                break
        else:
            continue
        results = op.attrs.get(CUSTOM_GRADIENT_RESULTS, 0) if op.tag == TAG_CUSTOM_GRADIENT else 0
        for t in flow.inputs_of(op, data):
            if t in on_path and t not in live:
                if results and t in op.inputs[:results] and _covered(flow, op, t, results, masks, bits):
                    continue
                level.classify(t, i)
    for t in targets:  # an integer loss: walk back from it like from an integer input
        if not flow.is_differentiable(t) and t in flow.producer and flow.producer[t] in region:
            level.walk_integer_region(flow.producer[t])
    found = level.found

    # An integer side input (a shape, an index, a where-condition) is no cut for a source
    # that also reaches the target through floats: its float path died of another cause.
    float_path = 0
    if any(kind == BOUNDARY for kind, _ in found):
        float_path = _float_path_mask(flow, bits, connected, region, target_set, data, walk.intended)
    cuts: list[Cut] = []
    for (kind, culprit), inputs in found.items():
        owner_mask = masks.get(culprit, 0)
        if kind == BOUNDARY:
            owner_mask &= ~float_path
        # a source still live at this level (it reaches the target by another path too) is
        # not starved by this cut: an inner level must not take it from the outer cut
        owners = {s for s in connected if owner_mask & bits[s] and s not in live} if owner_mask else set()
        if not owners:
            continue
        if kind in (BLOCK, BOUNDARY) and inputs and depth < MAX_DEPTH:
            inner = walk.find(sorted(inputs, key=repr), owners, depth + 1, data)
            earlier = set()
            for cut in inner.cuts:
                cut.later.append(culprit)
                earlier |= cut.sources
                cuts.append(cut)
            owners -= earlier
        if owners:
            cuts.append(Cut(kind, culprit, owners, [], region, targets, data, set(inputs)))
    blamed = set().union(*(c.sources for c in cuts)) if cuts else set()
    stray = connected - blamed - live  # a live source is not cut at this level
    if stray:
        cuts += _left_the_tape(level, masks, bits, stray, targets)
        stray -= set().union(*(c.sources for c in cuts)) if cuts else set()
    if stray:
        cuts.append(Cut(UNKNOWN, -1, stray, [], region, targets, data))
    cuts = _merge(cuts)
    if depth == 0:  # chains run from a source through the cut to the real loss
        for cut in cuts:
            cut.region, cut.targets = region, targets
            if cut.later and (not data or _bypasses(flow, cut, region, target_set, data)):
                # fixing this cut alone is enough (the later ones sit on side paths), or its
                # paths run through indices or conditions, where "fix both" means nothing
                cut.later = []
    return CutResult(cuts, unreached)


def _covered(flow: Flow, op, t: Key, results: int, masks: dict[int, int], bits: dict) -> bool:
    """A custom gradient's result input ``t`` (TensorFlow sends it no gradient, by
    construction) is no cut when every source reaching it also reaches the function's
    arguments, along which the gradient does flow: a cut there or before is found on
    its own. A result fed by a value that is no argument (a closure) stays a cut."""

    def mask(key: Key) -> int:
        producer = flow.producer.get(key)
        return bits.get(key, 0) | (masks.get(producer, 0) if producer is not None else 0)

    args = 0
    for key in op.inputs[results:]:
        args |= mask(key)
    reaching = mask(t)
    return bool(args) and not reaching & ~args


def _bypasses(flow: Flow, cut: Cut, region: set[int], targets: set, data: bool) -> bool:
    """Whether a path runs from the cut's outputs to a target through none of its later cuts."""
    consumers = flow.data_consumers if data else flow.consumers
    blocked = set(cut.later)
    seen: set[int] = set()
    keys = list(flow.ops[cut.op].outputs)
    while keys:
        key = keys.pop()
        if key in targets:
            return True
        for i in consumers.get(key, ()):
            if i in region and i not in blocked and i not in seen:
                seen.add(i)
                keys.extend(flow.ops[i].outputs)
    return False


def _float_path_mask(
    flow: Flow,
    bits: dict,
    connected: set,
    region: set[int],
    targets: set,
    data: bool,
    intended: Callable[[int], bool] = lambda op: False,
) -> int:
    """The bits of the sources that reach a target through float (or written) tensors
    computed on the tape only, for all sources in one pass (a path that left the tape,
    like a TD target built before it, or one through a stop that is ``intended``, the same
    target stopped inside it, is no excuse for an integer cut on the tape)."""
    seeds = {s: bits[s] for s in connected}
    blocked = {k for k, d in flow.differentiable.items() if not d and not isinstance(k, WriteKey)}
    recorded = {i for i in region if flow.ops[i].recorded and not (flow.ops[i].type == "StopGradient" and intended(i))}
    masks = flow.reach_masks(seeds, recorded, blocked, data)
    out = 0
    for i, mask in masks.items():
        for k in flow.ops[i].outputs:
            if k in targets:
                out |= mask
                break
    return out


@dataclass
class Level:
    """One level of the walk: the ops on the starved paths (``region``), the tensors on
    them, and the culprits found so far. Each op is walked at most once per level by the
    integer-region walks and once by the out-of-tape walks (``walked_*``): what they lead to
    is already in ``found``, so a walk stops there (O(ops + edges), however many frontier
    edges)."""

    flow: Flow
    region: set[int]
    on_path: set[Key]
    data: bool
    watched: frozenset = frozenset()
    #: (kind, culprit op) -> float inputs to recurse on
    found: dict[tuple[str, int], set[Key]] = field(default_factory=dict)
    walked_integer: set[int] = field(default_factory=set)
    walked_outside: set[int] = field(default_factory=set)

    def add(self, kind: str, op: int, inputs: Iterable[Key] = ()) -> None:
        self.found.setdefault((kind, op), set()).update(inputs)

    def classify(self, t: Key, consumer: int) -> None:
        """The culprit of a frontier edge ``t -> consumer`` (``t`` dead, the op's output live)."""
        flow = self.flow
        op = flow.ops[consumer]
        producer = flow.producer.get(t)
        if not op.recorded:
            # the target itself was computed off the tape: blame where that stretch began (the
            # forward pass run before the tape, or the first op after it)
            self.add_outside(consumer)
        elif isinstance(t, WriteKey):
            self.add_write(flow.producer[t])
        elif t in flow.resources and not flow.has_gradient(op.type):
            # the op takes the variable itself (``dataset.reduce`` running the model in tf.data),
            # and TensorFlow has no gradient for it: the op is the cut, not the variable's birth
            self.add(BLOCK, consumer, [])
        elif producer is not None and not flow.ops[producer].recorded:
            self.add_outside(producer)
        elif (producer is None or t in flow.resources) and t not in self.watched:
            self.add(UNWATCHED, consumer)
        elif flow.is_differentiable(t):
            self.add(BLOCK, consumer, [t])
        else:
            self.walk_integer_region(producer)

    def add_write(self, assign: int) -> None:
        """A value written into a variable that the loss reads back: the assignment cuts
        what it writes. When the sources reach it only through integers (slice bounds of
        ``v[i, y0:y1].assign(...)``, scatter indices, an integer value written), those were
        cut first, where floats became integers: that is the culprit."""
        flow = self.flow
        op = flow.ops[assign]
        reached = [k for k in flow.inputs_of(op, self.data) if k in self.on_path and not isinstance(k, WriteKey)]
        starts = [flow.producer[k] for k in reached if k in flow.producer and flow.producer[k] in self.region]
        if not reached or any(flow.is_differentiable(k) for k in reached) or len(starts) != len(reached):
            self.add(ASSIGN, assign)
            return
        before = {key for key in self.found if key[0] == BOUNDARY}
        for start in starts:
            self.walk_integer_region(start)
        if not any(key[0] == BOUNDARY and key not in before for key in self.found):
            self.add(ASSIGN, assign)  # no float turned into them here: the write is what is left

    def walk_integer_region(self, start: int) -> None:
        """From an op producing an integer/bool tensor, find where floats became integers."""
        flow, seen = self.flow, self.walked_integer
        stack = [start]
        while stack:
            i = stack.pop()
            if i in seen or i not in self.region:
                continue
            seen.add(i)
            op = flow.ops[i]
            if not op.recorded:
                self.add_outside(i)
                continue
            inputs = flow.inputs_of(op, self.data)
            float_inputs = [
                k for k in inputs if k in self.on_path and flow.is_differentiable(k) and k not in flow.resources
            ]
            if float_inputs:
                self.add(BOUNDARY, i, float_inputs)
            for key in inputs:
                if key in self.on_path and not flow.is_differentiable(key):
                    if isinstance(key, WriteKey):
                        self.add(ASSIGN, flow.producer[key])
                    elif key in flow.producer:
                        stack.append(flow.producer[key])

    def add_outside(self, start: int) -> None:
        """The earliest ops of the out-of-tape stretch ending at ``start``: where the forward
        pass left (or never entered) the tape. Ops an earlier call walked are not walked
        again (their entries were added then)."""
        flow, stack, seen = self.flow, [start], self.walked_outside
        while stack:
            i = stack.pop()
            if i in seen:
                continue
            seen.add(i)
            upstream = [
                flow.producer[k]
                for k in flow.inputs_of(flow.ops[i], self.data)
                if k in flow.producer and flow.producer[k] in self.region and not flow.ops[flow.producer[k]].recorded
            ]
            if upstream:
                stack.extend(upstream)
            else:
                self.add(OUTSIDE, i)


def _left_the_tape(level: Level, masks: dict, bits: dict, stray: set, targets: list) -> list[Cut]:
    """Sources with no frontier whose paths run through ops no tape of the user's recorded (an
    inner ``tape.gradient`` called after the outer tape closed: gradcheck's shadow tape saw its
    backward pass, so liveness finds every tensor on the way live): where the stretch they
    enter began (walked back from each op where their path leaves the tape)."""
    flow, region = level.flow, level.region
    found: dict[int, set] = {}
    entries = 0
    for i in sorted(region):
        op = flow.ops[i]
        owners = {s for s in stray if masks.get(i, 0) & bits[s]}
        if op.recorded or not owners:
            continue
        ins = flow.inputs_of(op, level.data)
        if not any(k in flow.producer and flow.ops[flow.producer[k]].recorded for k in ins):
            continue  # not where a path leaves the tape
        entries += 1
        if entries > _MAX_ENTRIES:
            break
        walk = Level(flow, region, level.on_path, level.data, level.watched)
        walk.add_outside(i)
        for kind, culprit in walk.found:
            if kind == OUTSIDE:
                found.setdefault(culprit, set()).update(owners)
    return [Cut(OUTSIDE, culprit, owners, [], region, targets, level.data) for culprit, owners in found.items()]


def _merge(cuts: list[Cut]) -> list[Cut]:
    merged: dict[tuple[str, int], Cut] = {}
    for cut in cuts:
        key = (cut.kind, cut.op)
        if key in merged:
            merged[key].sources |= cut.sources
            merged[key].later += [x for x in cut.later if x not in merged[key].later]
            merged[key].region |= cut.region
            merged[key].inputs |= cut.inputs
        else:
            merged[key] = cut
    return list(merged.values())
