"""Name resolution: what a name or an attribute refers to, from the scopes, the file's
imports and its classes (``self.<attr>`` set in a method), and what a name says when the
file does not bind it (``model``, ``tape``).
"""

from __future__ import annotations

import ast
import re
from types import SimpleNamespace

from gradcheck.static import catalog
from gradcheck.static.names import canonical, dotted
from gradcheck.static.scope import (
    LIBRARY,
    ClassRef,
    FuncRef,
    Instance,
    Scope,
    TapeRef,
    from_library,
    model_name,
    opaque,
    tape_name,
)
from gradcheck.static.values import EMPTY, LIVE, UNSEEN, Value, join, real

#: Attributes that describe a tensor rather than compute from its values.
_METADATA = frozenset(("shape", "dtype", "ndim", "name", "device", "rank", "graph", "op"))
#: Attributes of a model that read its variables.
MODEL_VARIABLES = frozenset(
    ("trainable_variables", "trainable_weights", "variables", "weights", "non_trainable_variables")
)
#: A layer's attributes that are its variables (sources such as ``layer.kernel``).
_LAYER_WEIGHTS = frozenset(("kernel", "bias", "embeddings", "recurrent_kernel", "gamma", "beta"))


_UNSEEN_VALUE = Value(flow={UNSEEN: LIVE})
#: Methods that run once, when a layer is made or built: their whole body is followed.
_CONSTRUCTORS = frozenset(("__init__", "build"))


class Resolver:
    """The name-resolution part of the interpreter (a mixin of ``Interpreter``)."""

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
            return self.with_assigned(value) if self.assigned else value
        qual = self.qualname(node, scope)
        if qual is not None:
            return Value(qual=qual)
        return self.unknown_name(node.id)

    def unknown_name(self, name: str) -> Value:
        """A name the file does not bind here (a parameter, a global of another module)."""
        if tape_name(name):
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
                return self.with_assigned(bound) if self.assigned else bound
            qual = self.qualname(node, scope)
            if qual is not None:
                return Value(qual=qual)
        base = self.eval(node.value, scope)
        if node.attr in MODEL_VARIABLES and opaque(base):
            base = self._guess_model(node.value, base)
        found = self.attribute(base, node.attr)
        return self.with_assigned(found) if self.assigned else found

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
        if isinstance(ref, ClassRef) and attr == "__init__":
            # ``Base.__init__(self, generator, ...)`` in a subclass's constructor: run as written
            init = self.program.find_method(ref.node, attr)
            if init is not None:
                return Value(ref=FuncRef(init, self.program.module_scope))
        if base.models:
            if attr == "layers":
                return self._layers_of(base)
            if attr in MODEL_VARIABLES:
                return Value(flow=dict.fromkeys(base.models, LIVE), models=base.models, container=True)
            if attr in _LAYER_WEIGHTS:
                return Value(flow={f"{m}.{attr}": LIVE for m in base.models})
            if attr == "states":  # a stateful RNN's state variables, read by its next call
                held = Value(flow={f"{m}.states": LIVE for m in base.models})
                return Value(flow=held.flow, element=held, container=True)
            if attr == "optimizer":
                return Value(ref=LIBRARY)  # what ``compile`` was given: a Keras optimizer, keeps nothing
            return EMPTY
        if base.qual is not None:
            return Value(qual=f"{base.qual}.{attr}")
        if isinstance(ref, TapeRef):
            return EMPTY
        return Value(flow=base.flow, ref=LIBRARY if from_library(ref) else None)

    def _layers_of(self, model: Value) -> Value:
        """``model.layers``: a ``Sequential``'s own layers, named as its calls name them; of
        another model, some layer of it (calling one is not calling the whole model)."""
        program = self.program
        flow = dict.fromkeys(model.models, LIVE)
        if len(model.models) == 1:
            (token,) = model.models
            layers = program.sequential.get(token)
            if layers is not None:
                items = tuple(
                    program.layer_of(token, index, layer)
                    for index, layer in enumerate(layers)
                    if layer.models or layer.ref is not None
                )
                return Value(flow=flow, items=items, element=join(items) if items else None, container=True)
        some = frozenset(f"{m}.layers" for m in model.models)
        for name in some:
            program.kinds.setdefault(name, "model")
        return Value(flow=flow, element=Value(models=some), container=True)

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
        model = program.model_like(instance.cls)
        found_values = []
        ran: set[int] = set()
        for value, method in values:
            if getattr(method, "name", "") in _CONSTRUCTORS:
                if id(method) not in ran:
                    ran.add(id(method))
                    written = self._method_writes(method, model, base, prefix).get(attr, EMPTY)
                    if method.name == "__init__" and _unknown_parameter(value, method):
                        # ``self.G = generator``, a parameter: what the one subclass whose
                        # constructor calls this one passes (``GAN.__init__(self, g, d)``)
                        written = (
                            self._from_caller(instance, prefix, value, method)
                            or self._from_subclass(instance, base, prefix, attr)
                            or written
                        )
                    found_values.append(written)
            else:
                passed = self._passed_to(method, value)
                if passed is None:
                    interp = self._construction(method, model, value)
                    passed = interp.eval(value, self._method_scope(method, base))
                found_values.append(passed)
        found = join(program.rename(v, name) for v in found_values)
        if (not found.models and not found.flow and found.ref is None and model_name(attr)) or (
            # set from a constructor parameter (unknown here) and called on tensors in a model class
            model
            and not found.models
            and found.ref is None
            and set(found.flow) <= {UNSEEN}
            and program.called_sub_model(instance.cls, attr)
        ):
            program.kinds.setdefault(name, "model")
            found = Value(models=frozenset((name,)))
        if found.models and self._frozen_arguments(instance, prefix, values):
            program.frozen.update(found.models)
        cache[key] = found
        return found

    def _frozen_arguments(self, instance: Instance, prefix: str, values: list[tuple[ast.AST, ast.AST | None]]) -> bool:
        """``self.<attr> = <parameter>`` in the constructor, and every such parameter given a
        model made non-trainable by the call that built this instance (``Head(backbone,
        trainable=False)``, or a backbone set ``trainable = False`` before): what ``fit``'s
        request leaves out (a momentum encoder updated by assignment, never by the optimizer)."""
        program = self.program
        passed = program.ctor_args.get(prefix)
        init = program.find_method(instance.cls, "__init__")
        if passed is None or init is None:
            return False
        for value, method in values:
            if method is not init or not _unknown_parameter(value, method):
                return False
            given = _bound_argument(method, value.id, *passed)
            if given is None or not given.models or not given.models <= program.frozen:
                return False
        return True

    def _from_caller(self, instance: Instance, prefix: str, value: ast.Name, method: ast.AST) -> Value | None:
        """``self.<attr> = <parameter>`` in the constructor the file's call of the class ran
        (``Distiller(student=student, teacher=teacher)``): the model that call passed. A Keras
        model tracks the models kept in its attributes: they are parts of it, their variables
        among those ``fit`` asks for. None: no such call seen, or it passed no model."""
        program = self.program
        passed = program.ctor_args.get(prefix)
        calls = program.ctor_calls.get(instance.cls, [])
        if passed is None and prefix == program.self_token(instance.cls) and len(calls) == 1:
            # ``self`` in a method run on its own (a ``train_step``): the file's one instance
            (passed,) = calls
        if passed is None or method is not program.find_method(instance.cls, "__init__"):
            return None
        given = _bound_argument(method, value.id, *passed)
        if given is None:
            return None
        for model in given.models:
            program.add_part(prefix, model)
        return given

    def _passed_to(self, method: ast.AST | None, value: ast.AST | None) -> Value | None:
        """``self.<attr> = <parameter>`` in a method the file calls itself (a ``compile``
        override given the losses and weights): what those calls passed. None: not a
        parameter, or no call of the file's was followed."""
        if method is None or not _unknown_parameter(value, method):
            return None
        passed = self.program.param_values.get(method, {}).get(value.id)
        return join(passed) if passed else None

    def _from_subclass(self, instance: Instance, base: Value, prefix: str, attr: str) -> Value | None:
        """``self.<attr>`` as the constructor of the file's one subclass of ``instance``'s
        class leaves it, when that constructor calls this one (``Base.__init__(self, ...)``,
        ``super().__init__(...)``) with what it builds: the base's methods (a ``train_step``)
        then see the subclass's models. None: no such subclass, or more than one."""
        program = self.program
        name = instance.cls.name
        subclasses = [
            cls
            for cls in program.classes.values()
            if any(isinstance(b, ast.Name) and b.id == name for b in cls.bases)
            and any(isinstance(s, ast.FunctionDef) and s.name == "__init__" for s in cls.body)
        ]
        if len(subclasses) != 1:
            return None
        (sub,) = subclasses
        init = program.find_method(sub, "__init__")
        text = "\n".join(program.source_lines[init.lineno - 1 : init.end_lineno or init.lineno])
        if not re.search(rf"\b(?:super\(\s*(?:{name}|{sub.name}\s*,\s*self)?\s*\)|{name})\.__init__\(", text):
            return None
        sub_self = Value(models=base.models, ref=Instance(sub, instance.prefix))
        found = self._method_writes(init, program.model_like(sub), sub_self, prefix).get(attr)
        known = (found.models | {o for o in found.flow if real(o)}) - program.guessed if found is not None else ()
        if not known:
            return None  # what the subclass passes is no better known (``*args``, a parameter)
        return found

    def _method_writes(self, method: ast.AST, model: bool, base: Value, prefix: str) -> dict[str, Value]:
        """What ``__init__`` (or ``build``) leaves in each ``self.<attr>``, from a run of its
        whole body (its parameters unknown): its local values are known, so that
        ``x = Dense(8)(inputs); self.model = keras.Model(inputs, x)`` or
        ``k = K.concatenate([w1, w2]); self.kernels.append(k)`` are followed. Once per
        method and instance."""
        program = self.program
        key = (id(method), prefix)
        found = program.method_runs.get(key)
        if found is not None:
            return found
        program.method_runs[key] = {}  # cycles: an attribute read while it runs is unknown
        interp = self._construction(method, model, None)
        interp.owner_prefix = prefix
        interp.owner_self = base.ref.prefix if isinstance(base.ref, Instance) else None
        scope = self._method_scope(method, base)
        interp.region = method
        interp.exec_block(method.body, scope)
        writes: dict[str, list[Value]] = {}
        for attr, values in interp.attribute_writes.items():
            writes.setdefault(attr, []).extend(values)
        for name, value in scope.vars.items():
            if name.startswith("self.") and name.count(".") == 1:
                writes.setdefault(name[5:], []).append(value)  # as the method left it (``append``s)
        found = {attr: join(values) for attr, values in writes.items()}
        program.method_runs[key] = found
        return found

    def _construction(self, method: ast.AST, model: bool, value: ast.AST | None):
        """The interpreter that evaluates ``self.x = <value>`` out of its call: what
        ``__init__`` (and a layer's ``build``) compute runs once, before any tape (GC109)."""
        name = getattr(method, "name", "")
        once = name == "__init__" or (model and name == "build")
        interp = type(self)(self.program, construction=once)
        interp.method = name
        if value is not None:
            interp.statement = SimpleNamespace(value=value)  # GC109 names the whole right-hand side
        return interp

    def _method_scope(self, method: ast.AST, instance: Value) -> Scope:
        """Where ``self.x = <value>`` is evaluated: its method's parameters are unknown there
        (``self.model = model`` must not find a module global ``model``), and may hold what
        this analysis does not see."""
        scope = Scope(self.program.module_scope)
        spec = method.args
        for param in (*spec.posonlyargs, *spec.args, *spec.kwonlyargs, spec.vararg, spec.kwarg):
            if param is not None:
                value = self.unknown_name(param.arg)
                if value.models:
                    # a model passed in (``Trainer(encoder, head)``): kept as ``self.encoder``
                    # it is a part of the instance, whose variables a step asks for
                    token = self.program.fresh(param, "model", param.arg)
                    self.program.guessed.add(token)
                    value = Value(models=frozenset((token,)))
                scope.vars[param.arg] = value if value is not EMPTY else _UNSEEN_VALUE
        scope.vars["self"] = instance
        return scope


def _bound_argument(method: ast.AST, param: str, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
    """What a call ``Cls(*args, **kwargs)`` passes to ``param`` of its ``__init__``."""
    if param in kwargs:
        return kwargs[param]
    positional = [p.arg for p in (*method.args.posonlyargs, *method.args.args)][1:]  # after ``self``
    index = positional.index(param) if param in positional else len(args)
    return args[index] if index < len(args) else None


def _unknown_parameter(value: ast.AST | None, method: ast.AST) -> bool:
    """``value`` is one of the method's parameters, as passed (``self.G = generator``)."""
    spec = method.args
    params = {p.arg for p in (*spec.posonlyargs, *spec.args, *spec.kwonlyargs)}
    return isinstance(value, ast.Name) and value.id in params
