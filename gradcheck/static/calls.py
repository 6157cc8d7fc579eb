"""Calls: library functions by their catalog entry, methods of variables and tensors, and
functions and methods defined in the file (analysed in place with the caller's values).
What calling a model or a layer does is in ``models``; a tape's methods (``gradient``,
``watch``) in ``tapes``; writes into variables (``assign``, an optimizer's update) in
``writes``.
"""

from __future__ import annotations

import ast

from gradcheck.static import catalog
from gradcheck.static.custom import CustomGradient, analyse
from gradcheck.static.names import dotted
from gradcheck.static.program import NEW_VARIABLE, IndexUse
from gradcheck.static.scope import (
    DISCRETE,
    LIBRARY,
    PASS,
    PICKED,
    ClassRef,
    FuncRef,
    Instance,
    LambdaLayer,
    MetricRef,
    Scope,
    StateRef,
    TapeRef,
    from_library,
    keyword,
    opaque,
)
from gradcheck.static.tapes import Tapes
from gradcheck.static.values import (
    EMPTY,
    LIVE,
    UNSEEN,
    Flow,
    Value,
    flow_of,
    join,
    merge_flows,
    real,
)
from gradcheck.static.walk import descendants
from gradcheck.static.writes import ASSIGNS, Writes

MAX_DEPTH = 8  # nested calls analysed in place
_UNSEEN_FLOW = {UNSEEN: LIVE}
#: Calls that take integer indices: (ids of) an embedding lookup, a gather, a one-hot.
_INDEX_TAKERS = frozenset(("gather", "gather_nd", "embedding_lookup", "one_hot", "take", "take_along_axis"))
#: Distributions over integers (TensorFlow Probability): their samples carry no gradient.
_DISCRETE = frozenset(
    (
        *("Bernoulli", "Categorical", "OneHotCategorical", "Multinomial", "Binomial", "Poisson", "Geometric"),
        *("NegativeBinomial", "FiniteDiscrete", "BetaBinomial", "DirichletMultinomial", "Skellam", "PlackettLuce"),
    )
)
#: Methods of library objects that return a copy, not a computation.
_HOLDER_METHODS = frozenset(("copy", "replace", "with_name_scope", "__copy__", "__deepcopy__"))
#: ``tf.*`` calls that make a plain tensor (not a variable) from data.
_TENSOR_MAKERS = frozenset(
    (
        *("constant", "convert_to_tensor", "zeros", "ones", "fill", "eye", "linspace", "range", "cast", "identity"),
        *("normal", "uniform", "truncated_normal", "random_normal", "random_uniform", "stateless_normal"),
        *("stateless_uniform", "one_hot", "zeros_like", "ones_like", "reshape", "stack", "concat", "expand_dims"),
    )
)

#: Methods that add a value into their receiver (a list, dict, deque or set).
_MUTATORS = frozenset(("append", "extend", "insert", "appendleft", "add", "update", "setdefault"))
#: Library modules whose functions keep no reference to their arguments.
_PURE_ROOTS = ("tensorflow.", "keras.", "numpy.", "builtins.", "math.", "logging.", "tensorflow_probability.")
#: Calls that return their first argument's values with the same dtype.
_SAME_DTYPE = frozenset(
    (
        *("constant", "convert_to_tensor", "identity", "reshape", "transpose", "expand_dims", "squeeze", "gather"),
        *("array", "asarray", "ascontiguousarray", "copy", "tile", "broadcast_to", "stack", "concat", "concatenate"),
        *("abs", "negative", "reverse", "roll", "clip_by_value", "clip", "gather_nd", "boolean_mask", "pad"),
    )
)
#: NumPy calls that make a new array from a shape (and a dtype) only.
_NUMPY_BLANKS = frozenset(("zeros", "ones", "empty", "eye", "identity", "zeros_like", "ones_like", "empty_like"))
#: NumPy and TensorFlow calls that make integer values unless told otherwise.
_INTEGER_MAKERS = frozenset(("randint", "random_integers", "arange", "range", "choice", "permutation"))
_FLOAT_MAKERS = frozenset(
    (
        *("zeros", "ones", "normal", "uniform", "rand", "randn", "random", "truncated_normal", "linspace", "eye"),
        *("random_normal", "random_uniform", "glorot_uniform", "standard_normal", "one_hot", "fill", "full"),
    )
)


#: TensorFlow calls whose result is what their function returns, computed from the other
#: arguments only through it (``tf.map_fn(fn, xs)``: ``fn`` of each element).
_THROUGH_CALLBACKS = frozenset({"map_fn", "vectorized_map", "scan", "foldl", "foldr"})


class Calls(Tapes, Writes):
    """The call-handling part of the interpreter (a mixin of ``Interpreter``); the tape's own
    methods are in ``tapes``, writes into variables in ``writes``."""

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
        for kw in node.keywords:
            value = self.eval(kw.value, scope)
            name = kw.arg or "**"
            kwargs[name] = join((kwargs[name], value)) if name in kwargs else value
        return args, kwargs

    def _call(self, node: ast.Call, scope: Scope) -> Value:
        discarded = node is self.discarded
        func = node.func
        base_init = self._super_init(func, scope)
        if base_init is not None:
            args, kwargs = self._args(node, scope)
            return self.call_function(base_init, args, kwargs, node)
        qual = self.qualname(func, scope)
        if qual is not None:
            args, kwargs = self._args(node, scope)
            if discarded and catalog.lookup(qual) is None and not qual.startswith(_PURE_ROOTS):
                self.escape([*args, *kwargs.values()])  # ``some_module.register(h)``
            return self.library_call(node, qual, args, kwargs, scope)
        if isinstance(func, ast.Attribute):
            parts = dotted(func)
            bound = scope.lookup(".".join(parts)) if parts is not None else None
            if bound is None:
                receiver = self.eval(func.value, scope)
                args, kwargs = self._args(node, scope)
                return self.method_call(node, receiver, func.attr, args, kwargs, scope, discarded)
            callee = bound
        else:
            callee = self.eval(func, scope)
        args, kwargs = self._args(node, scope)
        custom = callee.ref is PASS or isinstance(callee.ref, CustomGradient)
        if discarded and not isinstance(callee.ref, FuncRef) and not custom and not callee.models:
            self.escape([*args, *kwargs.values()])
        return self.call_value(node, callee, args, kwargs, scope)

    def _super_init(self, func: ast.expr, scope: Scope) -> FuncRef | None:
        """``super().__init__(...)`` in a constructor whose class's base is a class of the file:
        that base's ``__init__``, bound to the same ``self`` (what it sets is the instance's)."""
        if not (
            isinstance(func, ast.Attribute)
            and func.attr == "__init__"
            and isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name)
            and func.value.func.id == "super"
        ):
            return None
        here = self.stack[-1] if self.stack else self.region
        cls = self.program.owner.get(here)
        me = scope.lookup("self")
        if not isinstance(cls, ast.ClassDef) or getattr(here, "name", "") != "__init__" or me is None:
            return None
        for base in cls.bases:
            if isinstance(base, ast.Name) and base.id in self.program.classes:
                init = self.program.find_method(self.program.classes[base.id], "__init__")
                if init is not None:
                    return FuncRef(init, self.program.module_scope, me)
        return None

    def escape(self, values: list[Value]) -> None:
        """These values go where the analysis does not follow them (an attribute, an unknown
        call kept for its side effect): their origins may reach a loss unseen (no GC108)."""
        for value in values:
            if value.flow:
                self.program.escaped.update(value.flow)
            for part in value.items or ():
                if part.flow:
                    self.program.escaped.update(part.flow)

    # --- library functions ------------------------------------------------------------

    def library_call(
        self, node: ast.Call, qual: str, args: list[Value], kwargs: dict[str, Value], scope: Scope
    ) -> Value:
        api = catalog.lookup(qual)
        inputs = flow_of([*args, *kwargs.values()])
        leaf = qual.rpartition(".")[2]
        if api is None and qual == "tensorflow.image.resize" and _area(node):
            api = catalog.lookup("tensorflow.raw_ops.ResizeArea")  # the op ``method="area"`` runs
        tensor = _makes_tensor(qual, leaf, args)
        if leaf in _NUMPY_BLANKS and qual == f"numpy.{leaf}":
            # ``np.zeros((n, dim))``: a new array whose arguments are a shape and a dtype; it
            # computes with none of their values (a buffer sized by a constructor's parameter
            # is no unseen computation)
            return Value(dtype=self._result_dtype(node, qual, leaf, args, scope))
        if leaf in _INDEX_TAKERS and self.tape is not None:
            position = 0 if leaf == "one_hot" else 1
            indices = args[position] if len(args) > position else kwargs.get("indices") or kwargs.get("ids")
            if indices is not None:
                self.note_index_use(node, [indices])
        if (
            api is None
            and leaf in ASSIGNS  # ``tf.compat.v1`` writers: the method forms, spelled as calls
            and qual in (f"tensorflow.{leaf}", f"tensorflow.compat.v1.{leaf}")
            and args
        ):
            # the value written reaches later reads of the variable only through the write (GC113)
            self._assign_variable(node, args[0], [*args[1:], *kwargs.values()])
            return self.with_assigned(Value(flow=args[0].flow, ref=args[0].ref))
        if api is None and leaf == "while_loop" and _is_false(keyword(node, "back_prop")) and self.traced_now():
            # ``back_prop=False`` is ignored eagerly, but in a traced function every output of
            # the loop is a ``stop_gradient`` (TensorFlow's ``while_v2``): GC104 at the loop
            flow = self.op(node, self._with_callbacks(inputs, args, kwargs))
            return Value(flow=self.cut(node, flow, "GC104"))
        if api is None:
            # What a framework returns computes only from its arguments; what another module
            # of the user's returns is not known (a model factory, an object with state).
            library = LIBRARY if qual.startswith(_PURE_ROOTS) else None
            if _constructor(leaf) or _alternative_constructor(qual, leaf):
                # ``tfd.Normal(loc=w)``, ``tf.linalg.LinearOperatorDiag(d)``: an object that keeps
                # its arguments and computes later, when its methods are called.
                if library is not None and leaf in _DISCRETE and "distributions" in qual:
                    library = DISCRETE
                return Value(flow=self._with_callbacks(inputs, args, kwargs, deferred=True), ref=library)
            dtype = self._result_dtype(node, qual, leaf, args, scope)
            through = leaf in _THROUGH_CALLBACKS and qual.startswith("tensorflow.")
            flow = self.op(node, self._with_callbacks(inputs, args, kwargs, through=through))
            return Value(flow=flow, dtype=dtype, tensor=tensor, ref=None if tensor else library)
        kind = api.kind
        if kind == catalog.CUT and api.code == "GC106":
            # ``tf.numpy_function(f, inp, Tout)``: ``f`` runs as host code, whatever TensorFlow
            # it calls (a model, ``.numpy()``) is out of the graph: what it returns reaches the
            # loss only through this call
            self.hosted += 1  # ``f`` runs eagerly, even when called from a graph
            try:
                inner = self._with_callbacks(inputs, args, kwargs, deferred=True)
            finally:
                self.hosted -= 1
            if not self.recording:
                return Value(flow=self._outside(node, inner), tensor=tensor)
            cut = frozenset((self.program.site(node, api.code),))
            return Value(flow={o: (cut if o != UNSEEN else c) for o, c in inner.items()}, tensor=tensor)
        if kind == catalog.CUT:
            dtype = "int" if api.code in ("GC101", "GC103") else self._result_dtype(node, qual, leaf, args, scope)
            # a host value (``np.random.default_rng(0)``): its methods compute on the host,
            # from it alone (``rng.integers(...)`` is data, nothing unseen)
            host = LIBRARY if api.code == "GC105" else None
            return Value(flow=self.cut(node, inputs, api.code, api.op), dtype=dtype, tensor=tensor, ref=host)
        if kind == catalog.CAST:
            dtype = self._dtype_argument(node, scope, position=1, names=("dtype", "DstT"))
            if dtype == "int" or qual.endswith(("to_int32", "to_int64")):
                return Value(flow=self.cut(node, inputs, api.code), dtype="int", tensor=tensor)
            return Value(flow=self.op(node, inputs), dtype=dtype, tensor=tensor)
        if kind == catalog.WHERE:
            branches = len(node.args) > 1 or any(k.arg in ("x", "y", "x1", "x2") for k in node.keywords)
            if not branches:
                return Value(flow=self.cut(node, inputs, api.code), dtype="int", tensor=tensor)
            return Value(flow=self.op(node, inputs), tensor=tensor)
        if kind == catalog.TOP_K:
            values = Value(flow=self.op(node, inputs), tensor=tensor)
            indices = Value(flow=self.cut(node, inputs, api.code), dtype="int", tensor=tensor)
            return Value(flow=values.flow, items=(values, indices), fields={"values": values, "indices": indices})
        if kind == catalog.NO_FLOW:
            if leaf in ("zeros", "ones", "eye", "range", "arange", "zeros_like", "ones_like"):
                dtype = self._result_dtype(node, qual, leaf, args, scope)
                return Value(dtype=dtype, tensor=tensor)
            return EMPTY
        if kind in (catalog.MODEL, catalog.LAYER):
            return self.construct(node, qual, args, kwargs)
        if kind == catalog.LAMBDA:
            function = args[0] if args else kwargs.get("function", EMPTY)
            return Value(ref=LambdaLayer(function))
        if kind == catalog.VARIABLE:
            initial = args[0] if args else kwargs.get("initial_value", EMPTY)
            dtype = self._dtype_argument(node, scope, position=None, names=("dtype",)) or initial.dtype
            return self.new_variable(node, dtype, _is_false(keyword(node, "trainable")))
        if kind == catalog.TAPE:
            return Value(ref=TapeRef(None))
        if kind == catalog.GRADIENTS:
            target = args[0] if args else kwargs.get("ys", EMPTY)
            sources = args[1] if len(args) > 1 else kwargs.get("xs", EMPTY)
            self._record(node, TapeRef(None), target, sources, None)
            return Value(flow=flow_of((target, sources)))
        if kind == catalog.CUSTOM_GRADIENT:
            function = args[0].ref if args else None  # ``tf.custom_gradient(f)``
            if not isinstance(function, FuncRef):
                return Value(ref=PASS)
            return Value(ref=custom_gradient(function.node, function.closure))
        if kind == catalog.METRIC:
            return Value(ref=MetricRef(self.program.fresh(node, "variable", _label(node)), api.code))
        if kind == catalog.WRAPPER:
            function = args[0] if args else EMPTY
            if isinstance(function.ref, FuncRef) and qual == "tensorflow.function":
                return Value(ref=FuncRef(function.ref.node, function.ref.closure, function.ref.self_value, node))
            return function
        if kind == catalog.PLUMBING:
            return self._plumbing(leaf, args, kwargs)
        return Value(flow=self.op(node, inputs), tensor=tensor)

    def note_index_use(self, node: ast.AST, values: list[Value], as_index: bool | None = True) -> None:
        """Integer values fed to the computation while the tape records: GC114 for such a
        source points at the user's call that feeds it (at the level of the tape: the model
        call, not a line inside the model), preferring a use as indices (an embedding's ids,
        ``tf.gather``'s indices). ``as_index``: False for a use as data, None when unknown
        (a model the file does not show)."""
        if self.tape is None or not self.recording:
            return
        uses = self.program.index_uses
        at = self.anchor_node if self.depth and self.anchor_node is not None else node
        for value in values:
            if value.dtype != "int":
                continue
            keys = [id(value), *(o for o in value.flow if o != UNSEEN)]
            for key in keys:
                use = uses.get(key)
                if use is None:
                    uses[key] = IndexUse(value, at, at if as_index else None, as_index)
                elif as_index and use.index is None:
                    use.index, use.as_index = at, True

    def new_variable(self, node: ast.Call, dtype: str | None, frozen: bool) -> Value:
        """A new variable: an origin of its own (a gradient source), or, when it is not
        trainable, a state that assignments write into (GC113)."""
        program = self.program
        token = program.fresh(node, "variable", _label(node))
        if frozen:
            return Value(ref=StateRef(token), dtype=dtype)
        if dtype == "int":
            program.int_origins.setdefault(token, node)
        return Value(flow={token: LIVE}, ref=NEW_VARIABLE, dtype=dtype)

    def _dtype_argument(
        self, node: ast.Call, scope: Scope, position: int | None, names: tuple[str, ...] = ("dtype",)
    ) -> str | None:
        """``"int"`` or ``"float"`` for the dtype a call spells (``dtype=tf.int32``, ``"float32"``)."""
        spelled = None
        if position is not None and len(node.args) > position:
            spelled = node.args[position]
        for name in names:
            spelled = spelled or keyword(node, name)
        if spelled is None:
            return None
        return self.dtype_of_spelling(spelled, scope)

    def dtype_of_spelling(self, spelled: ast.AST, scope: Scope) -> str | None:
        if isinstance(spelled, ast.Constant) and isinstance(spelled.value, str):
            text = spelled.value
        else:
            text = self.qualname(spelled, scope)
            if text is None:
                return None
        leaf = text.rpartition(".")[2]
        if catalog.is_integer_dtype(leaf):
            return "int"
        if leaf.startswith(("float", "bfloat", "half", "double", "complex")) or leaf == "floatx":
            return "float"
        return None

    def _result_dtype(self, node: ast.Call, qual: str, leaf: str, args: list[Value], scope: Scope) -> str | None:
        explicit = self._dtype_argument(node, scope, position=None)
        if explicit is not None:
            return explicit
        module = qual.rpartition(".")[0]
        numpy = module == "numpy" or module.startswith("numpy.")
        if leaf in ("zeros", "ones", "empty", "full") and numpy and len(node.args) > 1:
            return self.dtype_of_spelling(node.args[1], scope)
        if leaf in _INTEGER_MAKERS:
            floats = any(isinstance(a, ast.Constant) and isinstance(a.value, float) for a in node.args)
            if leaf == "choice" or leaf == "permutation":
                return "int" if node.args and isinstance(node.args[0], ast.Constant) else None
            return "float" if floats or any(a.dtype == "float" for a in args) else "int"
        if leaf in _FLOAT_MAKERS:
            return "float"
        if leaf in _SAME_DTYPE and node.args:
            first = args[0] if args else EMPTY
            return first.dtype or _literal_dtype(node.args[0])
        return None

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
        if name == "filter" and len(args) == 2:
            # ``filter(lambda v: ..., model.trainable_variables)``: which it keeps is run time's
            kept = args[1]
            return Value(flow=kept.flow, models=kept.models, element=kept.iterate(), container=True, ref=PICKED)
        source = args[0]
        return Value(
            flow=source.flow,
            models=source.models,
            items=source.items if name in ("list", "tuple") else None,
            element=source.iterate(),
            container=True,
            ref=PICKED if source.ref is PICKED else None,  # ``list(filter(...))``, ``tuple([... if ...])``
        )

    # --- methods ------------------------------------------------------------------------

    def method_call(
        self,
        node: ast.Call,
        receiver: Value,
        attr: str,
        args: list[Value],
        kwargs: dict[str, Value],
        scope: Scope,
        discarded: bool = False,
    ) -> Value:
        ref = receiver.ref
        everything = [*args, *kwargs.values()]
        if isinstance(ref, TapeRef):
            return self._tape_method(node, ref, attr, args, kwargs, scope)
        if receiver.models:
            found = self.model_method(node, receiver, attr, args, kwargs, scope)
            if found is not None:
                return found
        if attr in _MUTATORS and everything:
            self._add_into(node.func.value, join(everything), scope)
            return EMPTY
        if attr in ("numpy", "__array__", "item", "tolist") and not args:
            return Value(flow=self.cut(node, receiver.flow, "GC105"), dtype=receiver.dtype)
        if attr in ("add_weight", "add_variable"):
            dtype = self._dtype_argument(node, scope, position=None)
            made = self.new_variable(node, dtype, _is_false(keyword(node, "trainable")))
            if discarded and receiver.models and receiver.ref is None and made.flow and self.tape is None:
                # ``conv.add_weight(...)`` on a Keras layer, its handle dropped: the layer
                # tracks it, its own ``call`` never reads it
                for layer in receiver.models:
                    for token in made.flow:
                        self.program.added_weights.setdefault(layer, {})[token] = node
            return made
        if attr == "apply_gradients" and not receiver.models:
            self.optimizer_update(node, receiver, scope)
        if attr in ASSIGNS:
            self._assign_variable(node, receiver, everything)
            if _is_false(keyword(node, "read_value")):
                return EMPTY
            # ``v.assign(x)`` returns the variable as written: a read of it, which holds what
            # was written but carries no gradient to it (``y = buffer.assign(h) * 1.0``)
            return self.with_assigned(Value(flow=receiver.flow, ref=receiver.ref, dtype=receiver.dtype))
        if isinstance(ref, MetricRef):
            return self._metric(node, receiver, attr, everything)
        if attr == "minimize" and isinstance(kwargs.get("tape", EMPTY).ref, TapeRef):
            target = args[0] if args else kwargs.get("loss", EMPTY)
            sources = args[1] if len(args) > 1 else kwargs.get("var_list", EMPTY)
            self._record(node, kwargs["tape"].ref, target, sources, None)
            return EMPTY
        if attr == "astype" and args:
            dtype = self.dtype_of_spelling(node.args[0], scope) if node.args else None
            return Value(flow=receiver.flow, dtype=dtype)
        if attr == "sample" and ref is DISCRETE:
            return Value(flow=self.cut(node, receiver.flow, "GC107"), dtype="int")
        if attr in _HOLDER_METHODS and from_library(ref):
            return Value(flow=merge_flows((receiver.flow, flow_of(everything))), ref=LIBRARY)
        callee = self.attribute(receiver, attr)
        if callee.ref is not None or callee.models:
            if discarded and not isinstance(callee.ref, FuncRef) and not callee.models and not from_library(ref):
                self.escape(everything)  # a method of the user's object (a library's keeps nothing for later)
            return self.call_value(node, callee, args, kwargs, scope)
        if receiver.models and receiver.ref is None and args and not self.not_forward(attr):
            return self.model_method_call(node, receiver, attr, args, kwargs)
        if discarded and not from_library(ref):
            self.escape([receiver, *everything])  # ``self.add_loss(h)``, ``buffer.store(h)``
        # An unknown method: of a tensor (``x.reshape``), a loss object, a TensorArray...
        inputs = self._with_callbacks(merge_flows((receiver.flow, flow_of(everything))), args, kwargs)
        if opaque(receiver) or self._unknown_member(receiver, attr):
            # An object of unknown origin: its method may read anything, and may only keep
            # its arguments (a constructor) rather than compute with them.
            return Value(flow=merge_flows((inputs, _UNSEEN_FLOW)))
        return Value(flow=self.op(node, inputs), tensor=receiver.tensor, ref=LIBRARY if from_library(ref) else None)

    def _unknown_member(self, receiver: Value, attr: str) -> bool:
        """``self.probe(x)`` where ``self.probe = probe`` holds what a caller passed in (a
        model, a layer): calling it may read variables this analysis does not see."""
        if not isinstance(receiver.ref, Instance):
            return False
        found = self.instance_attribute(receiver, receiver.ref, attr)
        return found is not None and (opaque(found) or UNSEEN in found.flow)

    # --- functions and callables -------------------------------------------------------

    def call_value(
        self, node: ast.Call, callee: Value, args: list[Value], kwargs: dict[str, Value], scope: Scope
    ) -> Value:
        ref = callee.ref
        everything = [*args, *kwargs.values()]
        if isinstance(ref, FuncRef):
            return self.call_function(ref, args, kwargs, node)
        if ref is PASS:
            return Value(flow=self.op(node, flow_of(everything)))
        if isinstance(ref, CustomGradient):
            return self._custom_gradient_call(node, ref, args, kwargs)
        if isinstance(ref, MetricRef):
            return self._metric(node, callee, "__call__", everything)
        if isinstance(ref, ClassRef):
            self.escape(everything)  # its ``__init__`` keeps them where reads do not find them
            return self.instantiate(node, ref.node, args, kwargs)
        if isinstance(ref, LambdaLayer):
            return self.call_value(node, ref.function, args, kwargs, scope)
        if callee.models:
            return self.forward(node, callee, args, kwargs)
        if isinstance(ref, Instance):
            method = self.program.find_method(ref.cls, "__call__")
            if method is not None:
                return self.call_function(FuncRef(method, self.program.module_scope, callee), args, kwargs, node)
        if callee.qual is not None:
            return self.library_call(node, callee.qual, args, kwargs, scope)
        inputs = self._with_callbacks(merge_flows((callee.flow, flow_of(everything))), args, kwargs)
        if opaque(callee):
            guessed = self._guess_model(node.func, callee)
            if guessed.models:
                return self.forward(node, guessed, args, kwargs)
            # A function of unknown origin (a parameter, another module's): it may compute with
            # anything it closes over, or only keep its arguments (a class).
            return Value(flow=merge_flows((inputs, _UNSEEN_FLOW)))
        return Value(flow=self.op(node, inputs), ref=LIBRARY if from_library(ref) else None)

    def _custom_gradient_call(
        self, node: ast.Call, ref: CustomGradient, args: list[Value], kwargs: dict[str, Value]
    ) -> Value:
        """A ``tf.custom_gradient`` function: its result depends on its inputs, and on what
        its forward function reads from the scope it closes over (a layer's kernel, whose
        gradient the gradient function returns through ``variables``). When its gradient
        function never reads the upstream gradient, its inputs flow back through a wrong
        gradient (GC301, marked on the result)."""
        flow = flow_of([*args, *kwargs.values()])
        captured = self._captured_by_forward(node, ref, args, kwargs, flow)
        live = {o for o, cuts in flow.items() if not cuts and real(o)}
        if ref.mark and self.recording and live:
            self.program.wrong_gradients.setdefault(ref.mark, (ref, set()))[1].update(live)
            flow = merge_flows((flow, {ref.mark: LIVE}))
        return Value(flow=self.op(node, merge_flows((flow, captured))))

    def _captured_by_forward(
        self, node: ast.Call, ref: CustomGradient, args: list[Value], kwargs: dict[str, Value], inputs: Flow
    ) -> Flow:
        """The origins the forward function of a ``tf.custom_gradient`` reads other than
        through its inputs (a closed-over variable, ``self.kernel``). The user defines their
        gradient, so a cut inside the forward function does not cut them (its rounding is a
        straight-through estimator); a cut before (a ``stop_gradient`` on what it captures)
        does, and so does a cut on every path to the inputs, which these never touch."""
        fn = ref.node
        if ref.closure is None:
            return {}
        result = self.call_function(FuncRef(fn, ref.closure), args, kwargs, node)
        if result.items is not None and len(result.items) == 2:
            result = result.items[0]  # ``return y, grad``
        first, last = fn.lineno, getattr(fn, "end_lineno", fn.lineno) or fn.lineno
        captured: dict[str, frozenset] = {}
        for origin, cuts in result.flow.items():
            if origin in inputs:
                continue
            inside = any(first <= site.line <= last for site in cuts)
            captured[origin] = LIVE if inside else cuts
        return captured

    def _with_callbacks(
        self, inputs: Flow, args: list[Value], kwargs: dict[str, Value], deferred: bool = False, through: bool = False
    ) -> Flow:
        """An unknown call that takes functions (``tf.cond(c, lambda: a, lambda: b)``,
        ``tf.map_fn(fn, xs)``, ``tf.py_function(f, [x], ...)``) may return what they return:
        analyse them with the other arguments as their inputs. ``deferred``: the object
        made keeps them to call later, when it is used (as if recorded then). ``through``:
        the call returns only what its functions return (``_THROUGH_CALLBACKS``), so a cut
        inside them is not bypassed by the arguments themselves."""
        everything = [*args, *kwargs.values()]
        callbacks = [v.ref for v in everything if isinstance(v.ref, FuncRef)]
        if not callbacks:
            return inputs
        data = join([v for v in everything if not isinstance(v.ref, FuncRef)]).iterate()
        results = [] if through else [inputs]
        saved = self.recording
        if deferred:
            self.recording = True
        try:
            for ref in callbacks:
                spec = ref.node.args
                arity = len(spec.posonlyargs) + len(spec.args) - (1 if ref.self_value is not None else 0)
                results.append(self.call_function(ref, [data] * max(arity, 0), {}, None).flow)
        finally:
            self.recording = saved
        return merge_flows(results)

    def call_function(self, ref: FuncRef, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None) -> Value:
        """A function defined in the file, analysed with these arguments."""
        fn = ref.node
        if fn in self.stack or self.depth >= MAX_DEPTH or stub(fn):
            # Recursion, or too deep to follow: assume it passes its arguments on, and may
            # compute with what this analysis did not see. So for a stub (a base class's
            # ``def contrastive_loss(...): pass``): what runs is an override, maybe one
            # written in another module.
            return Value(flow=merge_flows((flow_of([*args, *kwargs.values()]), {UNSEEN: LIVE})))
        key = (
            id(fn),
            ref.ident,
            self.recording,
            self.hosted > 0,
            self.anchor_line if self.depth else (node.lineno if node is not None else None),
            tuple(a.key() for a in args),
            tuple(sorted((k, v.key()) for k, v in kwargs.items())),
        )
        found = self.memo.get(key)
        if found is not None:
            return found
        self.stack.append(fn)
        self.call_lines.append(node.lineno if node is not None else 0)
        self.call_statements.append(self.statement)
        saved_anchor, saved_node, saved_statement = self.anchor_line, self.anchor_node, self.anchor_statement
        if self.depth == 0 and node is not None:
            self.anchor_line, self.anchor_node, self.anchor_statement = node.lineno, node, self.statement
        self.depth += 1
        try:
            scope = self._bind(ref, args, kwargs)
            if not isinstance(fn, ast.Lambda):
                passed = self.program.param_values.setdefault(fn, {})
                for name, value in scope.vars.items():
                    passed.setdefault(name, []).append(value)
            result = self._body(fn, scope)
        finally:
            self.depth -= 1
            self.anchor_line, self.anchor_node, self.anchor_statement = saved_anchor, saved_node, saved_statement
            self.stack.pop()
            self.call_lines.pop()
            self.call_statements.pop()
        self.memo[key] = result
        return result

    def traced_now(self) -> bool:
        """Whether the code being analysed runs in a ``tf.function`` of the file's (decorated
        with it), as the function under study or one that called down to here."""
        scope = self.program.module_scope
        return any(self.tf_function_decorator(fn, scope) is not None for fn in [self.region, *self.stack])

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
                if not value.models and param.arg in self._model_params(fn):
                    self.program.kinds.setdefault(param.arg, "model")
                    self.program.guessed.add(param.arg)
                    value = Value(models=frozenset((param.arg,)))
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

    def _model_params(self, fn: ast.AST) -> frozenset[str]:
        """Parameters the function both calls and asks for its trainable variables
        (``def step(f, ...): out = f(x) ... f.trainable_variables``): a model passed in,
        whatever its name."""
        found = self.program.model_params.get(fn)
        if found is None:
            spec = fn.args
            params = {p.arg for p in (*spec.posonlyargs, *spec.args, *spec.kwonlyargs)}
            called: set[str] = set()
            asked: set[str] = set()
            for node in descendants(fn):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                    called.add(node.func.id)
                elif isinstance(node, ast.Attribute) and node.attr in _TRAINABLE and isinstance(node.value, ast.Name):
                    asked.add(node.value.id)
            found = self.program.model_params[fn] = frozenset(params & called & asked)
        return found


#: What only a model or layer has: the variables a step differentiates for.
_TRAINABLE = frozenset(("trainable_variables", "trainable_weights"))


def stub(fn: ast.AST) -> bool:
    """A function with no body of its own (``pass``, ``...``, a docstring, ``raise
    NotImplementedError``) or marked ``@abstractmethod``: a placeholder an override replaces
    when the program runs (called as it is, it returns None, and training could not run)."""
    if isinstance(fn, ast.Lambda):
        return False
    if any(dotted(d) and dotted(d)[-1] == "abstractmethod" for d in fn.decorator_list):
        return True
    for stmt in fn.body:
        if isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
            continue
        if isinstance(stmt, ast.Raise) and stmt.exc is not None:
            exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
            if isinstance(exc, ast.Name) and exc.id == "NotImplementedError":
                continue
        return False
    return True


def custom_gradient(fn: ast.AST, closure: object = None) -> object:
    """What a ``tf.custom_gradient`` function is: differentiable (``PASS`` when it is no
    function of the file's), through what it reads too (``closure``: the scope it is
    defined in); its ``ignores_upstream`` names a gradient function that visibly ignores
    the upstream gradient."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return PASS
    return analyse(fn, closure)


def _area(node: ast.Call) -> bool:
    """``tf.image.resize(x, size, method="area")`` (or ``ResizeMethod.AREA``)."""
    method = keyword(node, "method") or (node.args[2] if len(node.args) > 2 else None)
    if isinstance(method, ast.Constant):
        return method.value == "area"
    return isinstance(method, ast.Attribute) and method.attr == "AREA"


def _makes_tensor(qual: str, leaf: str, args: list[Value]) -> bool:
    """Whether a library call returns a plain tensor: a ``tf.*`` maker (``tf.constant``), or
    a ``tf.*`` op on plain tensors."""
    if not qual.startswith(("tensorflow.", "keras.ops")) or qual.startswith("tensorflow.nest"):
        return False
    return leaf in _TENSOR_MAKERS or (bool(args) and all(a.tensor for a in args[:1]))


def _constructor(leaf: str) -> bool:
    """``Normal``, ``LinearOperatorDiag``: a class (by the naming convention), not a function."""
    return leaf[:1].isupper() and any(c.islower() for c in leaf)


def _alternative_constructor(qual: str, leaf: str) -> bool:
    """``tfd.Beta.experimental_from_mean_variance(m, v)``, ``Normal.from_params(...)``: a
    class's named constructor, whose object keeps its arguments as the class's does."""
    parent = qual.rpartition(".")[0].rpartition(".")[2]
    return _constructor(parent) and leaf.startswith(("from_", "experimental_from_"))


def _is_false(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def _literal_dtype(node: ast.AST) -> str | None:
    """``3`` or ``[1, 2]`` -> ``"int"``; ``2.0`` -> ``"float"``."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (bool, int)):
            return "int"
        if isinstance(node.value, float):
            return "float"
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _literal_dtype(node.operand)
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        kinds = {_literal_dtype(e) for e in node.elts[:8]}  # a long literal: its first elements say
        if kinds == {"int"}:
            return "int"
        if "float" in kinds and None not in kinds:
            return "float"
    return None


def _label(node: ast.Call) -> str:
    """A layer's ``name=`` (an identifier), else its constructor as written (which is not)."""
    name = keyword(node, "name")
    if isinstance(name, ast.Constant) and isinstance(name.value, str) and name.value.isidentifier():
        return name.value
    return ast.unparse(node.func) + "()"


__all__ = ["MAX_DEPTH", "Calls", "custom_gradient"]
