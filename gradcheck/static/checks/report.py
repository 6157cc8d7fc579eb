"""From what the interpreter found to findings: the driver of the static rules.

A ``Check`` is one gradient request (``tape.gradient``, a compiled loss, a trained
functional model): its target's flow and its sources. For each, the causes in the sources
(``sources``), the shared path rule of the cut codes (``paths``), then each code's own
request hooks (``registry``); one finding per culprit site, naming every source it starves,
worded by the rule of its code (``gradcheck/rules/``) with the fields and notes its module
adds.
"""

from __future__ import annotations

import ast
from collections import defaultdict

from gradcheck.findings import Finding
from gradcheck.rules import get_rule
from gradcheck.static import catalog
from gradcheck.static.checks.paths import path_cuts
from gradcheck.static.checks.registry import NO_PATH_NOTE, hooks
from gradcheck.static.checks.sources import source_causes
from gradcheck.static.program import Check, Program, callee_text
from gradcheck.static.values import Site, real

STATIC_NOTE = "found by the static engine, which reads the code without running it"


def findings(program: Program, checks: list[Check], path: str) -> list[Finding]:
    starved: dict[Site, set[str]] = defaultdict(set)  # culprit -> sources it starves
    through: dict[Site, tuple[str, Check, int]] = {}  # culprit -> (an origin, its check, its cut count)
    for check in checks:
        target = {o: c for o, c in check.target.flow.items() if real(o)}
        # A source is a model, or a variable or watched tensor as such: a tensor computed
        # from a variable (``x2 = tf.Variable(2.0) + 1.0``) is not one (that is GC110's).
        sources = {s for s, cuts in check.sources.flow.items() if not cuts and real(s)}
        sources |= set(check.sources.models)
        # Causes in the sources themselves (an integer dtype, a plain tensor, non-trainable
        # variables): the trace engine names them before looking for a path.
        done = source_causes(program, check, sources, starved, through)
        sources -= done
        if not target:
            continue
        path_cuts(program, check, target, sources, done, starved, through)
        for hook in hooks("request"):
            hook(program, check, target, sources, starved, through)
    for hook in hooks("prune"):
        hook(starved)
    found = [_finding(program, site, sorted(starved[site]), through[site], path) for site in starved]
    return sorted(found, key=Finding.sort_key)


def _finding(program: Program, site: Site, sources: list[str], via: tuple[str, Check, int], path: str) -> Finding:
    rule = get_rule(site.code)
    names = [program.label(s) for s in sources]
    call = f"{site.call}(...)" if site.code == "GC109" and site.is_call else site.call
    models = any(program.model_kind(s) == "model" for s in sources)
    fields = {
        "call": call,
        "op": "",
        "arg": site.arg or "x",
        "when": site.when,
        "names": ", ".join(names),
        "variables": _phrase(program, sources),
        "count": 2 if models else len(sources),
    }
    for hook in hooks("fields", site.code):
        fields.update(hook(program, site, sources))
    line_text = program.source_lines[site.line - 1] if 0 < site.line <= len(program.source_lines) else ""
    end_text = program.source_lines[site.end_line - 1] if 0 < site.end_line <= len(program.source_lines) else ""
    return Finding(
        code=site.code,
        message=rule.format_message(**fields),
        path=path,
        line=site.line,
        column=_char_column(line_text, site.col) + 1,
        end_line=site.end_line,
        end_column=_char_column(end_text, site.end_col) + 1,
        call=site.call,
        variables=names,
        fix=rule.fix_text(**fields),
        notes=[*_notes(program, site, via), STATIC_NOTE],
    )


def _notes(program: Program, site: Site, via: tuple[str, Check, int]) -> list[str]:
    origin, check, cuts = via
    notes = [note for hook in hooks("notes", site.code) for note in hook(program, site, via)]
    birth = check.births.get(origin) or program.births.get(origin)
    if (
        cuts
        and birth is not None
        and (birth.lineno, birth.col_offset) != (site.line, site.col)
        and site.code not in NO_PATH_NOTE
        and site.method != "accessed"  # the tape records none of it: no path to speak of
    ):
        target = target_text(check)
        where = "only through this call" if cuts == 1 else f"only through cut paths: this one and {cuts - 1} more"
        reach = f"never reaches {target}" if site.code == "GC108" else f"reaches {target} {where}"
        notes.append(f"the output of {program.describe_call(birth)} (line {birth.lineno}) {reach}")
    notes += [note for hook in hooks("last_notes", site.code) for note in hook(program, site, via)]
    return notes


def target_text(check: Check) -> str:
    node = check.node
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "compile":
        return f"the loss compiled at line {node.lineno}"
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("Model", "Functional")
    ):
        return f"the outputs of the model built at line {node.lineno}"
    gradient = catalog.GRADIENT_METHODS | {"minimize"}
    if isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute) and node.func.attr in gradient:
        return f"the target {callee_text(node.args[0])} of line {node.lineno}"
    if isinstance(node, ast.Call):
        return f"the model built at line {node.lineno}"
    return "the target"


def _phrase(program: Program, sources: list[str]) -> str:
    models = [program.label(s) for s in sources if program.model_kind(s) == "model"]
    others = [program.label(s) for s in sources if program.model_kind(s) != "model"]
    parts = []
    if models:
        parts.append("the variables of " + _and(models))
    if len(others) == 1:
        parts.append(others[0])
    elif others:
        shown = ", ".join(others[:4]) + (f" and {len(others) - 4} more" if len(others) > 4 else "")
        parts.append(f"{len(others)} variables ({shown})")
    return " and ".join(parts)


def _and(names: list[str]) -> str:
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " and " + names[-1]


def _char_column(line: str, byte_offset: int) -> int:
    """``ast`` columns count UTF-8 bytes; the renderers count characters."""
    if line.isascii():
        return byte_offset
    return len(line.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore"))
