"""Graph mode: a host escape (``.numpy()``, NumPy, ``float()``) fails while tracing. That
error *is* the diagnosis (GC105), pointed at the user's line, not a crash."""

from __future__ import annotations

import re

from gradcheck.findings import Finding
from gradcheck.trace.diagnose.describe import make
from gradcheck.trace.record import _tf, frames
from gradcheck.trace.record.frames import Location

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
    note = f"in graph mode (tf.function / model.fit) this fails while tracing: {text.splitlines()[0]}"
    return make(None, "GC105", frame_location, names, notes=[note])


def _location_from_message(text: str) -> Location | None:
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
