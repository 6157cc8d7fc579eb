"""GC301 custom-gradient-mismatch, static side: the target computed, on a live path, through a
``tf.custom_gradient`` whose gradient function never reads the upstream gradient
(``custom.analyse``): the sources that flowed into it get a wrong gradient.

The rule's meaning, fix and examples: ``RULE`` (``gradcheck/rules/``)."""

from __future__ import annotations

from gradcheck.rules import get_rule
from gradcheck.static.checks.registry import NO_PATH_NOTE, register
from gradcheck.static.program import Check, Program
from gradcheck.static.values import LIVE, Site

CODE = "GC301"
RULE = get_rule(CODE)

NO_PATH_NOTE.add(CODE)  # a wrong gradient, not a missing one


@register("request", CODE)
def wrong_gradients(
    program: Program,
    check: Check,
    target: dict,
    sources: set[str],
    starved: dict[Site, set[str]],
    through: dict[Site, tuple[str, Check, int]],
) -> None:
    """GC301: the target is computed, on a live path, through a ``tf.custom_gradient`` that
    ignores its upstream gradient; the sources that flowed into it get a wrong gradient
    (whatever other paths add to it)."""
    for mark, (custom, origins) in program.wrong_gradients.items():
        if check.target.flow.get(mark) != LIVE:
            continue
        hit = sorted(s for s in sources if any(program.related(s, o, check) for o in origins))
        if hit:
            site = program.site(custom.ignores_upstream, "GC301")
            starved[site].update(hit)
            through.setdefault(site, (hit[0], check, 1))


@register("fields", CODE)
def fields(program: Program, site: Site, sources: list[str]) -> dict[str, str]:
    """GC301's message fields: the forward function, its input, and what is wrong."""
    for custom, _origins in program.wrong_gradients.values():
        grad = custom.ignores_upstream
        if (grad.lineno, grad.col_offset) == (site.line, site.col):
            spec = custom.node.args
            inputs = [p.arg for p in (*spec.posonlyargs, *spec.args)]
            upstream = (grad.args.posonlyargs + grad.args.args)[0].arg
            return {
                "function": custom.node.name,
                "arg": inputs[0] if inputs else "x",
                "error": f"its gradient function never reads the upstream gradient `{upstream}`",
                "call": grad.name,
            }
    return {}
