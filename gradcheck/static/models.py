"""Keras models and layers: building them, calling them, and what they are made of.

Calling a model or layer whose class the file defines (every base known) runs its ``call``
in place, with ``self`` bound to the instance: its layers and weights (``self.dense``,
``self.w = self.add_weight(...)``) are origins of their own, named ``<model>.<attribute>``,
so a cut inside ``call`` (``tf.numpy_function``, an ``assign``) is found at its line and a
layer whose output ``call`` drops is seen to miss the loss. A ``Sequential`` of known layers
is called layer by layer. Any other model or layer is one opaque origin, differentiable in
its inputs. ``Program.parts`` records what each model is made of (its variables, for
``model.trainable_variables`` and ``model.variables``).
"""

from __future__ import annotations

import ast

from gradcheck.static import catalog, training
from gradcheck.static.calls import MAX_DEPTH, _label
from gradcheck.static.names import dotted
from gradcheck.static.scope import FuncRef, Instance, LambdaLayer, Scope, keyword
from gradcheck.static.values import (
    EMPTY,
    HOLDER,
    LIVE,
    UNSEEN,
    Flow,
    Value,
    cut_flow,
    flow_of,
    has_live,
    map_flows,
    merge_flows,
    real,
)

#: Methods of a Keras model that do not compute with its variables on their arguments.
_NOT_FORWARD = frozenset(
    ("summary", "count_params", "to_json", "build", "evaluate", "compute_loss", "compute_metrics", "compiled_loss")
)
_NOT_FORWARD_PREFIXES = ("get_", "set_", "save", "load", "reset", "add_", "compute_output", "make_")
_TRAIN = frozenset(("fit", "train_on_batch", "fit_generator"))
#: Methods of a model that copy values into its variables (or to a file): what they are given
#: is read once, kept nowhere, and carries no gradient (a soft target update's blend, outside
#: any tape; under a recording tape such a copy is the cut, left to the escape rules).
_WEIGHT_COPIES = frozenset(("set_weights", "load_weights", "save_weights", "save"))
#: Methods of a model that return NumPy values (the tape sees constants).
_HOST_RESULTS = frozenset(("predict", "predict_on_batch", "predict_step", "evaluate", "test_on_batch"))
#: Keras layers that hold non-trainable variables (moving statistics, adapted moments).
_STATEFUL_LAYERS = frozenset(("BatchNormalization", "SyncBatchNormalization", "Normalization"))
#: Keras 3 layers that draw random numbers hold a ``SeedGenerator`` whose state is a
#: non-trainable variable (``seed_generator_state``), made when the layer is constructed:
#: recurrent layers and cells always (their dropout masks)...
_SEEDED_LAYERS = frozenset(
    (
        *("LSTM", "GRU", "SimpleRNN", "LSTMCell", "GRUCell", "SimpleRNNCell", "ConvLSTM1D", "ConvLSTM2D"),
        *("ConvLSTM3D", "AugMix", "CutMix", "MixUp", "RandAugment"),
    )
)
#: ... dropout and noise layers when their rate (first argument or this keyword) is not 0...
_SEEDED_BY_RATE = {
    **dict.fromkeys(("Dropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D"), "rate"),
    **dict.fromkeys(("GaussianDropout", "AlphaDropout"), "rate"),
    "GaussianNoise": "stddev",
}
#: ... and attention layers given a ``dropout`` (0 by default). Random augmentation layers
#: (``RandomFlip``...) are seeded too.
_SEEDED_BY_DROPOUT = frozenset(("Attention", "AdditiveAttention", "MultiHeadAttention", "GroupedQueryAttention"))
#: Keras layers that make trainable variables when built (a dropped ``Flatten`` costs nothing).
_WEIGHTED_LAYERS = frozenset(
    (
        *("Dense", "EinsumDense", "Embedding", "LSTM", "GRU", "SimpleRNN", "LSTMCell", "GRUCell", "SimpleRNNCell"),
        *("Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose", "Convolution2D"),
        *("SeparableConv1D", "SeparableConv2D", "DepthwiseConv1D", "DepthwiseConv2D", "ConvLSTM1D", "ConvLSTM2D"),
        *("BatchNormalization", "LayerNormalization", "GroupNormalization", "PReLU", "MultiHeadAttention"),
        *("Bidirectional", "ConvLSTM3D", "LocallyConnected1D", "LocallyConnected2D"),
    )
)
#: Keras layers that make no variables: a cut behind one alone starves nothing.
_WEIGHTLESS_LAYERS = frozenset(
    (
        *("Flatten", "Reshape", "Permute", "RepeatVector", "Lambda", "Rescaling", "Resizing", "CenterCrop"),
        *("Dropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "GaussianNoise"),
        *("GaussianDropout", "AlphaDropout", "Activation", "ReLU", "LeakyReLU", "ELU", "Softmax"),
        *("MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "AveragePooling1D", "AveragePooling2D"),
        *("AveragePooling3D", "GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalMaxPooling3D"),
        *("GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalAveragePooling3D", "MaxPool2D"),
        *("Concatenate", "Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Dot"),
        *("Cropping1D", "Cropping2D", "Cropping3D", "ZeroPadding1D", "ZeroPadding2D", "ZeroPadding3D"),
        *("UpSampling1D", "UpSampling2D", "UpSampling3D", "Masking", "Identity", "UnitNormalization"),
    )
)
#: Keras layers that call the layer (or RNN cell) they are given.
_WRAPPERS = frozenset(("RNN", "Bidirectional", "TimeDistributed"))
#: Preprocessing layers that map their input to integer ids.
_ID_LAYERS = frozenset(("TextVectorization", "StringLookup", "IntegerLookup", "Hashing", "Discretization"))
#: Keras constructors whose models are built (their variables made) when constructed.
_BUILT_MODELS = frozenset(("Model", "Functional", "load_model", "clone_model"))


class Models:
    """The model-and-layer part of the interpreter (a mixin of ``Interpreter``)."""

    # --- construction ---------------------------------------------------------------

    def construct(self, node: ast.Call, qual: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
        """``keras.layers.Dense(4)``, ``keras.Sequential([...])``, ``keras.Model(i, o)``."""
        program = self.program
        token = program.fresh(node, "model", _label(node))
        if _false(keyword(node, "trainable")):
            program.frozen.add(token)
            program.stateful.setdefault(token, node)
        leaf = qual.rpartition(".")[2]
        # ``Dense(8, activation=step)``, ``Activation(step)``: the file's own function runs
        # on the layer's output whenever it is called
        activation = kwargs.get("activation") or (args[0] if leaf == "Activation" and args else None)
        if activation is not None and isinstance(activation.ref, FuncRef):
            program.activations[token] = activation.ref
        if leaf in _WEIGHTED_LAYERS or catalog.lookup(qual).kind == catalog.MODEL:
            program.weighted.add(token)
        if leaf in _WEIGHTLESS_LAYERS and qual.startswith("keras.layers."):
            program.weightless.add(token)
        if leaf == "Embedding":
            program.embeddings.add(token)
        if leaf in _ID_LAYERS:  # text/category lookups: integer ids out, no trainable variable
            program.frozen.add(token)
            program.id_layers.add(token)
        if leaf in _STATEFUL_LAYERS or (
            not program.keras2 and qual.startswith("keras.layers.") and _seeded(node, leaf)
        ):
            program.stateful.setdefault(token, node)
        inner = args[0] if args else kwargs.get("cell") or kwargs.get("layer")
        if leaf in _WRAPPERS and inner is not None and (inner.models or isinstance(inner.ref, Instance)):
            program.wrapped[token] = inner  # ``RNN(cell)``, ``Bidirectional(LSTM(8))``: calls it
        if leaf in _BUILT_MODELS or (qual.startswith("keras.applications") and leaf[:1].isupper()):
            program.eager_built.add(token)
        if leaf in ("Model", "Functional"):
            self._functional(node, token, args, kwargs)
        elif leaf == "Sequential":
            layers = args[0] if args else kwargs.get("layers")
            if layers is not None and layers.items is not None:
                program.sequential[token] = list(layers.items)
                if _has_input(node, self.program):
                    program.eager_built.add(token)
        return Value(models=frozenset((token,)))

    def instantiate(
        self, node: ast.Call, cls: ast.ClassDef, args: list[Value] | None = None, kwargs: dict[str, Value] | None = None
    ) -> Value:
        program = self.program
        if program.model_like(cls):
            token = program.fresh(node, "model", cls.name)
            program.ctor_args[token] = (list(args or ()), dict(kwargs or {}))
            program.ctor_calls.setdefault(cls, []).append(program.ctor_args[token])
            if _false(keyword(node, "trainable")):  # ``Head(backbone, trainable=False)``: Keras's own keyword
                program.frozen.add(token)
            for _attr, call, _method in program.weight_assignments(cls):
                if _false(keyword(call, "trainable")):
                    program.stateful.setdefault(token, call)
            if program.find_method(cls, "__init__") is None and program.find_method(cls, "call") is None:
                # ``class M(keras.Model)`` with methods of its own (``compute_loss``,
                # ``train_step``) built as ``M(inputs, outputs)``: a functional model
                self._functional(node, token, args or [], kwargs or {})
            return Value(models=frozenset((token,)), ref=Instance(cls, program.self_token(cls)))
        return Value(ref=Instance(cls, program.self_token(cls)))

    def _functional(self, node: ast.Call, token: str, args: list[Value], kwargs: dict[str, Value]) -> None:
        """``Model(inputs, outputs)``: what the model outputs, and the layers it is made of."""
        program = self.program
        outputs = args[1] if len(args) > 1 else kwargs.get("outputs")
        if outputs is None or self.tape is not None:
            return
        program.functional.setdefault(node, (token, outputs))
        program.outputs[token] = outputs
        for origin in outputs.flow:
            if real(origin):
                program.add_part(token, origin)

    def _register_instance(self, prefix: str, cls: ast.ClassDef, model: Value) -> None:
        """What an instance of a class of the file is made of, once it is built: the
        weights its ``__init__``/``build`` make, and the layers it builds explicitly
        (``self.extra.build(shape)``) or calls there (``self.proj(tf.zeros(shape))``)."""
        program = self.program
        key = (prefix, id(cls))
        if key in program.registered:
            return
        program.registered.add(key)
        if program.dynamic(cls):
            program.escaped.add(prefix)
        scope = Scope(program.module_scope)
        for attr, call, method in program.weight_assignments(cls):
            name = f"{prefix}.{attr}"
            if _false(keyword(call, "trainable")):
                program.stateful.setdefault(prefix, call)
                continue
            program.add_part(prefix, name)
            program.kinds.setdefault(name, "variable")
            if keyword(call, "regularizer") is not None:
                program.escaped.add(name)  # its penalty joins the loss Keras minimises
            spelled = keyword(call, "dtype")
            if spelled is not None and self.dtype_of_spelling(spelled, scope) == "int":
                program.int_origins.setdefault(name, call)
            program.own_weights.setdefault(prefix, set()).add(name)
            if getattr(method, "name", "") == "__init__":
                program.eager_built.add(name)
        built = program.explicit_builds() | program.called_in_build(cls)
        for attr in program.self_attributes(cls) & built:
            layer = self.attribute(model, attr)  # evaluated: what it is (a layer that makes variables?)
            for part in layer.models:
                program.add_part(prefix, part)

    # --- calls -----------------------------------------------------------------------

    def forward(self, node: ast.Call, model: Value, args: list[Value], kwargs: dict[str, Value]) -> Value:
        """Calling a model or layer value: ``model(x)``, ``self.dense(h)``."""
        program = self.program
        if any(m in program.embeddings for m in model.models):
            as_index: bool | None = True
        elif len(model.models) == 1 and (
            isinstance(model.ref, Instance)
            or next(iter(model.models)) in program.outputs
            or next(iter(model.models)) in program.sequential
        ):
            as_index = False  # a model the file shows: its own calls say whether it takes ids
        else:
            as_index = None
        self.note_index_use(node, [*args, *kwargs.values()], as_index)
        found = self._wrapper_forward(node, model, args, kwargs)
        if found is None:
            found = self._instance_forward(node, model, args, kwargs)
        if found is None:
            found = self._sequential_forward(node, model, args, kwargs)
        if found is None:
            found = self._functional_forward(node, model, args, kwargs)
        if found is None:
            if args and any(m in self.program.embeddings for m in model.models):
                args = [self._embedding_ids(node, args[0]), *args[1:]]
            found = self.model_call(node, model, flow_of([*args, *kwargs.values()]))
        return found

    def _wrapper_forward(
        self, node: ast.Call, model: Value, args: list[Value], kwargs: dict[str, Value]
    ) -> Value | None:
        """A Keras wrapper layer calls the layer it wraps: ``Bidirectional(layer)`` and
        ``TimeDistributed(layer)`` on the input, ``RNN(cell)`` on each step's input and the
        states the previous step returned (twice: the second time with the states the first
        returned, so that what reaches the output only through the states is seen)."""
        if len(model.models) != 1 or self.depth >= MAX_DEPTH:
            return None
        program = self.program
        (token,) = model.models
        inner = program.wrapped.get(token)
        if inner is None or token in program.frozen or token in self.building_tokens():
            return None
        self.note_birth(token, node)
        x = args[0] if args else kwargs.get("inputs", EMPTY)
        cell_call = program.find_method(inner.ref.cls, "call") if isinstance(inner.ref, Instance) else None
        takes_states = cell_call is not None and len(cell_call.args.posonlyargs) + len(cell_call.args.args) >= 3
        self.building.append((token, False))
        try:
            if not takes_states:
                return self.forward(node, inner, [x], {})
            states = Value(flow=x.flow, element=Value(flow=x.flow), container=True)
            first = self.forward(node, inner, [x, states], {})
            flow = merge_flows((x.flow, first.flow))
            states = Value(flow=flow, element=Value(flow=flow), container=True)
            second = self.forward(node, inner, [x, states], {})
            return Value(flow=merge_flows((first.flow, second.flow)))
        finally:
            self.building.pop()

    def _embedding_ids(self, node: ast.Call, ids: Value) -> Value:
        """An ``Embedding`` looks its input up as integer ids: a float input that carries a
        gradient is cast to int there (GC103), and everything before it reaches the loss only
        through that cast (the nearest cut to the loss on the ids' path)."""
        if ids.dtype == "int" or not has_live(ids.flow):
            return ids
        cut = frozenset((self.program.site(node, "GC103"),))
        return Value(flow={o: (cut if o != UNSEEN else cuts) for o, cuts in ids.flow.items()}, dtype="int")

    def _instance_forward(
        self, node: ast.Call, model: Value, args: list[Value], kwargs: dict[str, Value]
    ) -> Value | None:
        ref = model.ref
        if not isinstance(ref, Instance) or len(model.models) != 1 or self.depth >= MAX_DEPTH:
            return None
        program = self.program
        prefix = next(iter(model.models))
        if prefix in program.frozen or not program.analysable(ref.cls):
            return None
        # a Keras layer runs ``call``; a ``tf.Module`` (or any callable class) its ``__call__``
        method = program.find_method(ref.cls, "call") or program.find_method(ref.cls, "__call__")
        if method is None or method in self.stack:
            return None
        self._register_instance(prefix, ref.cls, model)
        self.note_birth(prefix, node)
        traced = next((d for d in method.decorator_list if self._is_tf_function(d)), None)
        if traced is not None:
            program.traced_calls.setdefault(prefix, method)
        was = self.recording
        self.recording = True
        self.building.append((prefix, True))
        try:
            result = self.call_function(FuncRef(method, program.module_scope, model), args, kwargs, node)
        finally:
            self.building.pop()
            self.recording = was
        result = map_flows(result, lambda flow: merge_flows((flow, {HOLDER + prefix: LIVE})))
        if traced is not None and not program.keras2:
            lazy = self._lazy_parts(prefix)
            if lazy:
                site = program.site(traced, "GC116")  # the trace engine points at the decorator
                result = map_flows(result, lambda flow: _cut_origins(flow, lazy, site))
        if not was and not self.construction:  # in __init__/build: a layer call builds a graph
            site = self._outside_site(node)
            result = map_flows(result, lambda flow: cut_flow(flow, site))
        return result

    def _lazy_parts(self, prefix: str) -> set[str]:
        """Parts of ``prefix`` whose variables are made while its ``@tf.function`` ``call``
        is traced: layers first called there and not built before (GC116)."""
        program = self.program
        own = program.own_weights.get(prefix, set())
        out = set()
        for part in program.all_parts(prefix):
            if part in own:
                continue
            if program.model_kind(part) == "variable":
                # a weight of a layer of its own: made by that layer's first call, unless
                # made in its ``__init__``
                holder = part.rpartition(".")[0]
                if part not in program.eager_built and program.lazily_built(holder, weights=True):
                    out.add(part)
            elif program.lazily_built(part):
                out.add(part)
        return out

    def _is_tf_function(self, decorator: ast.AST) -> bool:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        parts = dotted(target)
        return parts is not None and self.program.aliases.resolve(parts) == "tensorflow.function"

    def _sequential_forward(
        self, node: ast.Call, model: Value, args: list[Value], kwargs: dict[str, Value]
    ) -> Value | None:
        if len(model.models) != 1:
            return None
        program = self.program
        token = next(iter(model.models))
        layers = program.sequential.get(token)
        if layers is None or token in program.frozen or token in self.building_tokens():
            return None
        self.note_birth(token, node)
        was = self.recording
        self.recording = True
        self.building.append((token, False))
        try:
            value = args[0] if args else kwargs.get("inputs", EMPTY)
            scope = Scope(program.module_scope)
            for index, layer in enumerate(layers):
                if layer.models or isinstance(layer.ref, (LambdaLayer, FuncRef)):
                    layer = program.layer_of(token, index, layer)
                    value = self.call_value(node, layer, [value], {}, scope)
        finally:
            self.building.pop()
            self.recording = was
        if not was and not self.construction:
            site = self._outside_site(node)
            value = map_flows(value, lambda flow: cut_flow(flow, site))
        return value

    def _under_tape(self) -> bool:
        """Whether a tape this run follows is recording now."""
        return self.tape is not None and self.recording

    def _in_traced_call(self) -> bool:
        return any(prefix in self.program.traced_calls for prefix, _strict in self.building)

    def _functional_forward(
        self, node: ast.Call, model: Value, args: list[Value], kwargs: dict[str, Value]
    ) -> Value | None:
        """A functional model of this file (``keras.Model(inputs, outputs)``) computes its
        outputs as built, each from its own layers: ``net(x)[0]`` uses the first output's."""
        if len(model.models) != 1:
            return None
        (token,) = model.models
        outputs = self.program.outputs.get(token)
        if outputs is None or token in self.program.frozen:
            return None
        self.note_birth(token, node)
        inputs = flow_of([*args, *kwargs.values()])
        site = None if self.recording or self.construction else self._outside_site(node)

        written = self.with_assigned(Value(), model.models).flow if self.assigned else {}

        def through(flow: Flow) -> Flow:
            # what was written into its layers' variables or states earlier (GC113)
            flow = merge_flows((flow, inputs, written, {HOLDER + token: LIVE}))
            for origin in flow:
                if real(origin):
                    self.note_birth(origin, node)
            return cut_flow(flow, site) if site is not None else flow

        if outputs.items is None and not any(real(o) for o in outputs.flow):
            # outputs this analysis could not follow (``keras.Model(inputs, outputs)`` from a
            # function's arguments): a model it does not show, whose variables reach its output
            # (known only as possibly carrying gradient: never said to make variables)
            self.program.guessed.add(token)
            return None
        return map_flows(outputs, through)

    def building_tokens(self) -> set[str]:
        return {prefix for prefix, _strict in self.building}

    def model_call(self, node: ast.Call, model: Value, inputs: Flow) -> Value:
        """Calling a model or layer the file does not show: its variables become an origin
        of the output; the inputs pass through it (a model is differentiable in its inputs)."""
        program = self.program
        if self.recording or self.construction:
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
        if self.assigned:  # weights written with ``assign`` earlier (GC113)
            flow = dict(self.with_assigned(Value(flow=flow), model.models).flow)
        for origin in model.models:
            activation = program.activations.get(origin)
            if activation is not None:
                flow = dict(self.call_function(activation, [Value(flow=flow)], {}, node).flow)
        if model.models and model.models <= program.id_layers:
            return Value(flow=flow, dtype="int")
        return Value(flow=flow)

    def note_birth(self, origin: str, node: ast.AST) -> None:
        self.births.setdefault(origin, node)
        self.program.note_birth(origin, node)
        if not self._in_traced_call():
            self.program.eager_births.add(origin)
        for prefix, strict in self.building:
            if origin != prefix and (not strict or origin.startswith(prefix + ".")):
                self.program.add_part(prefix, origin)

    # --- methods of models ------------------------------------------------------------

    def model_method(
        self, node: ast.Call, receiver: Value, attr: str, args: list[Value], kwargs: dict[str, Value], scope: Scope
    ) -> Value | None:
        program = self.program
        if attr in _WEIGHT_COPIES and not self._under_tape() and not self._maybe_own_method(receiver, attr):
            return EMPTY
        if attr in _HOST_RESULTS and not self._maybe_own_method(receiver, attr):
            # a ``predict`` while no tape records (an acting pass that samples an action) is
            # marked "outside": ``checks.gc105`` drops it where a cut inside the tape
            # starves the same sources
            site = program.site(node, "GC105", "outside" if self.tape is None or not self.recording else "")
            flow = dict(cut_flow(flow_of([*args, *kwargs.values()]), site))
            for model in receiver.models:
                if model not in program.frozen:
                    self.note_birth(model, node)
                    flow[model] = frozenset((site,))
                    if self.tape is not None and self.recording and self._traced_step():
                        program.crashes.setdefault((site, self.tape.with_node), set()).add(
                            model
                        )  # ``predict`` in a graph raises
            return Value(flow=flow)
        if attr in ("call", "__call__"):
            return self.forward(node, receiver, args, kwargs)
        if attr in _TRAIN or attr == "compile":
            program.trained.update(receiver.models)
            if attr == "compile" and self.tape is None:
                loss = kwargs.get("loss") or (args[1] if len(args) > 1 else None)
                if loss is not None:
                    program.compiled.append((node, loss, receiver))
                for token in receiver.models:
                    program.compile_losses[token] = loss
                own = self._own_compile(receiver)
                if own is not None:  # an override keeps what it is given (``self.alpha = alpha``)
                    self.call_function(own, args, kwargs, node)
            if attr in _TRAIN and self.tape is None and node not in program.fit_nodes:
                program.fit_nodes.add(node)
                program.fits.append((node, receiver))
                self._fit(node, receiver)
            return EMPTY
        if attr == "get_layer":
            named = self._named_layer(node, receiver)
            if named is not None:
                return named
            some = frozenset(f"{m}.layers" for m in receiver.models)
            for name in some:
                program.kinds.setdefault(name, "model")
            return Value(models=some)
        if attr == "add_loss" and args and self.tape is None:
            for token in receiver.models:
                program.added_losses.setdefault(token, []).append(args[0])
        if attr == "add":  # Sequential.add: builds, computes nothing; its layers are no longer known
            stateful = [m for layer in args[:1] for m in layer.models if m in program.stateful]
            for token in receiver.models:
                program.sequential.pop(token, None)
                for part in stateful:  # but a BatchNormalization added holds non-trainable state (GC115)
                    program.add_part(token, part)
            return EMPTY
        return None

    def _own_compile(self, model: Value) -> FuncRef | None:
        """The ``compile`` a model class of the file overrides (a distiller's, given its
        losses and weights), to run as the file calls it."""
        ref = model.ref
        if not isinstance(ref, Instance) or not self.program.analysable(ref.cls):
            return None
        method = self.program.find_method(ref.cls, "compile")
        return None if method is None else FuncRef(method, self.program.module_scope, model)

    def _named_layer(self, node: ast.Call, model: Value) -> Value | None:
        """``model.get_layer("conv")``: the layer built with ``name="conv"``, when the model is
        a ``Sequential`` of this file's or its parts are known (its weights are that layer's,
        so a write into them is a write into the model's); None: some layer of the model."""
        name = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
        if not isinstance(name, str):
            return None
        program = self.program
        for token in model.models:
            wanted = f"{token}.{name}"
            for index, layer in enumerate(program.sequential.get(token) or ()):
                if layer.models or layer.ref is not None:
                    layer = program.layer_of(token, index, layer)
                    if wanted in layer.models:
                        return layer
            if wanted in program.all_parts(token):
                return Value(models=frozenset((wanted,)))
        return None

    def _fit(self, node: ast.Call, model: Value) -> None:
        """A ``fit``: the checks of what the model is now (its compiled loss, its layers)."""
        program = self.program
        make = type(self)
        for compile_node, loss, compiled in program.compiled:
            if compiled.models & model.models and compile_node not in program.fitted_compiles:
                program.fitted_compiles.add(compile_node)
                program.training_checks += training.compile_checks(make, program, compile_node, loss, compiled)
        check = training.fit_check(make, program, node, model)
        if check is not None:
            program.training_checks.append(check)

    def model_method_call(
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
            bound = Value(models=receiver.models, ref=Instance(owners[0], program.self_token(owners[0])))
            return self.call_function(FuncRef(method, program.module_scope, bound), args, kwargs, node)
        return self.model_call(node, receiver, flow_of([*args, *kwargs.values()]))

    def _maybe_own_method(self, receiver: Value, attr: str) -> bool:
        """A model only guessed from its name (a parameter ``model``) may be an instance of
        a class of this file that defines ``attr`` itself (a NumPy model's ``predict``); an
        instance of a file class that defines it (a ``tf.Module``'s own ``evaluate``) is."""
        ref = receiver.ref
        if isinstance(ref, Instance) and self.program.find_method(ref.cls, attr) is not None:
            return True
        if not receiver.models <= self.program.guessed:
            return False
        return any(self.program.find_method(cls, attr) for cls in self.program.classes.values())

    @staticmethod
    def not_forward(method: str) -> bool:
        return method in _NOT_FORWARD or method.startswith(_NOT_FORWARD_PREFIXES)


def _cut_origins(flow: Flow, origins: set[str], site) -> Flow:
    if not any(o in origins and not cuts for o, cuts in flow.items()):
        return flow
    cut = frozenset((site,))
    return {o: (cut if o in origins and not cuts else cuts) for o, cuts in flow.items()}


def _seeded(node: ast.Call, leaf: str) -> bool:
    """A Keras 3 layer that makes a ``SeedGenerator`` (a non-trainable variable) when
    constructed (a wrapper, ``Bidirectional(LSTM(8))``, holds the one of the layer it wraps,
    which is a part of it)."""
    if leaf in _SEEDED_LAYERS or (leaf.startswith("Random") and leaf[6:7].isupper()):
        return True
    if leaf in _SEEDED_BY_RATE:
        rate = node.args[0] if node.args else keyword(node, _SEEDED_BY_RATE[leaf])
        return rate is not None and not _zero(rate)
    if leaf in _SEEDED_BY_DROPOUT:
        rate = keyword(node, "dropout")
        return rate is not None and not _zero(rate)
    return False


def _zero(node: ast.AST) -> bool:
    """A rate written as 0 (no random numbers drawn, so no seed generator made)."""
    return isinstance(node, ast.Constant) and not isinstance(node.value, bool) and node.value == 0


def _false(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def _has_input(node: ast.Call, program) -> bool:
    """A ``Sequential`` given its input shape (``keras.Input``, ``input_shape=``): built at once."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.keyword) and sub.arg in ("input_shape", "input_dim", "batch_input_shape"):
            return True
        if isinstance(sub, ast.Call):
            parts = dotted(sub.func)
            qual = program.aliases.resolve(parts) if parts else None
            if qual in ("keras.Input", "keras.layers.Input", "keras.layers.InputLayer"):
                return True
    return False


__all__ = ["Models"]
