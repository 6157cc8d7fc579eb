"""Every private TensorFlow/Keras import gradcheck makes, in one place, with version guards.

The trace engine hooks TensorFlow where its public API has no hook: the tape's
gradient call, op callbacks (the mechanism tfdbg v2 and ``check_numerics`` use),
concrete-function calls and variable creation. If a TensorFlow release moves one of
these, this module is the only one to change. Importing it imports TensorFlow.
"""

from __future__ import annotations

import tensorflow as tf
from tensorflow.python.eager import backprop, imperative_grad, record
from tensorflow.python.eager import tape as tape_lib
from tensorflow.python.eager.polymorphic_function import concrete_function
from tensorflow.python.framework import constant_op, func_graph, op_callbacks, ops
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

try:  # Keras 3
    from keras.src.backend.common.variables import Variable as KerasVariable
    from keras.src.optimizers.base_optimizer import BaseOptimizer as KerasOptimizer
except ImportError:  # pragma: no cover - Keras 2 / no Keras
    KerasVariable = None
    KerasOptimizer = None


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


def imperative_gradient(tape, targets: list, sources: list) -> list:
    """Gradients of ``targets`` w.r.t. ``sources`` from a persistent C tape, None where
    unconnected. Pauses every tape so the backward ops are not recorded themselves."""
    with record.stop_recording():
        return imperative_grad.imperative_grad(
            tape,
            targets,
            sources,
            output_gradients=None,
            sources_raw=sources,
            unconnected_gradients=UNCONNECTED_NONE,
        )


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


def is_tensor(value) -> bool:
    return tf.is_tensor(value)


def is_variable(value) -> bool:
    if isinstance(value, tf.Variable):
        return True
    return KerasVariable is not None and isinstance(value, KerasVariable)


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
