"""GC115 non-trainable-source, static side: ``model.variables`` (or a list built from it)
asked for while the model holds non-trainable variables (moving statistics, a Keras 3
seed generator), or a non-trainable variable as a source (``sources.source_causes``).

The rule's meaning, fix and examples: ``RULE`` (``gradcheck/rules/``)."""

from __future__ import annotations

import ast

from gradcheck.rules import get_rule
from gradcheck.static.checks.common import function_at, lists_all_variables, source_list
from gradcheck.static.checks.registry import cut
from gradcheck.static.names import dotted
from gradcheck.static.program import Check, Program, binding_line
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
    """GC115 at ``site`` for ``m.variables`` asked for where ``m`` was made by a class or
    factory of a module this file imports and cannot read (``from gan import
    Discriminator``: nothing says what it holds), while the same function names
    ``m.trainable_variables`` (the list its optimizer applies): the program's own code says
    the two lists differ. A model the file shows is judged by what it holds
    (``stateful_parts``), never so."""
    if not value.models or not _made_elsewhere(program, check.node, listed.value):
        return
    receiver = ast.dump(listed.value)
    scope = function_at(program, check.node) or program.tree
    for node in ast.walk(scope):
        if isinstance(node, ast.Attribute) and node.attr in _TRAINABLE_LISTS and ast.dump(node.value) == receiver:
            written = ast.unparse(listed.value)
            for model in value.models:
                # what the two lists differ by: named so, since its layers are not known
                name = f"{model}.<non-trainable>"
                program.kinds.setdefault(name, "variable")
                program.labels.setdefault(name, f"every variable {written}.{listed.attr} adds to {written}.{node.attr}")
                report(site, name, {model})
            return


#: Where the frameworks' own classes and factories come from (their models are read or known).
_FRAMEWORKS = ("tensorflow.", "keras.", "tf_keras.", "numpy.", "tensorflow_probability.", "tensorflow_hub.")


def _made_elsewhere(program: Program, request: ast.AST, receiver: ast.AST) -> bool:
    """``receiver`` is a name last bound, before ``request``, to a call of a class or factory
    the file imports from a module of its own project (``Discriminator()``, ``build_model()``)."""
    if not isinstance(receiver, ast.Name):
        return False
    made = binding_line(program.tree, receiver.id, request.lineno)
    if not isinstance(made, ast.Call):
        return False
    parts = dotted(made.func)
    qual = program.aliases.resolve(parts) if parts else None
    return qual is not None and not qual.startswith(_FRAMEWORKS)
