"""Findings from diagnoses: the message and fix in the user's own names, the op chain
with the cut marked, the subgraph for pictures, and one finding per distinct culprit."""

from __future__ import annotations

from gradcheck import sourcemap
from gradcheck.findings import ChainLink, Finding
from gradcheck.rules import get_rule
from gradcheck.trace.diagnose.context import Context, Source
from gradcheck.trace.diagnose.cuts import Cut
from gradcheck.trace.record.dataflow import TAG_READ, Flow, function_base_name
from gradcheck.trace.record.frames import Location

_HIDDEN_IN_CHAIN = frozenset({"ReadVariableOp", "Identity", "IdentityN", "Placeholder", "Const"})
_MAX_CHAIN = 12


def make(
    ctx: Context | None,
    code: str,
    location: Location | None,
    names: list[str],
    *,
    op: str | None = None,
    call: str | None = None,
    chain: list[ChainLink] | None = None,
    notes: list[str] | None = None,
    **fields,
) -> Finding:
    """Build a finding; its template fields are kept so a merge can re-render the text.
    Without a location, the finding points at the ``tape.gradient`` call of ``ctx``."""
    location = location or (ctx.call_location if ctx is not None else None) or Location("<unknown>", 1)
    if call is None:
        call = call_text(location)
    location = in_characters(location)
    names = sorted(names)
    fields = {"call": call or op or "this line", "op": op or "", **fields}
    finding = Finding(
        code=code,
        message="",
        path=location.path,
        line=location.line,
        column=location.column,
        end_line=location.end_line,
        end_column=location.end_column,
        op=op,
        call=call,
        variables=names,
        chain=chain or [],
        notes=notes or [],
    )
    finding._fields = fields
    render(finding)
    return finding


def in_characters(location: Location) -> Location:
    end_line = location.end_line or location.line
    column = sourcemap.char_column(location.path, location.line, location.column) or 1
    if column == 1:  # a statement located by its line only: point at its first character
        text = sourcemap.source_line(location.path, location.line) or ""
        column = len(text) - len(text.lstrip()) + 1 if text.strip() else 1
    return Location(
        location.path,
        location.line,
        column,
        location.end_line,
        sourcemap.char_column(location.path, end_line, location.end_column),
    )


def render(finding: Finding) -> None:
    rule = get_rule(finding.code)
    fields = dict(
        finding._fields,
        names=short_list(finding.variables),
        variables=_phrase(finding.variables),
        count=len(finding.variables),
    )
    finding.message = rule.format_message(**fields)
    finding.fix = rule.fix_text(**fields)


def _phrase(names: list[str]) -> str:
    """Names inline while the line stays readable; the full list is in ``variables``."""
    if len(names) <= 2:
        return " and ".join(names)
    return f"{len(names)} variables"


def call_text(location: Location | None) -> str | None:
    if location is None:
        return None
    expr = sourcemap.expression_at(
        location.path, location.line, location.column, location.end_line, location.end_column
    )
    return expr.text if expr is not None else None


_GRAPH_LIMIT = 60


def subgraph(ctx: Context, cut: Cut, sources: list[Source]) -> dict | None:
    """The ops from the starved variables through the cut to the loss, nearest the cut
    first when there are too many; inputs from elsewhere collapse into one node."""
    if cut.op < 0:
        return None
    flow, region = ctx.flow, cut.region | {cut.op}
    keys = {s.key: s for s in sources if s.key is not None}
    upstream = flow.backward_cone(flow.ops[cut.op].inputs) & flow.forward_cone(list(keys), within=region)
    downstream = flow.forward_cone(flow.ops[cut.op].outputs, within=region)
    chosen = _nearest(flow, {cut.op} | upstream | downstream, cut.op, _GRAPH_LIMIT)
    nodes, edges, index = [], [], {}

    def node(key, label, kind, location=None, is_cut=False) -> int:
        if key not in index:
            index[key] = len(nodes)
            nodes.append(
                {
                    "id": index[key],
                    "label": label,
                    "kind": kind,
                    "line": location.line if location else None,
                    "path": location.path if location else None,
                    "cut": is_cut,
                }
            )
        return index[key]

    # A variable's read is drawn as the variable itself.
    reads = {i: flow.ops[i].inputs[0] for i in chosen if flow.ops[i].tag == TAG_READ and flow.ops[i].inputs[0] in keys}
    for i in sorted(chosen):
        if i in reads:
            node(("var", reads[i]), keys[reads[i]].name, "variable")
        else:
            node(("op", i), op_label(flow.ops[i].type) or flow.ops[i].type, "op", ctx.op_location(i), i == cut.op)
    targets = set(cut.targets)
    for i in sorted(chosen):
        if i in reads:
            continue
        op, me = flow.ops[i], index[("op", i)]
        hidden = 0
        for k in op.inputs:
            j = flow.producer.get(k)
            if k in keys:
                edges.append([node(("var", k), keys[k].name, "variable"), me])
            elif j in reads:
                edges.append([index[("var", reads[j])], me])
            elif j in chosen:
                edges.append([index[("op", j)], me])
            elif j is not None and flow.is_differentiable(k):
                hidden += 1
        if hidden:
            edges.append([node(("more", i), f"{hidden} more input{'s' if hidden > 1 else ''}", "collapsed"), me])
        if any(k in targets for k in op.outputs):
            edges.append([me, node(("loss",), "loss", "loss")])
    return {"nodes": nodes, "edges": edges}


def _nearest(flow: Flow, ops: set[int], center: int, limit: int) -> set[int]:
    """At most ``limit`` of ``ops``, by data-flow distance from ``center``."""
    if len(ops) <= limit:
        return ops
    from collections import deque

    seen, queue = {center}, deque([center])
    while queue and len(seen) < limit:
        i = queue.popleft()
        neighbours = [flow.producer.get(k) for k in flow.ops[i].inputs]
        neighbours += [c for k in flow.ops[i].outputs for c in flow.consumers.get(k, ())]
        for j in neighbours:
            if j in ops and j not in seen and len(seen) < limit:
                seen.add(j)
                queue.append(j)
    return seen


def op_label(op_type: str | None) -> str | None:
    if op_type is None:
        return None
    if op_type.startswith("CustomGradient:"):
        return f"custom_gradient {op_type.split(':', 1)[1]}"
    if op_type.startswith(("__inference_", "__forward_")):
        return f"tf.function {function_base_name(op_type)}"
    return op_type


def short_list(names: list[str], limit: int = 4) -> str:
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f" and {len(names) - limit} more"


def chain(ctx: Context, cut: Cut, source_key) -> list[ChainLink]:
    if cut.op < 0 or source_key is None or not cut.region:
        return []
    culprit = ctx.op_location(cut.op)
    culprit_path = culprit.path if culprit else None
    path = ctx.flow.path(source_key, cut.op, cut.targets, cut.region | {cut.op}, cut.data)
    links = []
    for i in path:
        op = ctx.flow.ops[i]
        if op.type in _HIDDEN_IN_CHAIN and i != cut.op:
            continue
        location = ctx.op_location(i)
        links.append(
            ChainLink(
                op_label(op.type) or op.type,
                location.line if location else None,
                cut=(i == cut.op),
                path=location.path if location and location.path != culprit_path else None,
            )
        )
    if len(links) > _MAX_CHAIN:
        cut_at = next((j for j, link in enumerate(links) if link.cut), 0)
        keep = set(range(3)) | set(range(len(links) - 3, len(links))) | {cut_at - 1, cut_at, cut_at + 1}
        trimmed, skipped = [], False
        for j, link in enumerate(links):
            if j in keep:
                trimmed.append(link)
                skipped = False
            elif not skipped:
                trimmed.append(ChainLink("…"))
                skipped = True
        links = trimmed
    return links


def merge(findings: list[Finding]) -> list[Finding]:
    """One finding per distinct culprit (code and location), listing every variable."""
    merged: dict[tuple, Finding] = {}
    for f in findings:
        key = (f.code, f.path, f.line, f.column)
        into = merged.setdefault(key, f)
        if into is not f:
            into.variables = sorted(set(into.variables) | set(f.variables))
            into.notes += [n for n in f.notes if n not in into.notes]
            render(into)
    return sorted(merged.values(), key=Finding.sort_key)


# -- graph mode: a host escape fails while tracing ---------------------------------------
