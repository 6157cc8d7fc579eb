"""libcst helpers shared by the operators and the adaptation transforms."""

from __future__ import annotations

import builtins

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import MetadataWrapper, PositionProvider

BUILTINS = frozenset(dir(builtins))
# Calls inside a tape that are not a model's forward pass even though their root is not a module.
NOT_FORWARD_ATTRS = frozenset(
    {
        "gradient",
        "watch",
        "numpy",
        "assign",
        "assign_add",
        "assign_sub",
        "append",
        "reshape",
        "sample",
        "log_prob",
        "update_state",
        "result",
        "apply_gradients",
        "minimize",
        "get",
        "items",
        "astype",
        "write",
        "stack",
        "read",
    }
)


def dotted(node: cst.CSTNode | None) -> str:
    """``tf.math.argmax`` for the node of that expression, '' when it is not a dotted name."""
    if node is None:
        return ""
    try:
        return get_full_name_for_node(node) or ""
    except Exception:  # noqa: BLE001 - any exotic expression simply has no dotted name
        return ""


def imported_names(module: cst.Module) -> dict[str, str]:
    """Local name -> module path for every ``import`` / ``from ... import`` at any depth."""
    out: dict[str, str] = {}

    class V(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> None:
            for a in node.names:
                full = dotted(a.name)
                local = dotted(a.asname.name) if a.asname else full.split(".")[0]
                out[local] = full if a.asname else full.split(".")[0]

        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            if isinstance(node.names, cst.ImportStar):
                return
            mod = dotted(node.module) if node.module else ""
            for a in node.names:
                name = dotted(a.name)
                local = dotted(a.asname.name) if a.asname else name
                out[local] = f"{mod}.{name}" if mod else name

    module.visit(V())
    return out


def alias_for(module: cst.Module, full: str) -> str | None:
    """The local name bound to module ``full`` (``tf`` for ``tensorflow``), or None."""
    for local, path in imported_names(module).items():
        if path == full:
            return local
    return None


def is_tape_with(node: cst.With) -> list[str]:
    """Names bound by ``with tf.GradientTape(...) as NAME`` items (empty when not a tape)."""
    names = []
    for item in node.items:
        if isinstance(item.item, cst.Call) and dotted(item.item.func).endswith("GradientTape"):
            if item.asname is not None and isinstance(item.asname.name, cst.Name):
                names.append(item.asname.name.value)
            else:
                names.append("")
    return names


def is_graph_function(node: cst.FunctionDef) -> bool:
    """A def traced by TensorFlow: ``@tf.function`` or a Keras step method."""
    if node.name.value in {"train_step", "test_step", "compute_loss"}:
        return True
    for d in node.decorators:
        dec = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
        if dotted(dec).endswith("function"):
            return True
    return False


def positions(module: cst.Module, nodes: list[cst.CSTNode]) -> list[int]:
    """First line of each node in ``module`` (nodes must be the module's own objects)."""
    if not nodes:
        return []
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    pos = wrapper.resolve(PositionProvider)
    return sorted({pos[n].start.line for n in nodes if n in pos})


def parse_stmt(code: str) -> cst.BaseStatement:
    return cst.parse_statement(code)


def parse_expr(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)
