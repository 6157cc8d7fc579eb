"""GC201: ``tf.sign`` on a forward output: the gradient arrives but is identically zero."""

from __future__ import annotations

from benchmarks.mutation.operators._base import AfterForward, Operator


class _T(AfterForward):
    twin_outside = True

    def mutant_line(self, name: str) -> str:
        return f"{name} = {self.ctx.tf}.sign({name})"

    def twin_line(self, name: str) -> str:
        return f"{name}_sign = {self.ctx.tf}.sign({name})"


class SignOutput(Operator):
    name = "sign_output"
    codes = ("GC201",)
    summary = "tf.sign(output) inside the tape"
    twin_summary = "tf.sign of the output after the tape"
    effect = "zero"
    transformer = _T
