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
    call_scope: tuple[str, str] | None = None  # the user function calling tape.gradient
    call_frames: list = field(default_factory=list)  # its user frames, innermost first
    flow: Flow | None = None
    tensors: dict = field(default_factory=dict)
    target_keys: list = field(default_factory=list)

    # -- locations -------------------------------------------------------------------
    def op_frames(self, op_index: int) -> list[frames.UserFrame]:
        """The user frames an op ran under, innermost first."""
        op = self.flow.ops[op_index]
        if op.site is None:
            return []
        if isinstance(op.site, tuple):  # eager sites (also eager ops joined to a graph flow)
            return frames.sites_frames(op.site)
        return frames.stack_frames(op.site.traceback)

    def op_location(self, op_index: int) -> Location | None:
        """Where an op came from: its innermost user frame."""
        found = self.op_frames(op_index)
        op = self.flow.ops[op_index]
        layer = getattr(op.site, "_gc_layer_site", None) if not isinstance(op.site, tuple) else None
        if layer is not None and (not found or self._is_call_line(found[0])):
            # made inside a Keras layer with no user line but `model.fit`: where the user applied it
            return frames.site_location(layer)
        return self.frame_location(found[0], call_hints(op.type)) if found else None

    def frame_location(self, frame: frames.UserFrame, hints: tuple[str, ...] = ()) -> Location:
        """A frame's span: exact in eager mode (Python 3.11+); else from the line's AST (graph
        tracebacks carry lines only), preferring a call named in ``hints`` (the op's own)."""
        if frame.site is not None:
            return frame.location(hints)
        line = sourcemap.hinted_line(frame.path, frame.line, hints)
        expr = sourcemap.expression_at(frame.path, line, hints=hints)
        if expr is not None and expr.line == line:
            return Location(frame.path, line, expr.column, expr.end_line, expr.end_column)
        return Location(frame.path, frame.line)

    def caller_level_frame(self, op_index: int) -> frames.UserFrame | None:
        """The op's frame at the level where its stack leaves the ``tape.gradient`` call's
        (compared from the outermost frame): the user's call that led to the op there, e.g.
        ``y_pred = self(x)`` in a ``train_step``, not a line of the model's ``call``."""
        mine, theirs = self.op_frames(op_index)[::-1], self.call_frames[::-1]
        for i, frame in enumerate(mine):
            if i >= len(theirs) or (frame.scope, frame.line) != (theirs[i].scope, theirs[i].line):
                return frame
        return None

    def function_graph(self, op_index: int):
        """The FuncGraph a function-call op runs (eager: its op type is the function's name)."""
        op = self.flow.ops[op_index]
        name = op.type
        if not isinstance(op.site, tuple) and op.site is not None:
            try:
                name = op.site.get_attr("f").name
            except (ValueError, AttributeError):
                return None
        return self.session.function_graph(name)

    def _is_call_line(self, frame: frames.UserFrame) -> bool:
        call = self.call_location
        return call is not None and (frame.path, frame.line) == (call.path, call.line)

    def op_line(self, op_index: int) -> int | None:
        location = self.op_location(op_index)
        return location.line if location else None
