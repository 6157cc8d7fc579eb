"""GC115 non-trainable-source, static side: ``model.variables`` (or a list built from it)
asked for while the model holds non-trainable variables (moving statistics, a Keras 3
seed generator), or a non-trainable variable as a source (``sources.source_causes``).

The rule's meaning, fix and examples: ``RULE`` (``gradcheck/rules/``)."""

from __future__ import annotations

import ast

from gradcheck.rules import get_rule
from gradcheck.static.checks.common import function_at, lists_all_variables, source_list
from gradcheck.static.checks.registry import cut
from gradcheck.static.program import Check, Program
from gradcheck.static.values import Site

CODE = "GC115"
RULE = get_rule(CODE)

cut(CODE)  # found in the sources (``sources.source_causes``), reported as found

#: What a model's trainable variables are called.
_TRAINABLE_LISTS = frozenset(("trainable_variables", "trainable_weights"))


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


def untyped_models(program: Program, check: Check, listed: ast.Attribute, value, site: Site, report) -> None:
    """GC115 at ``site`` for ``m.variables`` asked for where ``m``'s class is one this file
    cannot read (``from gan import Discriminator``: nothing says what it holds), while the
    same function names ``m.trainable_variables`` (the list its optimizer applies): the
    program's own code says the two lists differ. A model the file shows is judged by what
    it holds (``stateful_parts``), never so."""
    unknown = [m for m in value.models if _untyped(program, check, m)]
    if not unknown or len(unknown) != len(value.models):
        return
    receiver = ast.dump(listed.value)
    scope = function_at(program, check.node) or program.tree
    for node in ast.walk(scope):
        if isinstance(node, ast.Attribute) and node.attr in _TRAINABLE_LISTS and ast.dump(node.value) == receiver:
            for model in unknown:
                # what the two lists differ by: named so, since its layers are not known
                written = ast.unparse(listed.value)
                name = f"{model}.<non-trainable>"
                program.kinds.setdefault(name, "variable")
                program.labels.setdefault(name, f"every variable {written}.{listed.attr} adds to {written}.{node.attr}")
                report(site, name, {model})
            return


def _untyped(program: Program, check: Check, model: str) -> bool:
    """A model known only by its name or its use: no class, layers or outputs of the file's."""
    return (
        model in program.guessed
        and model not in program.sequential
        and model not in program.outputs
        and not program.parts_in(check, model)
    )
