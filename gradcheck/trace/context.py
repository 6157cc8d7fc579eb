"""One ``tape.gradient`` call under diagnosis: its sources, its data-flow graph, and where
its ops are in the user's source."""

from __future__ import annotations

from dataclasses import dataclass, field

from gradcheck import sourcemap
from gradcheck.rules import call_hints
from gradcheck.trace import frames
from gradcheck.trace.dataflow import Flow
from gradcheck.trace.frames import Location


@dataclass
class Source:
    index: int
    value: object
    name: str
    is_variable: bool
    key: object = None


@dataclass
class Context:
    """Everything about one gradient call that building findings needs."""

    session: object
    tape: object
    state: object
    flat_targets: list
    sources: list[Source]
    eager: bool
    graph: object
    call_location: Location | None
    flow: Flow | None = None
    tensors: dict = field(default_factory=dict)
    target_keys: list = field(default_factory=list)

    # -- locations -------------------------------------------------------------------
    def op_location(self, op_index: int) -> Location | None:
        op = self.flow.ops[op_index]
        if self.eager:
            return frames.site_location(op.site) if op.site is not None else None
        location = frames.stack_user_location(op.site.traceback)
        if location is None:
            return None
        expr = sourcemap.expression_at(location.path, location.line, hints=call_hints(op.type))
        if expr is not None and expr.line == location.line:
            return Location(location.path, location.line, expr.column, expr.end_line, expr.end_column)
        return location

    def op_line(self, op_index: int) -> int | None:
        location = self.op_location(op_index)
        return location.line if location else None
