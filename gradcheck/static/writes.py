"""Writes into variables while a tape records (GC113): ``v.assign(x)`` and its kin, an
optimizer's update, a metric's state; and the reads after them, which hold what was written
with no path back to what computed it."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from gradcheck.static.scope import Scope, StateRef, keyword
from gradcheck.static.values import EMPTY, LIVE, UNSEEN, Value, cut_flow, has_live, join, merge_flows, real

#: Methods of a variable that write into it (and ``tf.compat.v1``'s functions of the same
#: names, which write into the variable they are given first).
ASSIGNS = frozenset(
    (
        *("assign", "assign_add", "assign_sub", "scatter_update", "scatter_nd_update", "scatter_add", "scatter_sub"),
        *("scatter_nd_add", "scatter_nd_sub", "scatter_mul", "scatter_div", "scatter_max", "scatter_min"),
        "batch_scatter_update",
    )
)


class Writes:
    """The write part of the interpreter (a mixin of ``Interpreter``, through ``Calls``)."""

    def optimizer_update(self, node: ast.Call, optimizer: Value, scope: Scope) -> None:
        """``optimizer.apply_gradients(zip(grads, variables))``: an ``assign_sub`` into each
        variable. What a tape still recording reads of them afterwards holds the gradients,
        no path back to what computed them (a MAML inner step on a copy of the model), nor to
        the optimizer's own (a learning rate computed from a variable: its schedule runs at
        each update, so what it reads is read now)."""
        pairs = self._gradient_pairs(node, scope)
        if pairs is not None:
            rate = Value(flow={o: LIVE for o in optimizer.flow if real(o)})
            self._assign_variable(node, pairs[1], [pairs[0], rate])

    def _assign_variable(self, node: ast.Call, receiver: Value, values: list[Value]) -> None:
        """``v.assign(x)``: later reads of ``v`` hold ``x``'s values, which no gradient
        connects to ``x`` (GC113). Kept only for writes the followed tape records."""
        written = join(values) if values else EMPTY
        # where it writes (``canvas[i, y0:y1].assign(...)``): what computed the indices is
        # in the receiver's flow, already cut (integer positions carry no gradient)
        where = {o: cuts for o, cuts in receiver.flow.items() if cuts and real(o)}
        if not self.recording or not (has_live(written.flow) or where):
            return
        targets = [o for o, cuts in receiver.flow.items() if not cuts and o != UNSEEN]
        if isinstance(receiver.ref, StateRef):
            targets.append(receiver.ref.token)
        if not targets:
            return
        contents = cut_flow(written.flow, self.program.site(node, "GC113"))
        if where:
            contents = merge_flows((contents, where))
        for target in targets:
            have = self.assigned.get(target)
            self.assigned[target] = merge_flows((have, contents)) if have else contents

    def _gradient_pairs(self, node: ast.Call, scope: Scope) -> tuple[Value, Value] | None:
        """``apply_gradients(zip(grads, variables))``: (the gradients, the variables)."""
        pairs = node.args[0] if node.args else keyword(node, "grads_and_vars")
        if not (
            isinstance(pairs, ast.Call)
            and isinstance(pairs.func, ast.Name)
            and pairs.func.id == "zip"
            and len(pairs.args) == 2
            and not pairs.keywords
        ):
            return None
        return self.eval(pairs.args[0], scope), self.eval(pairs.args[1], scope)

    def _metric(self, node: ast.Call, metric: Value, attr: str, values: list[Value]) -> Value:
        """``metric.update_state(y, y_pred)``, ``metric(y, y_pred)``, ``metric.result()``."""
        ref = metric.ref
        if attr in ("update_state", "__call__") and values:
            written = join(values)
            if self.recording and has_live(written.flow):
                contents = cut_flow(written.flow, self.program.site(node, ref.code))
                have = self.assigned.get(ref.token)
                self.assigned[ref.token] = merge_flows((have, contents)) if have else contents
        if attr in ("result", "__call__"):
            return self.with_assigned(Value(ref=ref))
        return EMPTY

    def with_assigned(self, value: Value, models: Iterable[str] = ()) -> Value:
        """A read of a variable that was assigned to while the tape recorded; with ``models``,
        a call of those models, which reads every weight of theirs written before it
        (``model.get_layer("conv").kernel.assign_add(delta)``, then ``model(x)``)."""
        extra = [self.assigned[a] for o in value.flow for a in _ancestors(o) if a in self.assigned]
        prefixes = tuple(f"{m}." for m in models)
        if prefixes:
            extra += [contents for a, contents in self.assigned.items() if a.startswith(prefixes)]
        if isinstance(value.ref, StateRef) and value.ref.token in self.assigned:
            extra.append(self.assigned[value.ref.token])
        if not extra:
            return value
        return Value(
            flow=merge_flows((value.flow, *extra)),
            models=value.models,
            ref=value.ref,
            dtype=value.dtype,
            items=value.items,
            fields=value.fields,
            container=value.container,
        )


def _ancestors(origin: str) -> list[str]:
    """``model.block.dense`` -> itself, ``model.block``, ``model``."""
    out = [origin]
    while "." in origin:
        origin = origin.rpartition(".")[0]
        out.append(origin)
    return out
