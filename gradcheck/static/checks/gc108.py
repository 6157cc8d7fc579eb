"""GC108 unused-source, static side: sources (or parts of a source model) that no path
connects to the target, named at the dead store that dropped them, at the call that
computed again what a watched tensor holds, at the line that built the wrong list, or at
the request; and a tensor made in the request itself (a slice, a gather).

The rule's meaning, fix and examples: ``RULE`` (``gradcheck/rules/``)."""

from __future__ import annotations

import ast

from gradcheck.rules import get_rule
from gradcheck.static import catalog
from gradcheck.static.checks.common import function_at, picked, source_list
from gradcheck.static.checks.registry import register
from gradcheck.static.names import dotted
from gradcheck.static.program import Check, Program, binding_line, callee_text
from gradcheck.static.values import FRESH, LIVE, UNSEEN, Site

CODE = "GC108"
RULE = get_rule(CODE)


@register("request", CODE)
def unused(
    program: Program,
    check: Check,
    target: dict,
    sources: set[str],
    starved: dict[Site, set[str]],
    through: dict[Site, tuple[str, Check, int]],
) -> None:
    """GC108: sources, or parts of a source model, that no path connects to the target. Only
    where the whole computation of the target was followed (nothing unseen, no value of
    theirs gone where reads are not followed, a tape opened here or a ``fit``). What the
    analysis did not follow but is cut on every path (a replay buffer sampled before the tape)
    carries no gradient to any part."""
    if check.target.flow.get(UNSEEN) == LIVE or not target or not (check.own_tape or check.fit):
        return
    reached = set(target)
    for origin in target:
        reached |= program.parts_in(check, origin)

    def used(origin: str) -> bool:
        return any(o == origin or origin.startswith(o + ".") or o.startswith(origin + ".") for o in reached)

    if picked(check) and any(used(s) or any(used(p) for p in program.parts_in(check, s)) for s in sources):
        return  # sources filtered at run time (``[v for v in vs if ...]``): maybe only the used ones
    site = program.site(check.node, "GC108")
    outside = _target_outside(target)

    def unused(name: str, listed: Site | None = None) -> None:
        here = _relative_site(program, check, name, target) or _dead_end(program, check, name) or listed or site
        for culprit in (here, outside) if outside is not None else (here,):
            starved[culprit].add(name)
            through.setdefault(culprit, (name, check, 1))

    for source in sorted(sources):
        if source in program.frozen or source in program.opaque or program.escaped_origin(source):
            continue
        kind = program.model_kind(source)
        if kind == "model":
            if source in reached:
                continue  # called as a whole somewhere: its parts are not followed
            parts = program.parts_in(check, source)
            # Parts that hold variables of their own: weights, layers known to make some.
            leaves = [
                p
                for p in parts
                if not program.parts_in(check, p) and (p in program.weighted or program.model_kind(p) == "variable")
            ]
            missing = [
                p
                for p in sorted(leaves)
                if not used(p)
                and p not in program.frozen
                and p not in program.int_origins
                and not program.escaped_origin(p)
                and p not in program.stateful
            ]
            if missing and len(missing) < len(leaves):
                for part in missing:
                    unused(part, _added_weight_site(program, part))
            elif not used(source) and not any(used(p) for p in parts) and _whole_model(program, source):
                # The wrong model's variables (the critic's asked of the actor's loss): the
                # line that built the list, when the request names one
                unused(source, request_sources_site(program, check))
        elif "." not in source and not used(source):
            if kind == "tensor" and (check.unknown_watch or not check.own_tape):
                continue
            unused(source, _made_on_tape(program, check, source) if kind == "tensor" else None)


def _dead_end(program: Program, check: Check, name: str) -> Site | None:
    """Where what ``name`` computed was dropped: the one dead store (``enc =
    self.encoder_layer(emb)``, ``enc`` never read) whose value carries it, live. None when
    no dead store or more than one carries it (the request, or ``fit``, is named then)."""
    found = []
    for node, flow in check.drops.items():
        if any(not cuts and (o == name or o.startswith(name + ".")) for o, cuts in flow.items()):
            found.append(node)
    if len(found) != 1:
        return None
    return program.site(found[0], "GC108")


def _made_on_tape(program: Program, check: Check, name: str) -> Site | None:
    """A watched tensor made inside the tape's block and never consumed (the penalty's
    interpolate, while the critic scores another): where it was made, the line to change,
    as the trace engine names it."""
    tape = check.tape
    made = binding_line(program.tree, name, check.node.lineno)
    if tape is None or made is None or not tape.lineno < made.lineno <= (tape.end_lineno or tape.lineno):
        return None
    return program.site(made, "GC108")


def _target_outside(target: dict) -> Site | None:
    """The computation that made the target itself after the tape stopped (or while it was
    paused), ``tape.gradient(preds[:, i], x)``: it cuts every source, those with no path to
    the target at all included (both must be fixed). None when some path is live."""
    common = None
    for cuts in target.values():
        common = set(cuts) if common is None else common & cuts
        if not common:
            return None
    found = [s for s in common or () if s.code == "GC109" and s.when in ("after", "outside what")]
    return max(found) if found else None


def _relative_site(program: Program, check: Check, name: str, target: dict) -> Site | None:
    """A watched tensor the loss does not use, made by a model call (``conv_out =
    conv_model(img)``), while the loss comes from another call on the same input
    (``preds = model(img)``): the loss uses a copy of the watched value, computed again.
    That second call is what to change (the trace engine's *relative* use)."""
    made = check.watched_calls.get(name)
    if made is None or not made.args:
        return None
    wanted = ast.dump(made.args[0])
    for origin in sorted(target):
        birth = check.births.get(origin)
        if (
            isinstance(birth, ast.Call)
            and birth is not made
            and birth.args
            and not isinstance(birth.func, ast.Call)
            and ast.dump(birth.args[0]) == wanted
        ):
            return program.site(birth, "GC108", method="relative")
    return None


def _whole_model(program: Program, source: str) -> bool:
    """A model built in this file (not only guessed from a name) that makes variables."""
    if source in program.guessed or (source.startswith(FRESH) and not _own_instance(program, source)):
        return False
    return source in program.weighted or bool(program.parts.get(source)) or source in program.sequential


def request_sources_site(program: Program, check: Check) -> Site | None:
    """GC108 where the request's source list was built, when it names a list bound before
    (``g_vars = generator_ema.trainable_variables``): the line to change when the list holds
    the wrong model's variables."""
    node = check.node
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    if node.func.attr not in catalog.GRADIENT_METHODS:
        return None
    arg = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "sources"), None)
    if not isinstance(arg, ast.Name):
        return None
    bound = source_list(program, node, arg.id)
    return program.site(bound, "GC108") if bound is not None else None


#: TensorFlow calls that make a new tensor from part of one (a gather, a slice).
_PICKS = frozenset(("gather", "gather_nd", "slice", "strided_slice", "boolean_mask"))


def fresh_tensors(program: Program, node: ast.Call) -> list[tuple[str, ast.AST]]:
    """Sources written as a slice or gather in the gradient call (``tape.gradient(loss,
    x[:, 0])``), or bound to one and read nowhere else (``x0 = tf.gather(x, [0], axis=1)``
    then ``tape.gradient(y, x0)``): tensors made from the input, which the target was
    computed without, so it cannot depend on them. Each as (its name, where it was made).
    Only where the spelling is certain: a multi-dimensional slice (no list takes a tuple of
    slices), or a ``tf.gather``-like call."""
    sources = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "sources"), None)
    parts = sources.elts if isinstance(sources, (ast.List, ast.Tuple)) else [sources] if sources is not None else []
    out = []
    for part in parts:
        if _is_pick(program, part):
            out.append((ast.unparse(part), part))
        elif isinstance(part, ast.Name):
            made = _picked_only_as_source(program, node, part.id)
            if made is not None:
                out.append((part.id, made))
    return out


def _is_pick(program: Program, part: ast.AST) -> bool:
    if isinstance(part, ast.Subscript):
        index = part.slice
        return isinstance(index, ast.Tuple) and any(isinstance(e, ast.Slice) or _is_ellipsis(e) for e in index.elts)
    if isinstance(part, ast.Call):
        names = dotted(part.func)
        qual = program.aliases.resolve(names) if names else None
        return qual is not None and qual.startswith("tensorflow.") and qual.rpartition(".")[2] in _PICKS
    return False


def _picked_only_as_source(program: Program, request: ast.Call, name: str) -> ast.AST | None:
    """The pick ``name`` was last bound to before ``request``, in the same function, when the
    function reads ``name`` only as the sources of gradient requests (never watched, never
    computed with)."""
    scope = function_at(program, request) or program.tree
    bound = None
    for node in ast.walk(scope):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
            and node.lineno <= request.lineno
            and (bound is None or node.lineno > bound.lineno)
        ):
            bound = node
    if (
        bound is None
        or not _is_pick(program, bound.value)
        or function_at(program, bound) is not function_at(program, request)
    ):
        return None
    as_source = {
        id(call.args[1])
        for call in ast.walk(scope)
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in catalog.GRADIENT_METHODS
        and len(call.args) > 1
    }
    for node in ast.walk(scope):
        if (
            isinstance(node, ast.Name)
            and node.id == name
            and isinstance(node.ctx, ast.Load)
            and id(node) not in as_source
        ):
            return None
    return bound.value


def _is_ellipsis(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is ...


@register("fields", CODE)
def fields(program: Program, site: Site, sources: list[str]) -> dict[str, str]:
    return {"variant": site.method} if site.method in ("relative", "stopped-target") else {}


@register("notes", CODE)
def relative_note(program: Program, site: Site, via: tuple[str, Check, int]) -> list[str]:
    origin, check, _cuts = via
    if site.method != "relative":
        return []
    made = check.watched_calls.get(origin)
    return [
        f"the loss uses {site.call}(...), which computes again what {origin} holds"
        + (f" (made by {callee_text(made)}(...) at line {made.lineno})" if made is not None else "")
        + f", not {origin} itself: did you mean to compute it from {origin}?"
    ]


def _own_instance(program: Program, source: str) -> bool:
    """``self.actor`` holding an instance of a model class of the file (``ActorNetwork()``):
    its parts are the layers its constructor makes, all known."""
    return any(prefix == source for prefix, _cls in program.registered)


def _added_weight_site(program: Program, weight: str) -> Site | None:
    """A weight added to a Keras layer from outside (``conv.add_weight(...)``): that call."""
    for added in program.added_weights.values():
        if weight in added:
            return program.site(added[weight], "GC108")
    return None
