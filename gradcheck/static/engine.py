"""Drive the interpreter over a file and turn what it found into findings.

Regions analysed: the module body, every function whose own body opens a tape or asks for
a gradient (``train_step`` methods, custom loops, ``@tf.function`` steps), the loss
functions passed to ``compile(loss=...)``, and functional models (``keras.Model(inputs,
outputs)``) that are compiled or fit. Each region runs once without a tape, to find its
tapes, then once per tape, so that ops outside that tape's ``with`` block cut (GC109).
"""

from __future__ import annotations

import ast
from collections import defaultdict

from gradcheck.findings import Finding
from gradcheck.rules import get_rule
from gradcheck.static import catalog
from gradcheck.static.interp import FuncRef, Instance, Interpreter, Scope
from gradcheck.static.program import Check, Program, callee_text
from gradcheck.static.values import LIVE, Site, Value

STATIC_NOTE = "found by the static engine, which reads the code without running it"
_TRAIN_STEPS = ("train_step", "test_step")


def analyze(tree: ast.Module, source: str, path: str) -> list[Finding]:
    program = Program(tree, source.splitlines())
    checks = _module_checks(program)
    for fn in program.regions:
        checks += _function_checks(program, fn)
    checks += _compiled_loss_checks(program)
    checks += _functional_checks(program)
    return _findings(program, checks, path)


# --- regions --------------------------------------------------------------------------


def _module_checks(program: Program) -> list[Check]:
    scope = Scope()
    program.module_scope = scope
    driver = Interpreter(program)
    driver.run_module(scope)
    checks = list(driver.checks.values())
    for tape in driver.tapes_seen:
        run = Interpreter(program, tape)
        run.run_module(Scope())
        checks += run.checks.values()
    return checks


def _function_checks(program: Program, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[Check]:
    ref = FuncRef(fn, _enclosing_scope(program, fn), _self_value(program, fn))
    sources = _parameter_sources(fn)
    program.opaque |= sources
    driver = Interpreter(program)
    driver.run_function(ref, sources=sources)
    checks = list(driver.checks.values())
    for tape in driver.tapes_seen:
        run = Interpreter(program, tape)
        run.run_function(ref, sources=sources)
        checks += run.checks.values()
    return checks


def _parameter_sources(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Parameters passed as the sources of a gradient (``def step(w, x): ... tape.gradient(L, [w])``):
    variables or watched tensors from the caller, so origins here."""
    spec = fn.args
    params = {p.arg for p in (*spec.posonlyargs, *spec.args, *spec.kwonlyargs)}
    found: set[str] = set()
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr in catalog.GRADIENT_METHODS and len(node.args) > 1:
            sources = node.args[1]
        else:
            sources = next((k.value for k in node.keywords if k.arg in ("sources", "var_list")), None)
        if sources is None:
            continue
        parts = (
            sources.elts
            if isinstance(sources, (ast.List, ast.Tuple))
            else sources.values
            if isinstance(sources, ast.Dict)
            else [sources]
        )
        found.update(p.id for p in parts if isinstance(p, ast.Name) and p.id in params)
    return found


def _self_value(program: Program, fn: ast.AST) -> Value | None:
    cls = program.owner.get(fn)
    if not isinstance(cls, ast.ClassDef) or not (fn.args.posonlyargs or fn.args.args):
        return None
    if any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list):
        return None
    is_model = program.model_like(cls) or fn.name in _TRAIN_STEPS
    if is_model:
        program.kinds.setdefault("self", "model")
    return Value(models=frozenset(("self",)) if is_model else frozenset(), ref=Instance(cls, "self"))


def _enclosing_scope(program: Program, fn: ast.AST, _depth: int = 0) -> Scope | None:
    """The scope a function's free names resolve in: the module, or the enclosing function
    as analysed on its own (parameters unknown)."""
    owner = program.owner.get(fn)
    while isinstance(owner, ast.ClassDef):
        owner = program.owner.get(owner)
    if not isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)) or _depth > 4:
        return program.module_scope
    scope = program.scopes.get(owner)
    if scope is None:
        ref = FuncRef(owner, _enclosing_scope(program, owner, _depth + 1), _self_value(program, owner))
        scope, _ = Interpreter(program).run_function(ref)
        program.scopes[owner] = scope
    return scope


def _compiled_loss_checks(program: Program) -> list[Check]:
    """A loss passed to ``model.compile``: ``y_pred`` is the model's output, the returned
    value is the target."""
    checks = []
    for node, loss, models in program.compiled:
        y_pred = Value(flow={m: LIVE for m in models if m not in program.frozen})
        for ref in _loss_functions(program, loss):
            run = Interpreter(program)
            result = run.call_function(ref, [Value(), y_pred], {}, node)
            checks.append(Check(node, result, Value(models=models), births=run.births))
    return checks


def _loss_functions(program: Program, loss: Value) -> list[FuncRef]:
    found: list[FuncRef] = []
    parts = [loss, *(loss.items or ()), *(loss.fields.values() if loss.fields else ())]
    for part in parts:
        if isinstance(part.ref, FuncRef):
            found.append(part.ref)
        elif isinstance(part.ref, Instance):
            method = program.find_method(part.ref.cls, "call") or program.find_method(part.ref.cls, "__call__")
            if method is not None:
                found.append(FuncRef(method, program.module_scope, part))
    return found


def _functional_checks(program: Program) -> list[Check]:
    """``keras.Model(inputs, outputs)``, trained: every layer on the way to the outputs
    should get a gradient."""
    checks = []
    for node, (token, outputs) in program.functional.items():
        names = {token, *program.renames.get(token, ())}
        if not names & program.trained:
            continue
        layers = frozenset(o for o in outputs.flow if program.model_kind(o) == "model" and o not in program.frozen)
        checks.append(Check(node, outputs, Value(models=layers)))
    return checks


# --- findings -------------------------------------------------------------------------


def _findings(program: Program, checks: list[Check], path: str) -> list[Finding]:
    starved: dict[Site, set[str]] = defaultdict(set)  # culprit -> sources it starves
    through: dict[Site, tuple[str, Check, int]] = {}  # culprit -> (an origin, its check, its cut count)
    for check in checks:
        target = check.target.flow
        if not target:
            continue
        # A source is a model, or a variable or watched tensor as such: a tensor computed
        # from a variable (``x2 = tf.Variable(2.0) + 1.0``) is not one (that is GC110's).
        sources = {s for s, cuts in check.sources.flow.items() if not cuts} | set(check.sources.models)
        groups = []
        opaque = not sources  # what the sources hold is unknown here
        for source in sorted(sources):
            related = [o for o in target if o == source or o.startswith(source + ".") or source.startswith(o + ".")]
            groups.append((source, related))
            # A parameter passed as the sources may be a variable read here, or the variables
            # of a model called here (``backprop(x, y, model.trainable_variables)``).
            opaque = opaque or (not related and source in program.opaque)
        if opaque and not any(not cuts for cuts in target.values()):
            # Sources unknown and no origin reaches the target: whatever was asked gets nothing.
            groups += [(origin, [origin]) for origin in target]
        for source, related in groups:
            if not related or any(not target[o] for o in related):
                continue
            for origin in related:
                for site in target[origin]:
                    starved[site].add(source)
                    through.setdefault(site, (origin, check, len(target[origin])))
    findings = [_finding(program, site, sorted(starved[site]), through[site], path) for site in starved]
    return sorted(findings, key=Finding.sort_key)


def _finding(program: Program, site: Site, sources: list[str], via: tuple[str, Check, int], path: str) -> Finding:
    rule = get_rule(site.code)
    names = [program.label(s) for s in sources]
    call = f"{site.call}(...)" if site.code == "GC109" and site.is_call else site.call
    fields = {
        "call": call,
        "op": "",
        "arg": site.arg or "x",
        "when": site.when,
        "names": ", ".join(names),
        "variables": _phrase(program, sources),
    }
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
    birth = check.births.get(origin) or program.births.get(origin)
    if birth is not None and (birth.lineno, birth.col_offset) != (site.line, site.col):
        target = _target_text(check)
        where = "only through this call" if cuts == 1 else f"only through cut paths: this one and {cuts - 1} more"
        notes.append(f"the output of {program.describe_call(birth)} (line {birth.lineno}) reaches {target} {where}")
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
