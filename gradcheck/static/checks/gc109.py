"""GC109 outside-tape, static side: a forward pass (or a computation on a variable) that ran
where the followed tape does not record, before it opened, after it closed or while
paused, or once in a layer's ``__init__``/``build``: the interpreter cuts there
(``interp._outside``); the shared path rule reports it. Here: its message and notes.

The rule's meaning, fix and examples: ``RULE`` (``gradcheck/rules/``)."""

from __future__ import annotations

from gradcheck.rules import get_rule
from gradcheck.static.checks.registry import register
from gradcheck.static.program import Check, Program
from gradcheck.static.values import Site

CODE = "GC109"
RULE = get_rule(CODE)


@register("fields", CODE)
def fields(program: Program, site: Site, sources: list[str]) -> dict[str, str]:
    """In a layer's ``build``/``__init__``: the variant that names the method."""
    return {"variant": "build", "method": site.method, "call": site.call} if site.method else {}


@register("notes", CODE)
def tape_notes(program: Program, site: Site, via: tuple[str, Check, int]) -> list[str]:
    origin, check, _cuts = via
    tape = check.tape
    if tape is None:
        return []
    notes = []
    if site.when == "before":
        notes.append(f"the GradientTape starts recording at line {tape.lineno}")
    elif site.when == "after":
        notes.append(f"the GradientTape stops recording after line {tape.end_lineno}")
    else:
        notes.append("`tape.stop_recording()` pauses the tape around this line")
    if site.via:
        when = {"before": "before the tape starts", "after": "after the tape stopped"}.get(
            site.when, "while it is paused"
        )
        notes.append(f"this line runs in the call at line {site.via}, made {when}")
    for watched in program.latent.values():
        if origin in watched and site.line < watched[origin][1]:
            notes.append(
                f"the tape knows {origin} only from `tape.watch({origin})` at line {watched[origin][1]}: "
                "what was computed from it before is a constant to the tape"
            )
            break
    return notes
