"""A plain data-flow graph of the ops around one gradient call, independent of TensorFlow.

The eager recorder and the graph-mode walker both fill a ``Flow``; the cut finder only
reads it. Tensors are opaque hashable keys. A write into a variable (``assign``) is an
edge too: the assign op produces a virtual "written value" key that every later read of
that variable takes as an extra input, so a path through an assignment exists in the
graph and the cut finder can blame the assignment.

Not every input of an op can carry a gradient: a ``tf.where`` condition, gather indices,
a reshape's shape never do, whatever their values. The builders name those positions
(``nondata``, from TensorFlow's op registry); ``Op.data`` holds the other inputs and every
walk can be asked to follow data edges only (``data=True``).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

Key = Hashable

#: Op tags the builders set and the cut finder / classifier read.
TAG_ASSIGN = "assign"
TAG_CUSTOM_GRADIENT = "custom_gradient"
TAG_FUNCTION = "function"
TAG_READ = "read"
#: ``Op.attrs`` key of a custom gradient's IdentityN (graph mode): how many of its first
#: inputs are the function's results, into which TensorFlow never sends a gradient.
CUSTOM_GRADIENT_RESULTS = "custom_gradient_results"
#: The virtual op of a ``tape.gradient`` call made while no tape recorded (eager).
GRADIENT_CALL = "tape.gradient"


#: Ops whose output does not depend on the *values* of their inputs (shape queries):
#: they are not data-flow edges, or every Keras loss would "depend" on shapes.
VALUE_INDEPENDENT = frozenset({"Shape", "ShapeN", "Size", "Rank", "ZerosLike", "OnesLike"})


def function_base_name(op_type: str) -> str:
    """The Python name of a traced function from its call op's type:
    ``__inference_image_warp_96`` / ``__forward_image_warp_410`` -> ``image_warp``."""
    name = op_type
    for prefix in ("__inference_", "__forward_"):
        name = name.removeprefix(prefix)
    head, _, tail = name.rpartition("_")
    return head if tail.isdigit() and head else name


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Building and walking a Flow allocates an object or more per op and edge, none in a
    cycle; with the cyclic collector on, its full passes over a heap that grows with the
    graph made construction superlinear (3x the time per op at 100k ops than at 1k).
    Reference counting still frees everything."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass(eq=False, slots=True)
class Op:
    index: int
    type: str
    inputs: tuple
    outputs: tuple
    recorded: bool = True  # recorded by the tape under analysis
    site: object = None  # builder-specific handle, resolved to a Location on demand
    tag: str = ""
    name: str = ""
    attrs: dict = field(default_factory=dict)
    data: tuple = ()  # the inputs that can carry a gradient (see the module docstring)


class WriteKey(tuple):
    """The virtual value an assign op writes into a variable handle."""

    __slots__ = ()

    def __new__(cls, handle: Key, op_index: int):
        return super().__new__(cls, ("write", handle, op_index))


class Flow:
    def __init__(self) -> None:
        self.ops: list[Op] = []
        self.producer: dict[Key, int] = {}
        self.consumers: dict[Key, list[int]] = {}
        self.data_consumers: dict[Key, list[int]] = {}
        self.differentiable: dict[Key, bool] = {}
        self.resources: set[Key] = set()
        self._last_write: dict[Key, WriteKey] = {}
        #: Whether an op type has a gradient function in TensorFlow's registry (the trace
        #: engine sets it; the walk itself knows no TensorFlow).
        self.has_gradient: Callable[[str], bool] = lambda op_type: True

    def add(
        self,
        type: str,
        inputs: Iterable[Key],
        outputs: Iterable[Key],
        *,
        recorded: bool = True,
        site: object = None,
        tag: str = "",
        name: str = "",
        attrs: dict | None = None,
        nondata: frozenset[int] = frozenset(),
    ) -> Op:
        index = len(self.ops)
        inputs = tuple(inputs) if type not in VALUE_INDEPENDENT else ()
        # An assignment's first input names the variable written, it is not data read.
        if tag == TAG_ASSIGN:
            nondata = nondata | {0}
        data = tuple(k for i, k in enumerate(inputs) if i not in nondata) if nondata else inputs
        last_write = self._last_write
        if last_write and tag != TAG_ASSIGN:
            # A read of a variable after an in-tape assignment depends on what was written.
            writes = tuple(last_write[k] for k in inputs if k in last_write)
            inputs, data = inputs + writes, data + writes
        op = Op(index, type, inputs, tuple(outputs), recorded, site, tag, name, attrs or {}, data)
        self.ops.append(op)
        for consumers, keys in (
            (self.consumers, inputs[1:] if tag == TAG_ASSIGN else inputs),
            (self.data_consumers, data),
        ):
            for key in keys:
                users = consumers.get(key)
                if users is None:
                    consumers[key] = [index]
                else:
                    users.append(index)
        producer = self.producer
        for key in op.outputs:
            producer[key] = index  # a later record of the same tensor wins, as on the tape
        if tag == TAG_ASSIGN and recorded and op.inputs:
            handle = op.inputs[0]
            write = WriteKey(handle, index)
            self.differentiable[write] = False
            self.producer[write] = index
            op.outputs = (*op.outputs, write)
            self._last_write[handle] = write
        return op

    def is_differentiable(self, key: Key) -> bool:
        return self.differentiable.get(key, True)

    def inputs_of(self, op: Op, data: bool) -> tuple:
        return op.data if data else op.inputs[1:] if op.tag == TAG_ASSIGN else op.inputs

    def producer_through(
        self, key: Key, kinds: Iterable[str], through: Iterable[str], hops: int, data: bool = True
    ) -> int | None:
        """The op of ``kinds`` that made ``key``, looking back through at most ``hops`` ops of
        ``through`` (an identity, a clip, a cast) along their first (data) input; None when
        another op, or none, is met first."""
        for _ in range(hops):
            p = self.producer.get(key)
            if p is None:
                return None
            op = self.ops[p]
            if op.type in kinds:
                return p
            follow = op.data if data else op.inputs
            if op.type not in through or not follow:
                return None
            key = follow[0]
        return None

    def backward_cone(self, targets: Iterable[Key], data: bool = False) -> set[int]:
        """Indices of every op some target depends on (through data edges only if ``data``)."""
        seen: set[int] = set()
        stack = [self.producer[k] for k in targets if k in self.producer]
        ops, producer = self.ops, self.producer
        while stack:
            i = stack.pop()
            if i in seen:
                continue
            seen.add(i)
            for key in ops[i].data if data else ops[i].inputs:
                j = producer.get(key)
                if j is not None and j not in seen:
                    stack.append(j)
        return seen

    def forward_cone(self, keys: Iterable[Key], within: set[int] | None = None, data: bool = False) -> set[int]:
        """Indices of every op that depends on ``keys`` (restricted to ``within``)."""
        consumers = self.data_consumers if data else self.consumers
        seen: set[int] = set()
        stack = [i for k in keys for i in consumers.get(k, ())]
        ops = self.ops
        while stack:
            i = stack.pop()
            if i in seen or (within is not None and i not in within):
                continue
            seen.add(i)
            for key in ops[i].outputs:
                for j in consumers.get(key, ()):
                    if j not in seen:
                        stack.append(j)
        return seen

    def reach_masks(
        self, seeds: dict[Key, int], within: set[int], blocked: set | None = None, data: bool = False
    ) -> dict[int, int]:
        """Many ``forward_cone`` walks in one pass: ``seeds`` maps each start key to a bit
        (an ``int`` mask); the result maps every op of ``within`` that some start reaches
        to the mask of the starts reaching it. Keys in ``blocked`` carry no reach on. One
        pass is O(ops + edges) big-int ORs however many starts, where one ``forward_cone``
        per start would be O(starts x (ops + edges)).

        Ops are visited in index order, which is execution order; an edge against it (an
        op recorded after its consumer, as a recovered variable read is) costs one more pass.
        """
        ops, consumers = self.ops, self.data_consumers if data else self.consumers
        order = sorted(within)
        masks: dict[int, int] = {}
        key_mask: dict[Key, int] = dict(seeds)
        get = key_mask.get
        while True:
            again = False
            for j in order:
                op = ops[j]
                mask = 0
                for key in self.inputs_of(op, data):
                    m = get(key)
                    if m is not None and m is not mask:
                        mask = mask | m if mask else m  # no new big int for the one-input case
                if not mask or masks.get(j) == mask:
                    continue
                masks[j] = mask
                for key in op.outputs:
                    if blocked is not None and key in blocked:
                        continue
                    old = get(key)
                    if old is None:
                        key_mask[key] = mask
                    elif old | mask != old:
                        key_mask[key] = old | mask
                    else:
                        continue
                    users = consumers.get(key)
                    if users and users[0] < j:  # consumed before it is (re)produced
                        again = True
            if not again:
                return masks

    def path(self, source: Key, via: int, targets: Iterable[Key], region: set[int], data: bool = False) -> list[int]:
        """A shortest op path source → … → ops[via] → … → a target, inside ``region``."""
        first = self._bfs([source], lambda i: i == via, region, data)
        if not first:
            return [via]
        target_set = set(targets)
        second = self._bfs(
            list(self.ops[via].outputs),
            lambda i: any(k in target_set for k in self.ops[i].outputs),
            region,
            data,
        )
        if not second and any(k in target_set for k in self.ops[via].outputs):
            second = []
        return first + second

    def _bfs(self, start_keys: list[Key], done, region: set[int], data: bool) -> list[int]:
        from collections import deque

        consumers = self.data_consumers if data else self.consumers
        parent: dict[int, int | None] = {}
        queue: deque[int] = deque()
        for key in start_keys:
            for i in consumers.get(key, ()):
                if i in region and i not in parent:
                    parent[i] = None
                    queue.append(i)
        while queue:
            i = queue.popleft()
            if done(i):
                out = []
                cur: int | None = i
                while cur is not None:
                    out.append(cur)
                    cur = parent[cur]
                return out[::-1]
            for key in self.ops[i].outputs:
                for j in consumers.get(key, ()):
                    if j in region and j not in parent:
                        parent[j] = i
                        queue.append(j)
        return []
