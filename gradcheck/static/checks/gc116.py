"""GC116 captured-by-value, static side: a layer first called (so built) inside a
``tf.function`` of the file, its variables captured by the trace (``models``); here: the
function its message names.

The rule's meaning, fix and examples: ``RULE`` (``gradcheck/rules/``)."""

from __future__ import annotations

from gradcheck.rules import get_rule
from gradcheck.static.checks.registry import register
from gradcheck.static.program import Program
from gradcheck.static.values import Site

CODE = "GC116"
RULE = get_rule(CODE)


@register("fields", CODE)
def fields(program: Program, site: Site, sources: list[str]) -> dict[str, str]:
    return {"function": site.call}
