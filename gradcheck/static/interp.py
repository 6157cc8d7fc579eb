"""The abstract interpreter: runs a function or module body over ``Value``s instead of
tensors, in statement order, following data flow from model calls and variables to the
targets of ``tape.gradient``. It never executes the user's code.

One run follows one tape (``tape``): an op evaluated while that tape is not recording cuts
its live inputs (GC109). Calls to functions and methods defined in the file are analysed
in place, with the caller's argument values and recording state (memoised). Loops run to
a fixpoint (bounded); branches are joined, so a path that is live on any branch is live.
"""

from __future__ import annotations

import ast
from dataclasses import replace

from gradcheck.static import catalog
from gradcheck.static.calls import Calls, custom_gradient
from gradcheck.static.models import Models
from gradcheck.static.names import dotted
from gradcheck.static.program import NEW_VARIABLE, Check, Program
from gradcheck.static.resolve import Resolver
from gradcheck.static.scope import (
    PICKED,
    ClassRef,
    FuncRef,
    Instance,
    Scope,
    StopRecording,
    TapeRef,
    from_library,
    merge_vars,
    model_name,
    same_vars,
)
from gradcheck.static.values import (
    EMPTY,
    FRESH,
    HOLDER,
    LIVE,
    UNSEEN,
    Flow,
    Site,
    Value,
    cut_flow,
    flow_of,
    has_live,
    join,
    merge_flows,
    real,
    with_origin,
)

MAX_LOOP = 4  # passes over a loop body before its state is taken as the fixpoint
_INT = Value(dtype="int")
_FLOAT = Value(dtype="float")


class Interpreter(Resolver, Calls, Models):
    def __init__(self, program: Program, tape: TapeRef | None = None, construction: bool = False) -> None:
        self.program = program
        self.tape = tape  # the tape this run follows; None: every op counts as recorded
        self.recording = tape is None
        self.depth = 0
        self.anchor_line: int | None = None  # the call at depth 0 that led here (for before/after)
        self.anchor_node: ast.AST | None = None  # that call
        self.anchor_statement: ast.stmt | None = None  # the statement of the region that made it
        self.region: ast.AST | None = None  # the module or function under study
        self.stack: list[ast.AST] = []
        self.memo: dict[tuple, Value] = {}
        self.loops: dict[tuple, dict[str, Value]] = {}  # loop -> the state its last run reached
        self.tapes_seen: list[TapeRef] = []
        self.nested_tapes: list[TapeRef] = []  # tapes opened by the functions the region calls
        self.top: ast.stmt | None = None  # the module's top-level statement being run
        self.call_lines: list[int] = []  # the line of each call on ``stack``
        #: the statement that made each call on ``stack`` (GC109 names it, see ``_outside_site``)
        self.call_statements: list[ast.stmt | None] = []
        self.checks: dict[ast.AST, Check] = {}
        self.births: dict[str, ast.AST] = {}  # origin -> its first call in this run
        #: dead stores of this run: ``enc = self.encoder(x)`` whose name is never read -> its flow
        self.drops: dict[ast.AST, Flow] = {}
        self.conditions = 0  # ``if``/``match`` statements being run (an append there filters)
        self.paused: ast.With | None = None  # ``with tape.stop_recording():`` being run
        #: Runs a layer's ``__init__``/``build``: once, before any tape records (GC109).
        self.construction = construction
        if construction:
            self.recording = False
        self.discarded: ast.AST | None = None  # the call of an expression statement
        self.statement: ast.stmt | None = None  # the simple statement being run
        self.method = ""  # the method whose ``self.x = ...`` a construction run evaluates
        self.owner_self: str | None = None  # that run's instance (its ``Instance.prefix``)
        self.owner_prefix: str | None = None  # a run of ``__init__``/``build``: the instance's origin
        self.attribute_writes: dict[str, list[Value]] = {}  # that run's ``self.<attr> = value``s
        self.hosted = 0  # functions run by ``tf.numpy_function``/``py_function`` being run (eager)
        self.assigned: dict[str, Flow] = {}  # variable -> what ``assign`` wrote into it (GC113)
        self.unknown_watch = False  # a ``tape.watch`` of something this run cannot name
        self.watched_calls: dict[str, ast.Call] = {}  # watched name -> the model call that made it
        self.watch_calls: list[tuple[ast.Call, tuple[str, ...]]] = []  # each tape.watch, the names it watched
        self.building: list[tuple[str, bool]] = []  # models whose ``call`` runs: (origin, parts by prefix only)

    # --- entry points ---------------------------------------------------------------

    def run_module(self, scope: Scope, stop: int | None = None) -> Scope:
        self.region = self.program.tree
        self._run_region(self.program.tree.body, scope, stop)
        return scope

    def run_function(
        self,
        ref: FuncRef,
        sources: set[str] = frozenset(),
        stop: int | None = None,
        params: dict[str, Value] | None = None,
    ) -> tuple[Scope, Value]:
        """Analyse a function as the region under study (its gradient calls are checked);
        the parameters named in ``sources`` are variables (origins) of the caller's.
        ``stop``: the statements that start after this line are not run."""
        self.region = ref.node
        scope = self._bind(ref, [], {})
        for name in sources:
            self.program.kinds.setdefault(name, "variable")
            scope.vars[name] = Value(flow={name: LIVE})
        scope.vars.update(params or {})
        if stop is not None and not isinstance(ref.node, ast.Lambda):
            self._run_region(ref.node.body, scope, stop)
            return scope, EMPTY
        result = self._body(ref.node, scope)
        return scope, result

    def run_statements(self, body: list[ast.stmt], scope: Scope) -> Scope:
        """Run some of the module's top-level statements, in order."""
        self.region = self.program.tree
        self._run_region(body, scope, None)
        return scope

    def _run_region(self, body: list[ast.stmt], scope: Scope, stop: int | None) -> None:
        module = self.region is self.program.tree
        for stmt in body:
            if stop is not None and stmt.lineno > stop:
                break
            if module:
                self.top = stmt
            if not self.exec(stmt, scope):
                break

    # --- statements -----------------------------------------------------------------

    def exec_block(self, stmts: list[ast.stmt], scope: Scope) -> bool:
        """Run statements; False when the block cannot fall through (return, raise...)."""
        return all(self.exec(stmt, scope) for stmt in stmts)

    def exec(self, node: ast.stmt, scope: Scope) -> bool:
        self.program.tick()
        handler = _STATEMENTS.get(type(node))
        if handler is None:
            return True
        if type(node) in _SIMPLE:
            saved, self.statement = self.statement, node
            try:
                return handler(self, node, scope)
            finally:
                self.statement = saved
        return handler(self, node, scope)

    def _assign_stmt(self, node: ast.Assign, scope: Scope) -> bool:
        value = self.eval(node.value, scope)
        for target in node.targets:
            self._note_frozen(target, node.value, scope)
            self._note_drop(node, target, value)
            self.assign(target, self._split_outputs(node.value, target, value, scope), scope)
        return True

    def _split_outputs(self, call: ast.expr, target: ast.AST, value: Value, scope: Scope) -> Value:
        """``z_mean, z_log_var = self.encoder(x)``: a model this analysis does not follow
        returns several outputs. Each name holds one, and a cut on one starves the variables
        behind that output (its head), not the model's others: each output stands for a part
        of the model of its own (``<model>.z_mean``). Only the called model is split; what its
        input carries (another model's output) reaches every output alike."""
        if not (
            value.items is None
            and not value.container
            and isinstance(target, (ast.Tuple, ast.List))
            and len(target.elts) >= 2
            and all(isinstance(e, ast.Name) for e in target.elts)
            and isinstance(call, ast.Call)
            and isinstance(call.func, (ast.Name, ast.Attribute))
        ):
            return value
        models = self.eval(call.func, scope).models
        split = [o for o, cuts in value.flow.items() if not cuts and o in models and real(o)]
        # a fresh model (``keras.Model(i, o)(x)``) is renamed when assigned: not split
        split = [o for o in split if not o.startswith(FRESH) or o.startswith(FRESH + "s:")]
        if not split:
            return value
        program = self.program
        items = []
        for elt in target.elts:
            flow = dict(value.flow)
            for origin in split:
                part = f"{origin}.{elt.id}"
                del flow[origin]
                flow[part] = LIVE
                program.add_part(origin, part)
                program.kinds.setdefault(part, program.model_kind(origin))
                program.labels.setdefault(part, f"the output {elt.id} of {program.label(origin)}")
                self.note_birth(part, call)
            items.append(Value(flow=flow, dtype=value.dtype, tensor=value.tensor))
        return Value(flow=value.flow, items=tuple(items), dtype=value.dtype, tensor=value.tensor)

    def _note_drop(self, node: ast.stmt, target: ast.AST, value: Value) -> None:
        """A dead store: a name (or a name of a tuple unpacked) bound here that the function
        never reads anywhere (``enc = self.encoder_layer(emb)`` then ``self.classifier(emb)``).
        What its value carries ends here: the dead end a GC108 points at."""
        if isinstance(target, ast.Name):
            pairs = [(target, value)]
        elif isinstance(target, (ast.Tuple, ast.List)) and value.items is not None:
            if len(value.items) != len(target.elts):
                return
            pairs = [(t, v) for t, v in zip(target.elts, value.items, strict=True) if isinstance(t, ast.Name)]
        else:
            return
        scope_node = self.stack[-1] if self.stack else self.region
        if scope_node is None:
            return
        pairs = [(t, v) for t, v in pairs if has_live(v.flow)]
        if not pairs:
            return  # nothing live ends here: no need for the names the scope reads
        loaded = self.program.loaded_names(scope_node)
        flows = [v.flow for t, v in pairs if t.id not in loaded]
        if flows:
            self.drops[node] = merge_flows((self.drops.get(node, {}), *flows))

    def _note_dropped_items(self, items: tuple[Value, ...], kept: int) -> None:
        """A call's tuple result indexed at once (``self.encoder(x)[0]``): the other items can
        never be read again, so what they carry ends at this statement, as at a dead store."""
        flows = [v.flow for i, v in enumerate(items) if i != kept and has_live(v.flow)]
        if flows and self.statement is not None:
            self.drops[self.statement] = merge_flows((self.drops.get(self.statement, {}), *flows))

    def _note_frozen(self, target: ast.AST, value: ast.AST, scope: Scope) -> None:
        if isinstance(target, ast.Attribute) and target.attr == "trainable" and isinstance(value, ast.Constant):
            if value.value is False:
                self.program.frozen.update(self.eval(target.value, scope).models)
            elif value.value is True:
                # frozen only while a combined model was compiled (a GAN's critic), trainable
                # again for its own step
                self.program.frozen.difference_update(self.eval(target.value, scope).models)

    def _ann_assign(self, node: ast.AnnAssign, scope: Scope) -> bool:
        if node.value is not None:
            self.assign(node.target, self.eval(node.value, scope), scope)
        return True

    def _aug_assign(self, node: ast.AugAssign, scope: Scope) -> bool:
        current = self.eval(node.target, scope) if isinstance(node.target, (ast.Name, ast.Attribute)) else EMPTY
        value = self._binop_values(node, node.op, current, self.eval(node.value, scope))
        self.assign(node.target, value, scope)
        return True

    def _expr_stmt(self, node: ast.Expr, scope: Scope) -> bool:
        self.discarded = node.value
        try:
            self.eval(node.value, scope)
        finally:
            self.discarded = None
        return True

    def _declare(self, node: ast.Global | ast.Nonlocal, scope: Scope) -> bool:
        if scope.outer is None:
            scope.outer = set()
        scope.outer.update(node.names)
        return True

    def _return(self, node: ast.Return, scope: Scope) -> bool:
        scope.returns.append(self.eval(node.value, scope) if node.value is not None else EMPTY)
        return False

    def _stop(self, node: ast.stmt, scope: Scope) -> bool:
        return False

    def _nothing(self, node: ast.stmt, scope: Scope) -> bool:
        return True

    def _delete(self, node: ast.Delete, scope: Scope) -> bool:
        for target in node.targets:
            if isinstance(target, ast.Name):
                scope.vars.pop(target.id, None)
        return True

    def _assert(self, node: ast.Assert, scope: Scope) -> bool:
        self.eval(node.test, scope)
        return True

    def _if(self, node: ast.If, scope: Scope) -> bool:
        self.eval(node.test, scope)
        self.conditions += 1
        try:
            return self._branches([node.body, node.orelse], scope)
        finally:
            self.conditions -= 1

    def _branches(self, blocks: list[list[ast.stmt]], scope: Scope) -> bool:
        before = scope.vars
        ends: list[dict[str, Value]] = []
        through = False
        for block in blocks:
            scope.vars = dict(before)
            if self.exec_block(block, scope):
                through = True
            ends.append(scope.vars)
        merged = ends[0]
        for end in ends[1:]:
            merged = merge_vars(merged, end)
        scope.vars = merged
        return through

    def _match(self, node: ast.Match, scope: Scope) -> bool:
        self.eval(node.subject, scope)
        self.conditions += 1
        try:
            return self._branches([case.body for case in node.cases] + [[]], scope)
        finally:
            self.conditions -= 1

    def _for(self, node: ast.For, scope: Scope) -> bool:
        element = self.eval(node.iter, scope).iterate()
        self._loop(node, scope, lambda: self.assign(node.target, element, scope))
        return True

    def _while(self, node: ast.While, scope: Scope) -> bool:
        self._loop(node, scope, lambda: self.eval(node.test, scope))
        return True

    def _loop(self, node: ast.For | ast.While, scope: Scope, enter) -> None:
        # A loop run again (in a later pass of an enclosing loop, by the same chain of calls)
        # starts from the state it reached last time, joined with the new one: values only
        # grow from pass to pass, so its fixpoint is the same, reached in fewer passes, and
        # the calls in it are made with their final arguments at once (nested loops that
        # call the file's functions, which loop in turn, otherwise cost MAX_LOOP ** depth).
        key = (node, tuple(self.call_lines), self.stack[-1] if self.stack else None, self.recording, self.paused)
        reached = self.loops.get(key)
        if reached is not None:
            scope.vars = merge_vars(scope.vars, {k: v for k, v in reached.items() if k in scope.vars})
        for _ in range(MAX_LOOP):
            start = scope.vars
            scope.vars = dict(start)
            enter()
            self.exec_block(node.body, scope)
            scope.vars = merge_vars(start, scope.vars)
            if same_vars(start, scope.vars):
                break
        self.loops[key] = scope.vars
        self.exec_block(node.orelse, scope)

    def _try(self, node: ast.Try, scope: Scope) -> bool:
        before = dict(scope.vars)
        through = self.exec_block(node.body, scope)
        if through:
            through = self.exec_block(node.orelse, scope)
        after = scope.vars
        for handler in node.handlers:
            scope.vars = merge_vars(before, after)
            if handler.name:
                scope.vars[handler.name] = EMPTY
            if self.exec_block(handler.body, scope):
                through = True
            after = merge_vars(after, scope.vars)
        scope.vars = after
        self.exec_block(node.finalbody, scope)
        return True

    def _with(self, node: ast.With, scope: Scope) -> bool:
        saved = self.recording
        for item in node.items:
            context = self.eval(item.context_expr, scope)
            ref = context.ref
            if isinstance(ref, TapeRef):
                tape = TapeRef(item, node)
                if self.depth == 0 and all(seen.item is not item for seen in self.tapes_seen):
                    self.tapes_seen.append(tape)  # once, though a loop runs its ``with`` again
                elif (
                    self.depth
                    and self.tape is None
                    and self.anchor_line
                    and all(seen.item is not item for seen in self.nested_tapes)
                ):
                    # opened by a function this region calls: what the region computes before
                    # that call runs before the tape records
                    tape = TapeRef(item, node, self.stack[-1], self.anchor_line, self.top)
                    self.nested_tapes.append(tape)
                if self.tape is not None and item is self.tape.item:
                    self.recording = True
                tape_value = Value(ref=tape)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, tape_value, scope)
                if isinstance(item.context_expr, (ast.Name, ast.Attribute)):
                    self.assign(item.context_expr, tape_value, scope)
                continue
            if isinstance(ref, StopRecording) and self.tape is not None and ref.tape.item is self.tape.item:
                self.recording = False
                self.paused = node
            if item.optional_vars is not None:
                self.assign(item.optional_vars, EMPTY, scope)
        saved_pause = self.paused
        through = self.exec_block(node.body, scope)
        self.recording, self.paused = saved, saved_pause
        return through

    def _function_def(self, node: ast.FunctionDef, scope: Scope) -> bool:
        scope.vars[node.name] = self.function_value(node, scope)
        return True

    def function_value(self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope) -> Value:
        self.program.hold(scope)  # the function's value closes over it
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            qual = self.qualname(target, scope)
            api = catalog.lookup(qual) if qual else None
            if api is not None and api.kind == catalog.CUSTOM_GRADIENT:
                return Value(ref=custom_gradient(node, scope))
            if qual == _TF_FUNCTION:
                return Value(ref=FuncRef(node, scope, traced=decorator))
        return Value(ref=FuncRef(node, scope))

    def tf_function_decorator(self, node: ast.AST, scope: Scope) -> ast.AST | None:
        """The ``@tf.function`` (or ``@tf.function(...)``) decorating ``node``, if any."""
        for decorator in getattr(node, "decorator_list", ()):
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if self.qualname(target, scope) == _TF_FUNCTION:
                return decorator
        return None

    def _class_def(self, node: ast.ClassDef, scope: Scope) -> bool:
        scope.vars[node.name] = Value(ref=ClassRef(node))
        return True

    # --- assignment -----------------------------------------------------------------

    def assign(self, target: ast.AST, value: Value, scope: Scope) -> None:
        if isinstance(target, ast.Name):
            if scope.outer and target.id in scope.outer:
                self.escape([value])  # a global written here, read anywhere
            if self.tape is not None and self.depth == 0:
                latent = self.program.latent.get(self.tape.item)
                if latent and latent.get(target.id, (None,))[0] is getattr(self.statement, "value", None):
                    value = with_origin(value, target.id)
            scope.vars[target.id] = self._named(value, target.id)
        elif isinstance(target, ast.Attribute):
            parts = dotted(target)
            if self.owner_prefix is not None and parts is not None and len(parts) == 2 and parts[0] == "self":
                # ``__init__``/``build`` making the instance: read back as ``<owner>.<attr>``
                value = self.program.rename(value, f"{self.owner_prefix}.{parts[1]}")
                if self.depth == 0 or self._own_self(scope):
                    self.attribute_writes.setdefault(parts[1], []).append(value)
                scope.vars["self." + parts[1]] = value
                return
            self.escape([value])  # ``self.cache = h``: other methods read it unseen
            if parts is not None:
                key = ".".join(parts)
                scope.vars[key] = self._named(value, key)
        elif isinstance(target, (ast.Tuple, ast.List)):
            elts = target.elts
            starred = any(isinstance(e, ast.Starred) for e in elts)
            if value.items is not None and not starred and len(value.items) == len(elts):
                for elt, item in zip(elts, value.items, strict=True):
                    self.assign(elt, item, scope)
            else:
                element = value.iterate()
                for elt in elts:
                    self.assign(elt.value if isinstance(elt, ast.Starred) else elt, element, scope)
        elif isinstance(target, ast.Subscript):
            self._add_into(target.value, value, scope)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, value, scope)

    def _own_self(self, scope: Scope) -> bool:
        """In a base class's ``__init__`` called by the constructor being run, on the same
        instance (``GAN.__init__(self, generator, discriminator)``): its writes are the
        instance's."""
        if not self.stack or getattr(self.stack[-1], "name", "") != "__init__":
            return False
        here, mine = scope.vars.get("self"), self.owner_self
        return here is not None and mine is not None and isinstance(here.ref, Instance) and here.ref.prefix == mine

    def _named(self, value: Value, name: str) -> Value:
        """A new model or variable takes the name it is assigned to in the region; inside a
        called function it stays fresh, so that ``gen = make_model()`` names it ``gen``
        rather than the factory's local ``model``."""
        if self.depth:
            return value
        if self.owner_prefix is not None:
            # a local of ``__init__``/``build``: a weight made there is the instance's
            return self.program.rename(value, f"{self.owner_prefix}.{name}") if value.ref is NEW_VARIABLE else value
        return self.program.rename(value, name)

    def _add_into(self, node: ast.AST, value: Value, scope: Scope) -> None:
        """``xs.append(v)``, ``d[k] = v``: the container may now hold ``v``."""
        parts = dotted(node)
        if parts is None:
            self.escape([value])
            return
        key = ".".join(parts)
        if len(parts) > 1:
            self.escape([value])  # ``self.buffer.append(h)``: read back by other methods
        have = scope.lookup(key)
        merged = join((have, value)) if have is not None else value
        element = join((have.iterate(), value)) if have is not None else value
        ref = merged.ref
        if ref is None and self.conditions and any(real(o) for o in value.flow):
            ref = PICKED  # ``if not v.path.startswith("value"): actor_vars.append(v)``: filtered
        scope.vars[key] = Value(
            flow=merged.flow,
            models=merged.models,
            fields=merged.fields,
            ref=ref,
            container=True,
            element=element,
        )

    # --- expressions ----------------------------------------------------------------

    def eval(self, node: ast.AST, scope: Scope) -> Value:
        self.program.tick()
        handler = _EXPRESSIONS.get(type(node))
        if handler is None:
            return EMPTY
        return handler(self, node, scope)

    def _constant(self, node: ast.Constant, scope: Scope) -> Value:
        value = node.value
        if isinstance(value, (bool, int)):
            return _INT
        if isinstance(value, float):
            return _FLOAT
        return EMPTY

    def _sequence(self, node: ast.Tuple | ast.List | ast.Set, scope: Scope) -> Value:
        values: list[Value] = []
        exact = True
        for elt in node.elts:
            if isinstance(elt, ast.Starred):
                inner = self.eval(elt.value, scope)
                if inner.items is not None:
                    values.extend(inner.items)
                else:
                    values.append(inner.iterate())
                    exact = False
            else:
                values.append(self.eval(elt, scope))
        return Value(
            flow=flow_of(values),
            models=frozenset().union(*(v.models for v in values)),
            items=tuple(values) if exact and not isinstance(node, ast.Set) else None,
            element=join(values) if values else None,
            container=True,
        )

    def _dict(self, node: ast.Dict, scope: Scope) -> Value:
        fields: dict[str, Value] = {}
        values = []
        for key, value_node in zip(node.keys, node.values, strict=True):
            value = self.eval(value_node, scope)
            values.append(value)
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                fields[key.value] = value
            elif key is not None:
                self.eval(key, scope)
        return Value(
            flow=flow_of(values),
            models=frozenset().union(*(v.models for v in values)) if values else frozenset(),
            fields=fields or None,
            container=True,
        )

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp, scope) -> Value:
        inner = Scope(scope)
        for generator in node.generators:
            element = self.eval(generator.iter, inner).iterate()
            self.assign(generator.target, element, inner)
            for condition in generator.ifs:
                self.eval(condition, inner)
        if isinstance(node, ast.DictComp):
            value = join((self.eval(node.key, inner), self.eval(node.value, inner)))
        else:
            value = self.eval(node.elt, inner)
        picked = PICKED if any(generator.ifs for generator in node.generators) else None
        return Value(flow=value.flow, models=value.models, element=value, container=True, ref=picked)

    def _subscript(self, node: ast.Subscript, scope: Scope) -> Value:
        base = self.eval(node.value, scope)
        index = node.slice
        if isinstance(index, ast.Constant):
            key = index.value
            if base.items is not None and isinstance(key, int) and -len(base.items) <= key < len(base.items):
                if isinstance(node.value, ast.Call):
                    self._note_dropped_items(base.items, key % len(base.items))
                return base.items[key]
            if base.fields and isinstance(key, str) and key in base.fields:
                return base.fields[key]
        if base.qual is not None:
            return Value(qual=base.qual)  # a type annotation such as ``list[int]``
        position = self.eval(index, scope)
        if isinstance(index, ast.Slice) and not base.tensor and (base.container or _variable_list(node.value)):
            # ``model.trainable_variables[:4]``: a part of a list, which part known at run time
            return Value(flow=base.flow, models=base.models, element=base.iterate(), container=True, ref=PICKED)
        # An element or slice keeps its base's flow. An index is an integer: joining its flow
        # only brings the cuts of whatever computed it (``returns[tf.argmax(q)]`` depends on
        # q through argmax), or keeps a path live where this analysis lost track of its type.
        # An origin the indexed value carries too is cut where that value is, not by what
        # computed the index: an index is never a gradient path (``pred[idx]`` with ``idx``
        # from ``np.argsort(pred.numpy())`` is cut where ``pred`` is, if it is).
        if base.container:
            element = base.iterate()
            flow = (
                merge_flows((element.flow, _only_new(position.flow, element.flow))) if position.flow else element.flow
            )
            return Value(
                flow=flow,
                models=element.models,
                fields=element.fields,
                items=element.items,
                ref=element.ref,
                dtype=element.dtype,
                tensor=element.tensor,
            )
        flow = merge_flows((base.flow, _only_new(position.flow, base.flow))) if position.flow else base.flow
        if base.tensor or isinstance(index, ast.Tuple) or (isinstance(index, ast.Constant) and index.value is ...):
            # ``preds[:, i]``: a slice of a tensor (no list takes a tuple) is an op, which the
            # tape records only while recording (``tape.gradient(preds[:, i], x)`` after it)
            flow = self.op(node, flow)
        ref = base.ref if from_library(base.ref) else None  # ``dist[:5]`` is a distribution again
        return Value(flow=flow, models=base.models, dtype=base.dtype, tensor=base.tensor, ref=ref)

    def _slice(self, node: ast.Slice, scope: Scope) -> Value:
        parts = [self.eval(p, scope) for p in (node.lower, node.upper, node.step) if p is not None]
        return Value(flow=flow_of(parts))

    def _starred(self, node: ast.Starred, scope: Scope) -> Value:
        return self.eval(node.value, scope)

    def _named_expr(self, node: ast.NamedExpr, scope: Scope) -> Value:
        value = self.eval(node.value, scope)
        self.assign(node.target, value, scope)
        return value

    def _if_exp(self, node: ast.IfExp, scope: Scope) -> Value:
        self.eval(node.test, scope)
        return join((self.eval(node.body, scope), self.eval(node.orelse, scope)))

    def _bool_op(self, node: ast.BoolOp, scope: Scope) -> Value:
        return join([self.eval(v, scope) for v in node.values])  # ``a or b`` is one of them

    def _unary(self, node: ast.UnaryOp, scope: Scope) -> Value:
        operand = self.eval(node.operand, scope)
        if isinstance(node.op, ast.Not):
            return EMPTY
        return Value(flow=self.op(node, operand.flow), dtype=operand.dtype, tensor=operand.tensor)

    def _binop(self, node: ast.BinOp, scope: Scope) -> Value:
        return self._binop_values(node, node.op, self.eval(node.left, scope), self.eval(node.right, scope))

    def _binop_values(self, node: ast.AST, op: ast.operator, left: Value, right: Value) -> Value:
        if (left.container or right.container) and isinstance(op, (ast.Add, ast.Mult)):
            items = None
            if isinstance(op, ast.Add) and left.items is not None and right.items is not None:
                items = left.items + right.items
            merged = join((left, right))
            picked = PICKED if PICKED in (left.ref, right.ref) else None  # a filtered part keeps the whole unknown
            return Value(
                flow=merged.flow, models=merged.models, items=items, element=merged.element, container=True, ref=picked
            )
        if left.qual is not None and right.qual is not None:
            return EMPTY
        flow = merge_flows((left.flow, right.flow))
        tensor = left.tensor or right.tensor
        if isinstance(op, ast.FloorDiv):
            return Value(flow=self.cut(node, flow, "GC102"), tensor=tensor)
        if left.dtype == "float" or right.dtype == "float" or isinstance(op, ast.Div):
            dtype = "float" if left.dtype and right.dtype else None
        else:
            dtype = "int" if left.dtype == right.dtype == "int" else None
        return Value(flow=self.op(node, flow), dtype=dtype, tensor=tensor)

    def _compare(self, node: ast.Compare, scope: Scope) -> Value:
        values = [self.eval(node.left, scope), *(self.eval(c, scope) for c in node.comparators)]
        if all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
            return EMPTY
        return Value(flow=self.cut(node, flow_of(values), "GC103"), dtype="int", tensor=any(v.tensor for v in values))

    def _lambda(self, node: ast.Lambda, scope: Scope) -> Value:
        self.program.hold(scope)
        return Value(ref=FuncRef(node, scope))

    def _await(self, node: ast.Await, scope: Scope) -> Value:
        return self.eval(node.value, scope)

    def _yield(self, node: ast.Yield | ast.YieldFrom, scope: Scope) -> Value:
        if node.value is not None:
            scope.returns.append(self.eval(node.value, scope))
        return EMPTY

    def _joined_str(self, node: ast.JoinedStr, scope: Scope) -> Value:
        for value in node.values:
            self.eval(value, scope)
        return EMPTY

    def _formatted(self, node: ast.FormattedValue, scope: Scope) -> Value:
        self.eval(node.value, scope)
        return EMPTY

    # --- ops and cuts ----------------------------------------------------------------

    def op(self, node: ast.AST, flow: Flow) -> Flow:
        """A differentiable op: its live inputs are cut only if the tape is not recording."""
        if self.recording or not has_live(flow):
            return flow
        return self._outside(node, flow)

    def cut(self, node: ast.AST, flow: Flow, code: str, op: str = "") -> Flow:
        """A non-differentiable op (or one outside the tape, which comes first); ``op``: the
        op type a GC111 names."""
        if code == "GC105" and not self.recording:
            # taken out of TensorFlow before (or after) the tape: data from then on (a rollout's
            # advantages, a target), whose computation on the tape would carry no gradient
            # either. What the analysis did not follow stays unknown.
            return {o: cuts for o, cuts in flow.items() if o == UNSEEN}
        if code in _INHERENT:
            flow = _moot_outside(flow)
        if not has_live(flow):
            if code == "GC105" and flow and self.recording:
                return self._escape_after_cut(node, flow)
            return flow
        if not self.recording:
            return self._outside(node, flow)
        site = self.program.site(node, code, method=op)
        if code == "GC105" and self.tape is not None and self._traced_step():
            live = {o for o, cuts in flow.items() if not cuts and real(o)}
            if live:
                self.program.crashes.setdefault((site, self.tape.with_node), set()).update(live)
        flow = cut_flow(flow, site)
        return self._escape_after_cut(node, flow) if code == "GC105" else flow

    def _traced_step(self) -> bool:
        """The code runs as a graph: a ``tf.function`` of the file's, or a ``train_step``
        that ``fit`` traces. There a tensor's value cannot be taken out (``.numpy()``,
        ``np.*``, ``predict``): the step raises before any gradient is asked."""
        program = self.program
        if program.eager_requested() or self.hosted:
            return False
        return self.traced_now() or (getattr(self.region, "name", "") == "train_step" and program.fit_called())

    def _escape_after_cut(self, node: ast.AST, flow: Flow) -> Flow:
        """Values that leave TensorFlow (GC105) are found where they leave, as the trace
        engine's provenance does, even when an op before (``argmax``) had cut them already."""
        site = self.program.site(node, "GC105")
        out = {}
        for origin, cuts in flow.items():
            if cuts and origin != UNSEEN and not any(s.code in ("GC105", "GC106") for s in cuts):
                cuts = cuts | {site}
            out[origin] = cuts
        return out

    def _outside(self, node: ast.AST, flow: Flow) -> Flow:
        if self.construction:
            # In ``__init__``/``build`` only a computation on a variable runs once for good:
            # layer calls there build a functional graph (symbolic, differentiable later).
            kinds = self.program.kinds
            if any(o.startswith(HOLDER) for o in flow):
                return flow  # made by a layer or model call: a functional graph (a custom layer's weight)
            if not any(not cuts and kinds.get(o) == "variable" for o, cuts in flow.items()):
                return flow
            site = self._outside_site(node)
            return {
                o: (frozenset((site,)) if not cuts and kinds.get(o) == "variable" else cuts) for o, cuts in flow.items()
            }
        return cut_flow(flow, self._outside_site(node))

    def _outside_site(self, node: ast.AST) -> Site:
        """GC109 names the statement that ran outside the tape (its value, as the trace
        engine does: one user-level computation, however many ops)."""
        via = self._via()
        request = self._request_target(self.anchor_statement) if via and not self.construction else None
        if request is not None and self.anchor_node is not None and _within(self.anchor_node, request):
            # The target computed by a function of the file in the request itself, after the
            # tape (``t.gradient(score(x), x)``): that argument is what to move into the block.
            return self.program.site(request, "GC109", self._when(node))
        call = self._tape_level_call() if via and not self.construction else None
        if call is not None:
            # a function of the file called before the tape, in the function that opens it:
            # that call's statement is the computation to move into the block (as the trace
            # engine names it: ``features = self.encode(x)``, not a line of ``encode``)
            return self.program.site(call, "GC109", self._when(node))
        value = getattr(self.statement, "value", None)
        target = self._request_target(self.statement)
        if target is not None and node is not value:  # not the request itself (a first-order gradient)
            value = target  # ``tape.gradient(preds[:, i], x)``: the target made there
        if isinstance(value, ast.expr) and value.lineno <= node.lineno <= (value.end_lineno or value.lineno):
            node = value
        return self.program.site(node, "GC109", self._when(node), via, self.method if self.construction else "")

    @staticmethod
    def _request_target(statement: ast.stmt | None) -> ast.expr | None:
        """The target argument of a statement's gradient request (``g = tape.gradient(t, x)``)."""
        value = getattr(statement, "value", None)
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr in catalog.GRADIENT_METHODS
            and value.args
        ):
            return value.args[0]
        return None

    def _tape_level_call(self) -> ast.expr | None:
        """The value of the statement, in the function that opens the followed tape (or the
        region itself), whose call led to the line being run; None: not known."""
        tape = self.tape
        if tape is None:
            return None
        if tape.frame is None:
            statement, call = self.anchor_statement, self.anchor_node
        elif tape.frame in self.stack and self.stack.index(tape.frame) + 1 < len(self.stack):
            statement = self.call_statements[self.stack.index(tape.frame) + 1]
            call = None
        else:
            return None
        value = getattr(statement, "value", None)
        if not isinstance(value, ast.expr) or (call is not None and not _within(call, value)):
            return None
        return value

    def _via(self) -> int:
        """The line of the call that ran the current line outside the tape (0: the line is
        in the region itself). For a tape a called function opens, that is the call made by
        that function, not the region's call of it: otherwise the same line, seen from the
        function's own run and from its caller's, would be two findings."""
        if not self.depth:
            return 0
        tape = self.tape
        if tape is not None and tape.frame is not None and tape.frame in self.stack:
            index = self.stack.index(tape.frame)
            return self.call_lines[index + 1] if index + 1 < len(self.stack) else 0
        return self.anchor_line or 0

    def _when(self, node: ast.AST) -> str:
        if self.construction or self.tape is None:
            return "before"
        if self.paused is not None:
            return "outside what"  # "... ran outside what the GradientTape recorded"
        tape = self.tape
        assert tape.with_node is not None
        if tape.frame is None:  # opened in the region itself
            line = self.anchor_line if self.depth and self.anchor_line else node.lineno
            return "before" if line < tape.with_node.lineno else "after"
        if tape.frame in self.stack:  # in, or below, the function that opens it
            index = self.stack.index(tape.frame)
            line = node.lineno if index == len(self.stack) - 1 else self.call_lines[index + 1]
            return "before" if line < tape.with_node.lineno else "after"
        line = self.anchor_line if self.depth and self.anchor_line else node.lineno
        return "before" if line <= tape.entry_line else "after"


_TF_FUNCTION = "tensorflow.function"

#: Cuts that a path has whatever the tape does (integer results, samplers, host functions):
#: a computation outside the tape before one of them is not what starves the path.
_INHERENT = frozenset(("GC101", "GC102", "GC103", "GC106", "GC107"))


def _moot_outside(flow: Flow) -> Flow:
    """A path cut only because it ran outside the tape (GC109) that now goes through a
    non-differentiable op would carry no gradient on the tape either: its GC109 is moot."""
    if not any(cuts and all(s.code == "GC109" and not s.moot for s in cuts) for cuts in flow.values()):
        return flow
    return {
        o: frozenset(replace(s, moot=True) for s in cuts)
        if cuts and all(s.code == "GC109" and not s.moot for s in cuts)
        else cuts
        for o, cuts in flow.items()
    }


_STATEMENTS = {
    ast.Assign: Interpreter._assign_stmt,
    ast.AnnAssign: Interpreter._ann_assign,
    ast.AugAssign: Interpreter._aug_assign,
    ast.Expr: Interpreter._expr_stmt,
    ast.Return: Interpreter._return,
    ast.Raise: Interpreter._stop,
    ast.Break: Interpreter._stop,
    ast.Continue: Interpreter._stop,
    ast.Pass: Interpreter._nothing,
    ast.Delete: Interpreter._delete,
    ast.Global: Interpreter._declare,
    ast.Nonlocal: Interpreter._declare,
    ast.Assert: Interpreter._assert,
    ast.If: Interpreter._if,
    ast.Match: Interpreter._match,
    ast.For: Interpreter._for,
    ast.AsyncFor: Interpreter._for,
    ast.While: Interpreter._while,
    ast.Try: Interpreter._try,
    ast.With: Interpreter._with,
    ast.AsyncWith: Interpreter._with,
    ast.FunctionDef: Interpreter._function_def,
    ast.AsyncFunctionDef: Interpreter._function_def,
    ast.ClassDef: Interpreter._class_def,
}
_SIMPLE = frozenset((ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return))
if hasattr(ast, "TryStar"):
    _STATEMENTS[ast.TryStar] = Interpreter._try

_EXPRESSIONS = {
    ast.Name: Interpreter._name,
    ast.Attribute: Interpreter._attribute,
    ast.Constant: Interpreter._constant,
    ast.Tuple: Interpreter._sequence,
    ast.List: Interpreter._sequence,
    ast.Set: Interpreter._sequence,
    ast.Dict: Interpreter._dict,
    ast.ListComp: Interpreter._comprehension,
    ast.SetComp: Interpreter._comprehension,
    ast.GeneratorExp: Interpreter._comprehension,
    ast.DictComp: Interpreter._comprehension,
    ast.Subscript: Interpreter._subscript,
    ast.Slice: Interpreter._slice,
    ast.Starred: Interpreter._starred,
    ast.NamedExpr: Interpreter._named_expr,
    ast.IfExp: Interpreter._if_exp,
    ast.BoolOp: Interpreter._bool_op,
    ast.UnaryOp: Interpreter._unary,
    ast.BinOp: Interpreter._binop,
    ast.Compare: Interpreter._compare,
    ast.Call: Interpreter._call,
    ast.Lambda: Interpreter._lambda,
    ast.Await: Interpreter._await,
    ast.Yield: Interpreter._yield,
    ast.YieldFrom: Interpreter._yield,
    ast.JoinedStr: Interpreter._joined_str,
    ast.FormattedValue: Interpreter._formatted,
}

__all__ = ["FuncRef", "Interpreter", "Scope", "model_name"]


#: Attributes that list a model's variables.
_VARIABLE_LISTS = frozenset(("trainable_variables", "trainable_weights", "variables", "weights"))


def _variable_list(node: ast.AST) -> bool:
    """``model.trainable_variables`` and the like, as written."""
    return isinstance(node, ast.Attribute) and node.attr in _VARIABLE_LISTS


def _within(node: ast.AST, outer: ast.AST) -> bool:
    """Whether ``node`` lies in the source span of ``outer``."""
    start = (outer.lineno, outer.col_offset)
    end = (outer.end_lineno or outer.lineno, outer.end_col_offset or 0)
    return start <= (node.lineno, node.col_offset) and (node.end_lineno or node.lineno, node.end_col_offset or 0) <= end


def _only_new(index: Flow, indexed: Flow) -> Flow:
    """What an index adds to the value it picks from: the origins that value does not carry,
    or carries only through moot cuts (a tape that had not started yet, which the index's
    own cut is then the cause of)."""
    return {
        origin: cuts
        for origin, cuts in index.items()
        if origin not in indexed or (indexed[origin] and all(site.moot for site in indexed[origin]))
    }
