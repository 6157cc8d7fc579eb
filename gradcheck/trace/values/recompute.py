"""Forward values a traced step's value check computes again on the host, instead of
holding them until the step's gradients are known.

A value fed to the check's host callback stays alive until the callback runs, after the
whole backward pass: on a WGAN-GP under ``fit`` (seven gradient calls, nested tapes) that
held 1.6 GB of activations, 3.6x the peak memory of plain python
(``benchmarks/bench_memory.py``). The diagnosis reads them only when a gradient is
degenerate. So the callback is fed the *leaves* of the values the diagnosis wants: outputs
of ops that cannot run again with the same result (variable reads, random draws, the
function's inputs, function calls and control flow) and anything a graph cannot be fed
(resources, variants). On a degenerate step the ops between the leaves and the wanted
values run again, as one pruned graph (``Plan.run``): the same kernels on the same inputs,
so the same values, and healthy steps hold nothing more than the leaves.

A leaf is a variable's read value (no copy: a check applies no update), a random draw, the
batch: small beside the activations computed from them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gradcheck.trace.record import _tf

__all__ = ["Plan", "plan"]

#: A region larger than this many ops to replay is shipped whole, as before (the walk is
#: linear; the cap bounds what a degenerate step recomputes).
MAX_OPS = 20_000
#: Ops never run again: their result is not a function of their inputs alone.
_NEVER = frozenset({"Placeholder", "PlaceholderWithDefault", "EagerPyFunc", "PyFunc", "PyFuncStateless"})
_UNFEEDABLE = ("resource", "variant", "string")
_LEAF = "gradcheck_leaf_"


def _feedable(t) -> bool:
    return t.dtype.name not in _UNFEEDABLE


def _runnable(op, graph) -> bool:
    """The op's outputs are a function of its inputs and attributes alone, and it can be
    copied into a graph of its own (no function attribute, no resource or variant)."""
    if op.graph is not graph or op.type in _NEVER or op._is_stateful:
        return False
    try:
        if any(a.type in ("func", "list(func)") for a in op.op_def.attr):
            return False
    except Exception:  # noqa: BLE001 - no op def: not ours to run
        return False
    return all(_feedable(t) for t in op.outputs) and all(_feedable(t) for t in op.inputs)


@dataclass(eq=False)
class Plan:
    """``leaves`` are fed to the host callback; ``ops`` (in graph order) recompute
    ``fetch`` (key -> tensor) from them."""

    leaves: list
    ops: list
    fetch: dict

    def run(self, leaf_values: list, keys) -> dict:
        """The values of ``keys`` (those of ``fetch``) as NumPy arrays, from the leaves'."""
        keys = [k for k in dict.fromkeys(keys) if k in self.fetch]
        if not keys:
            return {}
        tf = _tf.tf
        from tensorflow.core.framework import graph_pb2, node_def_pb2

        graph_def = graph_pb2.GraphDef()
        rename: dict[str, str] = {}
        for i, leaf in enumerate(self.leaves):
            node = graph_def.node.add()
            node.name, node.op = f"{_LEAF}{i}", "Placeholder"
            node.attr["dtype"].type = leaf.dtype.as_datatype_enum
            rename[leaf.name] = f"{_LEAF}{i}"
            if leaf.value_index == 0:
                rename[leaf.op.name] = f"{_LEAF}{i}"
        for op in self.ops:
            node = node_def_pb2.NodeDef()
            node.CopyFrom(op.node_def)
            # control inputs (the step's order among its stateful ops) and placement, and
            # colocation with nodes left out, are not the values'
            inputs = [rename.get(name, name) for name in node.input if not name.startswith("^")]
            del node.input[:]
            node.input.extend(inputs)
            node.device = ""
            for name in [name for name in node.attr if name.startswith("_")]:
                del node.attr[name]
            graph_def.node.append(node)
        names = [self.fetch[k].name for k in keys]
        specs = [tf.TensorSpec(None, leaf.dtype) for leaf in self.leaves]

        def replay(*fed):
            mapping = {f"{_LEAF}{i}:0": t for i, t in enumerate(fed)}
            return tf.graph_util.import_graph_def(graph_def, input_map=mapping, return_elements=names, name="")

        function = tf.compat.v1.wrap_function(replay, specs)
        out = function(*leaf_values)
        return {k: np.asarray(v.numpy()) for k, v in zip(keys, out, strict=True)}


def plan(wanted: list, graph, keep: set) -> Plan | None:
    """How to obtain the ``wanted`` tensors of ``graph`` on the host: which to feed the
    callback (``keep``, by name, always is), which to compute again. None when the walk
    is too large (feed them all)."""
    runnable: dict = {}  # op -> bool, once decided
    leaves: dict[str, object] = {}
    for t in wanted:
        if t.name in keep or not _runnable(t.op, graph):
            continue
        # post-order over the producers: an op is run again when it can be and each input
        # is either computed again or fed (a leaf)
        stack = [(t.op, False)]
        while stack:
            op, expanded = stack.pop()
            if op in runnable:
                continue
            if not expanded:
                if not _runnable(op, graph):
                    runnable[op] = False
                    continue
                stack.append((op, True))
                stack.extend((i.op, False) for i in op.inputs if i.op not in runnable)
                if len(runnable) + len(stack) > MAX_OPS:
                    return None
                continue
            runnable[op] = True
    fetch, fed = {}, []
    for t in wanted:
        if runnable.get(t.op) and t.name not in keep:
            fetch[_key(t)] = t
        else:
            fed.append(t)
    needed = _needed(fetch.values(), runnable)
    for op in needed:
        for i in op.inputs:
            if not runnable.get(i.op):
                leaves.setdefault(i.name, i)
    for t in fed:
        leaves.setdefault(t.name, t)
    ops = sorted(needed, key=lambda op: op._id)
    return Plan(list(leaves.values()), ops, fetch)


def _needed(fetched, runnable: dict) -> set:
    """The runnable ops the fetched tensors depend on through runnable ops."""
    out: set = set()
    stack = [t.op for t in fetched]
    while stack:
        op = stack.pop()
        if op in out or not runnable.get(op):
            continue
        out.add(op)
        stack.extend(i.op for i in op.inputs)
    return out


def _key(t):
    from gradcheck.trace.record import graph as graph_mode

    return graph_mode.key(t)
