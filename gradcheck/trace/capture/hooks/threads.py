"""Hook step: the op callback in the program's own threads.

TensorFlow keeps op callbacks per thread (``context._thread_local_data.op_callbacks``), so
the callback the ``op-callback`` step registers in the thread that imported TensorFlow sees
no op of a training run in a ``threading.Thread`` (``Thread(target=train).start()``): its
tape's ops would go unrecorded, and every cut would look like a variable the loss never
read (GC108). Each thread started while the session is active registers the session's
callback as it starts, as ``MirroredStrategy`` copies the callbacks into its replica
threads. A thread that outlives the session keeps a callback that records nothing."""

from __future__ import annotations

import threading

from gradcheck.trace.capture.patches import Patches
from gradcheck.trace.capture.session import Session
from gradcheck.trace.record import _tf

_LIVE: dict[int, bool] = {}  # id(session) -> its hooks are on


def install(session: Session, patches: Patches) -> None:
    callback = session.recorder.callback
    _LIVE[id(session)] = True
    key = id(session)

    def thread_callback(*args, **kwargs):
        if _LIVE.get(key):
            return callback(*args, **kwargs)
        return None

    orig = threading.Thread._bootstrap_inner

    def _bootstrap_inner(self):
        added = False
        if _LIVE.get(key):
            try:
                _tf.add_op_callback(thread_callback)
                added = True
            except Exception:  # noqa: BLE001 - no eager context in this thread: run it unrecorded
                added = False
        try:
            orig(self)
        finally:
            if added:
                try:
                    _tf.remove_op_callback(thread_callback)
                except (KeyError, ValueError):
                    pass

    patches.set(threading.Thread, "_bootstrap_inner", _bootstrap_inner)


def uninstall(session: Session, patches: Patches) -> None:
    _LIVE.pop(id(session), None)
    patches.restore()
