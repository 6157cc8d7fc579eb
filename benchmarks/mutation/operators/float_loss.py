"""GC105: the loss turned into a Python ``float`` and back into a tensor inside the tape.

Report: ``losses.append(float(loss))`` ... ``return tf.convert_to_tensor(dis)``, "TF 2.0:
tf.GradientTape().gradient() returns None", https://github.com/tensorflow/tensorflow/issues/30190.
The float is a host value: the tensor made from it is a constant the tape never saw computed.
"""

from __future__ import annotations

import libcst as cst

from benchmarks.mutation.operators._base import Operator, SiteTransformer


class _T(SiteTransformer):
    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel:
        # eager code only: float() of a symbolic tensor raises while tracing
        if not self.in_tape or self.in_graph or len(original.body) != 1:
            return updated
        assign = original.body[0]
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return updated
        target = assign.targets[0].target
        if not isinstance(target, cst.Name) or "loss" not in target.value.lower():
            return updated
        if not self.hit():
            return updated
        name = target.value
        self.detail = f"{name} = float({name})"
        if self.twin:  # the float for logging, after the tape
            new = self.stmt(f"{name}_value = float({name})")
            if self.tapes:
                self.after_with[-1].append(new)
                return updated
            return cst.FlattenSentinel([updated, new])
        return cst.FlattenSentinel([updated, self.stmt(f"{name} = {self.ctx.tf}.convert_to_tensor(float({name}))")])


class FloatLoss(Operator):
    name = "float_loss"
    codes = ("GC105",)
    summary = "loss = tf.convert_to_tensor(float(loss)) inside the tape (eager code)"
    twin_summary = "float(loss) after the tape, for logging"
    transformer = _T
