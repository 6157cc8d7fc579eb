"""GC113 variable-assign: a value written into a tf.Variable and read back."""

from __future__ import annotations

from gradcheck.rules._base import Rule


class VariableAssign(Rule):
    code = "GC113"
    name = "variable-assign"
    summary = "A value computed from the variables is written into a variable with `assign` and read back: assignment is not differentiable."
    message = (
        "{call} writes into a variable, and assignment is not differentiable: {variables} get no gradient through it"
    )
    what = """
Finds a path from the variables to the loss that goes through `Variable.assign`
(`assign_add`, `assign_sub`, `scatter_*`) and a later read of the assigned variable. The
meta-learning inner step written as `model_copy_weight.assign(w - lr * g)` is the usual
way in; memory layers that store a state in a variable are another.
"""
    why = """
An assignment is a side effect, not a function: the tape does not connect the value read
back from a variable to the value that was written into it. The meta-gradient (or the
gradient through the memory) is `None`.
"""
    example = """
with tf.GradientTape() as outer:
    with tf.GradientTape() as inner:
        inner_loss = loss_fn(model(x_train), y_train)
    grads = inner.gradient(inner_loss, model.trainable_variables)
    for w_copy, w, g in zip(copy.trainable_variables, model.trainable_variables, grads):
        w_copy.assign(w - lr * g)
    meta_loss = loss_fn(copy(x_test), y_test)
"""
    use_instead = """
with tf.GradientTape() as outer:
    with tf.GradientTape() as inner:
        inner_loss = loss_fn(model(x_train), y_train)
    grads = inner.gradient(inner_loss, model.trainable_variables)
    fast = [w - lr * g for w, g in zip(model.trainable_variables, grads)]
    meta_loss = loss_fn(functional_forward(fast, x_test), y_test)
"""
    fix = (
        "Compute with the tensor instead of assigning it into a variable: keep the adapted weights "
        "as tensors (`fast = w - lr * g`) and run the forward pass functionally with them "
        "(e.g. `keras.Model.stateless_call(fast_weights, [], x)`)."
    )
    references = ("https://www.tensorflow.org/guide/autodiff#stateful_ops_stop_gradients",)
    op_types = frozenset({"AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"})
    call_names = {
        "AssignVariableOp": ("assign",),
        "AssignAddVariableOp": ("assign_add",),
        "AssignSubVariableOp": ("assign_sub",),
    }
