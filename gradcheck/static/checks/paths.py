"""The shared rule of the cut codes: a source whose every path to the target goes through
non-differentiable sites (GC101-GC107, GC109, GC111, GC113, GC114's casts) is starved by
those sites; one finding per culprit site, naming every source it starves."""

from __future__ import annotations

import ast
from dataclasses import replace

from gradcheck.static.checks import gc108
from gradcheck.static.checks.common import picked
from gradcheck.static.program import Check, Program
from gradcheck.static.values import HOLDER, Site, has_live


def path_cuts(
    program: Program,
    check: Check,
    target: dict,
    sources: set[str],
    done: set[str],
    starved: dict[Site, set[str]],
    through: dict[Site, tuple[str, Check, int]],
) -> None:
    """The sites that cut every path from a source (or a part of it) to the target."""
    groups = []
    opaque = not sources and not done  # what the sources hold is unknown here
    for source in sorted(sources):
        related = [o for o in target if program.related(source, o, check)]
        groups.append((source, related))
        # A parameter passed as the sources may be a variable read here, or the variables
        # of a model called here (``backprop(x, y, model.trainable_variables)``).
        opaque = opaque or (not related and source in program.opaque)
    if opaque and not has_live(check.target.flow):
        # Sources unknown and no origin reaches the target: whatever was asked gets nothing.
        # A live unseen value (a model this context cannot resolve) may be the path.
        _held_cuts(program, check, starved, through)
        # A cause is what the tape's computation did: a ``predict`` no tape records, whose
        # value reaches the target only as data (a class index), is none.
        groups += [(o, [o]) for o in target if not all(s.when == "outside" for s in target[o])]
    if not has_live(check.target.flow):
        _cut_calls(check, groups, starved, through)
    elif picked(check):
        # Sources filtered at run time: the variables a cut starves may be those left out.
        groups = []
    for source, related in groups:
        units = _units(source, related)
        # When some part of the source gets its gradient (the classifier after a frozen
        # backbone), the finding names the parts it starves, not the source as a whole.
        partly = any(any(not target[o] for o in unit) for unit in units)
        for unit in units:
            if any(not target[o] for o in unit) or all(o in program.weightless for o in unit):
                continue  # a live path; or a layer with no variables (Rescaling) behind the cut
            for origin in unit:
                sites = _reported(target[origin])
                if has_live(check.target.flow) and sites and all(program.stops_a_target(s) for s in sites):
                    # only through a target stopped on purpose, while the loss trains
                    # something else: the sources are the mistake, not the stop
                    # (a forward pass run before the tape on purpose: the list that asks for
                    # its variables, as the trace engine's ``source_list``)
                    built = gc108.request_sources_site(program, check) if sites[0].code == "GC109" else None
                    sites = [built or program.site(check.node, "GC108", method="stopped-target")]
                for site in sites:
                    starved[site].add(unit[0] if partly else source)
                    through.setdefault(site, (origin, check, len(sites)))


def _reported(cuts: frozenset) -> list[Site]:
    """The sites that cut an origin, without the moot GC109s (a path cut before the tape
    and cut again after) when another site cuts it: that one is what to change. When only
    moot ones are left, they are what cuts it."""
    kept = [s for s in cuts if not s.moot]
    return kept or [replace(s, moot=False) for s in cuts]


def _held_cuts(
    program: Program,
    check: Check,
    starved: dict[Site, set[str]],
    through: dict[Site, tuple[str, Check, int]],
) -> None:
    """When nothing reaches the target live and the sources are tensors this file cannot
    resolve (``tape.gradient(loss, conv_out)``, ``conv_out`` an output of a model built from
    a function's arguments), the cuts on the outputs of the models the request's computation
    called (their ``HOLDER`` marks) starve the sources as written."""
    if not check.leaves or check.sources.flow or check.sources.models:
        return
    held = {s for o, cuts in check.target.flow.items() if o.startswith(HOLDER) for s in cuts if s.when != "outside"}
    for node, _value in check.leaves:
        name = ast.unparse(node)
        program.kinds.setdefault(name, "tensor")
        for site in held:
            starved[site].add(name)
            through.setdefault(site, (name, check, len(held)))


def _cut_calls(
    check: Check,
    groups: list[tuple[str, list[str]]],
    starved: dict[Site, set[str]],
    through: dict[Site, tuple[str, Check, int]],
) -> None:
    """A model whose parts this file does not show (a trainer around layers passed in) is
    still known to reach the target only through its call's output (its ``HOLDER`` mark):
    when that output is cut on every path and nothing at all reaches the target live (not
    even what the analysis could not follow), the cuts on its path starve the model."""
    for source, related in groups:
        cuts = check.target.flow.get(HOLDER + source)
        if related or not cuts:
            continue
        for site in cuts:
            starved[site].add(source)
            through.setdefault(site, (source, check, len(cuts)))


def _units(source: str, related: list[str]) -> list[list[str]]:
    """The origins that get their gradient together: the source as a whole when the target
    holds it as one (an opaque model call), else each of its parts (a layer of a model
    whose ``call`` was followed), with any part that holds it."""
    if not related:
        return []
    if source in related:
        return [related]
    units = []
    for origin in related:
        holders = [o for o in related if o != origin and origin.startswith(o + ".")]
        units.append([origin, *holders])
    return units
