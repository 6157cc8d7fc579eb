"""GC106: ``tf.numpy_function(f, [x], dtype)`` on the way to the loss, where ``f`` is a
function of this file written with NumPy calls TensorFlow has: the call becomes ``f(x)``
and ``f``'s NumPy becomes TensorFlow (``np.sinh`` -> ``tf.sinh``), so the tape records it.
A function doing anything the translation does not know (sampling, ``np.histogram``,
Python loops over values) has no mechanical fix."""

from __future__ import annotations

import libcst as cst

from gradcheck.findings import Finding
from gradcheck.fix.kinds._common import replace_expression
from gradcheck.fix.numpy_tf import Translator, numpy_calls
from gradcheck.fix.patch import Candidate
from gradcheck.fix.registry import register
from gradcheck.fix.source import Source, Span, arg


@register("GC106")
def propose(source: Source, finding: Finding) -> list[Candidate]:
    tf = source.tf
    if tf is None:
        return []
    calls = source.calls_at(Span.of(finding), ("numpy_function", "py_func"))
    if not calls:
        return []
    call = calls[0]
    func, inputs = arg(call, 0, "func"), arg(call, 1, "inp")
    if func is None or inputs is None or not isinstance(func.value, cst.Name):
        return []
    if not isinstance(inputs.value, (cst.List, cst.Tuple)):
        return []
    defs = [f for f in source.functions_named(func.value.value) if source.contains(source.scope_body(call), f)]
    if len(defs) != 1:
        defs = source.functions_named(func.value.value)
    if len(defs) != 1:
        return []
    function = defs[0]
    translator = Translator(source, tf, methods=True)
    function.body.visit(translator)
    if translator.missed or not numpy_calls(source, function.body) or not translator.changed:
        return []
    candidate = Candidate(
        finding, "numpy-function-inline", f"call `{func.value.value}` with TensorFlow ops instead of through NumPy"
    )
    args = ", ".join(source.code(e.value).strip() for e in inputs.value.elements)
    replace_expression(source, candidate, call, f"{func.value.value}({args})")
    candidate.edit(function.body, lambda updated, _pass: updated.visit(Translator(source, tf, methods=True)))
    return [candidate]
