"""Traced steps compiled with XLA. An XLA cluster cannot call back into Python, so the value
checks of a traced step (GC201, GC202, GC204: a host callback when the graph runs) cannot be
added to it. In a check no function is compiled with XLA (``capture/hooks/functions.py``
traces them without it); under ``install()``/``watch()`` the program's own functions run as
they are, and the first gradient request met inside XLA says once, as a warning, that its
values are not checked (GC1xx and GC203, decided at trace time, still are)."""

from __future__ import annotations

import warnings

__all__ = ["in_xla"]

_warned: set[int] = set()


def in_xla(graph, session=None) -> bool:
    """``graph`` (or a graph it is nested in) is compiled with XLA; warns once per session."""
    try:
        from tensorflow.python.ops import control_flow_util

        xla = bool(control_flow_util.GraphOrParentsInXlaContext(graph))
    except Exception:  # noqa: BLE001 - a TensorFlow without it: assume not
        return False
    if xla and id(session) not in _warned:
        _warned.add(id(session))
        warnings.warn(
            "gradcheck: a gradient request inside a function compiled with XLA (jit_compile=True): "
            "its gradient values (GC201, GC202, GC204) are not checked",
            RuntimeWarning,
            stacklevel=2,
        )
    return xla
