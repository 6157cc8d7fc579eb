"""GC111 no-gradient-registered, static side: an op TensorFlow registers no gradient for, on
the path (``catalog``'s table generated from TensorFlow's gradient registry,
``static/data/no_gradient_ops.json``); the shared path rule reports it. Here: the op type its
message names.

The rule's meaning, fix and examples: ``RULE`` (``gradcheck/rules/``)."""

from __future__ import annotations

from gradcheck.rules import get_rule
from gradcheck.static.checks.registry import register
from gradcheck.static.program import Program
from gradcheck.static.values import Site

CODE = "GC111"
RULE = get_rule(CODE)


@register("fields", CODE)
def fields(program: Program, site: Site, sources: list[str]) -> dict[str, str]:
    return {"op": site.method}
