"""Keras's own training: ``model.compile(loss=...)`` and ``model.fit(...)``. When a file
fits a model whose forward pass it shows (a class of the file, a ``Sequential`` of known
layers, a functional model it builds), the fit is a gradient request: the compiled loss
(and what ``add_loss`` added) is the target, the model's variables are the sources.

The checks are made when the ``fit`` runs in the analysis, from what the model is then: a
notebook that rebinds ``model`` ten times fits ten different models.
"""

from __future__ import annotations

import ast

from gradcheck.static.program import Check, Program
from gradcheck.static.scope import FuncRef, Instance
from gradcheck.static.values import HOLDER, LIVE, Value, join, real


def compile_checks(make, program: Program, node: ast.Call, loss: Value, model: Value) -> list[Check]:
    """A loss function of the file passed to ``compile``: ``y_pred`` is the model's output
    (its ``call`` followed when the file defines it), the returned value is the target."""
    refs = loss_functions(program, loss)
    if not refs:
        return []
    run = make(program)
    y_pred = _model_output(program, run, node, model)
    checks = []
    for ref in refs:
        result = run.call_function(ref, [Value(), y_pred], {}, node)
        parts = program.snapshot({*model.models, *result.flow})
        checks.append(
            Check(node, result, Value(models=model.models), births=run.births, parts=parts, drops=dict(run.drops))
        )
    return checks


def fit_check(make, program: Program, node: ast.Call, model: Value) -> Check | None:
    """``model.fit(...)`` on a model whose forward pass the file shows: every variable the
    model tracks should reach the loss (GC108 at the ``fit`` call), and any cut inside its
    ``call`` is found at its line."""
    if len(model.models) != 1:
        return None
    (token,) = model.models
    override = _loss_override(program, model)
    if token in program.outputs:
        return _functional_fit_check(make, program, node, token, override)
    if not followed(program, model):
        return None
    # what the model is made of, from this forward pass alone
    program.parts.pop(token, None)
    program.registered = {key for key in program.registered if key[0] != token}
    run = make(program)
    output = run.forward(node, model, [Value()], {})
    loss = program.compile_losses.get(token)
    refs = loss_functions(program, loss) if loss is not None else []
    if override is not None:
        target = _call_override(run, override, output, node, token)
    elif refs:
        target = join([run.call_function(ref, [Value(), output], {}, node) for ref in refs])
    else:
        target = output
    target = join([target, *program.added_losses.get(token, [])])
    parts = program.snapshot({token, *target.flow})
    return Check(
        node, target, Value(models=model.models), births=run.births, fit=True, parts=parts, drops=dict(run.drops)
    )


def followed(program: Program, model: Value) -> bool:
    """Whether calling ``model`` runs code this file shows: a class of the file with its
    ``call`` (and no ``train_step`` of its own), or a ``Sequential`` of known layers."""
    if len(model.models) != 1:
        return False
    (token,) = model.models
    if isinstance(model.ref, Instance):
        cls = model.ref.cls
        return (
            program.analysable(cls)
            and program.find_method(cls, "call") is not None
            and program.find_method(cls, "train_step") is None
        )
    return token in program.sequential


def loss_functions(program: Program, loss: Value) -> list[FuncRef]:
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


def _loss_override(program: Program, model: Value) -> FuncRef | None:
    """The ``compute_loss`` the model's class (of this file) overrides: what ``fit``
    minimises instead of the compiled loss."""
    if not isinstance(model.ref, Instance) or not program.analysable(model.ref.cls):
        return None
    method = program.find_method(model.ref.cls, "compute_loss")
    return None if method is None else FuncRef(method, program.module_scope, model)


def _call_override(run, ref: FuncRef, y_pred: Value, node: ast.Call, token: str) -> Value:
    """``compute_loss`` called as ``train_step`` calls it, inside its tape: by keyword (Keras
    3), or by position when the override names its parameters otherwise (tf_keras passes
    ``x, y, y_pred, sample_weight`` so). The models it calls through ``self`` (a teacher's
    forward pass) are the model's own: tracked by it, so among the variables ``fit`` asks for."""
    spec = ref.node.args
    names = {p.arg for p in (*spec.posonlyargs, *spec.args, *spec.kwonlyargs)}
    given = [Value(), Value(), y_pred, Value()]
    run.building.append((token, True))
    try:
        if "y_pred" in names:
            return run.call_function(
                ref, [], dict(zip(("x", "y", "y_pred", "sample_weight"), given, strict=True)), node
            )
        return run.call_function(ref, given[: max(len(spec.posonlyargs) + len(spec.args) - 1, 0)], {}, node)
    finally:
        run.building.pop()


def _model_output(program: Program, run, node: ast.Call, model: Value) -> Value:
    if followed(program, model):
        return run.forward(node, model, [Value()], {})
    return Value(flow={m: LIVE for m in model.models if m not in program.frozen})


def _functional_fit_check(
    make, program: Program, node: ast.Call, token: str, override: FuncRef | None = None
) -> Check | None:
    """``fit`` on a functional model: what its loss reads (the outputs its compiled loss
    names, and what ``add_loss`` added) against every layer it owns, those of the models
    and layers it calls included (a dropped head or output, GC108)."""
    if token not in program.compile_losses:
        return None
    outputs = program.outputs[token]
    loss = program.compile_losses[token]
    added = list(program.added_losses.get(token, []))
    # what the layers it calls add with ``self.add_loss`` (an endpoint layer's loss) is part
    # of the loss ``fit`` minimises too
    for layer in sorted({o[1:] for o in outputs.flow if o.startswith(HOLDER)} - {token}):
        added += program.added_losses.get(layer, [])
    if override is not None:
        target = join([_call_override(make(program), override, outputs, node, token), *added])
    elif loss is None:
        if not added:
            return None
        target = join(added)
    else:
        selected = _selected_outputs(program, outputs, loss)
        refs = loss_functions(program, loss)
        run = make(program)
        computed = [run.call_function(ref, [Value(), selected], {}, node) for ref in refs] or [selected]
        target = join([*computed, *added])
    flows = [o for v in (outputs, *added) for o in v.flow]
    for origin in flows:
        if real(origin):
            program.add_part(token, origin)
        elif origin.startswith(HOLDER) and origin[1:] != token:
            # a model or layer of the file called in building it: all its variables are this
            # model's, those whose outputs it dropped included (``bert(ids)[0]``: the pooler)
            program.add_part(token, origin[1:])
    for layer in list(program.all_parts(token)):
        for weight in program.added_weights.get(layer, ()):
            program.add_part(token, weight)  # the model trains it too, and nothing reads it
    parts = program.snapshot({token, *target.flow})
    return Check(node, target, Value(models=frozenset((token,))), fit=True, parts=parts)


def _selected_outputs(program: Program, outputs: Value, loss: Value) -> Value:
    """The outputs a loss given per output name (``{"output_a": "mse"}``) applies to."""
    if not loss.fields or outputs.items is None:
        return outputs
    names = set(loss.fields)
    chosen = [item for item in outputs.items if any(program.labels.get(o) in names for o in item.flow)]
    return join(chosen) if chosen else outputs


__all__ = ["compile_checks", "fit_check", "followed", "loss_functions"]
