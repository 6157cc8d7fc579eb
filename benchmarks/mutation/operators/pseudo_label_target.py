"""GC203: a consistency / pseudo-label term whose target is the model's own sharpened prediction, unstopped.

Report: a bootstrapping loss whose soft pseudo-label target ``p`` (the model's softmax) is not
detached, https://github.com/vfdev-5/BootstrappingLoss/issues/2 (the TensorFlow spelling with
the stop: ``onehot_labels=tf.stop_gradient(tf.nn.softmax(...))`` in Meta Pseudo Labels).
Sites: an assignment to a ``...loss...`` name inside a tape after a forward output ``y`` was
bound in it; the mutant adds ``mean((softmax(y) - softmax(y / 0.5))**2)`` to it.
"""

from __future__ import annotations

import libcst as cst

from benchmarks.mutation.cstutil import is_tape_with
from benchmarks.mutation.operators._base import AfterForward, Operator


class _T(AfterForward):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.outputs: list[list[str]] = []  # forward outputs bound so far in each enclosing tape

    def visit_With(self, node: cst.With) -> None:
        super().visit_With(node)
        if is_tape_with(node):
            self.outputs.append([])

    def leave_With(self, original: cst.With, updated: cst.With) -> cst.BaseStatement | cst.FlattenSentinel:
        if is_tape_with(original):
            self.outputs.pop()
        return super().leave_With(original, updated)

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel:
        if not self.tapes or len(original.body) != 1 or not isinstance(original.body[0], cst.Assign):
            return updated
        assign = original.body[0]
        if self.is_forward_call(assign.value):
            self.outputs[-1].extend(self.bound_names(assign))
            return updated
        targets = assign.targets
        if len(targets) != 1 or not isinstance(targets[0].target, cst.Name):
            return updated
        loss = targets[0].target.value
        if "loss" not in loss.lower() or not self.outputs[-1] or not self.hit():
            return updated
        y = self.outputs[-1][-1]
        tf = self.ctx.tf
        target = f"{tf}.nn.softmax({y} / 0.5, axis=-1)"  # sharpened (temperature 0.5)
        if self.twin:
            target = f"{tf}.stop_gradient({target})"
        self.detail = f"{loss} += consistency with sharpened {y}"
        new = self.stmt(f"{loss} = {loss} + {tf}.reduce_mean({tf}.square({tf}.nn.softmax({y}, axis=-1) - {target}))")
        return cst.FlattenSentinel([updated, new])


class PseudoLabelTarget(Operator):
    name = "pseudo_label_target"
    codes = ("GC203",)
    summary = "loss += mean((softmax(y) - softmax(y / 0.5))**2) inside the tape: a sharpened self-target without stop_gradient"
    twin_summary = "the same term with tf.stop_gradient on the sharpened target"
    effect = "change"
    transformer = _T
