"""From what the interpreter found to findings: the rules of the static engine.

A ``Check`` is one gradient request (``tape.gradient``, a compiled loss, a trained
functional model): its target's flow and its sources. A cut is reported when every path
from a source's origins to the target goes through non-differentiable sites (GC101-GC107,
GC109, GC113); one finding per culprit site, naming every source it starves.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import replace

from gradcheck.findings import Finding
from gradcheck.rules import get_rule
from gradcheck.static import catalog
from gradcheck.static.names import dotted
from gradcheck.static.program import Check, Program, binding_line, callee_text
from gradcheck.static.scope import PICKED, StateRef
from gradcheck.static.values import FRESH, HOLDER, LIVE, UNSEEN, Site, has_live, real

#: Attributes that list every variable of a model, the non-trainable ones included.
_ALL_VARIABLES = frozenset(("variables", "weights", "non_trainable_variables", "non_trainable_weights"))

STATIC_NOTE = "found by the static engine, which reads the code without running it"


def findings(program: Program, checks: list[Check], path: str) -> list[Finding]:
    starved: dict[Site, set[str]] = defaultdict(set)  # culprit -> sources it starves
    through: dict[Site, tuple[str, Check, int]] = {}  # culprit -> (an origin, its check, its cut count)
    for check in checks:
        target = {o: c for o, c in check.target.flow.items() if real(o)}
        # A source is a model, or a variable or watched tensor as such: a tensor computed
        # from a variable (``x2 = tf.Variable(2.0) + 1.0``) is not one (that is GC110's).
        sources = {s for s, cuts in check.sources.flow.items() if not cuts and real(s)}
        sources |= set(check.sources.models)
        # Causes in the sources themselves (an integer dtype, a plain tensor, non-trainable
        # variables): the trace engine names them before looking for a path.
        done = _source_causes(program, check, sources, starved, through)
        sources -= done
        if not target:
            continue
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
        elif _picked(check):
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
                        sites = [program.site(check.node, "GC108", method="stopped-target")]
                    for site in sites:
                        starved[site].add(unit[0] if partly else source)
                        through.setdefault(site, (origin, check, len(sites)))
        _unused(program, check, target, sources, starved, through)
        _wrong_gradients(program, check, sources, starved, through)
        _crashes(program, check, target, sources, starved, through)
    for site in [s for s in starved if s.code == "GC105" and s.when == "outside"]:
        # A ``predict`` while no tape records (an acting pass that samples the action a loss
        # is later computed for) is no cause of what a cut inside the tape starves anyway.
        inside = set().union(*(v for s, v in starved.items() if s.when != "outside" and s is not site))
        if starved[site] <= inside:
            del starved[site]
    findings = [_finding(program, site, sorted(starved[site]), through[site], path) for site in starved]
    return sorted(findings, key=Finding.sort_key)


def _crashes(
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


def _other_watch(check: Check, name: str) -> ast.Call | None:
    """The tape's only ``tape.watch`` call, when it watched other tensors than ``name``."""
    if len(check.watch_calls) != 1:
        return None
    call, names = check.watch_calls[0]
    return call if names and name not in names else None


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


def _wrong_gradients(
    program: Program,
    check: Check,
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


def _source_causes(
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

    gradient = _asks_a_gradient(check)
    blind = _blind_tape(check) if gradient else None
    if blind is not None:
        # ``GradientTape(watch_accessed_variables=False)`` and no ``watch``: the variables it
        # reads are recorded for no one (GC110 at the tape, the argument to change)
        for source in sorted(sources):
            if program.model_kind(source) in ("model", "variable"):
                report(program.site(blind, "GC110", method="accessed"), source, {source})
    if gradient:
        for part in _fresh_tensors(program, check.node):
            # made in the request itself: a new tensor, on no path to the target (GC108 there)
            name = ast.unparse(part)
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
                if use is not None and _function_at(program, use.first) is not _function_at(program, check.node):
                    # the same name used in another function (the caller's ``x_batch`` passed
                    # to the loss function that casts it): not this request's tensor
                    use = None
                if use is not None and program.model_kind(node.id) != "variable":
                    made = binding_line(program.tree, node.id, check.node.lineno)
                    report(
                        program.site(use.index or use.first, "GC114", method=_use_variant(program, use, made)),
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
                    _other_watch(check, node.id) or binding_line(program.tree, node.id, check.node.lineno) or check.node
                )
                program.kinds.setdefault(node.id, "tensor")
                report(program.site(made, "GC110"), node.id, covered)
            elif _made_on_another_tape(program, check, node.id, value):
                # ``features = model1(x)`` under ``tape1``, then ``tape2.gradient(loss,
                # features)``: tape2 never watched it (where it was made, as the trace engine)
                program.kinds.setdefault(node.id, "tensor")
                made = binding_line(program.tree, node.id, check.node.lineno) or check.node
                report(program.site(made, "GC110"), node.id, covered)
        elif isinstance(node, ast.Attribute) and node.attr in _ALL_VARIABLES and value.models:
            _stateful_parts(program, check, value, program.site(check.node, "GC115"), report)
        if isinstance(node, ast.Name) and gradient and value.models and value.container:
            # ``params = model.variables`` then ``tape.gradient(loss, params)``: the line that
            # built the list is the one to change
            built = _all_variables_binding(program, check.node, node.id)
            if built is not None:
                _stateful_parts(program, check, value, program.site(built, "GC115"), report)
    # Integer variables among what the sources hold (``add_weight(..., dtype="int32")``).
    for source in sources - done:
        for part in sorted({source} | program.parts_in(check, source)):
            made = program.int_origins.get(part)
            if made is not None and (part != source or program.model_kind(part) != "model"):
                report(program.site(made, "GC114"), part, {part} if part == source else set())
    return done


def _function_at(program: Program, node: ast.AST) -> ast.AST | None:
    """The innermost function whose body holds ``node``'s line (None: the module)."""
    line = getattr(node, "lineno", 0)
    best = None
    for fn in program.owner:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if fn.lineno <= line <= (fn.end_lineno or fn.lineno) and (best is None or fn.lineno >= best.lineno):
            best = fn
    return best


def _made_on_another_tape(program: Program, check: Check, name: str, value) -> bool:
    """A source tensor computed (from a model or variable) inside another tape's block and
    never watched by this one: every path of it is cut for this tape."""
    if not check.own_tape or check.unknown_watch or check.tape is None or value.models or value.container:
        return False
    if value.dtype == "int" or not value.flow or has_live(value.flow) or not any(real(o) for o in value.flow):
        return False
    if any(name in names for _call, names in check.watch_calls):
        return False
    made = binding_line(program.tree, name, check.node.lineno)
    if made is None:
        return False
    for other in ast.walk(program.tree):
        if (
            isinstance(other, ast.With)
            and other is not check.tape
            and other.lineno <= made.lineno <= (other.end_lineno or other.lineno)
            and any("GradientTape" in ast.unparse(item.context_expr) for item in other.items)
        ):
            return not (check.tape.lineno <= made.lineno <= (check.tape.end_lineno or check.tape.lineno))
    return False


def _blind_tape(check: Check) -> ast.Call | None:
    """The ``GradientTape(watch_accessed_variables=False)`` call of the check's own tape,
    when nothing was watched on it (a watch this analysis cannot name counts as one)."""
    if check.tape is None or not check.own_tape or check.unknown_watch or check.watch_calls:
        return None
    for item in check.tape.items:
        call = item.context_expr
        if isinstance(call, ast.Call) and any(
            k.arg == "watch_accessed_variables" and isinstance(k.value, ast.Constant) and k.value.value is False
            for k in call.keywords
        ):
            return call
    return None


def _stateful_parts(program: Program, check: Check, value, site: Site, report) -> None:
    """GC115 at ``site`` for each part of the models ``value`` lists every variable of that
    holds non-trainable variables (moving statistics, a Keras 3 seed generator)."""
    for model in value.models:
        for part in sorted({model} | program.parts_in(check, model)):
            if part in program.stateful:
                report(site, part, set())


def _all_variables_binding(program: Program, request: ast.AST, name: str) -> ast.expr | None:
    """The expression last bound to ``name`` before ``request`` (``_source_list``) when it
    lists every variable of models: ``model.variables``, ``a.weights + b.weights`` (not a
    comprehension, which may keep only the trainable ones)."""
    bound = _source_list(program, request, name)
    return bound if bound is not None and _lists_all_variables(bound) else None


def _source_list(program: Program, request: ast.AST, name: str) -> ast.expr | None:
    """The expression last bound to ``name`` before ``request``, in the function that makes
    the request (or at module level, for a name that function neither binds nor takes)."""
    spans = [
        f
        for f in program.owner
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        and f.lineno <= request.lineno <= (f.end_lineno or f.lineno)
    ]
    function = max(spans, key=lambda f: f.lineno, default=None)
    scopes: list[ast.AST] = [function] if function is not None else []
    if function is None or name not in _parameters(function):
        scopes.append(program.tree)
    for scope in scopes:
        bound = _last_binding(scope.body, name, request.lineno)
        if bound is not None:
            return bound
    return None


def _request_sources_site(program: Program, check: Check) -> Site | None:
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
    bound = _source_list(program, node, arg.id)
    return program.site(bound, "GC108") if bound is not None else None


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    spec = fn.args
    return {a.arg for a in (*spec.posonlyargs, *spec.args, *spec.kwonlyargs, spec.vararg, spec.kwarg) if a is not None}


def _last_binding(body: list[ast.stmt], name: str, before: int) -> ast.expr | None:
    """The value of the last ``name = value`` of this body (its nested blocks, not its nested
    functions) that starts before line ``before``."""
    found: ast.stmt | None = None
    stack = list(body)
    while stack:
        stmt = stack.pop()
        if stmt.lineno >= before or isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if (found is None or stmt.lineno > found.lineno) and any(
                isinstance(t, ast.Name) and t.id == name for t in targets
            ):
                found = stmt
            continue
        for field in ("body", "orelse", "finalbody"):
            stack.extend(getattr(stmt, field, None) or ())
        for handler in getattr(stmt, "handlers", None) or ():
            stack.extend(handler.body)
    return found.value if found is not None else None


def _lists_all_variables(node: ast.expr) -> bool:
    """``model.variables``, ``[*a.weights, *b.weights]``, ``a.variables + b.variables``."""
    parts = [node]
    while parts:
        part = parts.pop()
        if isinstance(part, (ast.List, ast.Tuple)):
            parts.extend(part.elts)
        elif isinstance(part, ast.BinOp) and isinstance(part.op, ast.Add):
            parts += [part.left, part.right]
        elif isinstance(part, ast.Starred):
            parts.append(part.value)
        elif not (isinstance(part, ast.Attribute) and part.attr in _ALL_VARIABLES):
            return False
    return True


#: TensorFlow calls that make a new tensor from part of one (a gather, a slice).
_PICKS = frozenset(("gather", "gather_nd", "slice", "strided_slice", "boolean_mask"))


def _fresh_tensors(program: Program, node: ast.Call) -> list[ast.AST]:
    """Sources written as a slice or gather in the gradient call (``tape.gradient(loss,
    x[:, 0])``): tensors made there, after the target, so the target cannot depend on
    them. Only where the spelling is certain: a multi-dimensional slice (no list takes a
    tuple of slices), or a ``tf.gather``-like call."""
    sources = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "sources"), None)
    parts = sources.elts if isinstance(sources, (ast.List, ast.Tuple)) else [sources] if sources is not None else []
    out = []
    for part in parts:
        if isinstance(part, ast.Subscript):
            index = part.slice
            if isinstance(index, ast.Tuple) and any(isinstance(e, ast.Slice) or _is_ellipsis(e) for e in index.elts):
                out.append(part)
        elif isinstance(part, ast.Call):
            names = dotted(part.func)
            qual = program.aliases.resolve(names) if names else None
            if qual is not None and qual.startswith("tensorflow.") and qual.rpartition(".")[2] in _PICKS:
                out.append(part)
    return out


def _is_ellipsis(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is ...


def _use_variant(program: Program, use, made: ast.AST | None) -> str:
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


def _asks_a_gradient(check: Check) -> bool:
    node = check.node
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in catalog.GRADIENT_METHODS
    )


def _unused(
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

    if _picked(check) and any(used(s) or any(used(p) for p in program.parts_in(check, s)) for s in sources):
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
                    unused(part)
            elif not used(source) and not any(used(p) for p in parts) and _whole_model(program, source):
                # The wrong model's variables (the critic's asked of the actor's loss): the
                # line that built the list, when the request names one
                unused(source, _request_sources_site(program, check))
        elif "." not in source and not used(source):
            if kind == "tensor" and (check.unknown_watch or not check.own_tape):
                continue
            unused(source)


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


def _picked(check: Check) -> bool:
    """The sources are a list filtered at run time (``[v for v in vs if ...]``), as a whole
    or as one of the parts written (``shared + [v for v in head if ...]``)."""
    return check.sources.ref is PICKED or any(value.ref is PICKED for _, value in check.leaves or ())


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
    if source in program.guessed or source.startswith(FRESH):
        return False
    return source in program.weighted or bool(program.parts.get(source)) or source in program.sequential


def _finding(program: Program, site: Site, sources: list[str], via: tuple[str, Check, int], path: str) -> Finding:
    rule = get_rule(site.code)
    names = [program.label(s) for s in sources]
    call = f"{site.call}(...)" if site.code == "GC109" and site.is_call else site.call
    models = any(program.model_kind(s) == "model" for s in sources)
    fields = {
        "call": call,
        "op": "",
        "arg": site.arg or "x",
        "when": site.when,
        "names": ", ".join(names),
        "variables": _phrase(program, sources),
        "count": 2 if models else len(sources),
    }
    if site.code == "GC109" and site.method:
        fields.update(variant="build", method=site.method, call=site.call)
    elif site.code == "GC114":
        fields["dtype"] = _dtype_text(program, site, sources)
        if site.method in ("indices", "tensor"):
            fields["variant"] = site.method
    elif (site.code, site.method) in (("GC110", "accessed"), ("GC108", "relative"), ("GC108", "stopped-target")):
        fields["variant"] = site.method
    elif site.code == "GC116":
        fields["function"] = site.call
    elif site.code == "GC111":
        fields["op"] = site.method
    elif site.code == "GC301":
        fields.update(_custom_fields(program, site))
    line_text = program.source_lines[site.line - 1] if 0 < site.line <= len(program.source_lines) else ""
    end_text = program.source_lines[site.end_line - 1] if 0 < site.end_line <= len(program.source_lines) else ""
    return Finding(
        code=site.code,
        message=rule.format_message(**fields),
        path=path,
        line=site.line,
        column=_char_column(line_text, site.col) + 1,
        end_line=site.end_line,
        end_column=_char_column(end_text, site.end_col) + 1,
        call=site.call,
        variables=names,
        fix=rule.fix_text(**fields),
        notes=[*_notes(program, site, via), STATIC_NOTE],
    )


def _custom_fields(program: Program, site: Site) -> dict[str, str]:
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


def _dtype_text(program: Program, site: Site, sources: list[str]) -> str:
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


def _notes(program: Program, site: Site, via: tuple[str, Check, int]) -> list[str]:
    origin, check, cuts = via
    notes = []
    tape = check.tape
    if site.code == "GC109" and tape is not None:
        if site.when == "before":
            notes.append(f"the GradientTape starts recording at line {tape.lineno}")
        elif site.when == "after":
            notes.append(f"the GradientTape stops recording after line {tape.end_lineno}")
        else:
            notes.append("`tape.stop_recording()` pauses the tape around this line")
        if site.via:
            when = {"before": "before the tape starts", "after": "after the tape stopped"}.get(
                site.when, "while it is paused"
            )
            notes.append(f"this line runs in the call at line {site.via}, made {when}")
    if site.code == "GC108" and site.method == "relative":
        made = check.watched_calls.get(origin)
        notes.append(
            f"the loss uses {site.call}(...), which computes again what {origin} holds"
            + (f" (made by {callee_text(made)}(...) at line {made.lineno})" if made is not None else "")
            + f", not {origin} itself: did you mean to compute it from {origin}?"
        )
    if site.code == "GC109" and tape is not None:
        for watched in program.latent.values():
            if origin in watched and site.line < watched[origin][1]:
                notes.append(
                    f"the tape knows {origin} only from `tape.watch({origin})` at line {watched[origin][1]}: "
                    "what was computed from it before is a constant to the tape"
                )
                break
    birth = check.births.get(origin) or program.births.get(origin)
    if (
        birth is not None
        and (birth.lineno, birth.col_offset) != (site.line, site.col)
        and site.code != "GC301"
        and site.method != "accessed"  # the tape records none of it: no path to speak of
    ):
        target = _target_text(check)
        where = "only through this call" if cuts == 1 else f"only through cut paths: this one and {cuts - 1} more"
        reach = f"never reaches {target}" if site.code == "GC108" else f"reaches {target} {where}"
        if cuts:
            notes.append(f"the output of {program.describe_call(birth)} (line {birth.lineno}) {reach}")
    if site.code == "GC105" and not cuts:
        notes.append(
            "this line runs in a graph (a `train_step` that `fit` traces, or a `tf.function`), where a "
            "tensor has no value to take out: the step raises here before any gradient is computed"
        )
    return notes


def _target_text(check: Check) -> str:
    node = check.node
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "compile":
        return f"the loss compiled at line {node.lineno}"
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("Model", "Functional")
    ):
        return f"the outputs of the model built at line {node.lineno}"
    gradient = catalog.GRADIENT_METHODS | {"minimize"}
    if isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute) and node.func.attr in gradient:
        return f"the target {callee_text(node.args[0])} of line {node.lineno}"
    if isinstance(node, ast.Call):
        return f"the model built at line {node.lineno}"
    return "the target"


def _phrase(program: Program, sources: list[str]) -> str:
    models = [program.label(s) for s in sources if program.model_kind(s) == "model"]
    others = [program.label(s) for s in sources if program.model_kind(s) != "model"]
    parts = []
    if models:
        parts.append("the variables of " + _and(models))
    if len(others) == 1:
        parts.append(others[0])
    elif others:
        shown = ", ".join(others[:4]) + (f" and {len(others) - 4} more" if len(others) > 4 else "")
        parts.append(f"{len(others)} variables ({shown})")
    return " and ".join(parts)


def _and(names: list[str]) -> str:
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " and " + names[-1]


def _char_column(line: str, byte_offset: int) -> int:
    """``ast`` columns count UTF-8 bytes; the renderers count characters."""
    if line.isascii():
        return byte_offset
    return len(line.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore"))
