"""Where each static rule registers what it adds to the engine's report, by phase and code
(as the trace checks do with ``trace.record.registry.register``).

Phases, as ``report.findings`` runs them:

- ``request``: after the shared path rule (``paths``) for one request, what else that request
  shows (``hook(program, check, target, sources, starved, through)``: GC105's graph escapes,
  GC108's unused sources, GC301's wrong custom gradients);
- ``prune``: once every request is read, findings another one makes moot (``hook(starved)``);
- ``fields``: the message's fields for one site of the code (``hook(program, site, sources)``);
- ``notes``: notes said before the path note (``hook(program, site, via)``);
- ``last_notes``: notes said after it.

A code found by a cut on the path (an op the catalog names, an ``assign``, a forward pass
outside the tape) registers with ``cut(code)``: the shared path rule reports it.
"""

from __future__ import annotations

from collections.abc import Callable

PHASES = ("request", "prune", "fields", "notes", "last_notes")

_HOOKS: dict[str, dict[str, list[Callable]]] = {phase: {} for phase in PHASES}
_CODES: set[str] = set()
#: Codes whose findings say nothing of the path from the model's call (a wrong gradient is
#: no missing one).
NO_PATH_NOTE: set[str] = set()


def register(phase: str, code: str) -> Callable[[Callable], Callable]:
    """``@register("request", "GC108")``: ``fn`` is part of the static rule of ``code``."""
    if phase not in PHASES:
        raise ValueError(f"unknown phase {phase!r}")

    def add(fn: Callable) -> Callable:
        _HOOKS[phase].setdefault(code, []).append(fn)
        _CODES.add(code)
        return fn

    return add


def cut(code: str) -> None:
    """The code is found where the interpreter cuts a path (the shared path rule reports it)."""
    _CODES.add(code)


def hooks(phase: str, code: str | None = None) -> list[Callable]:
    """The hooks of a phase, for one code or for all (in code order)."""
    table = _HOOKS[phase]
    if code is not None:
        return list(table.get(code, ()))
    return [fn for key in sorted(table) for fn in table[key]]


def codes() -> frozenset[str]:
    """Every code a static rule module registered."""
    return frozenset(_CODES)
