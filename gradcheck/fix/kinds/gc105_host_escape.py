"""GC105: a tensor left TensorFlow inside the tape and came back as a constant.

The escape is undone where it happens, and the NumPy that then computed the loss becomes
the TensorFlow ops that compute the same:

- ``t.numpy()`` -> ``t`` (and ``t.numpy().ravel()`` -> ``tf.reshape(t, [-1])``);
- ``float(t)`` -> ``t``;
- ``model.predict(x, verbose=0)`` -> ``model(x, training=False)``;
- ``np.mean(t)``, ``np.log(t)``, ... -> ``tf.reduce_mean(t)``, ``tf.math.log(t)``, ...;
- ``tf.constant(<the value>, dtype=D)`` around it -> ``tf.cast(<the value>, D)``;
- a function of this file the value is passed to (``loss_fn(pred.numpy(), y)``) has its
  NumPy translated too, and so do NumPy calls later in the tape's block on the names the
  culprit statement assigns (``np.log(probs[0, a])`` after ``probs = actor.predict(...)``),
  except in the arguments of other calls (``rng.choice(n, p=np.squeeze(probs))`` samples on
  the host, as it should).

When NumPy the translation does not know is left on the value's way to the loss
(``np.histogram``), the patch is not proposed, or does not verify.
"""

from __future__ import annotations

import libcst as cst

from gradcheck.findings import Finding
from gradcheck.fix.numpy_tf import Translator, numpy_calls
from gradcheck.fix.patch import Candidate, Pass
from gradcheck.fix.registry import register
from gradcheck.fix.source import Source, Span, arg, bound_names, callee, callee_tail, names_in, tape_items

_PREDICT_ONLY = {"verbose", "batch_size", "steps", "callbacks", "workers", "use_multiprocessing", "max_queue_size"}
_CONTAINERS = {"append", "extend", "insert", "add"}


@register("GC105")
def propose(source: Source, finding: Finding) -> list[Candidate]:
    tf = source.tf
    if tf is None:
        return []
    escape = _escape_call(source, Span.of(finding))
    if escape is None:
        return []
    candidate = Candidate(finding, "host-escape", "")
    kept = _undo(source, candidate, escape, tf)
    if kept is None:
        return []
    candidate.title = kept
    stmt = source.statement(escape)
    for helper in _value_top(source, escape, tf, candidate):
        if not _translate_helper(source, candidate, helper, tf):
            return []
    _translate_later(source, candidate, stmt, escape, tf)
    return [candidate]


def _escape_call(source: Source, span: Span) -> cst.Call | None:
    for node in source.nodes_at(span, (cst.Call, cst.Attribute)):
        call = node if isinstance(node, cst.Call) else source.parent(node)
        if not isinstance(call, cst.Call):
            continue
        tail = callee_tail(call)
        full = source.resolve(callee(call))
        if tail in ("numpy", "predict", "item") and isinstance(call.func, cst.Attribute):
            return call
        if isinstance(call.func, cst.Name) and call.func.value == "float":
            return call
        if full.startswith("numpy."):
            return call
    return None


def _undo(source: Source, candidate: Candidate, call: cst.Call, tf: str) -> str | None:
    """Edit the escape itself; returns the patch's title."""
    tail = callee_tail(call)
    if tail in ("numpy", "item") and isinstance(call.func, cst.Attribute) and not call.args:
        receiver = call.func.value
        candidate.replace(call, receiver)
        return f"keep `{source.code(receiver).strip()}` a tensor (no `.{tail}()`)"
    if isinstance(call.func, cst.Name) and call.func.value == "float" and len(call.args) == 1:
        inner = call.args[0].value
        candidate.replace(
            call,
            inner.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            if _needs_parens(source, call, inner)
            else inner,
        )
        return f"keep `{source.code(inner).strip()}` a tensor (no `float()`)"
    if tail == "predict" and isinstance(call.func, cst.Attribute):
        x = arg(call, 0, "x")
        if x is None or any(
            a.keyword is not None and a.keyword.value not in ({"x"} | _PREDICT_ONLY) for a in call.args
        ):
            return None
        model = call.func.value
        new = f"{source.code(model).strip()}({source.code(x.value).strip()}, training=False)"
        candidate.replace(call, cst.parse_expression(new))
        return f"call `{source.code(model).strip()}` directly instead of `.predict`"
    full = source.resolve(callee(call))
    if full.startswith("numpy."):
        translator = Translator(source, tf, only={id(call)})
        new = call.visit(translator)
        if translator.missed or not translator.changed:
            return None
        candidate.replace(call, new)
        return f"compute `{source.code(call.func).strip()}` with TensorFlow"
    return None


def _needs_parens(source: Source, call: cst.Call, inner: cst.BaseExpression) -> bool:
    return isinstance(inner, (cst.BinaryOperation, cst.BooleanOperation, cst.IfExp, cst.Lambda)) and not isinstance(
        source.parent(call), (cst.Arg, cst.Assign, cst.Return, cst.Element, cst.Expr, cst.AugAssign)
    )


def _value_top(source: Source, escape: cst.Call, tf: str, candidate: Candidate) -> list[cst.Call]:
    """Follow the value up its statement through ndarray methods (``.ravel()``), NumPy
    calls and a ``tf.constant`` wrapper, translating each; returns the calls of the
    file's own functions it is passed to on the way."""
    helpers: list[cst.Call] = []
    node: cst.CSTNode = escape
    while True:
        parent = source.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            call = source.parent(parent)
            if isinstance(call, cst.Call) and call.func is parent:
                translator = Translator(source, tf, methods=True)
                if translator.method(call) is not None:
                    candidate.edit(call, _swap_method(source, tf))
                    node = call
                    continue
            return helpers
        if isinstance(parent, cst.Subscript) and parent.value is node:
            node = parent
            continue
        if isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation, cst.Element)):
            node = parent
            continue
        if isinstance(parent, (cst.List, cst.Tuple)):
            node = parent
            continue
        if not isinstance(parent, cst.Arg):
            return helpers
        call = source.parent(parent)
        if not isinstance(call, cst.Call):
            return helpers
        full = source.resolve(callee(call))
        if full.startswith("numpy.") and full.count(".") == 1:
            probe = Translator(source, tf)
            if probe.function(full.split(".", 1)[1], call) is None:
                return helpers
            candidate.edit(call, _translate_here(source, tf, call))
        elif full == "tensorflow.constant":
            candidate.edit(call, _constant_to_cast(tf))
        elif isinstance(call.func, cst.Name) and len(source.functions_named(call.func.value)) == 1:
            helpers.append(call)
        elif full.startswith("tensorflow"):
            pass  # TensorFlow takes the tensor as it is
        else:
            return helpers
        node = call


def _swap_method(source: Source, tf: str):
    """Translate the ndarray method of a call on the updated node (its receiver edited)."""

    def rewrite(updated: cst.CSTNode, _pass: Pass):
        return Translator(source, tf, methods=True).method(updated) or updated

    return rewrite


def _translate_here(source: Source, tf: str, call: cst.Call):
    def rewrite(updated: cst.CSTNode, _pass: Pass):
        translator = Translator(source, tf)
        name = translator.numpy_name(call)
        if name is None:
            return updated
        return translator.function(name, updated) or updated

    return rewrite


def _constant_to_cast(tf: str):
    def rewrite(updated: cst.CSTNode, _pass: Pass):
        assert isinstance(updated, cst.Call)
        value = arg(updated, 0, "value")
        dtype = arg(updated, 1, "dtype")
        if value is None:
            return updated
        if dtype is None:
            return value.value
        return cst.parse_expression(
            f"{tf}.cast({cst.Module([]).code_for_node(value.value)}, {cst.Module([]).code_for_node(dtype.value)})"
        )

    return rewrite


def _translate_helper(source: Source, candidate: Candidate, call: cst.Call, tf: str) -> bool:
    """The value is passed to ``call``, a function this file defines: translate that
    function's NumPy. False when it uses NumPy the translation does not know."""
    assert isinstance(call.func, cst.Name)
    function = source.functions_named(call.func.value)[0]
    translator = Translator(source, tf, methods=True)
    function.body.visit(translator)
    if translator.missed:
        return False
    if not translator.changed:
        return True
    candidate.edit(function.body, lambda updated, _pass: updated.visit(Translator(source, tf, methods=True)))
    return True


def _translate_later(source: Source, candidate: Candidate, stmt: cst.CSTNode, escape: cst.Call, tf: str) -> None:
    """NumPy calls later in the tape's block on the names the culprit statement assigns
    (and on names assigned from those), unless they are arguments of other calls."""
    tape = next((up for up in source.ancestors(stmt) if isinstance(up, cst.With) and tape_items(up)), None)
    if tape is None:
        return
    tainted = bound_names(stmt)
    if not tainted:
        return
    line = source.line_of(stmt)
    for later in source.walk(tape.body, (cst.SimpleStatementLine,)):
        if source.line_of(later) <= line:
            continue
        for call in numpy_calls(source, later):
            if not names_in(call) & tainted or _inside_other_call(source, call, later):
                continue
            candidate.edit(call, _translate_here(source, tf, call))
        tainted |= {n for n in bound_names(later) if names_in(later) & tainted}


def _inside_other_call(source: Source, node: cst.CSTNode, stmt: cst.CSTNode) -> bool:
    """Is ``node`` an argument (at any depth) of a call that is neither NumPy, nor
    TensorFlow, nor a list's ``append``?"""
    for up in source.ancestors(node):
        if up is stmt:
            return False
        if isinstance(up, cst.Call):
            full = source.resolve(callee(up))
            if full.startswith(("numpy.", "tensorflow")) or callee_tail(up) in _CONTAINERS:
                continue
            return True
    return False
