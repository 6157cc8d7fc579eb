"""A tape's own methods, as the interpreter runs them: ``tape.gradient`` / ``jacobian``
(a gradient request kept for the engine, if it belongs to the tape the run follows),
``tape.watch`` (what the tape knows from then on) and ``tape.stop_recording()``."""

from __future__ import annotations

import ast

from gradcheck.static import catalog
from gradcheck.static.names import dotted
from gradcheck.static.program import Check, binding_line
from gradcheck.static.scope import Scope, StopRecording, TapeRef, keyword
from gradcheck.static.values import EMPTY, HOLDER, Value, flow_of, join, with_origin


class Tapes:
    """The tape part of the interpreter (a mixin of ``Interpreter``, through ``Calls``)."""

    def _tape_method(
        self, node: ast.Call, tape: TapeRef, attr: str, args: list[Value], kwargs: dict[str, Value], scope: Scope
    ) -> Value:
        if attr in catalog.GRADIENT_METHODS:
            target = args[0] if args else kwargs.get("target", EMPTY)
            sources = args[1] if len(args) > 1 else kwargs.get("sources", EMPTY)
            source_node = node.args[1] if len(node.args) > 1 else keyword(node, "sources")
            self._record(node, tape, target, sources, self._leaves(source_node, scope))
            # differentiable in an outer tape, if that tape records it (a first-order gradient
            # taken after the ``with`` block is a constant to a second one)
            return Value(flow=self.op(node, flow_of((target, sources))))
        if attr == "watch":
            names = tuple(
                ".".join(parts)
                for arg in node.args
                for watched in (arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg])
                for parts in [dotted(watched)]
                if parts is not None
            )
            if all(call is not node for call, _ in self.watch_calls):  # a loop runs it again
                self.watch_calls.append((node, names))
            for arg in node.args:
                for watched in arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg]:
                    self._watch(watched, scope)
                    if self.tape is None and self.depth == 0 and isinstance(watched, ast.Name):
                        self._note_latent(tape, watched)
            return EMPTY
        if attr == "stop_recording":
            return Value(ref=StopRecording(tape))
        return EMPTY

    def _leaves(self, node: ast.AST | None, scope: Scope) -> list[tuple[ast.AST, Value]] | None:
        """The sources of a gradient request as written, one by one: ``[x, w]``,
        ``[x] + model.trainable_variables``; None when they cannot be listed."""
        if node is None:
            return None
        out: list[tuple[ast.AST, Value]] = []
        stack = [node]
        while stack:
            part = stack.pop()
            if isinstance(part, (ast.List, ast.Tuple)):
                stack.extend(reversed(part.elts))
            elif isinstance(part, ast.BinOp) and isinstance(part.op, ast.Add):
                stack += [part.right, part.left]
            elif isinstance(part, ast.Starred):
                stack.append(part.value)
            elif isinstance(part, (ast.Name, ast.Attribute)):
                out.append((part, self.eval(part, scope)))
            else:
                return None
        return out

    def _note_latent(self, tape: TapeRef, watched: ast.Name) -> None:
        """``tape.watch(r)``: the tape knows ``r`` only from the watch on, so what was computed
        from ``r`` before (``v_r = v + r`` before the tape) carries no gradient to it. Runs
        that follow this tape give ``r`` its origin where it was bound (GC109 then names the
        computation that ran before the tape)."""
        if tape.item is None or self.region is None:
            return
        made = binding_line(self.region, watched.id, watched.lineno)
        if made is not None and made.lineno < watched.lineno:
            self.program.latent.setdefault(tape.item, {})[watched.id] = (made, watched.lineno)

    def _watch(self, node: ast.AST, scope: Scope) -> None:
        parts = dotted(node)
        if parts is None:
            self.unknown_watch = True  # ``tape.watch(batch[0])``: which tensor, this cannot say
            return
        key = ".".join(parts)
        have = scope.lookup(key)
        if have is None or have.container or have.items is not None:
            self.unknown_watch = True  # a list of tensors, or a name this file does not bind
            have = have or EMPTY
        self.program.kinds.setdefault(key, "tensor")
        made_by = {
            id(node): node
            for o, cuts in have.flow.items()
            if not cuts
            for node in [self.births.get(o[1:] if o.startswith(HOLDER) else o)]
            if node is not None
        }
        if len(made_by) == 1:
            (call,) = made_by.values()
            if isinstance(call, ast.Call):
                self.watched_calls[key] = call  # ``conv_out = conv_model(img)``
        watched = with_origin(have, key)
        # Other names bound to the same tensor object see the watch too (``alias = x``).
        current: Scope | None = scope
        while current is not None:
            for name, value in list(current.vars.items()):
                if value is have and have is not EMPTY:
                    current.vars[name] = watched
            current = current.parent
        scope.vars[key] = watched

    def _record(
        self,
        node: ast.AST,
        tape: TapeRef,
        target: Value,
        sources: Value,
        leaves: list[tuple[ast.AST, Value]] | None,
    ) -> None:
        """Keep a gradient request for the engine, if it belongs to the tape this run follows
        (made in the region, or in the function it calls that opened the tape)."""
        if self.depth and (self.tape is None or self.tape.frame is None or tape.item is not self.tape.item):
            return
        if self.tape is None:
            if tape.item is not None:
                return  # a tape opened by ``with`` here: its own run checks it
        elif tape.item is not self.tape.item:
            return
        check = self.checks.get(node)
        if check is not None:
            target, sources = join((check.target, target)), join((check.sources, sources))
            leaves = None if check.leaves is None or leaves is None else check.leaves + leaves
        self.checks[node] = Check(
            node,
            target,
            sources,
            self.tape.with_node if self.tape else None,
            self.births,
            leaves=leaves,
            own_tape=self.tape is not None,
            unknown_watch=self.unknown_watch,
            watched_calls=dict(self.watched_calls),
            watch_calls=tuple(self.watch_calls),
            drops=dict(self.drops),
            parts=self.program.snapshot(
                {*sources.flow, *sources.models, *target.flow, *(m for _, v in leaves or () for m in v.models)}
            ),
        )
