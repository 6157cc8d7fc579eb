"""``GradientCall``: one gradient request of the user's, as every check reads it.

``capture`` builds it once per ``tape.gradient`` (or ``jacobian``) call; the checks
registered in ``registry`` take it and nothing else. It is valid during the call only
(in eager mode ``site`` holds the live frame of the caller)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

from gradcheck.trace.record import _tf


@dataclass(frozen=True, eq=False)
class GradientCall:
    #: the active ``capture.session.Session``
    session: object
    #: the user's ``tf.GradientTape`` and gradcheck's ``capture.session.TapeState`` beside it
    tape: object
    state: object
    target: object
    sources: object
    output_gradients: object
    #: ``capture.callsite.CallSite``: the user's call, resolved only when a finding needs it
    site: object
    #: the ``FuncGraph`` being traced, or None in eager mode
    graph: object = None
    #: in graph mode, the graph's op count when the call began (ops after it are the gradient's)
    upto: int | None = None
    #: the gradients as computed (for a Jacobian: which sources the target is connected to)
    grads: object = None
    #: the ``LookupError`` TensorFlow raised instead of gradients (an op without a gradient)
    error: BaseException | None = None
    jacobian: bool = False
    #: what one check computed that another reuses (the diagnosis context, the value check's)
    memo: dict = field(default_factory=dict, repr=False)

    @property
    def eager(self) -> bool:
        return self.graph is None

    @cached_property
    def flat_sources(self) -> list:
        return _tf.tf.nest.flatten(self.sources)

    @cached_property
    def flat_targets(self) -> list:
        """The targets as tensors (a variable target is its handle)."""
        return [t.handle if _tf.is_variable(t) else t for t in _tf.tf.nest.flatten(self.target)]

    @cached_property
    def flat_grads(self) -> list:
        return _tf.tf.nest.flatten(self.grads, expand_composites=False)

    @cached_property
    def flat_output_gradients(self) -> list | None:
        return _tf.tf.nest.flatten(self.output_gradients) if self.output_gradients is not None else None

    def with_gradients(self, grads) -> GradientCall:
        """The same call once TensorFlow returned its gradients (the memo is shared)."""
        return replace(self, grads=grads, memo=self.memo)
