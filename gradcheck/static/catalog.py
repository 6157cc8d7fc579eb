"""What the static engine knows about library calls, by canonical dotted name.

Everything not listed is treated as differentiable in all its inputs: an unknown call can
hide a cut (a miss), but never invents one (a false alarm). The codes are the design's
GC1xx vocabulary, the same the trace engine reports for the same cause.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

# Kinds of API.
CUT = "cut"  # no gradient flows through it to its inputs (``code`` names the cause)
CAST = "cast"  # a cut only when the target dtype is an integer or bool
WHERE = "where"  # ``where(cond)`` returns indices (GC101); ``where(cond, x, y)`` is differentiable
TOP_K = "top_k"  # ``.values`` carry a gradient, ``.indices`` do not
NO_FLOW = "no_flow"  # the result does not depend on the input values (shapes, *_like, constants)
MODEL = "model"  # builds a Keras model: calling it computes with its variables
LAYER = "layer"  # builds a Keras layer
LAMBDA = "lambda"  # ``keras.layers.Lambda(fn)``: a layer that runs ``fn``
VARIABLE = "variable"  # creates a variable (a gradient source)
TAPE = "tape"  # ``tf.GradientTape``
GRADIENTS = "gradients"  # ``tf.gradients(ys, xs)``: the TF1 spelling of ``tape.gradient``
CUSTOM_GRADIENT = "custom_gradient"  # the user defines the gradient: differentiable by definition
PLUMBING = "plumbing"  # Python builtins that move values around without computing
WRAPPER = "wrapper"  # returns the function it is given (``tf.function(step)``)
METRIC = "metric"  # a Keras metric object: ``update_state`` accumulates into variables (``code``)

#: Tape methods that ask for a gradient: ``tape.gradient(target, sources)`` and its kin.
GRADIENT_METHODS = frozenset(("gradient", "jacobian", "batch_jacobian"))


@dataclass(frozen=True)
class Api:
    kind: str
    code: str | None = None
    op: str = ""  # GC111: the op type that has no gradient (``AdjustSaturation``)


_TF = ("tensorflow", "tensorflow.math", "tensorflow.nn", "tensorflow.dtypes", "tensorflow.experimental.numpy")
_KERAS = ("keras.ops", "keras.ops.numpy", "keras.ops.math", "keras.ops.nn", "keras.ops.core", "keras.backend")
_RANDOM = ("tensorflow.random", "tensorflow.random.experimental", "tensorflow", "keras.random")

#: Libraries that compute on host values (a tensor passed in comes back as a constant).
_HOST = frozenset(("numpy", "scipy", "sklearn", "pandas", "math", "statistics"))

_BY_LEAF: dict[str, Api] = {}
for _code, _leaves in (
    (
        "GC101",
        "argmax argmin argsort unique unique_with_counts searchsorted bincount dense_bincount histogram_fixed_width "
        "histogram_fixed_width_bins in_top_k argpartition nonzero flatnonzero argwhere digitize",
    ),
    ("GC102", "round floor ceil rint floordiv floor_divide truncatediv"),
    (
        "GC103",
        "equal not_equal less less_equal greater greater_equal logical_and logical_or logical_not logical_xor "
        "is_nan is_inf is_finite isnan isinf isfinite isclose count_nonzero",
    ),
    ("GC104", "stop_gradient"),
    ("GC105", "convert_to_numpy get_value eval make_ndarray batch_get_value"),
    ("GC106", "numpy_function py_func"),
):
    for _leaf in _leaves.split():
        _BY_LEAF[_leaf] = Api(CUT, _code)
for _leaf in ("cast", "saturate_cast", "to_int32", "to_int64"):
    _BY_LEAF[_leaf] = Api(CAST, "GC103")
_BY_LEAF["where"] = Api(WHERE, "GC101")
_BY_LEAF["top_k"] = Api(TOP_K, "GC101")
for _leaf in ("shape", "size", "rank", "zeros_like", "ones_like", "zeros", "ones", "eye", "range", "arange"):
    _BY_LEAF[_leaf] = Api(NO_FLOW)

_SAMPLERS = {
    "categorical",
    "stateless_categorical",
    "multinomial",
    "poisson",
    "stateless_poisson",
    "stateless_binomial",
}

_EXACT: dict[str, Api] = {
    "tensorflow.GradientTape": Api(TAPE),
    "tensorflow.autodiff.GradientTape": Api(TAPE),
    "tensorflow.python.eager.backprop.GradientTape": Api(TAPE),
    "tensorflow.gradients": Api(GRADIENTS),
    "tensorflow.custom_gradient": Api(CUSTOM_GRADIENT),
    "keras.ops.custom_gradient": Api(CUSTOM_GRADIENT),
    "tensorflow.recompute_grad": Api(CUSTOM_GRADIENT),
    "tensorflow.function": Api(WRAPPER),
    "tensorflow.autograph.experimental.do_not_convert": Api(WRAPPER),
    "tensorflow.Variable": Api(VARIABLE),
    "keras.Variable": Api(VARIABLE),
    "keras.variables.Variable": Api(VARIABLE),
    "keras.backend.variable": Api(VARIABLE),
    # TensorFlow Probability's variables seen through a bijector: trainable variables too
    "tensorflow_probability.util.TransformedVariable": Api(VARIABLE),
    "tensorflow_probability.python.util.TransformedVariable": Api(VARIABLE),
    "tensorflow.Module": Api(MODEL),
    "keras.Input": Api(NO_FLOW),
    "keras.layers.Input": Api(NO_FLOW),
    "keras.layers.InputLayer": Api(NO_FLOW),
    "keras.layers.InputSpec": Api(NO_FLOW),
    "keras.layers.Lambda": Api(LAMBDA),
    "keras.models.load_model": Api(MODEL),
    "keras.saving.load_model": Api(MODEL),
    "keras.models.clone_model": Api(MODEL),
    "tensorflow_hub.KerasLayer": Api(LAYER),
    "tensorflow.keras": Api(NO_FLOW),
    "keras.backend.gradients": Api(GRADIENTS),
    "tensorflow.get_static_value": Api(CUT, "GC105"),
    # NumPy in disguise: these return host arrays
    "keras.preprocessing.sequence.pad_sequences": Api(CUT, "GC105"),
    "keras.utils.pad_sequences": Api(CUT, "GC105"),
    # Metric functions: thresholds and class indices, no gradient.
    "keras.metrics.binary_accuracy": Api(CUT, "GC103"),
    "keras.metrics.accuracy": Api(CUT, "GC103"),
    "keras.metrics.categorical_accuracy": Api(CUT, "GC101"),
    "keras.metrics.sparse_categorical_accuracy": Api(CUT, "GC101"),
    "keras.metrics.top_k_categorical_accuracy": Api(CUT, "GC101"),
    "keras.metrics.sparse_top_k_categorical_accuracy": Api(CUT, "GC101"),
}
# Metric objects: what ``update_state`` does to y_pred before it accumulates into the
# metric's variables (``result()`` reads them back).
for _code, _leaves in (
    ("GC101", "CategoricalAccuracy SparseCategoricalAccuracy TopKCategoricalAccuracy SparseTopKCategoricalAccuracy"),
    (
        "GC103",
        "Accuracy BinaryAccuracy Precision Recall AUC TruePositives FalsePositives TrueNegatives FalseNegatives "
        "F1Score FBetaScore",
    ),
    (
        "GC113",
        "Mean Sum MeanSquaredError MeanAbsoluteError RootMeanSquaredError MeanAbsolutePercentageError "
        "BinaryCrossentropy CategoricalCrossentropy SparseCategoricalCrossentropy KLDivergence LogCoshError",
    ),
):
    for _leaf in _leaves.split():
        _EXACT[f"keras.metrics.{_leaf}"] = Api(METRIC, _code)
for _module in ("keras", "keras.models"):
    for _leaf in ("Model", "Sequential", "Functional"):
        _EXACT[f"{_module}.{_leaf}"] = Api(MODEL)

_BUILTINS: dict[str, Api] = {
    "float": Api(CUT, "GC105"),
    "int": Api(CUT, "GC105"),
    "bool": Api(CUT, "GC105"),
    "complex": Api(CUT, "GC105"),
    **dict.fromkeys(("zip", "enumerate", "list", "tuple", "sorted", "reversed", "iter", "next"), Api(PLUMBING)),
    **dict.fromkeys(("min", "max", "dict", "set", "filter"), Api(PLUMBING)),
    **dict.fromkeys(("len", "range", "isinstance", "issubclass", "print", "type", "id"), Api(NO_FLOW)),
    **dict.fromkeys(("hasattr", "callable", "str", "repr", "format", "open", "super"), Api(NO_FLOW)),
}
BUILTIN_NAMES = frozenset(_BUILTINS)

#: Codes of the raw ops the static engine names through the rules' tables.
STATIC_CODES = ("GC101", "GC102", "GC103", "GC104", "GC105", "GC106", "GC107", "GC109")
#: Every code the static engine reports.
REPORTED_CODES = (*STATIC_CODES, "GC108", "GC110", "GC111", "GC113", "GC114", "GC115", "GC116")


def lookup(qualname: str) -> Api | None:
    """What calling ``qualname`` (canonical, see ``names.canonical``) does to gradients."""
    api = _EXACT.get(qualname)
    if api is not None:
        return api
    module, _, leaf = qualname.rpartition(".")
    if module == "builtins":
        return _BUILTINS.get(leaf)
    root = module.partition(".")[0]
    if root in _HOST:
        return Api(CUT, "GC105")  # NumPy & co compute on host arrays: the tape sees a constant
    if module in _RANDOM and leaf in _SAMPLERS:
        return Api(CUT, "GC107")
    if module in _TF or module in _KERAS:
        api = _BY_LEAF.get(leaf)
        if api is not None:
            return api
    if module == "tensorflow.raw_ops":
        return _raw_op(leaf)
    if root == "tensorflow":
        op = _no_gradient_table()["api"].get(qualname)
        if op is not None:
            return _raw_op(op)
    if module.startswith("keras.applications") and leaf[:1].isupper():
        return Api(MODEL)  # ``ResNet50(...)``; ``preprocess_input`` and co are plain functions
    if module == "keras.layers" and leaf[:1].isupper():
        return Api(LAYER)
    return None


def _raw_op(op_type: str) -> Api | None:
    if op_type == "Cast":
        return Api(CAST, "GC103")
    from gradcheck.rules import classify_op

    code = classify_op(op_type)
    if code in STATIC_CODES:
        return Api(CUT, code)
    if code is None and op_type in _no_gradient_ops():
        return Api(CUT, "GC111", op_type)
    return None


#: Generated from TensorFlow's gradient registry by ``tools/gen_no_gradient_ops.py`` (the
#: static engine never imports TensorFlow): ops without a gradient, and the public API
#: functions that compute only through one.
_NO_GRADIENT_DATA = Path(__file__).resolve().parent / "data" / "no_gradient_ops.json"


@cache
def _no_gradient_table() -> dict:
    try:
        return json.loads(_NO_GRADIENT_DATA.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # a broken install: know nothing rather than fail
        return {"no_gradient": [], "not_differentiable": [], "api": {}}


@cache
def _no_gradient_ops() -> frozenset[str]:
    table = _no_gradient_table()
    return frozenset((*table["no_gradient"], *table["not_differentiable"]))


def is_keras(qualname: str) -> bool:
    return qualname.split(".", 1)[0] in ("keras", "tensorflow_hub")


_INT_DTYPES = frozenset(
    (
        *("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool", "bool_", "int"),
        *("qint8", "qint16", "qint32", "quint8", "quint16", "int_", "intc", "intp", "uint"),
    )
)


def is_integer_dtype(spelling: str) -> bool:
    """``tensorflow.int32``, ``numpy.uint8``, ``"int32"``, ``bool``: an integer or bool dtype."""
    return spelling.rpartition(".")[2] in _INT_DTYPES
