"""GC115 non-trainable-source, static side: ``model.variables`` (or a list built from it)
asked for while the model holds non-trainable variables (moving statistics, a Keras 3
seed generator), or a non-trainable variable as a source (``sources.source_causes``).

The rule's meaning, fix and examples: ``RULE`` (``gradcheck/rules/``)."""

from __future__ import annotations

import ast

from gradcheck.rules import get_rule
from gradcheck.static.checks.common import lists_all_variables, source_list
from gradcheck.static.checks.registry import cut
from gradcheck.static.program import Check, Program
from gradcheck.static.values import Site

CODE = "GC115"
RULE = get_rule(CODE)

cut(CODE)  # found in the sources (``sources.source_causes``), reported as found


def stateful_parts(program: Program, check: Check, value, site: Site, report) -> None:
    """GC115 at ``site`` for each part of the models ``value`` lists every variable of that
    holds non-trainable variables (moving statistics, a Keras 3 seed generator)."""
    for model in value.models:
        for part in sorted({model} | program.parts_in(check, model)):
            if part in program.stateful:
                report(site, part, set())


def all_variables_binding(program: Program, request: ast.AST, name: str) -> ast.expr | None:
    """The expression last bound to ``name`` before ``request`` (``source_list``) when it
    lists every variable of models: ``model.variables``, ``a.weights + b.weights`` (not a
    comprehension, which may keep only the trainable ones)."""
    bound = source_list(program, request, name)
    return bound if bound is not None and lists_all_variables(bound) else None
