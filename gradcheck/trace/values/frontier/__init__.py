"""Where a gradient that exists became useless: the op at which it turned identically zero
(GC201) or stopped being finite (GC202), and why.

Given the forward values and the loss gradients of the tensors between the sources and the
loss (``replay.Values``), a *frontier* is an op whose outputs carry a usable gradient
(nonzero; finite) while one of its inputs on a source's path does not: walking back from the
loss, that op's own gradient is where the gradient died. No list of ops decides that, the
values do; when a tensor feeds several such ops, each one's own gradient (``own_vjp``) tells
which one produced the NaN, or that two nonzero contributions cancel exactly.

Naming the cause, and telling a structural zero from one by chance, does need the op's
meaning: a step function (``tf.sign``, whose gradient is zero by construction), a dead
ReLU, a saturated softmax or sigmoid, a clip or a ``tf.where`` that never lets the gradient
through, a factor that is zero (a mask, a constant, a weight that never moves), two paths
that cancel, a loop whose body cut the value. A zero is structural when
it survives perturbing the op's input (a 1% relative jitter: a ReLU dead by a wide margin
stays dead, a saturated softmax stays saturated) and does not come from the batch itself
(an all-zero input batch is chance, the next batch differs); only structural zeros are
reported. A zero factor that is a trained weight which does get a gradient (a LoRA ``B``
or a ReZero ``alpha`` initialised to 0) is transient: the first update moves it.

The passes, in the order ``findings`` runs them over one shared ``analysis.Analysis``:

- ``nonfinite``: the GC202 frontiers, each explained by the op that is not finite there
  (sqrt/log/division at 0, an overflowing exp, ...) and a ``tf.where`` that guards it;
- ``zero``: the GC201 frontiers, each explained by two paths that cancel (``cancellation``)
  or by the consumer's kind: ``step`` (an op whose gradient TensorFlow defines as zero,
  ``tf.sign``), ``relu``, ``saturation`` (and clipped probabilities; a clip of a value that
  is zero upstream is blamed on why it is zero), ``masks`` (``tf.where``), a zero factor
  (``zero_values``), a loop (``loops``); a frontier behind which a step function cuts
  every path back to the sources is that step's (``step.steps_behind``). Sources no
  frontier reaches are handed to ``hidden_cuts``: a GC1xx cut whose None a loop or a
  function call turned into zeros, named with the cut's own code;
- ``report``: the causes of each pass turned into findings, a source named only when every
  frontier on its paths is explained (a cause may explain without being a finding itself:
  a ``tf.sign`` inside a mask).

Module map: ``analysis`` (the shared state and helpers, ``Cause``), ``ops`` (the op kinds the
explainers recognise), ``structure`` (the jitter and margin tests of a structural zero),
``inside`` (a frontier at a ``tf.function``'s call, followed into its body), ``earlier`` (a zero
factor that an earlier request of the step returned, named by that request's cause).
"""

from __future__ import annotations

from gradcheck.findings import Finding
from gradcheck.trace.diagnose.describe import merge
from gradcheck.trace.record.errors import internal_error
from gradcheck.trace.values.frontier import nonfinite, zero
from gradcheck.trace.values.frontier.analysis import Analysis, Cause
from gradcheck.trace.values.frontier.earlier import remember
from gradcheck.trace.values.frontier.hidden_cuts import hidden_cuts
from gradcheck.trace.values.frontier.report import report

__all__ = ["Cause", "findings"]


def findings(checked, values, zero_sources, nonfinite_sources, withheld=None) -> list[Finding]:
    """``withheld(analysis, cause)``: a cause that is not the program's (``values.frozen``),
    counted as no explanation."""
    analysis = Analysis(checked, values)
    out: list[Finding] = []
    if nonfinite_sources:
        out += report(analysis, nonfinite_sources, _judged(nonfinite.causes, withheld))
    if zero_sources:
        out += report(analysis, zero_sources, _judged(zero.causes, withheld), hidden_cuts)
    out = merge(out)
    if zero_sources:
        try:
            remember(checked, out, zero_sources)  # a later request may multiply by these zeros
        except Exception as error:  # noqa: BLE001 - never at the cost of this request's findings
            internal_error(error)
    return out


def _judged(find_causes, withheld):
    if withheld is None:
        return find_causes

    def judged(a, region, tensor_mask):
        return [(None if c is not None and withheld(a, c) else c, m) for c, m in find_causes(a, region, tensor_mask)]

    return judged
