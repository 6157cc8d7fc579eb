"""The checks run on every ``GradientCall``, each registered beside the code it implements
(the JAX checkify habit: one registry, one signature, no central dispatcher).

A check is ``fn(call: GradientCall) -> list[Finding]`` and belongs to one phase:

- ``"lookup"``: TensorFlow raised ``LookupError`` (an op on the path has no gradient);
- ``"none"``: the gradients are computed; the check explains the ones that are None;
- ``"values"``: the gradients are computed; the check looks at the ones that exist.

``capture`` runs a phase with ``run``; each rule module (``gradcheck/rules/gcNNN_*.py``)
names the module that decides its code in its ``trace_check`` attribute. Adding a check is
adding a module that registers itself and is imported by its package's ``__init__``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gradcheck.findings import Finding

PHASES = ("lookup", "none", "values")


@dataclass(frozen=True)
class Check:
    name: str  # module:function, for messages and the architecture test
    codes: tuple[str, ...]
    phase: str
    fn: Callable[..., list[Finding]]


_CHECKS: dict[str, list[Check]] = {phase: [] for phase in PHASES}


def register(phase: str, *codes: str) -> Callable:
    """Decorator: run ``fn(call)`` in ``phase``; ``codes`` are the codes it can report."""
    if phase not in _CHECKS:
        raise ValueError(f"unknown phase {phase!r}")

    def decorate(fn: Callable[..., list[Finding]]) -> Callable[..., list[Finding]]:
        name = f"{fn.__module__}:{fn.__qualname__}"
        if all(c.name != name for c in _CHECKS[phase]):  # a module imported twice registers once
            _CHECKS[phase].append(Check(name, codes, phase, fn))
        return fn

    return decorate


def checks(phase: str | None = None) -> list[Check]:
    """The registered checks of one phase (all phases when None), in registration order."""
    if phase is None:
        return [c for p in PHASES for c in _CHECKS[p]]
    return list(_CHECKS[phase])


def run(phase: str, call) -> list[Finding]:
    """Every check of ``phase`` on ``call``, findings in registration order."""
    findings: list[Finding] = []
    for check in _CHECKS[phase]:
        findings += check.fn(call)
    return findings
