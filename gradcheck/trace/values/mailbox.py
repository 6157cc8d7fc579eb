"""The values a traced step's degenerate-gradient check ships to the host, kept in the graph
until the host looks, for sessions that stay on (``install()``, ``watch()``).

What a step pays for the check is measured by ``benchmarks/bench_install.py``, and shaped by
two costs of TensorFlow's function calls: a Python op (``tf.py_function``) anywhere in a
function's library, even in a branch that never runs, costs about 0.1 ms at every call; and
each variable a function captures costs a few microseconds at every call. So the branch that
runs only on a degenerate step has no Python op: it serializes what the diagnosis needs into
one string variable of gradcheck's own per check, which is empty while the check is armed.
The host looks at it before a checked function runs (at every call at first, then at most
every ``POLL_SECONDS``) and when the session ends, and hands the values to the probe.

A check (the CLI, ``check_step``) runs a step or two and keeps the host callback, which
reports during the step. So does a step under ``tf.distribute``, whose variables would be
mirrored per replica."""

from __future__ import annotations

import time
from collections.abc import Callable

from gradcheck.trace.record import _tf
from gradcheck.trace.record.errors import internal_error

__all__ = ["Mailbox", "open_for", "poll"]

#: After a function's first runs, the host looks for a delivery at most this often.
POLL_SECONDS = 0.25
#: Runs of a checked function during which the host looks before every call.
EAGER_POLLS = 3


def open_for(session, receive: Callable) -> Mailbox | None:
    """A mailbox for a value check traced now, or None for the host callback: in a check,
    under ``tf.distribute``, or when the box cannot be made."""
    if session.check_mode or _tf.tf.distribute.has_strategy():
        return None
    try:
        return Mailbox(session, receive)
    except Exception as error:  # noqa: BLE001 - the host callback still works
        internal_error(error)
        return None


class Mailbox:
    """One traced check's box: ``armed()`` and ``store(flat)`` are traced into the graph,
    ``collect()`` runs on the host. Empty: armed; the stored values: delivered; one empty
    string: collected, and disarmed for good (only the first degenerate step is diagnosed)."""

    def __init__(self, session, receive: Callable) -> None:
        from tensorflow.python.ops import resource_variable_ops

        tf = _tf.tf
        self.receive = receive
        self.dtypes: list = []
        with session.paused(), tf.init_scope():
            # made directly: ``tf.Variable`` goes through the creator of the function being
            # traced, which refuses a variable made on a retrace
            self.box = resource_variable_ops.ResourceVariable(
                tf.zeros([0], tf.string), trainable=False, shape=tf.TensorShape([None])
            )
        session.mailboxes.append(self)

    def armed(self):
        tf = _tf.tf
        return tf.equal(tf.size(self.box.read_value()), 0)

    def store(self, flat: list) -> None:
        tf = _tf.tf
        self.dtypes = [t.dtype for t in flat]
        self.box.assign(tf.stack([tf.io.serialize_tensor(t) for t in flat]), read_value=False)

    def collect(self) -> bool:
        """Hand the stored values to the probe; True once done (then never again)."""
        tf = _tf.tf
        if int(tf.size(self.box).numpy()) <= 1:
            return False
        stored = self.box.numpy()
        self.box.assign(tf.constant([b""]))
        flat = [tf.io.parse_tensor(s, dtype) for s, dtype in zip(stored, self.dtypes, strict=True)]
        self.receive(tf.constant(True), *flat)
        return True


def poll(session, runs: int | None = None) -> None:
    """Hand delivered values to their probes: before a checked function's run number
    ``runs`` (throttled), or now (``runs=None``: the session ends)."""
    if not session.mailboxes:
        return
    now = time.monotonic()
    if runs is not None and runs > EAGER_POLLS and now - session.mailbox_looked < POLL_SECONDS:
        return
    session.mailbox_looked = now
    try:
        with session.paused():
            session.mailboxes = [mailbox for mailbox in session.mailboxes if not mailbox.collect()]
    except Exception as error:  # noqa: BLE001 - a failed look must not stop the user's training
        internal_error(error)
