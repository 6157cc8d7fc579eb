"""GC110 unwatched-source, static side: a source that is a plain tensor the tape never
watched (where it was made, or the tape's one ``watch`` of another tensor), a tensor made
under another tape, and a tape opened with ``watch_accessed_variables=False`` that
watches nothing (``sources.source_causes`` asks these).

The rule's meaning, fix and examples: ``RULE`` (``gradcheck/rules/``)."""

from __future__ import annotations

import ast

from gradcheck.rules import get_rule
from gradcheck.static.checks.registry import register
from gradcheck.static.program import Check, Program, binding_line
from gradcheck.static.values import Site, has_live, real

CODE = "GC110"
RULE = get_rule(CODE)


def other_watch(check: Check, name: str) -> ast.Call | None:
    """The tape's only ``tape.watch`` call, when it watched other tensors than ``name``."""
    if len(check.watch_calls) != 1:
        return None
    call, names = check.watch_calls[0]
    return call if names and name not in names else None


def made_on_another_tape(program: Program, check: Check, name: str, value) -> bool:
    """A source tensor computed (from a model or variable) inside another tape's block and
    never watched by this one: every path of it is cut for this tape."""
    if not check.own_tape or check.unknown_watch or check.tape is None or value.models or value.container:
        return False
    if value.dtype == "int" or not value.flow or has_live(value.flow) or not any(real(o) for o in value.flow):
        return False
    if any(name in names for _call, names in check.watch_calls):
        return False
    made = binding_line(program.tree, name, check.node.lineno)
    if made is None:
        return False
    for other in ast.walk(program.tree):
        if (
            isinstance(other, ast.With)
            and other is not check.tape
            and other.lineno <= made.lineno <= (other.end_lineno or other.lineno)
            and any("GradientTape" in ast.unparse(item.context_expr) for item in other.items)
        ):
            return not (check.tape.lineno <= made.lineno <= (check.tape.end_lineno or check.tape.lineno))
    return False


def blind_tape(check: Check) -> ast.Call | None:
    """The ``GradientTape(watch_accessed_variables=False)`` call of the check's own tape,
    when nothing was watched on it (a watch this analysis cannot name counts as one)."""
    if check.tape is None or not check.own_tape or check.unknown_watch or check.watch_calls:
        return None
    for item in check.tape.items:
        call = item.context_expr
        if isinstance(call, ast.Call) and any(
            k.arg == "watch_accessed_variables" and isinstance(k.value, ast.Constant) and k.value.value is False
            for k in call.keywords
        ):
            return call
    return None


@register("fields", CODE)
def fields(program: Program, site: Site, sources: list[str]) -> dict[str, str]:
    return {"variant": site.method} if site.method == "accessed" else {}
