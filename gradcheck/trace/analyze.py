"""Turn one ``tape.gradient`` call with None gradients into findings.

For every source whose gradient is None: a few causes are decided by the source alone
(an integer dtype, a non-trainable variable, a tensor nobody watched); the rest come from
the data-flow graph around the call (``eager`` recorder or the traced ``graph``): the cut
finder locates the op on each path, and sources with no path at all are explained by a
host escape, a function that captured them by value, or plain non-use.
"""

from __future__ import annotations

import ast
import fnmatch
from dataclasses import dataclass, field

from gradcheck import sourcemap
from gradcheck.findings import ChainLink, Finding
from gradcheck.rules import classify_op, get_rule
from gradcheck.trace import _tf, frames
from gradcheck.trace import graph as graph_mode
from gradcheck.trace.cuts import ASSIGN, BLOCK, BOUNDARY, OUTSIDE, UNKNOWN, UNWATCHED, Cut, find_cuts
from gradcheck.trace.dataflow import TAG_CUSTOM_GRADIENT, TAG_FUNCTION, TAG_READ, Flow
from gradcheck.trace.frames import Location

_HIDDEN_IN_CHAIN = frozenset({"ReadVariableOp", "Identity", "IdentityN", "Placeholder", "Const"})
_MAX_CHAIN = 12


@dataclass
class Source:
    index: int
    value: object
    name: str
    is_variable: bool
    key: object = None


@dataclass
class Context:
    """Everything about one gradient call that building findings needs."""

    session: object
    tape: object
    state: object
    flat_targets: list
    sources: list[Source]
    eager: bool
    graph: object
    call_location: Location | None
    flow: Flow | None = None
    tensors: dict = field(default_factory=dict)
    target_keys: list = field(default_factory=list)

    # -- locations -------------------------------------------------------------------
    def op_location(self, op_index: int) -> Location | None:
        op = self.flow.ops[op_index]
        if self.eager:
            return frames.site_location(op.site) if op.site is not None else None
        location = frames.stack_user_location(op.site.traceback)
        if location is None:
            return None
        expr = sourcemap.expression_at(location.path, location.line, hints=_call_hints(op.type))
        if expr is not None and expr.line == location.line:
            return Location(location.path, location.line, expr.column, expr.end_line, expr.end_column)
        return location

    def op_line(self, op_index: int) -> int | None:
        location = self.op_location(op_index)
        return location.line if location else None


def _call_hints(op_type: str) -> tuple[str, ...]:
    from gradcheck.rules import call_hints

    return call_hints(op_type)


# -- entry points ---------------------------------------------------------------------
def analyse(session, tape, state, target, sources, grads, graph, upto, call) -> list[Finding]:
    flat_sources = _tf.tf.nest.flatten(sources)
    flat_grads = _tf.tf.nest.flatten(grads, expand_composites=False)
    if len(flat_grads) != len(flat_sources):
        return []
    flat_targets = [_target_tensor(t) for t in _tf.tf.nest.flatten(target)]
    starved_idx = [i for i, g in enumerate(flat_grads) if g is None]
    if not starved_idx:
        return []
    ctx = _context(session, tape, state, flat_targets, flat_sources, graph, call)
    starved = [ctx.sources[i] for i in starved_idx]
    starved = [s for s in starved if not _allowed(s.name, session.allow_none)]
    if not starved:
        return []
    return _diagnose(ctx, starved, upto)


def no_gradient_registered(session, tape, state, target, sources, error, graph, upto, call) -> list[Finding]:
    """``tape.gradient`` raised LookupError: an op on the path has no gradient function."""
    op_type = str(error).rsplit(":", 1)[-1].strip().strip("'\"")
    flat_sources = _tf.tf.nest.flatten(sources)
    flat_targets = [_target_tensor(t) for t in _tf.tf.nest.flatten(target)]
    ctx = _context(session, tape, state, flat_targets, flat_sources, graph, call)
    _build_flow(ctx, upto)
    cone = ctx.flow.backward_cone(ctx.target_keys)
    culprits = [i for i in sorted(cone) if ctx.flow.ops[i].type == op_type]
    findings = []
    for culprit in culprits:
        starved = [s for s in ctx.sources if s.key is not None and culprit in ctx.flow.forward_cone([s.key], cone)]
        if starved:
            cut = Cut(BLOCK, culprit, {s.key for s in starved}, [], cone, ctx.target_keys)
            findings.append(_cut_finding(ctx, cut, starved, code="GC111"))
    return _merge(findings)


# -- building the context ------------------------------------------------------------
def _target_tensor(t):
    return t.handle if _tf.is_variable(t) else t


def _source_tensor(s):
    return _tf.handle_of(s) if _tf.is_variable(s) else s


def _context(session, tape, state, flat_targets, flat_sources, graph, call) -> Context:
    call_location = call.location
    names = _source_names(flat_sources, call_location, call.tensor_names)
    sources = [Source(i, s, names[i], _tf.is_variable(s)) for i, s in enumerate(flat_sources)]
    return Context(session, tape, state, flat_targets, sources, graph is None, graph, call_location)


def _source_names(flat_sources, call_location: Location | None, tensor_names: dict[int, str]) -> list[str]:
    expr_names = None
    if call_location is not None and any(not _tf.is_variable(s) for s in flat_sources):
        args = sourcemap.call_arguments(call_location.path, call_location.line, call_location.column, "gradient")
        node = args[1] if args and len(args) > 1 else None
        expr_names = sourcemap.element_names(node, len(flat_sources))
    names = []
    for i, s in enumerate(flat_sources):
        if _tf.is_variable(s):
            names.append(_tf.variable_name(s))
        elif id(s) in tensor_names:
            names.append(tensor_names[id(s)])
        elif expr_names is not None:
            names.append(expr_names[i])
        else:
            names.append(getattr(s, "name", None) or f"sources[{i}]")
    return names


def _allowed(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _build_flow(ctx: Context, upto) -> None:
    state = ctx.state
    if ctx.eager:
        watched = {t._id: t for t in state.watched if hasattr(t, "_id")}
        ctx.flow, ctx.tensors = ctx.session.recorder.build_flow(state.ident, watched)
        ctx.target_keys = [getattr(t, "_id", None) for t in ctx.flat_targets]
        for source in ctx.sources:
            source.key = _key_of(ctx, _source_tensor(source.value))
        for t in state.watched:  # a watched tensor is a leaf the tape knows
            key = getattr(t, "_id", None)
            if key is not None:
                ctx.flow.differentiable.setdefault(key, _tf.is_differentiable_dtype(t.dtype))
    else:
        windows = [(start, end if end is not None else upto) for start, end in state.windows.get(ctx.graph, [])]
        ctx.flow, ctx.tensors = graph_mode.build_flow(ctx.graph, windows, upto)
        ctx.target_keys = [graph_mode.key(t) for t in ctx.flat_targets if getattr(t, "graph", None) is ctx.graph]
        for source in ctx.sources:
            source.key = _key_of(ctx, _source_tensor(source.value))


def _live_fn(ctx: Context):
    """Liveness, asked of the shadow tape: which keys the targets have a gradient for."""
    source_tensors = {s.key: _source_tensor(s.value) for s in ctx.sources if s.key is not None}

    def tensor(k):
        if k in source_tensors:
            return source_tensors[k]  # variables are watched by handle, as tape.gradient asks
        if ctx.flow.is_differentiable(k) and k not in ctx.flow.resources:
            return ctx.tensors.get(k)
        return None

    def live(targets, keys):
        target_tensors = [ctx.tensors[k] for k in targets if k in ctx.tensors]
        # A target among the sources stops TensorFlow's backward pass there: leave it out.
        candidates = [(k, tensor(k)) for k in keys if k not in targets and tensor(k) is not None]
        if not target_tensors or not candidates:
            return set()
        grads = _tf.imperative_gradient(ctx.state.shadow, target_tensors, [t for _, t in candidates])
        return {k for (k, _), g in zip(candidates, grads, strict=False) if g is not None}

    return live


# -- diagnosis -------------------------------------------------------------------------
def _diagnose(ctx: Context, starved: list[Source], upto) -> list[Finding]:
    findings: list[Finding] = []
    _build_flow(ctx, upto)
    on_tape = _on_user_tape(ctx)
    rest = []
    for source in starved:
        finding = _source_only_cause(ctx, source, on_tape)
        if finding is not None:
            findings.append(finding)
        else:
            rest.append(source)
    if rest:
        if ctx.eager:
            _recover_hidden_reads(ctx, [s for s in rest if s.is_variable and s.key is not None])
        by_key = {s.key: s for s in rest if s.key is not None}
        unkeyed = [s for s in rest if s.key is None]
        result = find_cuts(ctx.flow, ctx.target_keys, by_key, _live_fn(ctx))
        for cut in result.cuts:
            findings.append(_cut_finding(ctx, cut, [by_key[k] for k in cut.sources]))
        unreached = [by_key[k] for k in result.unreached] + unkeyed
        findings.extend(_unreached_findings(ctx, unreached))
    return _merge(findings)


def _recover_hidden_reads(ctx: Context, variables: list[Source]) -> None:
    """TensorFlow's C++ fast path reads a variable operand (``h * v``) without running any
    op callback, so its value shows up with no producer. The shadow tape did record the
    read: a no-producer tensor with a gradient with respect to a variable's handle *is*
    that variable's value. Add the read to the flow."""
    if not variables:
        return
    orphans = ctx.session.recorder.orphans
    consumed = {k for op in ctx.flow.ops if op.recorded for k in op.inputs}
    handles = [_source_tensor(s.value) for s in variables]
    sites = {}
    for op in ctx.flow.ops:
        for k in op.inputs:
            sites.setdefault(k, op.site)
    for key, tensor in list(orphans.items()):
        if key not in consumed or key in ctx.flow.producer:
            continue
        grads = _tf.imperative_gradient(ctx.state.shadow, [tensor], handles)
        for source, grad in zip(variables, grads, strict=True):
            if grad is not None:
                ctx.flow.add("ReadVariableOp", [source.key], [key], site=sites.get(key), tag=TAG_READ)
                ctx.tensors.setdefault(key, tensor)
                break


def _source_only_cause(ctx: Context, source: Source, on_tape: set) -> Finding | None:
    value = source.value
    dtype = getattr(value, "dtype", None)
    if dtype is not None and not _tf.is_differentiable_dtype(dtype):
        dtype_name = _tf.tf.as_dtype(dtype).name
        return _source_finding(ctx, "GC114", source, _creation_location(ctx, source), dtype=dtype_name)
    if source.is_variable and not getattr(value, "trainable", True):
        return _source_finding(ctx, "GC115", source, ctx.call_location)
    if not source.is_variable and source.key not in on_tape:
        return _source_finding(ctx, "GC110", source, _creation_location(ctx, source))
    return None


def _on_user_tape(ctx: Context) -> set:
    """The tensors the *user's* tape knows, by replaying TensorFlow's rule: an op is
    recorded when one of its float (or resource) inputs is already on the tape; watched
    tensors and the variables it watched start it off."""
    flow = ctx.flow
    on: set = set()
    for t in ctx.state.watched:
        on.add(_key_of(ctx, t))
    try:
        watched_variables = ctx.tape.watched_variables()
    except (AttributeError, RuntimeError):
        watched_variables = ()
    for variable in watched_variables:
        on.add(_key_of(ctx, _tf.handle_of(variable)))
    on.discard(None)
    for op in flow.ops:
        if op.recorded and any(k in on and (flow.is_differentiable(k) or k in flow.resources) for k in op.inputs):
            on.update(op.outputs)
    return on


def _key_of(ctx: Context, tensor):
    if ctx.eager:
        return getattr(tensor, "_id", None)
    internal = graph_mode.internal_tensor(ctx.graph, tensor)
    return graph_mode.key(internal) if internal is not None else None


def _creation_location(ctx: Context, source: Source) -> Location | None:
    if source.is_variable:
        origin = ctx.session.variable_origin(source.value)
        if origin and origin[0] is not None:
            return frames.site_location(origin[0])
        return ctx.call_location
    loc = ctx.call_location
    if loc is not None and source.name.isidentifier():
        expr = sourcemap.binding_line(loc.path, source.name, loc.line)
        if expr is not None:
            return Location(loc.path, expr.line, expr.column, expr.end_line, expr.end_column)
    return loc


def _source_finding(ctx: Context, code: str, source: Source, location: Location | None, **extra) -> Finding:
    return _make(ctx, code, location, [source.name], **extra)


def _make(
    ctx: Context,
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
    """Build a finding; its template fields are kept so a merge can re-render the text."""
    location = location or ctx.call_location or Location("<unknown>", 1)
    if call is None:
        call = _call_text(location)
    location = _in_characters(location)
    names = sorted(names)
    fields = {"call": call or op or "", "op": op or "", **fields}
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
    _render(finding)
    return finding


def _in_characters(location: Location) -> Location:
    end_line = location.end_line or location.line
    return Location(
        location.path,
        location.line,
        sourcemap.char_column(location.path, location.line, location.column) or 1,
        location.end_line,
        sourcemap.char_column(location.path, end_line, location.end_column),
    )


def _render(finding: Finding) -> None:
    rule = get_rule(finding.code)
    fields = dict(finding._fields, names=_short_list(finding.variables), variables=_phrase(finding.variables))
    finding.message = rule.format_message(**fields)
    finding.fix = rule.fix_text(**fields)


def _phrase(names: list[str]) -> str:
    """Names inline while the line stays readable; the full list is in ``variables``."""
    if len(names) <= 2:
        return " and ".join(names)
    return f"{len(names)} variables"


def _call_text(location: Location | None) -> str | None:
    if location is None:
        return None
    expr = sourcemap.expression_at(
        location.path, location.line, location.column, location.end_line, location.end_column
    )
    return expr.text if expr is not None else None


def _cut_code(ctx: Context, cut: Cut) -> str:
    if cut.kind == OUTSIDE:
        return "GC109"
    if cut.kind == ASSIGN:
        return "GC113"
    if cut.kind == UNWATCHED:
        return "GC110"
    if cut.kind == UNKNOWN:
        return "GC111"
    op = ctx.flow.ops[cut.op]
    if op.tag == TAG_CUSTOM_GRADIENT:
        return "GC112"
    code = classify_op(op.type)
    if code:
        return code
    return "GC101" if cut.kind == BOUNDARY else "GC111"


def _cut_finding(ctx: Context, cut: Cut, sources: list[Source], code: str | None = None) -> Finding:
    code = code or _cut_code(ctx, cut)
    location = ctx.op_location(cut.op) if cut.op >= 0 else None
    location = location or ctx.call_location or Location("<unknown>", 1)
    expr = sourcemap.expression_at(
        location.path,
        location.line,
        location.column if location.end_column else None,
        location.end_line,
        location.end_column,
    )
    op_label = _op_label(ctx.flow.ops[cut.op].type) if cut.op >= 0 else None
    first_arg = None
    if expr is not None and getattr(expr.node, "args", None):
        first_arg = ast.unparse(expr.node.args[0])
    notes = []
    for later in cut.later:
        later_line = ctx.op_line(later)
        notes.append(
            f"the path is cut again further down, by {_op_label(ctx.flow.ops[later].type)}"
            + (f" at line {later_line}" if later_line else "")
            + ": fix both"
        )
    first = min(sources, key=lambda s: s.index) if sources else None
    finding = _make(
        ctx,
        code,
        location,
        [s.name for s in sources],
        op=op_label,
        call=expr.text if expr is not None else None,
        chain=_chain(ctx, cut, first.key if first else None),
        notes=notes,
        arg=first_arg or "x",
        when=("before" if _ran_before_tape(ctx, cut.op) else "after") if cut.kind == OUTSIDE else "",
    )
    if finding.chain and first is not None:
        finding.chain_source = first.name
    if ctx.session.want_graph:
        finding.graph = _subgraph(ctx, cut, sources)
    return finding


_GRAPH_LIMIT = 60


def _subgraph(ctx: Context, cut: Cut, sources: list[Source]) -> dict | None:
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
            node(("op", i), _op_label(flow.ops[i].type) or flow.ops[i].type, "op", ctx.op_location(i), i == cut.op)
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


def _op_label(op_type: str | None) -> str | None:
    if op_type is None:
        return None
    if op_type.startswith("CustomGradient:"):
        return f"custom_gradient {op_type.split(':', 1)[1]}"
    if op_type.startswith(("__inference_", "__forward_")):
        name = op_type.split("_", 4)[-1] if op_type.count("_") >= 4 else op_type
        return f"tf.function {name.rsplit('_', 1)[0]}"
    return op_type


def _short_list(names: list[str], limit: int = 4) -> str:
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f" and {len(names) - limit} more"


def _ran_before_tape(ctx: Context, op_index: int) -> bool:
    op = ctx.flow.ops[op_index]
    if ctx.eager:
        return op.site is not None and _record_seq(ctx, op_index) < ctx.state.start_seq
    windows = ctx.state.windows.get(ctx.graph, [])
    return bool(windows) and op.site._id <= windows[0][0]


def _record_seq(ctx: Context, op_index: int) -> int:
    records = ctx.session.recorder.records
    return records[op_index].seq if op_index < len(records) else 0


def _chain(ctx: Context, cut: Cut, source_key) -> list[ChainLink]:
    if cut.op < 0 or source_key is None or not cut.region:
        return []
    culprit = ctx.op_location(cut.op)
    culprit_path = culprit.path if culprit else None
    path = ctx.flow.path(source_key, cut.op, cut.targets, cut.region | {cut.op})
    links = []
    for i in path:
        op = ctx.flow.ops[i]
        if op.type in _HIDDEN_IN_CHAIN and i != cut.op:
            continue
        location = ctx.op_location(i)
        links.append(
            ChainLink(
                _op_label(op.type) or op.type,
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


def _unreached_findings(ctx: Context, sources: list[Source]) -> list[Finding]:
    findings = []
    cone = ctx.flow.backward_cone(ctx.target_keys) if ctx.flow else set()
    function_ops = [i for i in sorted(cone) if ctx.flow.ops[i].tag == TAG_FUNCTION]
    for source in sources:
        reach = ctx.flow.forward_cone([source.key]) if source.key is not None else set()
        escape = _escape_site(ctx, source, reach)
        if escape is not None:
            location = frames.site_location(escape)
            findings.append(_located(ctx, "GC105", [source], location))
            continue
        origin = ctx.session.variable_origin(source.value) if source.is_variable else None
        if origin and origin[1] and function_ops:
            location = ctx.op_location(function_ops[0]) or ctx.call_location
            function = _op_label(ctx.flow.ops[function_ops[0]].type)
            findings.append(_located(ctx, "GC116", [source], location, function=function))
            continue
        findings.append(_unused_finding(ctx, source, reach))
    return findings


def _escape_site(ctx: Context, source: Source, reach: set[int]):
    if not ctx.eager:
        return None
    escapes = ctx.session.recorder.escapes
    best = None
    for i in sorted(reach):
        for key in ctx.flow.ops[i].outputs:
            if key in escapes:
                best = escapes[key]
                break
        if best is not None:
            break
    return best


def _located(ctx: Context, code: str, sources: list[Source], location: Location | None, **extra) -> Finding:
    return _make(ctx, code, location, [s.name for s in sources], **extra)


def _unused_finding(ctx: Context, source: Source, reach: set[int]) -> Finding:
    finding = _located(ctx, "GC108", [source], ctx.call_location)
    recorded = [i for i in sorted(reach) if ctx.flow.ops[i].recorded]
    if recorded:
        line = ctx.op_line(recorded[0])
        if line is not None:
            finding.notes.append(f"{source.name} is read at line {line}, but that result never reaches the loss")
    else:
        finding.notes.append(f"{source.name} is never read while the tape records")
    return finding


def _merge(findings: list[Finding]) -> list[Finding]:
    """One finding per distinct culprit (code and location), listing every variable."""
    merged: dict[tuple, Finding] = {}
    for f in findings:
        key = (f.code, f.path, f.line, f.column)
        into = merged.setdefault(key, f)
        if into is not f:
            into.variables = sorted(set(into.variables) | set(f.variables))
            into.notes += [n for n in f.notes if n not in into.notes]
            _render(into)
    return sorted(merged.values(), key=Finding.sort_key)


# -- graph mode: a host escape fails while tracing ---------------------------------------
_ESCAPE_MESSAGES = (
    "object has no attribute 'numpy'",
    "Cannot convert a symbolic tf.Tensor",
    "Cannot convert a symbolic Tensor",
    "not 'SymbolicTensor'",
)


def graph_escape_finding(session, error: BaseException) -> Finding | None:
    """In graph mode ``.numpy()``/NumPy/``float()`` on a tensor fails while tracing: that
    error *is* the diagnosis (GC105), pointed at the user's line, not a crash."""
    text = str(error)
    if not any(m in text for m in _ESCAPE_MESSAGES):
        return None
    tensor = getattr(error, "obj", None) if isinstance(error, AttributeError) else None
    frame_location = None
    tb = error.__traceback__
    while tb is not None:
        if frames.is_user_file(tb.tb_frame.f_code.co_filename):
            frame_location = frames.site_location((tb.tb_frame.f_code, tb.tb_lasti))
        elif tensor is None and "Cannot convert a symbolic" in text:
            candidate = tb.tb_frame.f_locals.get("self")
            if _tf.is_tensor(candidate) and not hasattr(candidate, "_id"):
                tensor = candidate
        tb = tb.tb_next
    if frame_location is None or "in user code" in text:
        # autograph ran a generated copy; its message lists the user's own frames
        frame_location = _location_from_message(text) or frame_location
    if frame_location is None:
        return None
    names = _variables_upstream(session, tensor) if tensor is not None else []
    expr = sourcemap.expression_at(
        frame_location.path,
        frame_location.line,
        frame_location.column,
        frame_location.end_line,
        frame_location.end_column,
    )
    frame_location = _in_characters(frame_location)
    finding = Finding(
        code="GC105",
        message="",
        path=frame_location.path,
        line=frame_location.line,
        column=frame_location.column,
        end_line=frame_location.end_line,
        end_column=frame_location.end_column,
        call=expr.text if expr is not None else None,
        variables=sorted(names),
        notes=[f"in graph mode (tf.function / model.fit) this fails while tracing: {text.splitlines()[0]}"],
    )
    finding._fields = {"call": finding.call or "this line", "op": ""}
    _render(finding)
    return finding


def _location_from_message(text: str) -> Location | None:
    import re

    found = None
    for match in re.finditer(r'File "([^"]+)", line (\d+)', text):
        if frames.is_user_file(match.group(1)):
            found = Location(match.group(1), int(match.group(2)))
    return found


def _variables_upstream(session, tensor) -> list[str]:
    """Names of the variables a symbolic tensor depends on (through captured handles)."""
    graph = tensor.graph
    captured = {id(internal): external for external, internal in getattr(graph, "captures", ())}
    by_handle = session.variables_by_handle()
    names, seen, stack = set(), set(), [tensor.op]
    while stack:
        op = stack.pop()
        if op._id in seen:
            continue
        seen.add(op._id)
        for out in op.outputs:
            external = captured.get(id(out))
            if external is not None and id(external) in by_handle:
                names.add(by_handle[id(external)])
        stack.extend(t.op for t in op.inputs)
    return sorted(names)
