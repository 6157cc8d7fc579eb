"""Every private TensorFlow/Keras import gradcheck makes, in one place, with version guards.

The trace engine hooks TensorFlow where its public API has no hook: the tape's
gradient call, op callbacks (the mechanism tfdbg v2 and ``check_numerics`` use),
concrete-function calls and variable creation. If a TensorFlow release moves one of
these, this module is the only one to change. Importing it imports TensorFlow.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys

import tensorflow as tf
from tensorflow.python.eager import backprop, imperative_grad, record
from tensorflow.python.eager import tape as tape_lib
from tensorflow.python.eager.polymorphic_function import concrete_function
from tensorflow.python.framework import constant_op, func_graph, op_callbacks, op_def_registry, ops
from tensorflow.python.ops import resource_variable_ops
from tensorflow.python.ops.unconnected_gradients import UnconnectedGradients
from tensorflow.python.util import tf_stack

GradientTape = backprop.GradientTape
FuncGraph = func_graph.FuncGraph
ConcreteFunction = concrete_function.ConcreteFunction
EagerTensorBase = ops._EagerTensorBase
SymbolicTensor = getattr(ops, "SymbolicTensor", None)
ResourceVariable = resource_variable_ops.ResourceVariable
UninitializedVariable = getattr(resource_variable_ops, "UninitializedVariable", None)
stop_recording = record.stop_recording
add_op_callback = op_callbacks.add_op_callback
remove_op_callback = op_callbacks.remove_op_callback
UNCONNECTED_NONE = UnconnectedGradients.NONE
UNCONNECTED_ZERO = UnconnectedGradients.ZERO

#: Keras 3's classes, looked up only once the program has imported Keras 3 itself: a tf_keras
#: program never imports it (under ``python`` it would not, and importing it runs Keras 3's
#: own imports: its data adapters probe ``pandas.Series`` in a program whose ``pandas`` is a
#: stub of its own). ``_tf.KerasVariable`` / ``_tf.KerasOptimizer`` are None until then.
_KERAS3 = {
    "KerasVariable": ("keras.src.backend.common.variables", "Variable"),
    "KerasOptimizer": ("keras.src.optimizers.base_optimizer", "BaseOptimizer"),
}


def _imported_class(package: str, module: str, name: str):
    """``module.name`` if the program has imported ``package``; None otherwise (never imported here)."""
    if package not in sys.modules:
        return None
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):  # pragma: no cover - a stub or another version of the package
        return None


def __getattr__(attribute: str):
    where = _KERAS3.get(attribute)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
    cls = _imported_class("keras", *where)
    if cls is not None:
        globals()[attribute] = cls  # found for good: the module attribute from now on
    return cls


#: The attribute by which autograph knows its own artifacts and calls them as they are
#: (``tensorflow/python/autograph/impl/api.py: is_autograph_artifact``, TF 2.16-2.21): a
#: callable of gradcheck's that user code calls inside a ``tf.function`` carries it, so
#: autograph neither converts it nor adds a generated frame of it to tracebacks.
AUTOGRAPH_ARTIFACT = "autograph_info__"


def autograph_mapper_class():
    """The class autograph enters around a converted function's call to map its generated
    code back to the user's (its ``__init__`` gets the converted function)."""
    from tensorflow.python.autograph.impl import api as autograph_api

    return getattr(autograph_api, "StackTraceMapper", None)


def _keras_classes(keras3: tuple[str, str], legacy: tuple[str, str]) -> list:
    """A Keras base class in use: Keras 3's, and tf_keras's when legacy Keras is on
    (``TF_USE_LEGACY_KERAS=1``); each (module, name), only from a Keras the program imported."""
    wanted = [("keras", *keras3)]
    if legacy_keras():
        wanted.append(("tf_keras", *legacy))
    return [cls for cls in (_imported_class(*where) for where in wanted) if cls is not None]


def keras_model_classes() -> list:
    """The Keras ``Model`` base classes in use."""
    return _keras_classes(("keras.src.models.model", "Model"), ("tf_keras.src.engine.training", "Model"))


def keras_layer_classes() -> list:
    """The Keras layer base classes in use."""
    return _keras_classes(("keras.src.layers.layer", "Layer"), ("tf_keras.src.engine.base_layer", "Layer"))


def legacy_keras() -> bool:
    """Whether ``tf.keras`` is Keras 2 (tf_keras) in this process."""
    return os.environ.get("TF_USE_LEGACY_KERAS") in ("true", "True", "1")  # TensorFlow's own test


def new_shadow_tape():
    """A persistent tape that watches every variable read (pushed on the tape stack)."""
    return tape_lib.push_new_tape(persistent=True, watch_accessed_variables=True)


def push_tape(tape) -> None:
    tape_lib.push_tape(tape)


def pop_tape(tape) -> None:
    tape_lib.pop_tape(tape)


def watch_tensor(tape, tensor) -> None:
    tape_lib.watch(tape, tensor)


def unconnected(value) -> UnconnectedGradients:
    return UnconnectedGradients(value)


def imperative_gradient(tape, targets: list, sources: list, output_gradients: list | None = None) -> list:
    """Gradients of ``targets`` w.r.t. ``sources`` from a persistent C tape, None where
    unconnected. Pauses every tape so the backward ops are not recorded themselves.

    An op with no gradient function at all (``tf.image.extract_glimpse``'s offsets, say)
    makes TensorFlow's backward pass raise LookupError as soon as it lies between a target
    and any source asked for, although the user's own gradient call, which never asked past
    it, worked. What is asked here is which tensors a gradient reaches, and none reaches
    past such an op: it is treated as ``tf.no_gradient`` would make it, for this call only."""
    added: list[str] = []
    try:
        while True:
            # With no tape recording, nothing would record the backward ops; a global stop
            # would also leave empty a tape that a custom gradient's backward function
            # opens for itself (a hand-written adjoint), whose `gradient` is then None.
            quiet = record.stop_recording() if record.could_possibly_record() else contextlib.nullcontext()
            try:
                with quiet:
                    return imperative_grad.imperative_grad(
                        tape,
                        targets,
                        sources,
                        output_gradients=output_gradients,
                        sources_raw=sources,
                        unconnected_gradients=UNCONNECTED_NONE,
                    )
            except LookupError as error:
                op_type = missing_gradient_op(error)
                if op_type is None or ops._gradient_registry._registry.get(op_type):  # added, or not ours
                    raise
                ops.no_gradient(op_type)
                added.append(op_type)
    finally:
        for op_type in added:
            ops._gradient_registry._registry.pop(op_type, None)


def has_gradient(op_type: str) -> bool:
    """Whether TensorFlow registers a gradient function for ``op_type`` (``tf.no_gradient``
    registers None; many ops register nothing)."""
    entry = ops._gradient_registry._registry.get(op_type)
    return bool(entry) and entry.get("type") is not None


def missing_gradient_op(error: LookupError) -> str | None:
    """The op type of TensorFlow's "gradient registry has no entry for: X", else None."""
    text = str(error)
    if "gradient registry has no entry for" not in text:
        return None
    return text.rsplit(":", 1)[-1].strip().strip("'\"") or None


def is_differentiable_dtype(dtype) -> bool:
    """Only real and complex floating dtypes carry gradients (TF's own rule)."""
    dtype = tf.as_dtype(dtype)
    return dtype.is_floating or dtype.is_complex


def is_resource_dtype(dtype) -> bool:
    return tf.as_dtype(dtype) == tf.resource


def extract_stack():
    """The Python stack as TensorFlow records it for ops: autograph's generated code is
    mapped back to the user's source."""
    return tf_stack.extract_stack()


def default_graph():
    return ops.get_default_graph()


def executing_eagerly() -> bool:
    return tf.executing_eagerly()


def inside_function() -> bool:
    return ops.inside_function()


def constant_module():
    """The module whose ``_constant_eager_impl`` turns host values into eager tensors."""
    return constant_op


def record_operation_module():
    """The module whose ``record_operation`` ``tf.custom_gradient`` calls (patched to see
    custom-gradient ops in eager mode)."""
    return record


def gradient_override_type(op) -> str | None:
    """The gradient-override name of a graph op (``CustomGradient-…`` for tf.custom_gradient)."""
    try:
        value = op.get_attr("_gradient_op_type")
    except (ValueError, TypeError):
        return None
    return value.decode() if isinstance(value, bytes) else str(value)


def custom_gradient_results(op) -> int | None:
    """How many of a graph-mode ``tf.custom_gradient``'s ``IdentityN`` inputs are the
    function's results (the rest are its arguments and variables): TensorFlow's gradient of
    that op is None for them by construction, whatever flows into them. Read from the
    closure of the registered gradient function (``_graph_mode_decorator``); None when
    this TensorFlow builds it otherwise."""
    override = gradient_override_type(op)
    if not override:
        return None
    try:
        entry = ops._gradient_registry.lookup(override)
        cells = dict(zip(entry.__code__.co_freevars, entry.__closure__ or (), strict=True))
        inner = cells["tape_grad_fn"].cell_contents
        count = dict(zip(inner.__code__.co_freevars, inner.__closure__ or (), strict=True))["flat_result_len"]
        count = count.cell_contents
    except (LookupError, AttributeError, TypeError, ValueError):
        return None
    return count if isinstance(count, int) else None


def is_tensor(value) -> bool:
    return tf.is_tensor(value)


def is_variable(value) -> bool:
    if isinstance(value, tf.Variable):
        return True
    keras_variable = globals().get("KerasVariable") or __getattr__("KerasVariable")
    return keras_variable is not None and isinstance(value, keras_variable)


def handle_of(variable):
    """The resource handle a variable's reads take as input."""
    return variable.handle


def variable_name(variable) -> str:
    """Keras 3 ``.path``, else the TF name without ``:0``."""
    path = getattr(variable, "path", None)
    if isinstance(path, str) and path:
        return path
    name = getattr(variable, "name", "") or ""
    return name[:-2] if name.endswith(":0") else name


_NONDATA: dict[tuple[str, int], frozenset[int]] = {}


def nondata_inputs(op_type: str, n_inputs: int) -> frozenset[int]:
    """Positions of the inputs of an ``op_type`` op (with ``n_inputs`` inputs) that can
    never carry a gradient, read from the op's registered signature: an input whose
    allowed dtypes include no floating type, no resource and no variant (a ``tf.where``
    condition, gather indices, a shape, an axis). Unknown ops (function calls) and
    ambiguous lists: none."""
    cache_key = (op_type, n_inputs)
    found = _NONDATA.get(cache_key)
    if found is None:
        found = _NONDATA[cache_key] = _nondata_inputs(op_type, n_inputs)
    return found


def _nondata_inputs(op_type: str, n_inputs: int) -> frozenset[int]:
    op_def = op_def_registry.get(op_type)
    if op_def is None:
        return frozenset()
    attrs = {a.name: a for a in op_def.attr}
    args = list(op_def.input_arg)
    variadic = [a for a in args if a.number_attr or a.type_list_attr]
    spare = n_inputs - (len(args) - len(variadic))
    if len(variadic) > 1 and len({a.number_attr for a in variadic} - {""}) != 1:
        return frozenset()  # independent lists: which input is which is unknown
    if spare < 0 or (spare if not variadic else spare % len(variadic)):
        return frozenset()
    width = spare // len(variadic) if variadic else 0
    out, position = set(), 0
    for arg in args:
        count = width if (arg.number_attr or arg.type_list_attr) else 1
        if not _may_carry(arg, attrs):
            out.update(range(position, position + count))
        position += count
    return frozenset(out)


def _may_carry(arg, attrs) -> bool:
    if arg.type:
        return _carries(arg.type)
    if arg.type_attr:
        allowed = attrs[arg.type_attr].allowed_values.list.type
        return not allowed or any(_carries(t) for t in allowed)
    return True  # a list of any types (IdentityN, function calls)


def _carries(enum) -> bool:
    """A float or complex value, or a handle to one (a variable, a TensorList)."""
    dtype = tf.as_dtype(enum)
    return dtype.is_floating or dtype.is_complex or dtype in (tf.resource, tf.variant)


def passed_variables(op_type: str, positions: list[int], n_inputs: int, depth: int = 4) -> dict[int, object]:
    """The variables the user passed as the inputs at ``positions`` of the ``op_type`` op
    being executed now (call from the op callback). TensorFlow's C++ fast path reads a
    variable given straight to an op (``tf.nn.bias_add(x, v)``, ``x * v``) with no Python
    and no callback; the generated op function's arguments still hold the variable."""
    frame = sys._getframe(2)
    while frame is not None and depth:
        if os.path.basename(frame.f_code.co_filename).startswith("gen_"):
            break
        frame, depth = frame.f_back, depth - 1
    else:
        return {}
    op_def = op_def_registry.get(op_type)
    if frame is None or op_def is None:
        return {}
    local = frame.f_locals
    flat: list = []
    for arg in op_def.input_arg:
        value = local.get(arg.name, local.get(arg.name + "_"))
        if arg.number_attr or arg.type_list_attr:
            flat.extend(value if isinstance(value, (list, tuple)) else [value])
        else:
            flat.append(value)
    if len(flat) != n_inputs:
        return {}
    return {i: flat[i] for i in positions if resource_variable_ops.is_resource_variable(flat[i])}


def traced_arguments(graph) -> dict[int, object]:
    """The eager tensors passed to the ``tf.function`` whose ``graph`` is being traced now,
    by the op id of the placeholder standing for each: a forward pass run eagerly before
    the call (``train_step(model(x), y)``) reaches the graph through them."""
    frame, building = sys._getframe(1), False
    while frame is not None:
        code = frame.f_code
        if code.co_filename.endswith("tracing_compilation.py"):
            local = frame.f_locals
            if code.co_name == "_create_concrete_function":
                building = local.get("func_graph") is graph
            elif code.co_name in ("_maybe_define_function", "trace_function", "call_function") and building:
                flat = tf.nest.flatten((local.get("args") or (), local.get("kwargs") or {}), expand_composites=True)
                tensors = [t for t in flat if isinstance(t, EagerTensorBase)]
                inputs = list(getattr(graph, "inputs", ()))[: len(tensors)]
                if len(inputs) != len(tensors) or any(p.dtype != t.dtype for p, t in zip(inputs, tensors, strict=True)):
                    return {}
                return {p.op._id: t for p, t in zip(inputs, tensors, strict=True)}
        frame = frame.f_back
    return {}


def function_body(graph, name: str):
    """The ``FuncGraph`` of the function ``name`` that ``graph`` calls (a loop's body, a
    branch, a nested ``tf.function``), or None. TensorFlow keeps no public lookup for it."""
    try:
        return getattr(graph._get_function(name), "graph", None)
    except Exception:  # noqa: BLE001 - a function this TensorFlow keeps elsewhere: none
        return None


def captured_externals(graph) -> dict[int, object]:
    """id(placeholder inside ``graph``) -> the outer tensor it captures (a variable's
    eager resource handle, for a read)."""
    return {id(internal): external for external, internal in getattr(graph, "captures", ())}


_PY_FUNC_OPS = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc"})


def python_function_of(op):
    """The Python function a ``tf.numpy_function`` / ``tf.py_function`` graph op runs."""
    if getattr(op, "type", None) not in _PY_FUNC_OPS:
        return None
    from tensorflow.python.ops import script_ops

    try:
        token = op.get_attr("token")
    except (ValueError, AttributeError):
        return None
    function = script_ops._py_funcs.get(token.decode() if isinstance(token, bytes) else token)
    while hasattr(function, "__wrapped__"):
        function = function.__wrapped__
    return function


def handles_used_by(function) -> set[int]:
    """ids of the resource handles of the variables a Python function can reach directly:
    its bound object and that object's attributes, its closure, the globals it names; each
    a variable, or a Keras model or layer (its variables)."""
    objects: list = []
    owner = getattr(function, "__self__", None)
    if owner is not None:
        objects.append(owner)
        objects.extend(getattr(owner, "__dict__", {}).values())
        function = getattr(function, "__func__", function)
    code = getattr(function, "__code__", None)
    objects.extend(cell.cell_contents for cell in getattr(function, "__closure__", None) or () if _filled(cell))
    if code is not None:
        names = getattr(function, "__globals__", {})
        objects.extend(names[n] for n in code.co_names if n in names)
    handles: set[int] = set()
    for value in objects:
        variables = [value] if is_variable(value) else getattr(value, "variables", None)
        if not isinstance(variables, (list, tuple)):
            continue
        for variable in variables:
            try:
                handles.add(id(handle_of(variable)))
            except (AttributeError, ValueError, TypeError):
                continue
    return handles


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def dataset_function_class():
    """The class ``tf.data`` wraps every user function in (``map``, ``filter``,
    ``flat_map`` ...); its ``function.graph`` is the traced FuncGraph. None if moved."""
    try:
        from tensorflow.python.data.ops import structured_function
    except ImportError:  # pragma: no cover - moved in another release
        return None
    return getattr(structured_function, "StructuredFunctionWrapper", None)
