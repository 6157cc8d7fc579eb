"""NumPy calls rewritten as the TensorFlow ops that compute the same thing on tensors, so
the tape records them: ``np.mean(x)`` -> ``tf.reduce_mean(x)``, ``np.sqrt`` -> ``tf.sqrt``,
``x.mean()`` -> ``tf.reduce_mean(x)``, ``np.array([a, b], dtype="float32")`` ->
``tf.cast(tf.stack([a, b]), "float32")``, ``x.ravel()`` -> ``tf.reshape(x, [-1])``.

Only what has an exact counterpart is translated; ``Translator.missed`` names the NumPy
calls left as they were, and a patch that needs the whole computation in TensorFlow gives
up when there are any.
"""

from __future__ import annotations

import libcst as cst

from gradcheck.fix.source import Source, arg, callee

#: np.<name> -> tf.<name> for element-wise functions with the same arguments.
_SAME = {
    "sqrt": "sqrt",
    "exp": "exp",
    "tanh": "tanh",
    "abs": "abs",
    "absolute": "abs",
    "square": "square",
    "sin": "sin",
    "cos": "cos",
    "sinh": "sinh",
    "cosh": "cosh",
    "sign": "sign",
    "log": "math.log",
    "log1p": "math.log1p",
    "expm1": "math.expm1",
    "maximum": "maximum",
    "minimum": "minimum",
    "power": "pow",
    "where": "where",
    "clip": "clip_by_value",
    "squeeze": "squeeze",
    "reshape": "reshape",
    "transpose": "transpose",
    "expand_dims": "expand_dims",
    "matmul": "linalg.matmul",
    "stack": "stack",
    "concatenate": "concat",
    "negative": "negative",
    "reciprocal": "math.reciprocal",
    "sigmoid": "sigmoid",
}
#: reductions: np.<name>(x, axis=None, keepdims=False) / x.<name>() -> tf.<op>(x, axis=..., keepdims=...)
_REDUCE = {
    "mean": "reduce_mean",
    "sum": "reduce_sum",
    "max": "reduce_max",
    "amax": "reduce_max",
    "min": "reduce_min",
    "amin": "reduce_min",
    "prod": "reduce_prod",
    "std": "math.reduce_std",
    "var": "math.reduce_variance",
    "nanmean": "reduce_mean",
    "nansum": "reduce_sum",
}
_NUMERIC_REDUCE = {"reduce_mean", "reduce_sum", "math.reduce_std", "math.reduce_variance", "reduce_prod"}
#: ndarray methods translated on values known to be tensors
_METHODS = {"mean", "sum", "max", "min", "std", "var", "prod", "ravel", "flatten", "reshape", "astype", "numpy", "item"}


class Translator(cst.CSTTransformer):
    """Translate NumPy calls under the visited node; ``methods`` also translates ndarray
    methods (``.mean()``, ``.ravel()``) on any receiver. ``only`` limits the translated
    NumPy calls to those nodes (original nodes), when given."""

    def __init__(self, source: Source, tf: str, methods: bool = False, only: set[int] | None = None) -> None:
        super().__init__()
        self.source = source
        self.tf = tf
        self.methods = methods
        self.only = only
        self.changed = 0
        self.missed: list[str] = []

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self.only is not None and id(original) not in self.only:
            return updated
        name = self.numpy_name(original)
        new = None
        if name is not None:
            new = self.function(name, updated)
            if new is None:
                self.missed.append(f"np.{name}")
        elif self.methods and isinstance(updated.func, cst.Attribute) and updated.func.attr.value in _METHODS:
            new = self.method(updated)
        if new is None:
            return updated
        self.changed += 1
        if updated.lpar:
            new = new.with_changes(lpar=updated.lpar, rpar=updated.rpar)
        return new

    def numpy_name(self, call: cst.Call) -> str | None:
        full = self.source.resolve(callee(call))
        if full.startswith("numpy.") and full.count(".") == 1:
            return full.split(".", 1)[1]
        return None

    def _code(self, node: cst.CSTNode) -> str:
        return self.source.module.code_for_node(node).strip()

    def _bare(self, node: cst.BaseExpression) -> str:
        """The code of an expression that becomes a call's only argument: its own
        parentheses are not needed there."""
        if node.lpar:
            node = node.with_changes(lpar=[], rpar=[])
        return self._code(node)

    def _e(self, code: str) -> cst.BaseExpression:
        return cst.parse_expression(code)

    def function(self, name: str, call: cst.Call) -> cst.BaseExpression | None:
        tf = self.tf
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if any(a.star for a in call.args):
            return None
        if name in _REDUCE:
            x = arg(call, 0, "a")
            if x is None:
                return None
            axis = arg(call, 1, "axis")
            keep = arg(call, None, "keepdims")
            if arg(call, None, "dtype", "out", "ddof", "where") is not None and not (
                name == "std" and _is_zero(arg(call, None, "ddof"))
            ):
                return None
            return self._e(self._reduce(_REDUCE[name], x.value, axis, keep))
        if name in ("array", "asarray", "asanyarray"):
            x = arg(call, 0, "object", "a")
            if x is None or len(positional) > 2:
                return None
            dtype = arg(call, 1, "dtype")
            if isinstance(x.value, (cst.List, cst.Tuple)):
                inner = f"{tf}.stack({self._code(x.value)})"
            else:
                inner = self._code(x.value)
            return self._e(f"{tf}.cast({inner}, {self._code(dtype.value)})" if dtype is not None else inner)
        if name in ("float32", "float64", "float16"):
            if len(positional) != 1:
                return None
            return self._e(f"{tf}.cast({self._code(positional[0].value)}, {tf}.{name})")
        if name in _SAME:
            for a in call.args:
                if a.keyword is not None and a.keyword.value not in ("axis", "keepdims"):
                    return None
            args = ", ".join(
                f"{a.keyword.value}={self._code(a.value)}" if a.keyword is not None else self._code(a.value)
                for a in call.args
            )
            return self._e(f"{tf}.{_SAME[name]}({args})")
        return None

    def _reduce(self, op: str, x: cst.BaseExpression, axis: cst.Arg | None, keep: cst.Arg | None) -> str:
        value = self._bare(x)
        if op in _NUMERIC_REDUCE and isinstance(x, cst.Comparison):
            value = f"{self.tf}.cast({value}, {self.tf}.float32)"
        parts = [value]
        if axis is not None:
            parts.append(f"axis={self._code(axis.value)}")
        if keep is not None:
            parts.append(f"keepdims={self._code(keep.value)}")
        return f"{self.tf}.{op}({', '.join(parts)})"

    def method(self, call: cst.Call) -> cst.BaseExpression | None:
        func = call.func
        assert isinstance(func, cst.Attribute)
        name = func.attr.value
        receiver = func.value
        tf = self.tf
        if name in ("numpy", "item") and not call.args:
            return receiver
        if name in ("ravel", "flatten") and not call.args:
            return self._e(f"{tf}.reshape({self._bare(receiver)}, [-1])")
        if name == "reshape" and call.args:
            shape = (
                self._code(call.args[0].value)
                if len(call.args) == 1
                else "[" + ", ".join(self._code(a.value) for a in call.args) + "]"
            )
            return self._e(f"{tf}.reshape({self._bare(receiver)}, {shape})")
        if name == "astype" and len(call.args) == 1:
            return self._e(f"{tf}.cast({self._bare(receiver)}, {self._code(call.args[0].value)})")
        if name in _REDUCE:
            if any(a.keyword is not None and a.keyword.value not in ("axis", "keepdims") for a in call.args):
                return None
            axis = arg(call, 0, "axis")
            keep = arg(call, None, "keepdims")
            return self._e(self._reduce(_REDUCE[name], receiver, axis, keep))
        return None


def _is_zero(node: cst.Arg | None) -> bool:
    return node is not None and isinstance(node.value, cst.Integer) and node.value.value == "0"


def numpy_calls(source: Source, root: cst.CSTNode) -> list[cst.Call]:
    """The NumPy calls under ``root``."""
    out = []
    for node in source.walk(root, (cst.Call,)):
        full = source.resolve(callee(node))
        if full.startswith("numpy.") or full == "numpy":
            out.append(node)
    return out
