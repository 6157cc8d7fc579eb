"""Drive the interpreter over a file and turn what it found into findings.

Regions analysed: the module body, every function whose own body opens a tape or asks for
a gradient (``train_step`` methods, custom loops, ``@tf.function`` steps), the loss
functions passed to ``compile(loss=...)``, and functional models (``keras.Model(inputs,
outputs)``) that are compiled or fit. Each region runs once without a tape, to find its
tapes, then once per tape, so that ops outside that tape's ``with`` block cut (GC109).
"""

from __future__ import annotations

import ast
import re

from gradcheck.findings import Finding
from gradcheck.static import catalog, training
from gradcheck.static.checks import STATIC_NOTE, findings
from gradcheck.static.interp import Interpreter
from gradcheck.static.program import Check, Program
from gradcheck.static.scope import FuncRef, Instance, Scope, release
from gradcheck.static.values import Value, has_live, join, real
from gradcheck.static.walk import descendants

_TRAIN_STEPS = ("train_step", "test_step")


def analyze(tree: ast.Module, source: str, path: str) -> list[Finding]:
    program = Program(tree, source.splitlines())
    try:
        checks = _module_checks(program)
        for fn in program.regions:
            checks += _function_checks(program, fn)
        checks += program.training_checks
        for node, loss, model in program.compiled:  # compiled, never fit here
            if node not in program.fitted_compiles:
                checks += training.compile_checks(Interpreter, program, node, loss, model)
        checks += _functional_checks(program)
        return findings(program, checks, path)
    finally:
        release(program.closures)


# --- regions --------------------------------------------------------------------------


def _module_checks(program: Program) -> list[Check]:
    scope = Scope()
    program.module_scope = scope
    driver = Interpreter(program)
    driver.run_module(scope)
    checks = list(driver.checks.values())
    slicer = _Slicer(program.tree.body) if driver.tapes_seen else None
    for tape in driver.tapes_seen:
        run = Interpreter(program, tape)
        stop = _last_use(program, tape, 1, len(program.source_lines))
        run.run_statements(slicer.statements(tape.with_node, stop), Scope())
        checks += run.checks.values()
    if driver.nested_tapes:
        slicer = slicer or _Slicer(program.tree.body)
        for tape in driver.nested_tapes:
            if tape.top is None:
                continue
            # a tape a function opens, called from the module (``logits = model(x)`` then
            # ``train_step(logits, y)``): what the module computes before runs outside it
            run = Interpreter(program, tape)
            run.run_statements(slicer.statements(tape.top, tape.top.end_lineno), Scope())
            checks += run.checks.values()
    return checks


class _Slicer:
    """The top-level statements a module-level tape's run needs: from the one that opens
    the tape to the last that mentions it, and, before it, those that bind a name these
    read (transitively). The others cannot change what the tape is asked, and a notebook
    with twenty tapes would otherwise be run twenty times over."""

    def __init__(self, body: list[ast.stmt]) -> None:
        self.body = body
        self._names: list[tuple[set[str], set[str], set[str]] | None] = [None] * len(body)

    def names(self, index: int) -> tuple[set[str], set[str], set[str]]:
        """(names read, names bound or changed, names bound whatever they held before) by
        one top-level statement."""
        found = self._names[index]
        if found is None:
            reads: set[str] = set()
            binds: set[str] = set()
            stmt = self.body[index]
            kills: set[str] = set()
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                binds.add(stmt.name)
                kills.add(stmt.name)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                    kills |= {
                        n.id
                        for n in descendants(target)
                        if isinstance(n, ast.Name) and isinstance(target, (ast.Name, ast.Tuple, ast.List))
                    }
            for node in descendants(stmt):
                if isinstance(node, ast.Name):
                    (reads if isinstance(node.ctx, ast.Load) else binds).add(node.id)
                elif isinstance(node, (ast.Attribute, ast.Subscript)) and not isinstance(node.ctx, ast.Load):
                    binds |= _root(node)
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                    binds |= _root(node.func.value)  # ``xs.append(v)``, ``model.compile(...)``
                elif isinstance(node, (ast.Import, ast.ImportFrom)):
                    binds |= {(a.asname or a.name).split(".", 1)[0] for a in node.names}
                elif isinstance(node, (ast.Global, ast.Nonlocal)):
                    binds |= set(node.names)
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                kills |= binds
            found = self._names[index] = (reads, binds, kills - reads)
        return found

    def statements(self, with_node: ast.AST | None, stop: int | None) -> list[ast.stmt]:
        body = self.body
        first = next(
            (
                i
                for i, s in enumerate(body)
                if with_node is not None and s.lineno <= with_node.lineno <= (s.end_lineno or s.lineno)
            ),
            None,
        )
        if first is None:
            return body
        last = first
        while last + 1 < len(body) and (stop is None or body[last + 1].lineno <= stop):
            last += 1
        needed: set[str] = set()
        for index in range(first, last + 1):
            needed |= self.names(index)[0]
        kept = []
        for index in range(first - 1, -1, -1):
            reads, binds, kills = self.names(index)
            if binds & needed:
                kept.append(index)
                needed -= kills  # an earlier value of these names is overwritten here
                needed |= reads
        return [body[i] for i in reversed(kept)] + body[first : last + 1]


def _root(node: ast.AST) -> set[str]:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return {node.id} if isinstance(node, ast.Name) else set()


def _last_use(program: Program, tape, first: int, last: int) -> int | None:
    """The last line of the region that mentions the tape's name: no statement after it can
    ask that tape for a gradient, so its run may stop there (None: run everything)."""
    target = tape.item.optional_vars if tape.item is not None else None
    if not isinstance(target, ast.Name) or tape.with_node is None:
        return None
    name = re.escape(target.id)
    word = re.compile(rf"\b{name}\b")
    # the name opened again for another tape, or rebound: later lines are another tape's
    rebound = re.compile(rf"\bas\s+{name}\b|^\s*{name}\s*=[^=]")
    end = tape.with_node.end_lineno or tape.with_node.lineno
    lines = program.source_lines
    for line in range(end + 1, last + 1):
        if rebound.search(lines[line - 1]):
            last = line - 1
            break
    for line in range(last, end, -1):
        if word.search(lines[line - 1]):
            return line
    return end


def _function_checks(program: Program, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[Check]:
    ref = FuncRef(fn, _enclosing_scope(program, fn), _self_value(program, fn))
    sources = _parameter_sources(fn)
    # A parameter every call of this file passes a plain tensor (``saliency(tf.constant(x))``)
    # is that tensor, not a variable of the caller's.
    passed = program.param_values.get(fn, {})
    plain = {}
    for name in sources:
        values = passed.get(name)
        if values and all(v.tensor and not has_live(v.flow) for v in values):
            plain[name] = join(values)
    sources -= set(plain)
    program.opaque |= sources
    driver = Interpreter(program)
    driver.run_function(ref, sources=sources, params=plain)
    checks = list(driver.checks.values())
    for tape in driver.tapes_seen:
        run = Interpreter(program, tape)
        run.run_function(
            ref, sources=sources, params=plain, stop=_last_use(program, tape, fn.lineno, fn.end_lineno or fn.lineno)
        )
        checks += run.checks.values()
    for tape in driver.nested_tapes:
        # a tape opened by a function this one calls (``train_step`` calling
        # ``train_generator``): what this one computes before that call runs before it
        run = Interpreter(program, tape)
        run.run_function(ref, sources=sources, params=plain, stop=tape.entry_line)
        checks += run.checks.values()
    return checks


def _parameter_sources(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Parameters passed as the sources of a gradient (``def step(w, x): ... tape.gradient(L, [w])``):
    variables or watched tensors from the caller, so origins here."""
    spec = fn.args
    params = {p.arg for p in (*spec.posonlyargs, *spec.args, *spec.kwonlyargs)}
    found: set[str] = set()
    local: set[str] = set()  # rebound (``x = tf.convert_to_tensor(x)``) or watched here: this function's
    for node in descendants(fn):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                local |= {n.id for n in descendants(target) if isinstance(n, ast.Name)}
            continue
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr == "watch":
            local |= {n.id for a in node.args for n in descendants(a) if isinstance(n, ast.Name)}
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
    return found - local


def _self_value(program: Program, fn: ast.AST) -> Value | None:
    cls = program.owner.get(fn)
    if not isinstance(cls, ast.ClassDef) or not (fn.args.posonlyargs or fn.args.args):
        return None
    if any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list):
        return None
    is_model = program.model_like(cls) or fn.name in _TRAIN_STEPS
    token = program.self_token(cls)
    if is_model:
        program.kinds.setdefault(token, "model")
    return Value(models=frozenset((token,)) if is_model else frozenset(), ref=Instance(cls, token))


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


def _functional_checks(program: Program) -> list[Check]:
    """``keras.Model(inputs, outputs)``, trained: every layer on the way to the outputs
    should get a gradient."""
    checks = []
    for node, (token, outputs) in program.functional.items():
        names = {token, *program.renames.get(token, ())}
        if not names & program.trained:
            continue
        layers = frozenset(o for o in outputs.flow if real(o) and o not in program.frozen)
        checks.append(Check(node, outputs, Value(models=layers)))
    return checks


__all__ = ["STATIC_NOTE", "analyze"]
