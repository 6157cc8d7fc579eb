"""The rule registry: every GC code, greppable in one place (codes are public API).

Importing this package imports no TensorFlow.
"""

from __future__ import annotations

from gradcheck.rules import _reserved
from gradcheck.rules._base import Example, Rule
from gradcheck.rules.gc101_integer_index_op import IntegerIndexOp
from gradcheck.rules.gc102_rounding_op import RoundingOp
from gradcheck.rules.gc103_integer_or_bool_cast import IntegerOrBoolCast
from gradcheck.rules.gc104_stop_gradient import StopGradient
from gradcheck.rules.gc105_host_escape import HostEscape
from gradcheck.rules.gc106_numpy_function import NumpyFunction
from gradcheck.rules.gc107_sampling_op import SamplingOp
from gradcheck.rules.gc108_unused_source import UnusedSource
from gradcheck.rules.gc109_outside_tape import OutsideTape
from gradcheck.rules.gc110_unwatched_source import UnwatchedSource
from gradcheck.rules.gc111_no_gradient_registered import NoGradientRegistered
from gradcheck.rules.gc112_custom_gradient_none import CustomGradientNone
from gradcheck.rules.gc113_variable_assign import VariableAssign
from gradcheck.rules.gc114_integer_source import IntegerSource
from gradcheck.rules.gc115_non_trainable_source import NonTrainableSource
from gradcheck.rules.gc116_captured_by_value import CapturedByValue
from gradcheck.rules.gc117_not_updated import NotUpdated
from gradcheck.rules.gc201_zero_gradient import ZeroGradient
from gradcheck.rules.gc202_non_finite_gradient import NonFiniteGradient
from gradcheck.rules.gc203_unstopped_bootstrap_target import UnstoppedBootstrapTarget
from gradcheck.rules.gc204_non_finite_loss import NonFiniteLoss
from gradcheck.rules.gc301_custom_gradient_mismatch import CustomGradientMismatch

_RULE_CLASSES: tuple[type[Rule], ...] = (
    IntegerIndexOp,
    RoundingOp,
    IntegerOrBoolCast,
    StopGradient,
    HostEscape,
    NumpyFunction,
    SamplingOp,
    UnusedSource,
    OutsideTape,
    UnwatchedSource,
    NoGradientRegistered,
    CustomGradientNone,
    VariableAssign,
    IntegerSource,
    NonTrainableSource,
    CapturedByValue,
    NotUpdated,
    ZeroGradient,
    NonFiniteGradient,
    UnstoppedBootstrapTarget,
    NonFiniteLoss,
    CustomGradientMismatch,
    _reserved.ScriptError,
    _reserved.NoGradientReached,
    _reserved.Timeout,
    _reserved.TensorFlowMissing,
    _reserved.TrainingNotReached,
)

RULES: dict[str, Rule] = {cls.code: cls() for cls in _RULE_CLASSES}

_BY_OP: dict[str, str] = {}
_HINTS: dict[str, tuple[str, ...]] = {}
for _rule in RULES.values():
    for _op in _rule.op_types:
        _BY_OP[_op] = _rule.code
    for _op, _names in _rule.call_names.items():
        _HINTS[_op] = _names


def get_rule(code: str) -> Rule:
    """The rule of a code (``GC101``, any case) or a name (``integer-index-op``), as ``ruff rule`` takes either."""
    rule = RULES.get(code.upper()) or next((r for r in RULES.values() if r.name == code.lower()), None)
    if rule is None:
        raise KeyError(f"unknown rule code {code!r}")
    return rule


def all_rules() -> list[Rule]:
    return [RULES[code] for code in sorted(RULES)]


def trace_rules() -> list[Rule]:
    """The rules the trace engine reports: GC1xx (no gradient), GC2xx (a degenerate
    gradient), GC3xx (a wrong gradient). Each has runnable examples."""
    return [r for r in all_rules() if r.code.startswith(("GC1", "GC2", "GC3"))]


def classify_op(op_type: str) -> str | None:
    """The rule code whose cause an op type names, if any."""
    return _BY_OP.get(op_type)


def call_hints(op_type: str) -> tuple[str, ...]:
    """Callee names a user writes for ``op_type`` (to find its call on a source line)."""
    return (*_HINTS.get(op_type, ()), op_type.lower())


__all__ = ["RULES", "Example", "Rule", "all_rules", "call_hints", "classify_op", "get_rule", "trace_rules"]
