"""GC105 host-escape, static side: a value taken out of TensorFlow (``.numpy()``, ``np.*``,
``float()``, ``predict``) is a cut the interpreter marks on the path (``calls``, ``models``);
here, what else says it: an escape in a traced step (it raises, whatever other paths
remain), and a ``predict`` where no tape records that a cut inside the tape makes moot.

The rule's meaning, fix and examples: ``RULE`` (``gradcheck/rules/``)."""

from __future__ import annotations

from gradcheck.rules import get_rule
from gradcheck.static.checks.registry import register
from gradcheck.static.program import Check, Program
from gradcheck.static.values import Site

CODE = "GC105"
RULE = get_rule(CODE)


@register("request", CODE)
def crashes(
    program: Program,
    check: Check,
    target: dict,
    sources: set[str],
    starved: dict[Site, set[str]],
    through: dict[Site, tuple[str, Check, int]],
) -> None:
    """A host escape in a traced step, on the output of a model whose variables this request
    asks for: the step raises there, so no variable gets a gradient, even when another path
    (a second view through the same encoder) would have carried one."""
    for (site, tape), origins in program.crashes.items():
        if tape is None or tape is not check.tape:
            continue  # not this tape's computation
        for origin in origins & set(target):
            for source in sorted(sources):
                if program.related(source, origin, check):
                    starved[site].add(source)
                    through.setdefault(site, (origin, check, 0))


@register("prune", CODE)
def outside_predicts(starved: dict[Site, set[str]]) -> None:
    """A ``predict`` while no tape records (an acting pass that samples the action a loss is
    later computed for) is no cause of what a cut inside the tape starves anyway."""
    for site in [s for s in starved if s.code == CODE and s.when == "outside"]:
        inside = set().union(*(v for s, v in starved.items() if s.when != "outside" and s is not site))
        if starved[site] <= inside:
            del starved[site]


@register("last_notes", CODE)
def graph_note(program: Program, site: Site, via: tuple[str, Check, int]) -> list[str]:
    """A crash site (``crashes``, no cut count): why the step stops there."""
    if via[2]:
        return []
    return [
        "this line runs in a graph (a `train_step` that `fit` traces, or a `tf.function`), where a "
        "tensor has no value to take out: the step raises here before any gradient is computed"
    ]
