"""Causes in a request's sources themselves, which the trace engine names before it looks
for a path: a tensor made in the request (GC108), a tape that watches nothing (GC110), an
integer source (GC114), a plain tensor never watched (GC110), every variable of a model with
non-trainable ones among them (GC115). Each cause's own logic is in its code's module."""

from __future__ import annotations

import ast

from gradcheck.static.checks import gc108, gc110, gc114, gc115
from gradcheck.static.checks.common import ALL_VARIABLES, asks_a_gradient, function_at
from gradcheck.static.program import Check, Program, binding_line
from gradcheck.static.scope import StateRef
from gradcheck.static.values import Site, has_live, real


def source_causes(
    program: Program,
    check: Check,
    sources: set[str],
    starved: dict[Site, set[str]],
    through: dict[Site, tuple[str, Check, int]],
) -> set[str]:
    """GC114 (integer sources), GC110 (plain tensors never watched), GC115 (``model.variables``
    with non-trainable ones); returns the sources these account for."""
    done: set[str] = set()

    def report(site: Site, name: str, covered: set[str]) -> None:
        starved[site].add(name)
        through.setdefault(site, (name, check, 1))
        done.update(covered)

    gradient = asks_a_gradient(check)
    blind = gc110.blind_tape(check) if gradient else None
    if blind is not None:
        # ``GradientTape(watch_accessed_variables=False)`` and no ``watch``: the variables it
        # reads are recorded for no one (GC110 at the tape, the argument to change)
        for source in sorted(sources):
            if program.model_kind(source) in ("model", "variable"):
                report(program.site(blind, "GC110", method="accessed"), source, {source})
    if gradient:
        for name, part in gc108.fresh_tensors(program, check.node):
            # made in the request itself, or picked for it alone: a new tensor, on no path
            # to the target (GC108 where it was made)
            program.kinds.setdefault(name, "tensor")
            report(program.site(part, "GC108"), name, set())
    for node, value in check.leaves or ():
        covered = {o for o in value.flow if real(o)} | set(value.models)
        if isinstance(node, ast.Name) and gradient:
            if isinstance(value.ref, StateRef) and value.dtype != "int":
                program.kinds.setdefault(node.id, "variable")
                report(program.site(check.node, "GC115"), node.id, covered)
                continue
            if value.dtype == "int":
                program.kinds.setdefault(node.id, "tensor")
                use = program.index_uses.get(node.id) or program.index_uses.get(id(value))
                if use is not None and function_at(program, use.first) is not function_at(program, check.node):
                    # the same name used in another function (the caller's ``x_batch`` passed
                    # to the loss function that casts it): not this request's tensor
                    use = None
                if use is not None and program.model_kind(node.id) != "variable":
                    made = binding_line(program.tree, node.id, check.node.lineno)
                    report(
                        program.site(use.index or use.first, "GC114", method=gc114.use_variant(program, use, made)),
                        node.id,
                        covered,
                    )
                else:
                    made = binding_line(program.tree, node.id, check.node.lineno) or check.node
                    report(program.site(made, "GC114"), node.id, covered)
            elif value.tensor and not has_live(value.flow) and check.own_tape and not check.unknown_watch:
                # the one watch of the tape, when it watched another tensor (the line to
                # change); else where the tensor was made, or the request itself for a parameter
                made = (
                    gc110.other_watch(check, node.id)
                    or binding_line(program.tree, node.id, check.node.lineno)
                    or check.node
                )
                program.kinds.setdefault(node.id, "tensor")
                report(program.site(made, "GC110"), node.id, covered)
            elif gc110.made_on_another_tape(program, check, node.id, value):
                # ``features = model1(x)`` under ``tape1``, then ``tape2.gradient(loss,
                # features)``: tape2 never watched it (where it was made, as the trace engine)
                program.kinds.setdefault(node.id, "tensor")
                made = binding_line(program.tree, node.id, check.node.lineno) or check.node
                report(program.site(made, "GC110"), node.id, covered)
        elif isinstance(node, ast.Attribute) and node.attr in ALL_VARIABLES and value.models:
            gc115.stateful_parts(program, check, value, program.site(check.node, "GC115"), report)
            if gradient:
                gc115.untyped_models(program, check, node, value, program.site(check.node, "GC115"), report)
        if isinstance(node, ast.Name) and gradient and value.models and value.container:
            # ``params = model.variables`` then ``tape.gradient(loss, params)``: the line that
            # built the list is the one to change
            built = gc115.all_variables_binding(program, check.node, node.id)
            if built is not None:
                gc115.stateful_parts(program, check, value, program.site(built, "GC115"), report)
                if isinstance(built, ast.Attribute):
                    gc115.untyped_models(program, check, built, value, program.site(built, "GC115"), report)
    # Integer variables among what the sources hold (``add_weight(..., dtype="int32")``).
    for source in sources - done:
        for part in sorted({source} | program.parts_in(check, source)):
            made = program.int_origins.get(part)
            if made is not None and (part != source or program.model_kind(part) != "model"):
                report(program.site(made, "GC114"), part, {part} if part == source else set())
    return done
