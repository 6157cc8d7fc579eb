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
import functools
from dataclasses import dataclass

from gradcheck.static import catalog
from gradcheck.static.names import canonical, dotted
from gradcheck.static.program import MODEL_NAME, NEW_VARIABLE, TAPE_NAME, Check, Program
from gradcheck.static.values import EMPTY, LIVE, Flow, Site, Value, cut_flow, flow_of, has_live, join, merge_flows

MAX_DEPTH = 8  # nested calls analysed in place
MAX_LOOP = 4  # passes over a loop body before its state is taken as the fixpoint

#: Attributes that describe a tensor rather than compute from its values.
_METADATA = frozenset(("shape", "dtype", "ndim", "name", "device", "rank", "graph", "op"))
#: Attributes of a model that read its variables.
_MODEL_VARIABLES = frozenset(
    ("trainable_variables", "trainable_weights", "variables", "weights", "non_trainable_variables")
)
#: Methods that add a value into their receiver (a list, dict, deque or set).
_MUTATORS = frozenset(("append", "extend", "insert", "appendleft", "add", "update", "setdefault"))
_ASSIGNS = frozenset(("assign", "assign_add", "assign_sub", "scatter_update", "scatter_nd_update"))
#: A layer's attributes that are its variables (sources such as ``layer.kernel``).
_LAYER_WEIGHTS = frozenset(("kernel", "bias", "embeddings", "recurrent_kernel", "gamma", "beta"))
#: Methods of a Keras model that do not compute with its variables on their arguments.
_NOT_FORWARD = frozenset(
    ("summary", "count_params", "to_json", "build", "evaluate", "compute_loss", "compute_metrics", "compiled_loss")
)
_NOT_FORWARD_PREFIXES = ("get_", "set_", "save", "load", "reset", "add_", "compute_output", "make_")


# --- what a Value can refer to ------------------------------------------------------


@dataclass(eq=False)
class FuncRef:
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    closure: Scope
    self_value: Value | None = None

    @property
    def ident(self) -> tuple:
        bound = self.self_value.key() if self.self_value is not None else None
        return ("func", id(self.node), id(self.closure), bound)


@dataclass(eq=False)
class ClassRef:
    node: ast.ClassDef

    @property
    def ident(self) -> tuple:
        return ("class", id(self.node))


@dataclass(eq=False)
class Instance:
    cls: ast.ClassDef
    prefix: str  # how its attributes are named when it is no model itself ("self")

    @property
    def ident(self) -> tuple:
        return ("instance", id(self.cls), self.prefix)


@dataclass(eq=False)
class TapeRef:
    item: ast.withitem | None  # the ``with`` item that opened it; None: not visible here (a parameter)
    with_node: ast.With | None = None

    @property
    def ident(self) -> tuple:
        return ("tape", id(self.item))


@dataclass(eq=False)
class StopRecording:
    tape: TapeRef

    @property
    def ident(self) -> tuple:
        return ("stop", id(self.tape.item))


@dataclass(eq=False)
class LambdaLayer:
    function: Value

    @property
    def ident(self) -> tuple:
        return ("lambda", self.function.key())


class _Pass:
    """A function whose gradient the user defined (``tf.custom_gradient``): differentiable."""

    ident = ("pass",)


PASS = _Pass()


class Scope:
    __slots__ = ("parent", "returns", "vars")

    def __init__(self, parent: Scope | None = None) -> None:
        self.vars: dict[str, Value] = {}
        self.parent = parent
        self.returns: list[Value] = []

    def lookup(self, name: str) -> Value | None:
        scope: Scope | None = self
        while scope is not None:
            value = scope.vars.get(name)
            if value is not None:
                return value
            scope = scope.parent
        return None


def _merge_vars(a: dict[str, Value], b: dict[str, Value]) -> dict[str, Value]:
    out = dict(a)
    for name, value in b.items():
        have = out.get(name)
        out[name] = value if have is None or have is value else join((have, value))
    return out


def _same_vars(a: dict[str, Value], b: dict[str, Value]) -> bool:
    return a.keys() == b.keys() and all(a[k] is b[k] or a[k] == b[k] for k in a)


@functools.lru_cache(maxsize=4096)
def model_name(name: str) -> bool:
    """Whether a name says "Keras model" by convention (``model``, ``q_net``, ``critic``)."""
    return MODEL_NAME.fullmatch(name.rsplit(".", 1)[-1]) is not None


@functools.lru_cache(maxsize=4096)
def _tape_name(name: str) -> bool:
    return TAPE_NAME.fullmatch(name) is not None


# --- the interpreter ------------------------------------------------------------------


class Interpreter:
    def __init__(self, program: Program, tape: TapeRef | None = None) -> None:
        self.program = program
        self.tape = tape  # the tape this run follows; None: every op counts as recorded
        self.recording = tape is None
        self.depth = 0
        self.anchor_line: int | None = None  # the call at depth 0 that led here (for before/after)
        self.stack: list[ast.AST] = []
        self.memo: dict[tuple, Value] = {}
        self.tapes_seen: list[TapeRef] = []
        self.checks: dict[ast.AST, Check] = {}
        self.births: dict[str, ast.AST] = {}  # origin -> its first call in this run
        self.paused: ast.With | None = None  # ``with tape.stop_recording():`` being run

    # --- entry points ---------------------------------------------------------------

    def run_module(self, scope: Scope) -> Scope:
        self.exec_block(self.program.tree.body, scope)
        return scope

    def run_function(self, ref: FuncRef, sources: set[str] = frozenset()) -> tuple[Scope, Value]:
        """Analyse a function as the region under study (its gradient calls are checked);
        the parameters named in ``sources`` are variables (origins) of the caller's."""
        scope = self._bind(ref, [], {})
        for name in sources:
            self.program.kinds.setdefault(name, "variable")
            scope.vars[name] = Value(flow={name: LIVE})
        result = self._body(ref.node, scope)
        return scope, result

    # --- statements -----------------------------------------------------------------

    def exec_block(self, stmts: list[ast.stmt], scope: Scope) -> bool:
        """Run statements; False when the block cannot fall through (return, raise...)."""
        return all(self.exec(stmt, scope) for stmt in stmts)

    def exec(self, node: ast.stmt, scope: Scope) -> bool:
        self.program.tick()
        handler = _STATEMENTS.get(type(node))
        if handler is None:
            return True
        return handler(self, node, scope)

    def _assign_stmt(self, node: ast.Assign, scope: Scope) -> bool:
        value = self.eval(node.value, scope)
        for target in node.targets:
            self._note_frozen(target, node.value, scope)
            self.assign(target, value, scope)
        return True

    def _note_frozen(self, target: ast.AST, value: ast.AST, scope: Scope) -> None:
        if (
            isinstance(target, ast.Attribute)
            and target.attr == "trainable"
            and isinstance(value, ast.Constant)
            and value.value is False
        ):
            self.program.frozen.update(self.eval(target.value, scope).models)

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
        self.eval(node.value, scope)
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
        return self._branches([node.body, node.orelse], scope)

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
            merged = _merge_vars(merged, end)
        scope.vars = merged
        return through

    def _match(self, node: ast.Match, scope: Scope) -> bool:
        self.eval(node.subject, scope)
        return self._branches([case.body for case in node.cases] + [[]], scope)

    def _for(self, node: ast.For, scope: Scope) -> bool:
        element = self.eval(node.iter, scope).iterate()
        self._loop(node, scope, lambda: self.assign(node.target, element, scope))
        return True

    def _while(self, node: ast.While, scope: Scope) -> bool:
        self._loop(node, scope, lambda: self.eval(node.test, scope))
        return True

    def _loop(self, node: ast.For | ast.While, scope: Scope, enter) -> None:
        for _ in range(MAX_LOOP):
            start = scope.vars
            scope.vars = dict(start)
            enter()
            self.exec_block(node.body, scope)
            scope.vars = _merge_vars(start, scope.vars)
            if _same_vars(start, scope.vars):
                break
        self.exec_block(node.orelse, scope)

    def _try(self, node: ast.Try, scope: Scope) -> bool:
        before = dict(scope.vars)
        through = self.exec_block(node.body, scope)
        if through:
            through = self.exec_block(node.orelse, scope)
        after = scope.vars
        for handler in node.handlers:
            scope.vars = _merge_vars(before, after)
            if handler.name:
                scope.vars[handler.name] = EMPTY
            if self.exec_block(handler.body, scope):
                through = True
            after = _merge_vars(after, scope.vars)
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
                if self.depth == 0:
                    self.tapes_seen.append(tape)
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
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            qual = self.qualname(target, scope)
            api = catalog.lookup(qual) if qual else None
            if api is not None and api.kind == catalog.CUSTOM_GRADIENT:
                return Value(ref=PASS)
        return Value(ref=FuncRef(node, scope))

    def _class_def(self, node: ast.ClassDef, scope: Scope) -> bool:
        scope.vars[node.name] = Value(ref=ClassRef(node))
        return True

    # --- assignment -----------------------------------------------------------------

    def assign(self, target: ast.AST, value: Value, scope: Scope) -> None:
        if isinstance(target, ast.Name):
            scope.vars[target.id] = self._named(value, target.id)
        elif isinstance(target, ast.Attribute):
            parts = dotted(target)
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

    def _named(self, value: Value, name: str) -> Value:
        """A new model or variable takes the name it is assigned to in the region; inside a
        called function it stays fresh, so that ``gen = make_model()`` names it ``gen``
        rather than the factory's local ``model``."""
        return self.program.rename(value, name) if self.depth == 0 else value

    def _add_into(self, node: ast.AST, value: Value, scope: Scope) -> None:
        """``xs.append(v)``, ``d[k] = v``: the container may now hold ``v``."""
        parts = dotted(node)
        if parts is None:
            return
        key = ".".join(parts)
        have = scope.lookup(key)
        merged = join((have, value)) if have is not None else value
        scope.vars[key] = Value(
            flow=merged.flow, models=merged.models, fields=merged.fields, ref=merged.ref, container=True
        )

    # --- expressions ----------------------------------------------------------------

    def eval(self, node: ast.AST, scope: Scope) -> Value:
        self.program.tick()
        handler = _EXPRESSIONS.get(type(node))
        if handler is None:
            return EMPTY
        return handler(self, node, scope)

    def qualname(self, node: ast.AST, scope: Scope) -> str | None:
        """The library path a ``Name``/``Attribute`` chain refers to, honouring local names."""
        parts = dotted(node)
        if parts is None:
            return None
        head = parts[0]
        bound = scope.lookup(head)
        if bound is not None:
            if bound.qual is None:
                return None
            return canonical(".".join([bound.qual, *parts[1:]]))
        qual = self.program.aliases.resolve(parts)
        if qual is not None:
            return qual
        if head in catalog.BUILTIN_NAMES and len(parts) == 1:
            return f"builtins.{head}"
        return None

    def _name(self, node: ast.Name, scope: Scope) -> Value:
        value = scope.lookup(node.id)
        if value is not None:
            return value
        qual = self.qualname(node, scope)
        if qual is not None:
            return Value(qual=qual)
        return self.unknown_name(node.id)

    def unknown_name(self, name: str) -> Value:
        """A name the file does not bind here (a parameter, a global of another module)."""
        if _tape_name(name):
            return Value(ref=TapeRef(None))
        if model_name(name):
            self.program.kinds.setdefault(name, "model")
            self.program.guessed.add(name)
            return Value(models=frozenset((name,)))
        return EMPTY

    def _attribute(self, node: ast.Attribute, scope: Scope) -> Value:
        parts = dotted(node)
        if parts is not None:
            bound = scope.lookup(".".join(parts))
            if bound is not None:
                return bound
            qual = self.qualname(node, scope)
            if qual is not None:
                return Value(qual=qual)
        base = self.eval(node.value, scope)
        if node.attr in _MODEL_VARIABLES and _opaque(base):
            base = self._guess_model(node.value, base)
        return self.attribute(base, node.attr)

    def _guess_model(self, node: ast.AST, value: Value) -> Value:
        """A value the file cannot see into (``gen = pix2pix.unet_generator()``), named like
        a model: taken as one, named as written."""
        parts = dotted(node)
        if parts is None or not model_name(parts[-1]):
            return value
        name = ".".join(parts)
        self.program.kinds.setdefault(name, "model")
        self.program.guessed.add(name)
        return Value(models=frozenset((name,)))

    def attribute(self, base: Value, attr: str) -> Value:
        if attr in _METADATA:
            return EMPTY
        if base.fields and attr in base.fields:
            return base.fields[attr]
        ref = base.ref
        if isinstance(ref, Instance):
            found = self.instance_attribute(base, ref, attr)
            if found is not None:
                return found
        if base.models:
            if attr in _MODEL_VARIABLES or attr == "layers":
                return Value(flow=dict.fromkeys(base.models, LIVE), models=base.models, container=True)
            if attr in _LAYER_WEIGHTS:
                return Value(flow={f"{m}.{attr}": LIVE for m in base.models})
            return EMPTY
        if base.qual is not None:
            return Value(qual=f"{base.qual}.{attr}")
        if isinstance(ref, TapeRef):
            return EMPTY
        return Value(flow=base.flow)

    def instance_attribute(self, base: Value, instance: Instance, attr: str) -> Value | None:
        """A method (bound) or an attribute set as ``self.<attr> = ...`` in the class."""
        program = self.program
        method = program.find_method(instance.cls, attr)
        if method is not None:
            closure = program.module_scope
            if any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.decorator_list):
                return Value(ref=FuncRef(method, closure))
            ref = FuncRef(method, closure, self_value=base)
            if any(isinstance(d, ast.Name) and d.id == "property" for d in method.decorator_list):
                return self.call_function(ref, [], {}, None)
            return Value(ref=ref)
        prefix = min(base.models) if base.models else instance.prefix
        key = (id(instance.cls), attr, prefix)
        cache = program.class_attrs
        if key in cache:
            return cache[key]
        cache[key] = None  # cycles
        values = program.attribute_assignments(instance.cls, attr)
        if not values:
            return None
        name = f"{prefix}.{attr}"
        sub = Interpreter(program)
        found = join(
            program.rename(sub.eval(value, self._method_scope(method, base)), name) for value, method in values
        )
        if not found.models and not found.flow and found.ref is None and model_name(attr):
            program.kinds.setdefault(name, "model")
            found = Value(models=frozenset((name,)))
        cache[key] = found
        return found

    def _method_scope(self, method: ast.AST, instance: Value) -> Scope:
        """Where ``self.x = <value>`` is evaluated: its method's parameters are unknown there
        (``self.model = model`` must not find a module global ``model``)."""
        scope = Scope(self.program.module_scope)
        spec = method.args
        for param in (*spec.posonlyargs, *spec.args, *spec.kwonlyargs, spec.vararg, spec.kwarg):
            if param is not None:
                scope.vars[param.arg] = self.unknown_name(param.arg)
        scope.vars["self"] = instance
        return scope

    def _constant(self, node: ast.AST, scope: Scope) -> Value:
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
        return Value(flow=value.flow, models=value.models, element=value, container=True)

    def _subscript(self, node: ast.Subscript, scope: Scope) -> Value:
        base = self.eval(node.value, scope)
        index = node.slice
        if isinstance(index, ast.Constant):
            key = index.value
            if base.items is not None and isinstance(key, int) and -len(base.items) <= key < len(base.items):
                return base.items[key]
            if base.fields and isinstance(key, str) and key in base.fields:
                return base.fields[key]
        if base.qual is not None:
            return Value(qual=base.qual)  # a type annotation such as ``list[int]``
        position = self.eval(index, scope)
        # An element or slice keeps its base's flow. An index is an integer: joining its flow
        # only brings the cuts of whatever computed it (``returns[tf.argmax(q)]`` depends on
        # q through argmax), or keeps a path live where this analysis lost track of its type.
        if base.container:
            element = base.iterate()
            flow = merge_flows((element.flow, position.flow)) if position.flow else element.flow
            return Value(flow=flow, models=element.models, fields=element.fields, items=element.items, ref=element.ref)
        flow = merge_flows((base.flow, position.flow)) if position.flow else base.flow
        return Value(flow=flow, models=base.models)

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
        return Value(flow=self.op(node, operand.flow))

    def _binop(self, node: ast.BinOp, scope: Scope) -> Value:
        return self._binop_values(node, node.op, self.eval(node.left, scope), self.eval(node.right, scope))

    def _binop_values(self, node: ast.AST, op: ast.operator, left: Value, right: Value) -> Value:
        if (left.container or right.container) and isinstance(op, (ast.Add, ast.Mult)):
            items = None
            if isinstance(op, ast.Add) and left.items is not None and right.items is not None:
                items = left.items + right.items
            merged = join((left, right))
            return Value(flow=merged.flow, models=merged.models, items=items, element=merged.element, container=True)
        if left.qual is not None and right.qual is not None:
            return EMPTY
        flow = merge_flows((left.flow, right.flow))
        if isinstance(op, ast.FloorDiv):
            return Value(flow=self.cut(node, flow, "GC102"))
        return Value(flow=self.op(node, flow))

    def _compare(self, node: ast.Compare, scope: Scope) -> Value:
        values = [self.eval(node.left, scope), *(self.eval(c, scope) for c in node.comparators)]
        if all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
            return EMPTY
        return Value(flow=self.cut(node, flow_of(values), "GC103"))

    def _lambda(self, node: ast.Lambda, scope: Scope) -> Value:
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
        return cut_flow(flow, self._outside_site(node))

    def cut(self, node: ast.AST, flow: Flow, code: str) -> Flow:
        """A non-differentiable op (or one outside the tape, which comes first)."""
        if not has_live(flow):
            return flow
        if not self.recording:
            return cut_flow(flow, self._outside_site(node))
        return cut_flow(flow, self.program.site(node, code))

    def _outside_site(self, node: ast.AST) -> Site:
        via = self.anchor_line if self.depth and self.anchor_line else 0
        return self.program.site(node, "GC109", self._when(node), via)

    def _when(self, node: ast.AST) -> str:
        if self.paused is not None:
            return "outside what"  # "... ran outside what the GradientTape recorded"
        line = self.anchor_line if self.depth and self.anchor_line else node.lineno
        assert self.tape is not None and self.tape.with_node is not None
        return "before" if line < self.tape.with_node.lineno else "after"

    # --- calls -----------------------------------------------------------------------

    def _args(self, node: ast.Call, scope: Scope) -> tuple[list[Value], dict[str, Value]]:
        args: list[Value] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                inner = self.eval(arg.value, scope)
                if inner.items is not None:
                    args.extend(inner.items)
                else:
                    args.append(inner)
            else:
                args.append(self.eval(arg, scope))
        kwargs: dict[str, Value] = {}
        for keyword in node.keywords:
            value = self.eval(keyword.value, scope)
            name = keyword.arg or "**"
            kwargs[name] = join((kwargs[name], value)) if name in kwargs else value
        return args, kwargs

    def _call(self, node: ast.Call, scope: Scope) -> Value:
        func = node.func
        qual = self.qualname(func, scope)
        if qual is not None:
            args, kwargs = self._args(node, scope)
            return self.library_call(node, qual, args, kwargs, scope)
        if isinstance(func, ast.Attribute):
            parts = dotted(func)
            bound = scope.lookup(".".join(parts)) if parts is not None else None
            if bound is None:
                receiver = self.eval(func.value, scope)
                args, kwargs = self._args(node, scope)
                return self.method_call(node, receiver, func.attr, args, kwargs, scope)
            callee = bound
        else:
            callee = self.eval(func, scope)
        args, kwargs = self._args(node, scope)
        return self.call_value(node, callee, args, kwargs, scope)

    def library_call(
        self, node: ast.Call, qual: str, args: list[Value], kwargs: dict[str, Value], scope: Scope
    ) -> Value:
        api = catalog.lookup(qual)
        inputs = flow_of([*args, *kwargs.values()])
        if api is None:
            return Value(flow=self.op(node, self._with_callbacks(inputs, args, kwargs)))
        kind = api.kind
        if kind == catalog.CUT:
            return Value(flow=self.cut(node, inputs, api.code))
        if kind == catalog.CAST:
            if self._casts_to_integer(node, qual, scope):
                return Value(flow=self.cut(node, inputs, api.code))
            return Value(flow=self.op(node, inputs))
        if kind == catalog.WHERE:
            branches = len(node.args) > 1 or any(k.arg in ("x", "y", "x1", "x2") for k in node.keywords)
            if not branches:
                return Value(flow=self.cut(node, inputs, api.code))
            return Value(flow=self.op(node, inputs))
        if kind == catalog.TOP_K:
            values = Value(flow=self.op(node, inputs))
            indices = Value(flow=self.cut(node, inputs, api.code))
            return Value(flow=values.flow, items=(values, indices), fields={"values": values, "indices": indices})
        if kind == catalog.NO_FLOW:
            return EMPTY
        if kind in (catalog.MODEL, catalog.LAYER):
            return self._construct(node, qual, args, kwargs)
        if kind == catalog.LAMBDA:
            function = args[0] if args else kwargs.get("function", EMPTY)
            return Value(ref=LambdaLayer(function))
        if kind == catalog.VARIABLE:
            trainable = _keyword(node, "trainable")
            if isinstance(trainable, ast.Constant) and trainable.value is False:
                return EMPTY
            token = self.program.fresh(node, "variable", _label(node))
            return Value(flow={token: LIVE}, ref=NEW_VARIABLE)
        if kind == catalog.TAPE:
            return Value(ref=TapeRef(None))
        if kind == catalog.GRADIENTS:
            target = args[0] if args else kwargs.get("ys", EMPTY)
            sources = args[1] if len(args) > 1 else kwargs.get("xs", EMPTY)
            self._record(node, TapeRef(None), target, sources)
            return Value(flow=flow_of((target, sources)))
        if kind == catalog.CUSTOM_GRADIENT:
            return Value(ref=PASS)
        if kind == catalog.WRAPPER:
            return args[0] if args else EMPTY
        if kind == catalog.PLUMBING:
            return self._plumbing(qual.rpartition(".")[2], args, kwargs)
        return Value(flow=self.op(node, inputs))

    def _casts_to_integer(self, node: ast.Call, qual: str, scope: Scope) -> bool:
        if qual.endswith(("to_int32", "to_int64")):
            return True
        dtype = node.args[1] if len(node.args) > 1 else _keyword(node, "dtype") or _keyword(node, "DstT")
        if dtype is None:
            return False
        if isinstance(dtype, ast.Constant) and isinstance(dtype.value, str):
            return catalog.is_integer_dtype(dtype.value)
        spelled = self.qualname(dtype, scope)
        return spelled is not None and catalog.is_integer_dtype(spelled)

    def _construct(self, node: ast.Call, qual: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
        program = self.program
        token = program.fresh(node, "model", _label(node))
        trainable = _keyword(node, "trainable")
        if isinstance(trainable, ast.Constant) and trainable.value is False:
            program.frozen.add(token)
        leaf = qual.rpartition(".")[2]
        if leaf in ("Model", "Functional") and self.tape is None:
            outputs = args[1] if len(args) > 1 else kwargs.get("outputs")
            if outputs is not None:
                program.functional.setdefault(node, (token, outputs))
        return Value(models=frozenset((token,)))

    def _plumbing(self, name: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
        if not args:
            return Value(container=True)
        if name == "zip":
            element = Value(items=tuple(a.iterate() for a in args), flow=flow_of(args), container=True)
            return Value(flow=element.flow, element=element, container=True)
        if name == "enumerate":
            inner = args[0].iterate()
            element = Value(items=(EMPTY, inner), flow=inner.flow, models=inner.models, container=True)
            return Value(flow=inner.flow, element=element, container=True)
        if name == "next":
            return args[0].iterate()
        if name in ("min", "max"):
            return args[0].iterate() if len(args) == 1 else join(args)
        if name == "dict":
            return Value(flow=flow_of([*args, *kwargs.values()]), container=True)
        source = args[0]
        return Value(
            flow=source.flow,
            models=source.models,
            items=source.items if name in ("list", "tuple") else None,
            element=source.iterate(),
            container=True,
        )

    def method_call(
        self, node: ast.Call, receiver: Value, attr: str, args: list[Value], kwargs: dict[str, Value], scope: Scope
    ) -> Value:
        ref = receiver.ref
        everything = [*args, *kwargs.values()]
        if isinstance(ref, TapeRef):
            return self._tape_method(node, ref, attr, args, kwargs, scope)
        if receiver.models:
            found = self._model_method(node, receiver, attr, args, kwargs, scope)
            if found is not None:
                return found
        if attr in _MUTATORS and everything:
            self._add_into(node.func.value, join(everything), scope)
            return EMPTY
        if attr in ("numpy", "__array__") and not args:
            return Value(flow=self.cut(node, receiver.flow, "GC105"))
        if attr in ("add_weight", "add_variable"):
            trainable = _keyword(node, "trainable")
            if isinstance(trainable, ast.Constant) and trainable.value is False:
                return EMPTY
            return Value(flow={self.program.fresh(node, "variable", _label(node)): LIVE}, ref=NEW_VARIABLE)
        if attr in _ASSIGNS:
            return EMPTY
        if attr == "minimize" and isinstance(kwargs.get("tape", EMPTY).ref, TapeRef):
            target = args[0] if args else kwargs.get("loss", EMPTY)
            sources = args[1] if len(args) > 1 else kwargs.get("var_list", EMPTY)
            self._record(node, kwargs["tape"].ref, target, sources)
            return EMPTY
        callee = self.attribute(receiver, attr)
        if callee.ref is not None or callee.models:
            return self.call_value(node, callee, args, kwargs, scope)
        if receiver.models and receiver.ref is None and args and not _not_forward(attr):
            return self._model_method_call(node, receiver, attr, args, kwargs)
        # An unknown method: of a tensor (``x.reshape``), a loss object, a TensorArray...
        inputs = self._with_callbacks(merge_flows((receiver.flow, flow_of(everything))), args, kwargs)
        return Value(flow=self.op(node, inputs))

    def _model_method(
        self, node: ast.Call, receiver: Value, attr: str, args: list[Value], kwargs: dict[str, Value], scope: Scope
    ) -> Value | None:
        program = self.program
        if attr in ("predict", "predict_on_batch") and not self._maybe_own_method(receiver, attr):
            site = program.site(node, "GC105")
            flow = dict(cut_flow(flow_of([*args, *kwargs.values()]), site))
            for model in receiver.models:
                if model not in program.frozen:
                    self.note_birth(model, node)
                    flow[model] = frozenset((site,))
            return Value(flow=flow)
        if attr in ("call", "__call__"):
            return self.model_call(node, receiver, flow_of([*args, *kwargs.values()]))
        if attr in ("fit", "train_on_batch", "fit_generator", "compile"):
            program.trained.update(receiver.models)
            if attr == "compile" and self.tape is None:
                loss = kwargs.get("loss") or (args[1] if len(args) > 1 else None)
                if loss is not None:
                    program.compiled.append((node, loss, receiver.models))
            return EMPTY
        if attr == "get_layer":
            return Value(models=receiver.models)
        if attr == "add":  # Sequential.add: builds, computes nothing
            return EMPTY
        return None

    def _model_method_call(
        self, node: ast.Call, receiver: Value, attr: str, args: list[Value], kwargs: dict[str, Value]
    ) -> Value:
        """``model.encode(x)`` on a model whose class the file does not say: the one model
        class of the file that defines ``encode``, else a computation with its variables
        (a method without arguments, ``initial_state()``, is not taken as one)."""
        program = self.program
        owners = [
            cls
            for cls in program.classes.values()
            if program.model_like(cls)
            and any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == attr for s in cls.body)
        ]
        if len(owners) == 1:
            method = program.find_method(owners[0], attr)
            bound = Value(models=receiver.models, ref=Instance(owners[0], "self"))
            return self.call_function(FuncRef(method, program.module_scope, bound), args, kwargs, node)
        return self.model_call(node, receiver, flow_of([*args, *kwargs.values()]))

    def _maybe_own_method(self, receiver: Value, attr: str) -> bool:
        """A model only guessed from its name (a parameter ``model``) may be an instance of
        a class of this file that defines ``attr`` itself (a NumPy model's ``predict``)."""
        if not receiver.models <= self.program.guessed:
            return False
        return any(self.program.find_method(cls, attr) for cls in self.program.classes.values())

    def _tape_method(
        self, node: ast.Call, tape: TapeRef, attr: str, args: list[Value], kwargs: dict[str, Value], scope: Scope
    ) -> Value:
        if attr in catalog.GRADIENT_METHODS:
            target = args[0] if args else kwargs.get("target", EMPTY)
            sources = args[1] if len(args) > 1 else kwargs.get("sources", EMPTY)
            self._record(node, tape, target, sources)
            return Value(flow=flow_of((target, sources)))  # differentiable in an outer tape
        if attr == "watch":
            for arg in node.args:
                for watched in arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg]:
                    self._watch(watched, scope)
            return EMPTY
        if attr == "stop_recording":
            return Value(ref=StopRecording(tape))
        return EMPTY

    def _watch(self, node: ast.AST, scope: Scope) -> None:
        parts = dotted(node)
        if parts is None:
            return
        key = ".".join(parts)
        have = scope.lookup(key) or EMPTY
        self.program.kinds.setdefault(key, "tensor")
        scope.vars[key] = Value(
            flow=merge_flows((have.flow, {key: LIVE})), models=have.models, items=have.items, ref=have.ref
        )

    def _record(self, node: ast.AST, tape: TapeRef, target: Value, sources: Value) -> None:
        """Keep a gradient request for the engine, if it belongs to the tape this run follows."""
        if self.depth:
            return
        if self.tape is None:
            if tape.item is not None:
                return  # a tape opened by ``with`` here: its own run checks it
        elif tape.item is not self.tape.item:
            return
        check = self.checks.get(node)
        if check is not None:
            target, sources = join((check.target, target)), join((check.sources, sources))
        self.checks[node] = Check(node, target, sources, self.tape.with_node if self.tape else None, self.births)

    def call_value(
        self, node: ast.Call, callee: Value, args: list[Value], kwargs: dict[str, Value], scope: Scope
    ) -> Value:
        ref = callee.ref
        everything = [*args, *kwargs.values()]
        if isinstance(ref, FuncRef):
            return self.call_function(ref, args, kwargs, node)
        if ref is PASS:
            return Value(flow=self.op(node, flow_of(everything)))
        if isinstance(ref, ClassRef):
            return self._instantiate(node, ref.node)
        if isinstance(ref, LambdaLayer):
            return self.call_value(node, ref.function, args, kwargs, scope)
        if callee.models:
            return self.model_call(node, callee, flow_of(everything))
        if isinstance(ref, Instance):
            method = self.program.find_method(ref.cls, "__call__")
            if method is not None:
                return self.call_function(FuncRef(method, self.program.module_scope, callee), args, kwargs, node)
        if callee.qual is not None:
            return self.library_call(node, callee.qual, args, kwargs, scope)
        if _opaque(callee):
            guessed = self._guess_model(node.func, callee)
            if guessed.models:
                return self.model_call(node, guessed, flow_of(everything))
        inputs = self._with_callbacks(merge_flows((callee.flow, flow_of(everything))), args, kwargs)
        return Value(flow=self.op(node, inputs))

    def _with_callbacks(self, inputs: Flow, args: list[Value], kwargs: dict[str, Value]) -> Flow:
        """An unknown call that takes functions (``tf.cond(c, lambda: a, lambda: b)``,
        ``tf.map_fn(fn, xs)``, ``tf.py_function(f, [x], ...)``) may return what they return:
        analyse them with the other arguments as their inputs."""
        everything = [*args, *kwargs.values()]
        callbacks = [v.ref for v in everything if isinstance(v.ref, FuncRef)]
        if not callbacks:
            return inputs
        data = join([v for v in everything if not isinstance(v.ref, FuncRef)]).iterate()
        results = [inputs]
        for ref in callbacks:
            spec = ref.node.args
            arity = len(spec.posonlyargs) + len(spec.args) - (1 if ref.self_value is not None else 0)
            results.append(self.call_function(ref, [data] * max(arity, 0), {}, None).flow)
        return merge_flows(results)

    def _instantiate(self, node: ast.Call, cls: ast.ClassDef) -> Value:
        if self.program.model_like(cls):
            token = self.program.fresh(node, "model", cls.name)
            return Value(models=frozenset((token,)), ref=Instance(cls, "self"))
        return Value(ref=Instance(cls, "self"))

    def model_call(self, node: ast.Call, model: Value, inputs: Flow) -> Value:
        """Calling a model or layer: its variables become an origin of the output; the
        inputs pass through it (a model is differentiable in its inputs)."""
        program = self.program
        if self.recording:
            born = LIVE
            flow = dict(inputs)
        else:
            site = self._outside_site(node)
            born = frozenset((site,))
            flow = dict(cut_flow(inputs, site))
        for origin in model.models:
            if origin in program.frozen:
                continue
            self.note_birth(origin, node)
            have = flow.get(origin)
            flow[origin] = born if have is None else merge_flows(({origin: have}, {origin: born}))[origin]
        return Value(flow=flow)

    def note_birth(self, origin: str, node: ast.AST) -> None:
        self.births.setdefault(origin, node)
        self.program.note_birth(origin, node)

    def call_function(self, ref: FuncRef, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None) -> Value:
        """A function defined in the file, analysed with these arguments."""
        fn = ref.node
        if fn in self.stack or self.depth >= MAX_DEPTH:
            return Value(flow=flow_of([*args, *kwargs.values()]))  # recursion: assume it passes values on
        key = (
            id(fn),
            ref.ident,
            self.recording,
            self.anchor_line if self.depth else (node.lineno if node is not None else None),
            tuple(a.key() for a in args),
            tuple(sorted((k, v.key()) for k, v in kwargs.items())),
        )
        found = self.memo.get(key)
        if found is not None:
            return found
        self.stack.append(fn)
        saved_anchor = self.anchor_line
        if self.depth == 0 and node is not None:
            self.anchor_line = node.lineno
        self.depth += 1
        try:
            scope = self._bind(ref, args, kwargs)
            result = self._body(fn, scope)
        finally:
            self.depth -= 1
            self.anchor_line = saved_anchor
            self.stack.pop()
        self.memo[key] = result
        return result

    def _body(self, fn: ast.AST, scope: Scope) -> Value:
        if isinstance(fn, ast.Lambda):
            return self.eval(fn.body, scope)
        self.exec_block(fn.body, scope)
        return join(scope.returns) if scope.returns else EMPTY

    def _bind(self, ref: FuncRef, args: list[Value], kwargs: dict[str, Value]) -> Scope:
        fn = ref.node
        spec = fn.args
        scope = Scope(ref.closure)
        if ref.self_value is not None:
            args = [ref.self_value, *args]
        kwargs = dict(kwargs)
        positional = [*spec.posonlyargs, *spec.args]
        for index, param in enumerate(positional):
            if index < len(args):
                value = args[index]
            elif param.arg in kwargs:
                value = kwargs.pop(param.arg)
            else:
                value = self.unknown_name(param.arg)
            scope.vars[param.arg] = value
        extra = args[len(positional) :]
        if spec.vararg is not None:
            scope.vars[spec.vararg.arg] = Value(
                flow=flow_of(extra), items=tuple(extra), element=join(extra) if extra else None, container=True
            )
        for param in spec.kwonlyargs:
            scope.vars[param.arg] = kwargs.pop(param.arg, None) or self.unknown_name(param.arg)
        if spec.kwarg is not None:
            scope.vars[spec.kwarg.arg] = Value(flow=flow_of(kwargs.values()), fields=kwargs or None, container=True)
        return scope


def _opaque(value: Value) -> bool:
    """Nothing is known about it (the result of a call into another module)."""
    return not value.flow and not value.models and value.ref is None and value.qual is None


def _not_forward(method: str) -> bool:
    return method in _NOT_FORWARD or method.startswith(_NOT_FORWARD_PREFIXES)


def _keyword(node: ast.Call, name: str) -> ast.AST | None:
    for keyword in node.keywords:
        if keyword.arg == name:
            return keyword.value
    return None


def _label(node: ast.Call) -> str:
    """A layer's ``name=`` (an identifier), else its constructor as written (which is not)."""
    name = _keyword(node, "name")
    if isinstance(name, ast.Constant) and isinstance(name.value, str) and name.value.isidentifier():
        return name.value
    return ast.unparse(node.func) + "()"


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
