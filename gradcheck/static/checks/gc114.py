"""GC114 integer-source, static side: a source with an integer dtype (an ``int32`` tensor fed
to the computation, an integer weight), found in ``sources.source_causes``; here: where it
was used (as ids or as data) and the dtype its message names.

The rule's meaning, fix and examples: ``RULE`` (``gradcheck/rules/``)."""

from __future__ import annotations

import ast

from gradcheck.rules import get_rule
from gradcheck.static.checks.registry import register
from gradcheck.static.program import Program, binding_line
from gradcheck.static.values import Site

CODE = "GC114"
RULE = get_rule(CODE)


def use_variant(program: Program, use, made: ast.AST | None) -> str:
    """GC114's fix for an integer tensor fed to the computation: ids (``indices``) or data
    (``tensor``, an uint8 image). Fed to a model the file does not show, the dtype where it
    was made decides: ``uint8`` is an image's."""
    if use.index is not None:
        return "indices"
    if use.as_index is False:
        return "tensor"
    if made is not None:
        text = "\n".join(program.source_lines[made.lineno - 1 : made.end_lineno or made.lineno])
        if "uint8" in text:
            return "tensor"
    return "indices"


def dtype_text(program: Program, site: Site, sources: list[str]) -> str:
    """The integer dtype the code spells where the value is made (``tf.int32``), if it does:
    on the culprit's lines, else where the source (a tensor fed to the model) was bound."""
    spans = [(site.line, site.end_line)]
    for name in sources:
        if name.isidentifier():
            made = binding_line(program.tree, name, site.line)
            if made is not None:
                spans.append((made.lineno, made.end_lineno or made.lineno))
    for first, last in spans:
        lines = program.source_lines[first - 1 : last]
        for word in ("uint8", "int8", "int16", "int32", "int64", "bool"):
            if any(word in line for line in lines):
                return word
    return "an integer type"


@register("fields", CODE)
def fields(program: Program, site: Site, sources: list[str]) -> dict[str, str]:
    found = {"dtype": dtype_text(program, site, sources)}
    if site.method in ("indices", "tensor"):
        found["variant"] = site.method
    return found
