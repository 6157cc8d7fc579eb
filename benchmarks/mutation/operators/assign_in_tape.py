"""GC113: a forward output written into a ``tf.Variable`` and read back inside the tape."""

from __future__ import annotations

from benchmarks.mutation.cstutil import parse_stmt
from benchmarks.mutation.operators._base import AfterForward, Operator

_BUFFER = "_gc_buffer = {tf}.Variable(0.0, shape={tf}.TensorShape(None), trainable=False)"


class _T(AfterForward):
    def mutant_line(self, name: str) -> str:
        self._buffer()
        return f"{name} = _gc_buffer.assign({self.ctx.tf}.cast({name}, _gc_buffer.dtype)) * 1.0"

    def twin_line(self, name: str) -> str:
        self._buffer()  # a statistic kept in a variable, not read back into the loss
        return f"_gc_buffer.assign({self.ctx.tf}.reduce_mean({self.ctx.tf}.cast({name}, _gc_buffer.dtype)))"

    def _buffer(self) -> None:
        if not self.module_stmts:
            self.module_stmts.append(parse_stmt(_BUFFER.format(tf=self.ctx.tf)))


class AssignInTape(Operator):
    name = "assign_in_tape"
    codes = ("GC113",)
    summary = "output = buffer.assign(output) * 1.0 inside the tape (a module-level tf.Variable buffer)"
    twin_summary = "buffer.assign(mean(output)) inside the tape, not read back"
    transformer = _T
