"""Graph mode: a host escape (``.numpy()``, NumPy, ``float()``) fails while tracing. That
error *is* the diagnosis (GC105), pointed at the user's line, not a crash."""

from __future__ import annotations

import ast
import re

from gradcheck import sourcemap
from gradcheck.findings import Finding
from gradcheck.trace.diagnose.context import Context, Source
from gradcheck.trace.diagnose.describe import make
from gradcheck.trace.record import _tf, frames
from gradcheck.trace.record.frames import Location

#: host functions that turn values into a discrete choice: what they return would carry no
#: gradient even if it were computed in TensorFlow
_DISCRETE_CHOICES = frozenset(
    {"argmax", "argmin", "nanargmax", "nanargmin", "argsort", "choice", "multinomial", "categorical", "searchsorted"}
)


def escape_fields(location: Location | None) -> dict:
    """The fix variant of a host escape at ``location``: a choice made on the host from the
    value that left (``np.argmax(logits.numpy())``, a sampled token) is ``discrete``."""
    if location is None:
        return {}
    if set(sourcemap.calls_around(location.path, location.line, location.column)) & _DISCRETE_CHOICES:
        return {"variant": "discrete"}
    return {}


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
    if tensor is not None and not (_tf.is_tensor(tensor) and getattr(tensor, "graph", None) is not None):
        return None  # `.numpy()` asked of a NumPy array, not of a symbolic tensor: no graph escape
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
    if tensor is None:
        tensor = _converted_tensor(error)
    names = _variables_upstream(session, tensor) if tensor is not None else []
    if not names:
        # a NumPy ufunc (``np.abs(t)``) fails inside NumPy, naming no tensor: the symbolic
        # tensors in the user's frame (autograph's copy keeps the names) say what escaped
        names = _variables_in_user_frames(session, error)
    frame_location = _host_call_within(frame_location) or frame_location
    note = f"in graph mode (tf.function / model.fit) this fails while tracing: {text.splitlines()[0]}"
    return make(None, "GC105", frame_location, names, notes=[note], **escape_fields(frame_location))


def _converted_tensor(error: BaseException):
    """The symbolic tensor that left: the object of a ``.numpy()`` that failed, or the one
    NumPy tried to convert (``Tensor.__array__``'s ``self``), in the errors ``error`` was
    raised from: autograph raises a copy of the error it caught, with the user's frames in
    its message and the original error behind it."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        obj = getattr(current, "obj", None) if isinstance(current, AttributeError) else None
        if _tf.is_tensor(obj) and not hasattr(obj, "numpy") and getattr(obj, "graph", None) is not None:
            return obj
        tb = current.__traceback__
        while tb is not None:
            candidate = tb.tb_frame.f_locals.get("self")
            if _tf.is_tensor(candidate) and not hasattr(candidate, "numpy") and getattr(candidate, "graph", None):
                return candidate
            tb = tb.tb_next
        current = current.__cause__ or current.__context__
    return None


def predict_on_tape_finding(error: BaseException, recording: bool = False) -> Finding | None:
    """``model.predict`` inside a training step is a host escape (GC105), and TensorFlow or
    Keras fails on it: called while a tape records, tf_keras's predict function fails on the
    tape (``LookupError: No gradient defined for operation 'IteratorGetNext'``); called
    while the step is traced (``tf.function``, ``model.fit``), predict cannot run on
    symbolic tensors and fails with whatever error its path meets first (an
    ``AttributeError`` on ``.numpy()``, a ``TypeError``, a distribution strategy's
    ``RuntimeError``). Under ``python`` the script crashes there too. The crash is the host
    escape at the user's ``predict``, the model's variables starved."""
    on_tape = recording or (isinstance(error, LookupError) and "No gradient defined for operation" in str(error))
    frame = site = None
    for tb_frame, lasti in _user_frames(error, generated=True):
        frame, site = tb_frame, (tb_frame.f_code, lasti)
    if frame is None or not (on_tape or _traced(frame)):
        return None
    location = frames.site_location(site)
    if not frames.is_user_file(location.path):
        # autograph's generated copy: its message names the user's own line
        location = _location_from_message(str(error))
        if location is None:
            return None
    call = sourcemap.call_node(location.path, location.line, "predict") or sourcemap.call_node(
        location.path, location.line, "predict_on_batch"
    )
    if call is None:
        return None
    names = []
    model = _resolve(call.func.value, frame)
    for variable in getattr(model, "trainable_variables", None) or ():
        names.append(_tf.variable_name(variable))
    spot = Location(location.path, call.lineno, call.col_offset + 1, call.end_lineno, (call.end_col_offset or 0) + 1)
    if on_tape:
        note = "`predict` ran on the recording tape and TensorFlow failed there: "
    else:
        note = "`predict` cannot run inside a traced step (tf.function / model.fit) and failed there: "
    note += _first_line(error)[:120]
    return make(None, "GC105", spot, sorted(names), call=sourcemap.short_text(call.func) or "predict", notes=[note])


def crash_on_tape_finding(session, error: BaseException) -> Finding | None:
    """Eager: the program failed while a tape recorded, and the failure is a host escape's
    consequence: ``model.predict`` there (inside ``fit``'s ``train_step`` it raises a
    distribution strategy's ``RuntimeError``), or a NumPy value that left the tape used as
    a tensor on a later line (``pred.numpy()`` on what ``np.maximum(model(x), 0)``
    returned). The escape is the bug (GC105, at the escape, the failure in a note); any
    other failure inside a tape stays the program's own."""
    noted = session.__dict__.get("tape_at_error") if session is not None else None
    if noted is None or not _in_chain(noted[0], error):
        return None
    _, state, upto = noted
    found = predict_on_tape_finding(error, recording=True)
    if found is not None:
        return found
    failed = _host_value_failure(error)
    if failed is None:
        return None
    escapes = [
        (seq, site, key)
        for key, entries in list(session.recorder.escapes.items())
        for seq, site, code in entries
        if code == "GC105" and state.start_seq <= seq <= upto and not is_log_line(frames.site_location(site))
    ]
    if not escapes:
        return None
    _, site, key = max(escapes, key=lambda e: e[0])
    location = frames.site_location(site)
    where = _failure_line(error)
    note = (
        "what left TensorFlow here came back as a NumPy value, and the program then failed on it"
        + (f" at line {where}" if where is not None else "")
        + f": {failed}"
    )
    names = _eager_variables_upstream(session, state, key) or _predicted_with(error, site, location)
    if not names:
        return None  # nothing trained left with it: say what is certain, the program's own failure
    return make(None, "GC105", location, names, notes=[note], **escape_fields(location))


def _predicted_with(error: BaseException, site, location: Location) -> list[str]:
    """The trainable variables of the model whose ``predict`` at ``location`` made the
    escape (its forward pass ran in Keras's own function, not on the tape's records)."""
    call = sourcemap.call_node(location.path, location.line, "predict") or sourcemap.call_node(
        location.path, location.line, "predict_on_batch"
    )
    code = site[0] if isinstance(site, tuple) and site else None
    frame = next((f for f, _ in _user_frames(error) if f.f_code is code), None)
    if call is None or frame is None:
        return []
    model = _resolve(call.func.value, frame)
    return sorted(_tf.variable_name(v) for v in getattr(model, "trainable_variables", None) or ())


def _in_chain(noted: int, error: BaseException) -> bool:
    """Whether the error with id ``noted`` is ``error`` or one it was raised from."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if id(current) == noted:
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _host_value_failure(error: BaseException) -> str | None:
    """The first line of ``error`` when it is a NumPy value used where a tensor was meant
    (``'numpy.ndarray' object has no attribute 'numpy'``); None otherwise."""
    import numpy as np

    obj = getattr(error, "obj", None) if isinstance(error, AttributeError) else None
    if isinstance(obj, (np.ndarray, np.generic)):
        return _first_line(error)
    return None


def _failure_line(error: BaseException) -> int | None:
    line = None
    for frame, lasti in _user_frames(error):
        line = frames.site_location((frame.f_code, lasti)).line
    return line


def _eager_variables_upstream(session, state, key) -> list[str]:
    """Names of the variables the escaped eager tensor ``key`` was computed from, on the
    tape ``state`` (its recorded ops)."""
    from gradcheck.trace.record.dataflow import TAG_READ

    flow, _ = session.recorder.build_flow(state.ident, {}, _tf.nondata_inputs)
    producer = flow.producer.get(key)
    if producer is None:
        return []
    by_handle = session.variables_by_handle()
    names_by_key = {}
    for ref in list(getattr(session, "_variables", ())):
        variable = ref()
        try:
            handle = _tf.handle_of(variable) if variable is not None else None
        except (AttributeError, ValueError, TypeError):
            continue
        if handle is not None and id(handle) in by_handle and getattr(handle, "_id", None) is not None:
            names_by_key[handle._id] = by_handle[id(handle)]
    names = set()
    for i in flow.backward_cone([key]):
        op = flow.ops[i]
        if op.tag == TAG_READ and op.inputs and op.inputs[0] in names_by_key:
            variable = names_by_key[op.inputs[0]]
            names.add(variable)
    return sorted(names)


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if lines and lines[0] == "in user code:":  # autograph's: the error itself is its last line
        return lines[-1]
    return lines[0] if lines else type(error).__name__


def _traced(frame) -> bool:
    """Whether ``frame`` ran while its function was traced: autograph's generated copy of
    it (which runs only while tracing), or a frame holding symbolic tensors."""
    if "__autograph_generated" in frame.f_code.co_filename:
        return True
    for value in list(frame.f_locals.values()):
        for item in value if isinstance(value, (tuple, list)) else (value,):
            if _tf.is_tensor(item) and not hasattr(item, "numpy") and getattr(item, "graph", None) is not None:
                return True
    return False


def _user_frames(error: BaseException, generated: bool = False):
    """(frame, lasti) of the user's frames in ``error``'s traceback, outermost first
    (``generated``: autograph's generated copies of the user's functions too)."""
    tb = error.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if frames.is_user_file(name) or (generated and "__autograph_generated" in name):
            yield tb.tb_frame, tb.tb_lasti
        tb = tb.tb_next


def _resolve(node, frame):
    """The object a plain name or attribute chain (``self.actor.model``) names in ``frame``,
    read with ``getattr`` only (nothing of the user's is called); None otherwise."""
    if isinstance(node, ast.Name):
        for scope in (frame.f_locals, frame.f_globals):
            if node.id in scope:
                return scope[node.id]
        return None
    if isinstance(node, ast.Attribute):
        owner = _resolve(node.value, frame)
        return None if owner is None else getattr(owner, node.attr, None)
    return None


def _variables_in_user_frames(session, error: BaseException) -> list[str]:
    """The variables upstream of the symbolic tensors held by the innermost user frame of
    ``error``'s traceback (autograph's generated copy counts as the user's)."""
    frame, tb = None, error.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if frames.is_user_file(name) or "__autograph_generated" in name:
            frame = tb.tb_frame
        tb = tb.tb_next
    if frame is None:
        return []
    names: set[str] = set()
    for value in list(frame.f_locals.values()):
        if _tf.is_tensor(value) and getattr(value, "graph", None) is not None and not _tf.is_variable(value):
            try:
                names.update(_variables_upstream(session, value))
            except (AttributeError, ValueError, TypeError):
                continue
    return sorted(names)


def _host_call_within(location: Location) -> Location | None:
    """The outermost host call (``np.mean(...)``, ``float(...)``) starting on the location's
    line and inside its span: a statement's span from a traceback narrowed to the escape."""
    best = None
    for node in _calls_on_line(location.path, location.line):
        start, end, host = node
        if not host:
            continue
        if location.column is not None and start < (location.line, location.column):
            continue
        if location.end_column is not None and end > (location.end_line or location.line, location.end_column):
            continue
        if best is None or (start <= best[0] and end >= best[1]):
            best = (start, end)
    if best is None:
        return None
    (line, col), (end_line, end_col) = best
    return Location(location.path, line, col, end_line, end_col)


def _location_from_message(text: str) -> Location | None:
    found = None
    for match in re.finditer(r'File "([^"]+)", line (\d+)', text):
        if frames.is_user_file(match.group(1)):
            found = Location(match.group(1), int(match.group(2)))
    return found


def _variables_upstream(session, tensor) -> list[str]:
    """Names of the variables a symbolic tensor depends on (through captured handles)."""
    graph = tensor.graph
    captured = _tf.captured_externals(graph)
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


# -- a target that is a host value, or a constant made from one (eager) -----------------


def host_target(targets: list) -> bool:
    """Whether a target handed to ``tape.gradient`` is a host value (a NumPy scalar or
    array, a Python number): what a loss written with NumPy (``np.mean(np.abs(p - y))``)
    hands over. TensorFlow itself fails on it (``'numpy.float32' object has no attribute
    '_id'``)."""
    import numpy as np

    return any(
        isinstance(t, (np.ndarray, np.generic, float, int)) and not _tf.is_tensor(t) and not _tf.is_variable(t)
        for t in targets
    )


def escaped_target_findings(ctx: Context, sources: list[Source]) -> list[Finding] | None:
    """Eager: the target is a host value, or a constant with no producer on the tape (a
    NumPy loss put back with ``tf.convert_to_tensor``): the loss left TensorFlow, whatever
    else is true of the sources (GC105). Pointed at the escape when a hook saw it
    (``.numpy()``, ``np.mean(t)``), else at the host call around the last value made from
    the sources on the tape whose result nothing on the tape used: a NumPy ufunc
    (``np.abs(t)``) reads a tensor through the buffer protocol, which nothing can hook.
    None when the target is a tensor computed on the tape (the usual walk decides)."""
    if not ctx.eager or not sources:
        return None
    flow = ctx.flow
    targets = ctx.flat_targets
    host = host_target(targets)
    constant = not host and all(
        _tf.is_tensor(t) and getattr(t, "_id", None) is not None and t._id not in flow.producer for t in targets
    )
    if not (host or constant):
        return None
    keys = [s.key for s in sources if s.key is not None]
    if constant and any(getattr(t, "_id", None) in keys for t in targets):
        return None  # the target is a source itself
    reach = flow.forward_cone(keys) if keys else set()
    noted = _noted_escape(ctx, keys, reach)
    location = (_host_call_within(noted) or noted) if noted is not None else _dead_end_host_call(ctx, reach)
    if location is None:
        return None  # nothing made from the sources on the tape: computed elsewhere (GC109 ...)
    kind = type(targets[0]).__name__ if host else "a constant tensor"
    what = f"a `{kind}`, not a tensor" if host else "a constant tensor with no history on the tape"
    note = f"the target handed to `tape.gradient` is {what}: the loss was computed outside TensorFlow"
    return [make(ctx, "GC105", location, [s.name for s in sources], notes=[note])]


def _noted_escape(ctx: Context, keys: list, reach: set[int]) -> Location | None:
    """The latest escape the hooks noted, while this tape recorded, of a source or a value
    made from one."""
    escapes = ctx.session.recorder.escapes
    found = [e for k in keys for e in escapes.get(k, ())]
    for i in reach:
        for k in ctx.flow.ops[i].outputs:
            found.extend(escapes.get(k, ()))
    inside = [e for e in found if e[0] >= ctx.state.start_seq]
    inside = [e for e in inside if not is_log_line(frames.site_location(e[1]))]
    if not inside:
        return None
    return frames.site_location(max(inside, key=lambda e: e[0])[1])


def _dead_end_host_call(ctx: Context, reach: set[int]) -> Location | None:
    """The host call (``np.mean(...)``, ``float(...)``) around the last recorded op made
    from the sources whose outputs no recorded op consumes; that op's span if there is none."""
    flow = ctx.flow
    consumed = {k for op in flow.ops if op.recorded for k in op.inputs}
    ends = [i for i in sorted(reach) if flow.ops[i].recorded and not any(k in consumed for k in flow.ops[i].outputs)]
    for i in reversed(ends):
        location = ctx.op_location(i)
        if location is None:
            continue
        return _host_call_around(location) or location
    return None


_HOST_ROOTS = ("np", "numpy", "onp", "jnp", "scipy", "math", "statistics")
_HOST_BUILTINS = ("float", "int", "bool", "sum", "abs", "round")


def _host_call_around(location: Location) -> Location | None:
    """The outermost call on the op's line that encloses it and runs on the host: a NumPy
    function (``np.mean(np.abs(p - y))``) or ``float(...)``."""
    column = location.column or 1  # bytes, as ast's offsets
    best = None
    for start, end, host in _calls_on_line(location.path, location.line):
        if host and start <= (location.line, column) <= end and (best is None or (start <= best[0] and end >= best[1])):
            best = (start, end)
    if best is None:
        return None
    (line, col), (end_line, end_col) = best
    return Location(location.path, line, col, end_line, end_col)


def _calls_on_line(path: str, line: int) -> list[tuple[tuple[int, int], tuple[int, int], bool]]:
    """(start, end, runs on the host) of each call whose span covers ``line``, 1-based byte
    columns as ast gives them."""
    import ast

    tree = sourcemap.parsed(path)
    out = []
    for node in ast.walk(tree) if tree is not None else ():
        if not isinstance(node, ast.Call) or node.lineno > line or (node.end_lineno or 0) < line:
            continue
        callee = ast.unparse(node.func)
        host = callee.split(".", 1)[0] in _HOST_ROOTS or callee in _HOST_BUILTINS
        start = (node.lineno, node.col_offset + 1)
        end = (node.end_lineno or node.lineno, (node.end_col_offset or 0) + 1)
        out.append((start, end, host))
    return out


#: Calls whose result is thrown away after showing it: an escape inside one is a log line.
_LOG_CALLS = frozenset(
    {"print", "pprint", "info", "debug", "warning", "warn", "log", "write", "add_scalar", "scalar"}
    | {"set_postfix", "set_description", "echo", "display"}
)


def is_log_line(location: Location | None) -> bool:
    """Whether the escape at ``location`` is inside a statement that only shows a value
    (``print(t.numpy())``, ``logger.info(...)``, ``writer.add_scalar(...)``): its host copy
    goes nowhere, so it cannot be what the loss lost."""
    import ast

    if location is None:
        return False
    tree = sourcemap.parsed(location.path)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Expr) or not isinstance(node.value, ast.Call):
            continue
        if not (node.lineno <= location.line <= (node.end_lineno or node.lineno)):
            continue
        name = ast.unparse(node.value.func).rsplit(".", 1)[-1]
        return name in _LOG_CALLS
    return False
