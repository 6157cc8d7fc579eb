"""GC101: ranks of a model output (``argsort(argsort(y))``) used as values inside the tape.

Report: a Keras ranking loss ``tf.argsort(tf.argsort(y_pred))`` that fails with "No gradients
provided for any variable", https://github.com/tensorflow/tensorflow/issues/56396.
"""

from __future__ import annotations

from benchmarks.mutation.operators._base import AfterForward, Operator


class _T(AfterForward):
    twin_outside = True  # ranks after the tape, as for a metric

    def mutant_line(self, name: str) -> str:
        tf = self.ctx.tf
        return f"{name} = {tf}.cast({tf}.argsort({tf}.argsort({name}, axis=-1), axis=-1), {name}.dtype)"

    def twin_line(self, name: str) -> str:
        return f"{name}_rank = {self.ctx.tf}.argsort({name}, axis=-1)"


class ArgsortOutput(Operator):
    name = "argsort_output"
    codes = ("GC101",)
    summary = "cast(argsort(argsort(output))) inside the tape: ranks as values"
    twin_summary = "argsort of the output after the tape (a metric)"
    transformer = _T
