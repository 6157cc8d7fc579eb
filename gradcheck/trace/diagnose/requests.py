"""The step's recent gradient requests, as ``applied`` remembers them: which gradient is for
which source, and which variables each request asked for (``source_list`` asks whether an
earlier request trains the model a tape read)."""

from __future__ import annotations

__all__ = ["asked_before", "tables"]


def tables(session) -> tuple[dict, list]:
    """id(gradient) -> (weak reference, request, position), and the requests in order."""
    store = session.__dict__.get("applied_requests")
    if store is None:
        store = session.__dict__["applied_requests"] = ({}, [])
    return store


def asked_before(session) -> set[int]:
    """The handles of the variables the requests remembered so far asked for (the step's
    earlier requests: the one being diagnosed is remembered after its diagnosis)."""
    _, order = tables(session)
    return {h for request in order for h in request.handles if h is not None}
