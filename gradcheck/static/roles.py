"""What a ``tf.stop_gradient``'s value is for, read from the code around it: a *target*
(the weight of a log-probability, an advantage; the ``y_true`` of a Keras loss) is stopped
on purpose. When the sources reach the loss only through such a stop while the loss does
train other variables, the sources are the mistake (the critic's variables asked of the
actor's loss): GC108 at the request, as the trace engine reports it
(``trace/diagnose/roles``), not GC104 at the stop.

The trace engine also takes the side of a squared error opposite a live prediction;
without values, which side is the prediction is not certain here (a Gaussian
log-likelihood ``(sample - mean)**2`` stops its sample, and a stopped mean is the bug)."""

from __future__ import annotations

import ast

#: callees whose result is a log-probability or a cross-entropy of the prediction
_LOG_WORDS = ("log", "crossentropy", "cross_entropy")
#: Keras/TensorFlow losses called as ``loss(y_true, y_pred)``: the first argument is the target
_TARGET_FIRST = frozenset(
    {
        "mean_squared_error", "mse", "mean_absolute_error", "mae", "huber", "huber_loss", "MeanSquaredError",
        "MeanAbsoluteError", "Huber", "log_cosh", "LogCosh", "categorical_crossentropy",
        "sparse_categorical_crossentropy", "binary_crossentropy", "CategoricalCrossentropy",
        "SparseCategoricalCrossentropy", "BinaryCrossentropy", "kl_divergence", "KLDivergence",
    }
)  # fmt: skip


def _last(func: ast.AST) -> str:
    while isinstance(func, ast.Call):  # ``keras.losses.Huber()(y, p)``
        func = func.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _has_log(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and any(w in _last(n.func).lower() for w in _LOG_WORDS) for n in ast.walk(node))


def _parents(root: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: parent for parent in ast.walk(root) for child in ast.iter_child_nodes(parent)}


#: calls that keep a value's role: a reshaped, cast or softened target is still the target
_SAME_ROLE = frozenset(("reshape", "squeeze", "expand_dims", "cast", "softmax", "sigmoid", "log_softmax"))


def _is_target_use(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """``node`` (the stopped value, or a name bound to it) is used as a target where it stands."""
    parent = parents.get(node)
    while (
        isinstance(parent, ast.UnaryOp)
        or (isinstance(parent, ast.Call) and _last(parent.func) in _SAME_ROLE and parent.args[:1] == [node])
        or (isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Div) and parent.left is node)
    ):
        node, parent = parent, parents.get(parent)  # ``softmax(teacher_logits / temperature)``
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Mult):
        other = parent.right if parent.left is node else parent.left
        return _has_log(other)  # an advantage weighting a log-probability
    if isinstance(parent, ast.Call) and parent.args and parent.args[0] is node and len(parent.args) > 1:
        # a Keras loss, or a loss object the program keeps (``self.distillation_loss_fn``):
        # called as ``loss(y_true, y_pred)``
        name = _last(parent.func)
        return name in _TARGET_FIRST or "loss" in name.lower()
    return False


def stops_a_target(function: ast.AST, call: ast.Call) -> bool:
    """The ``stop_gradient`` ``call`` in ``function`` (a def or the module) stops a value that
    is then used as a target: at once, or through the name it is bound to. Also a forward
    pass run before the tape on purpose (a teacher's soft targets)."""
    parents = _parents(function)
    if _is_target_use(call, parents):
        return True
    statement = parents.get(call)
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return False
    target = statement.targets[0]
    if not isinstance(target, ast.Name):
        return False
    return any(
        isinstance(n, ast.Name)
        and n.id == target.id
        and isinstance(n.ctx, ast.Load)
        and n.lineno > statement.lineno
        and _is_target_use(n, parents)
        for n in ast.walk(function)
    )
