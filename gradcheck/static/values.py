"""The abstract values the interpreter computes.

A value's *flow* maps each origin (a model whose call produced it, a variable, a watched
tensor) to how the value depends on it: ``LIVE`` (the empty set) when some path from the
origin is differentiable, otherwise the set of ``Site``s that cut every path. A
non-differentiable call applied to a live input becomes the one cut of its output; a
differentiable op keeps an origin live if any input has it live. So at the target, a set
of sites names calls that lie on every path from that origin, and a live origin is never
reported, whatever cuts its other paths went through.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: The status of an origin with a differentiable path.
LIVE: frozenset = frozenset()

#: Prefix of an origin or model not yet named by an assignment (``@m:`` model, ``@v:`` variable).
FRESH = "@"

#: A pseudo-origin: the value may depend on something this analysis did not follow (a call
#: too deep to analyse, an attribute set from a parameter). Never a source, never reported;
#: a target that holds it cannot be said to miss a source (GC108).
UNSEEN = "?"

#: Prefix of a pseudo-origin ``^<model>`` that marks a value computed by calling that model or
#: layer of the file (a functional model's sub-models are those whose marks reach it).
HOLDER = "^"


def real(origin: str) -> bool:
    """An origin that stands for variables (not ``UNSEEN``, not a holder's mark)."""
    return origin != UNSEEN and not origin.startswith(HOLDER)


@dataclass(frozen=True, order=True)
class Site:
    """A call (or operator) that cuts the gradient; positions are ``ast``'s (0-based columns)."""

    line: int
    col: int
    end_line: int
    end_col: int
    code: str
    call: str  # the callee as written (``tf.math.argmin``), or the expression for an operator
    arg: str = ""  # its first argument as written (the fix template's ``{arg}``)
    when: str = ""  # GC109: "before" or "after" the tape recorded; GC105: "outside" (a predict no tape records)
    is_call: bool = True
    via: int = 0  # GC109 inside a called function: the line of the call that ran outside the tape
    method: str = ""  # GC109 in a layer's ``build``/``__init__``: that method's name; GC111: the op
    #: GC109 on a path that a later op cuts anyway (an acting pass before the tape whose
    #: output is then sampled): not the tape's doing when some other site cuts the origin too
    moot: bool = False


Flow = Mapping[str, frozenset]


def merge_flows(flows: Iterable[Flow]) -> Flow:
    out: dict[str, frozenset] | None = None
    first: Flow = {}
    for flow in flows:
        if not flow:
            continue
        if out is None and not first:
            first = flow
            continue
        if out is None:
            out = dict(first)
        for origin, cuts in flow.items():
            have = out.get(origin)
            if have is None:
                out[origin] = cuts
            elif have and cuts and have != cuts:
                out[origin] = have | cuts
            elif not cuts:
                out[origin] = LIVE
    return out if out is not None else first


def cut_flow(flow: Flow, site: Site) -> Flow:
    """The flow out of a non-differentiable op: live inputs are cut here, cut ones stay cut."""
    if not flow or all(flow.values()):
        return flow
    cut = frozenset((site,))
    return {origin: (cuts or cut) for origin, cuts in flow.items()}


def has_live(flow: Flow) -> bool:
    return any(not cuts for cuts in flow.values())


class Value:
    """What an expression may evaluate to. Immutable by convention.

    - ``flow``: origin -> cuts, as above (tensors).
    - ``models``: Keras models or layers this value may be (calling it is a model call).
    - ``items``: element values when it is a tuple or list of known length.
    - ``fields``: named parts (``top_k(...).indices``).
    - ``element``: what iterating it yields, when not simply the value itself (``zip``).
    - ``ref``: a function, class, instance, tape... (see ``interp``); ``qual``: a library path.
    - ``container``: a Python list/tuple/dict (``+`` on it is no TensorFlow op).
    - ``dtype``: ``"int"`` (integer or bool) or ``"float"`` when the code says so, else None.
    - ``tensor``: a TensorFlow tensor that is not a variable (made by a ``tf.*`` call).
    """

    __slots__ = ("container", "dtype", "element", "fields", "flow", "items", "models", "qual", "ref", "tensor")

    def __init__(
        self,
        flow: Flow | None = None,
        models: frozenset[str] = frozenset(),
        items: tuple[Value, ...] | None = None,
        fields: Mapping[str, Value] | None = None,
        element: Value | None = None,
        ref: object = None,
        qual: str | None = None,
        container: bool = False,
        dtype: str | None = None,
        tensor: bool = False,
    ) -> None:
        self.flow: Flow = flow or {}
        self.models = models
        self.items = items
        self.fields = fields
        self.element = element
        self.ref = ref
        self.qual = qual
        self.container = container
        self.dtype = dtype
        self.tensor = tensor

    def key(self) -> tuple:
        """A hashable summary: equal keys mean the same abstract value."""
        return (
            frozenset(self.flow.items()),
            self.models,
            tuple(i.key() for i in self.items) if self.items is not None else None,
            tuple(sorted((k, v.key()) for k, v in self.fields.items())) if self.fields else None,
            self.element.key() if self.element is not None else None,
            getattr(self.ref, "ident", None) or id(self.ref) if self.ref is not None else None,
            self.qual,
            self.dtype,
            self.tensor,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Value) and (self is other or self.key() == other.key())

    def __hash__(self) -> int:
        return hash(self.key())

    def __repr__(self) -> str:  # for debugging and test failures
        parts = []
        if self.flow:
            parts.append(
                "flow={" + ", ".join(f"{k}: {'LIVE' if not v else sorted(v)}" for k, v in self.flow.items()) + "}"
            )
        if self.models:
            parts.append(f"models={sorted(self.models)}")
        if self.items is not None:
            parts.append(f"items={list(self.items)}")
        if self.ref is not None:
            parts.append(f"ref={self.ref!r}")
        if self.qual:
            parts.append(f"qual={self.qual}")
        if self.dtype:
            parts.append(f"dtype={self.dtype}")
        if self.tensor:
            parts.append("tensor")
        return f"Value({', '.join(parts)})"

    def with_flow(self, flow: Flow) -> Value:
        return Value(flow=flow)

    def iterate(self) -> Value:
        """The value of one element when this value is iterated."""
        if self.element is not None:
            return self.element
        if self.items:
            return join(self.items)
        return Value(flow=self.flow, models=self.models, fields=self.fields, dtype=self.dtype, tensor=self.tensor)


EMPTY = Value()


def join(values: Iterable[Value]) -> Value:
    """The value that may be any of ``values`` (branches, loop iterations, list elements)."""
    values = [v for v in values if v is not None]
    if not values:
        return EMPTY
    if len(values) == 1:
        return values[0]
    first = values[0]
    if all(v is first for v in values):
        return first
    items = first.items
    if items is not None:
        for v in values[1:]:
            if v.items is None or len(v.items) != len(items):
                items = None
                break
        if items is not None:
            items = tuple(join(parts) for parts in zip(*(v.items for v in values), strict=True))
    fields = None
    if all(v.fields for v in values):
        names = set().union(*(v.fields for v in values))
        fields = {n: join(v.fields.get(n, EMPTY) for v in values) for n in names}
    # one value's elements are known: the others' may be anything they hold
    elements = [v.iterate() for v in values] if any(v.element is not None for v in values) else []
    ref = next((v.ref for v in values if v.ref is not None), None)
    qual = next((v.qual for v in values if v.qual is not None), None)
    dtype = first.dtype if all(v.dtype == first.dtype for v in values) else None
    return Value(
        flow=merge_flows(v.flow for v in values),
        models=frozenset().union(*(v.models for v in values)),
        items=items,
        fields=fields,
        element=join(elements) if elements else None,
        ref=ref,
        qual=qual,
        container=any(v.container for v in values),
        dtype=dtype,
        tensor=all(v.tensor for v in values),
    )


def map_flows(value: Value, fn) -> Value:
    """``value`` with ``fn`` applied to its flow and to those of its parts."""
    return Value(
        flow=fn(value.flow) if value.flow else value.flow,
        models=value.models,
        items=tuple(map_flows(i, fn) for i in value.items) if value.items is not None else None,
        fields={k: map_flows(v, fn) for k, v in value.fields.items()} if value.fields else value.fields,
        element=map_flows(value.element, fn) if value.element is not None else None,
        ref=value.ref,
        qual=value.qual,
        container=value.container,
        dtype=value.dtype,
        tensor=value.tensor,
    )


def flow_of(values: Iterable[Value]) -> Flow:
    return merge_flows(v.flow for v in values)


def with_origin(value: Value, name: str) -> Value:
    """``value`` as the tensor a later ``tape.watch(name)`` makes a source."""
    return Value(
        flow=merge_flows((value.flow, {name: LIVE})),
        models=value.models,
        items=value.items,
        ref=value.ref,
        dtype=value.dtype,
        tensor=value.tensor,
    )
