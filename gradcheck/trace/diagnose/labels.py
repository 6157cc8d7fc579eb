"""Whether integer ids serve as the labels of another network's loss: the ids (or what is
made from them alone: a one-hot, a padded sequence) meet, at their first use, a prediction
made by variables other than the ones the ids were computed from (another network's logits
in ``ctc_loss``, a sparse cross-entropy, ``y_true`` of a loss). Such a network gets no
gradient through its labels: it needs a loss of its own. Decided on the graph, from where
the ids go, never from the names of the ops."""

from __future__ import annotations

from gradcheck.trace.record.dataflow import Flow

__all__ = ["used_as_labels"]

#: ops that pass a value on unchanged: a table read through them is still a table
_PASS = frozenset({"Identity", "IdentityN", "Cast", "ReadVariableOp"})


def used_as_labels(flow: Flow, op_index: int, sources: set) -> bool:
    """Whether the integer outputs of ``flow.ops[op_index]`` (an argmax, top-k indices) are
    the labels or targets of a prediction made by other variables than their own; only the
    variables asked for (``sources``, their keys) count, not a state both share (a seed)."""
    cut = flow.ops[op_index]
    own = _variables(flow, cut.data or cut.inputs) & sources
    if not own:
        return False
    dependent = flow.forward_cone(flow.resources, data=True)
    ids = set(cut.outputs)
    cone = flow.forward_cone(cut.outputs)
    merged = False
    for i in sorted(cone):
        op = flow.ops[i]
        if not any(k in ids for k in op.inputs):
            continue
        others = [k for k in op.inputs if k not in ids and flow.producer.get(k) in dependent]
        if not others:  # made from the ids and constants alone: still labels (a one-hot, a padding)
            ids.update(op.outputs)
            continue
        others = [k for k in others if flow.producer.get(k) not in cone]
        if not others:
            continue  # met again past their first use (inside the loss): already judged there
        if any(k in flow.resources or _table(flow, k) for k in others):
            return False  # ids looking up a variable's rows (an Embedding): not labels
        theirs = set().union(*(_variables(flow, [k]) for k in others)) & sources
        if theirs & own:
            return False  # ids selecting among their own network's values (Q-learning)
        merged = merged or bool(theirs)  # else a value no variable asked for makes (a seed's state)
    return merged


def _variables(flow: Flow, keys) -> set:
    """The variables (resource keys) ``keys`` are computed from, through data edges."""
    found = set()
    for i in flow.backward_cone(keys, data=True) | {flow.producer[k] for k in keys if k in flow.producer}:
        found.update(k for k in flow.ops[i].inputs if k in flow.resources)
    return found


def _table(flow: Flow, key) -> bool:
    """``key`` is a variable's value itself (read, perhaps cast), not computed from it."""
    for _ in range(4):
        p = flow.producer.get(key)
        if p is None or flow.ops[p].type not in _PASS or not flow.ops[p].inputs:
            return False
        if flow.ops[p].type == "ReadVariableOp" or any(k in flow.resources for k in flow.ops[p].inputs):
            return True
        key = flow.ops[p].inputs[0]
    return False
