"""One ``tape.gradient`` call under diagnosis: its sources, its data-flow graph, and where
its ops are in the user's source."""

from __future__ import annotations

from dataclasses import dataclass, field

from gradcheck import sourcemap
from gradcheck.rules import call_hints
from gradcheck.trace.record import _tf, frames
from gradcheck.trace.record import graph as graph_mode
from gradcheck.trace.record.call import GradientCall
from gradcheck.trace.record.dataflow import TAG_READ, Flow
from gradcheck.trace.record.frames import Location


@dataclass
class Source:
    index: int
    value: object
    name: str
    is_variable: bool
    key: object = None


@dataclass
class Context:
    """Everything about one gradient call that building findings needs: the call itself,
    its sources and, once built, the data-flow graph around it (``build_flow``)."""

    call: GradientCall
    sources: list[Source]
    flow: Flow | None = None
    tensors: dict = field(default_factory=dict)
    target_keys: list = field(default_factory=list)

    @property
    def session(self):
        return self.call.session

    @property
    def tape(self):
        return self.call.tape

    @property
    def state(self):
        return self.call.state

    @property
    def flat_targets(self) -> list:
        return self.call.flat_targets

    @property
    def eager(self) -> bool:
        return self.call.eager

    @property
    def graph(self):
        return self.call.graph

    @property
    def call_location(self) -> Location | None:
        return self.call.site.location

    @property
    def call_scope(self) -> tuple[str, str] | None:
        """The user function (file, name) calling ``tape.gradient``."""
        return self.call.site.scope

    @property
    def call_frames(self) -> list:
        """The call's user frames, innermost first."""
        return self.call.site.frames

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

    def cut_location(self, op_index: int) -> Location | None:
        """Where a cut op came from (``op_location``), or, for an operation a Keras
        functional model runs (its only user frame the model's call), where the user wrote
        it in the model's definition (``_defined_in_model``)."""
        found = self.op_frames(op_index)
        op = self.flow.ops[op_index]
        layer = getattr(op.site, "_gc_layer_site", None) if not isinstance(op.site, tuple) else None
        if found and layer is None:
            defined = _defined_in_model(found[0], call_hints(op.type))
            if defined is not None:
                return defined
        return self.op_location(op_index)

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


# -- building a context ----------------------------------------------------------------
def new_context(call: GradientCall) -> Context:
    """The context of ``call``, its sources named; its flow is built by ``build_flow``."""
    flat_sources = call.flat_sources
    names = _source_names(flat_sources, call.site.location, call.site.tensor_names)
    sources = [Source(i, s, names[i], _tf.is_variable(s)) for i, s in enumerate(flat_sources)]
    return Context(call, sources)


def source_tensor(s):
    """What the tape is asked about for a source: a variable's handle, else the tensor."""
    return _tf.handle_of(s) if _tf.is_variable(s) else s


def _source_names(flat_sources, call_location: Location | None, tensor_names: dict[int, str]) -> list[str]:
    expr_names = None
    if call_location is not None and any(not _tf.is_variable(s) for s in flat_sources):
        args = sourcemap.call_arguments(call_location.path, call_location.line, call_location.column, "gradient")
        node = args[1] if args and len(args) > 1 else None
        expr_names = sourcemap.element_names(node, len(flat_sources))
    names = []
    for i, s in enumerate(flat_sources):
        if _tf.is_variable(s):
            names.append(_tf.variable_name(s))
        elif id(s) in tensor_names:
            names.append(tensor_names[id(s)])
        elif expr_names is not None:
            names.append(expr_names[i])
        else:
            names.append(getattr(s, "name", None) or f"sources[{i}]")
    return names


def build_flow(ctx: Context) -> None:
    """The data-flow graph around the call: the eager recorder's ops since the tape was
    pushed, or the traced graph's ops inside the tape's recording windows."""
    state, upto = ctx.state, ctx.call.upto
    if ctx.eager:
        watched = {t._id: t for t in state.watched if hasattr(t, "_id")}
        ctx.flow, ctx.tensors = ctx.session.recorder.build_flow(state.ident, watched, _tf.nondata_inputs)
        ctx.target_keys = [getattr(t, "_id", None) for t in ctx.flat_targets]
        for source in ctx.sources:
            source.key = key_of(ctx, source_tensor(source.value))
        for t in state.watched:  # a watched tensor is a leaf the tape knows
            key = getattr(t, "_id", None)
            if key is not None:
                ctx.flow.differentiable.setdefault(key, _tf.is_differentiable_dtype(t.dtype))
    else:
        windows = [(start, end if end is not None else upto) for start, end in state.windows.get(ctx.graph, [])]
        ctx.flow, ctx.tensors = graph_mode.build_flow(ctx.graph, windows, upto, ctx.session.recorder)
        ctx.target_keys = [graph_mode.key(t) for t in ctx.flat_targets if getattr(t, "graph", None) is ctx.graph]
        for source in ctx.sources:
            source.key = key_of(ctx, source_tensor(source.value))
    ctx.flow.has_gradient = _tf.has_gradient


def recover_hidden_reads(ctx: Context, variables: list[Source]) -> None:
    """TensorFlow's C++ fast path reads a variable operand (``h * v``) without running any
    op callback, so its value shows up with no producer. The shadow tape did record the
    read: a no-producer tensor with a gradient with respect to a variable's handle *is*
    that variable's value. Add the read to the flow."""
    if not variables:
        return
    orphans = ctx.session.recorder.orphans
    consumed = {k for op in ctx.flow.ops if op.recorded for k in op.inputs}
    handles = [source_tensor(s.value) for s in variables]
    sites = {}
    for op in ctx.flow.ops:
        for k in op.inputs:
            sites.setdefault(k, op.site)
    for key, tensor in list(orphans.items()):
        if key not in consumed or key in ctx.flow.producer:
            continue
        grads = _tf.imperative_gradient(ctx.state.shadow, [tensor], handles)
        for source, grad in zip(variables, grads, strict=True):
            if grad is not None:
                ctx.flow.add("ReadVariableOp", [source.key], [key], site=sites.get(key), tag=TAG_READ)
                ctx.tensors.setdefault(key, tensor)
                break


def key_of(ctx: Context, tensor):
    """A tensor's key in the flow (None when the flow cannot know it)."""
    if ctx.eager:
        return getattr(tensor, "_id", None)
    internal = graph_mode.internal_tensor(ctx.graph, tensor)
    if internal is not None:
        return graph_mode.key(internal)
    # not captured: the graph never reads it, but an eager computation it fed may be
    ident = getattr(tensor, "_id", None)
    return graph_mode.eager_key(ident) if ident is not None else None


def _defined_in_model(frame: frames.UserFrame, hints: tuple[str, ...]) -> Location | None:
    """An op a Keras functional model runs for an operation the user wrote when defining it
    (``features = keras.ops.stop_gradient(h)`` before ``keras.Model(inputs, outputs)``): its
    only user frame is the model's call (``model(x)``), which names no such op. Then the
    one call in the file that names the op, made at module level or in a function other
    than the frame's: where the user wrote it. None when the frame's line names the op
    itself, or the file has no such call or more than one."""
    import ast

    if not hints or not frame.path or frame.path.startswith("<"):
        return None
    tree = sourcemap.parsed(frame.path)
    if tree is None:
        return None
    calls = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and _callee_name(n.func) in hints and not isinstance(n.func, ast.Name)
    ]
    if any(n.lineno <= frame.line <= (n.end_lineno or n.lineno) for n in calls) or len(calls) != 1:
        return None
    (call,) = calls
    return Location(frame.path, call.lineno, call.col_offset + 1, call.end_lineno, (call.end_col_offset or 0) + 1)


def _callee_name(func) -> str:
    import ast

    if isinstance(func, ast.Attribute):
        return func.attr.lower()
    return func.id.lower() if isinstance(func, ast.Name) else ""
