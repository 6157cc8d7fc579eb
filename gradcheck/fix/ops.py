"""How the user's file spells the ops a patch writes: ``tf.stop_gradient`` where it imports
TensorFlow as ``tf``, ``K.stop_gradient`` in a Keras-backend file that does not,
``ops.stop_gradient`` where it uses ``keras.ops``. A patch never adds an import: a file
that imports none of these gets no patch."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from gradcheck.fix.source import Source, Unpatchable, callee

_BACKENDS = ("tensorflow.keras.backend", "keras.backend", "tf_keras.backend", "tensorflow.python.keras.backend")


@dataclass(frozen=True)
class Ops:
    """Spellings of one family: ``tf`` (TensorFlow), ``k`` (the Keras 2 backend) or ``ops``
    (``keras.ops``); ``prefix`` is the file's own name for the module."""

    family: str
    prefix: str

    def stop_gradient(self, x: str) -> str:
        return f"{self.prefix}.stop_gradient({x})"

    def cast(self, x: str, dtype: str) -> str:
        return f"{self.prefix}.cast({x}, {dtype})"

    def softmax(self, x: str, axis: str) -> str:
        if self.family == "tf":
            return f"{self.prefix}.nn.softmax({x}, axis={axis})"
        if self.family == "k":
            return f"{self.prefix}.softmax({x}, axis={axis})"
        return f"{self.prefix}.softmax({x}, axis={axis})"

    def reduce_sum(self, x: str, axis: str) -> str:
        name = "reduce_sum" if self.family == "tf" else "sum"
        return f"{self.prefix}.{name}({x}, axis={axis})"

    def positions(self, x: str, axis: str) -> str:
        """0, 1, ..., n-1 along ``axis`` of ``x``, in ``x``'s dtype."""
        if self.family == "tf":
            return f"{self.prefix}.cast({self.prefix}.range({self.prefix}.shape({x})[{axis}]), {x}.dtype)"
        if self.family == "k":
            return f"{self.prefix}.cast({self.prefix}.arange({self.prefix}.shape({x})[{axis}]), {x}.dtype)"
        return f"{self.prefix}.cast({self.prefix}.arange({self.prefix}.shape({x})[{axis}]), {x}.dtype)"

    def take(self, x: str, indices: str, axis: str) -> str:
        """The entry of ``x`` at ``indices`` along ``axis`` (one per row)."""
        if self.family == "tf" and axis in ("1", "-1"):
            return f"{self.prefix}.gather({x}, {indices}, batch_dims=1)"
        one_hot = self.one_hot(indices, f"{self.prefix}.shape({x})[{axis}]", x)
        return self.reduce_sum(f"{x} * {one_hot}", axis)

    def one_hot(self, indices: str, depth: str, like: str) -> str:
        if self.family == "tf":
            return f"{self.prefix}.one_hot({indices}, {depth}, dtype={like}.dtype)"
        if self.family == "k":
            return f"{self.prefix}.cast({self.prefix}.one_hot({indices}, {depth}), {like}.dtype)"
        return f"{self.prefix}.one_hot({indices}, {depth}, dtype={like}.dtype)"


def keras_ops_prefix(source: Source) -> str | None:
    local = source.alias_for("keras.ops")
    if local:
        return local
    keras = source.alias_for("keras")
    return f"{keras}.ops" if keras else None


def family_of(source: Source, call: cst.Call | None) -> str | None:
    """``tf``, ``k`` or ``ops``: what the culprit call itself is spelled with."""
    if call is None:
        return None
    full = source.resolve(callee(call))
    if full.startswith(_BACKENDS):
        return "k"
    if full.startswith(("keras.ops", "keras.src.ops")):
        return "ops"
    if full.startswith("tensorflow"):
        return "tf"
    return None


def ops_for(source: Source, call: cst.Call | None = None) -> Ops:
    """The family a patch writes in: TensorFlow when the file imports it, else the family
    of the culprit call, else ``keras.ops``."""
    if source.tf:
        return Ops("tf", source.tf)
    family = family_of(source, call)
    if family == "k" and call is not None:
        head = callee(call).rsplit(".", 1)[0]
        return Ops("k", head)
    prefix = keras_ops_prefix(source)
    if prefix:
        return Ops("ops", prefix)
    raise Unpatchable("the file imports neither TensorFlow nor keras.ops")
