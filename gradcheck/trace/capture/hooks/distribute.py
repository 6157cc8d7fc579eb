"""Hook step: ``tf.distribute`` replica contexts. Gradcheck's own questions in a replica
(the diagnosis and the value checks differentiate the shadow tape again) never synchronise
the replicas.

Under a ``MirroredStrategy`` each replica runs the step in a thread of its own, and every
cross-replica reduction in it (a synchronized BatchNormalization's ``all_reduce``, and the
same reduction in its gradient) is a ``merge_call`` at which all replicas must meet: a
replica that makes one more than the others fails the user's step with "Some replicas made
a different number of replica_context().merge_call() calls". What the checks ask need not
be the same in every replica (a check done once per traced graph is done by the first
replica only), so inside gradcheck's own work (``record.hostpoint.own_work``) an all-reduce
stands for this replica's value: the same connectivity, and values of the same kind (zero,
finite or not) as the reduced ones, which is all the checks read from it."""

from __future__ import annotations

from gradcheck.trace.capture.patches import Patches
from gradcheck.trace.capture.session import Session
from gradcheck.trace.record import _tf, hostpoint

#: The merge functions of ``ReplicaContext.all_reduce`` (and of its gradient).
_ALL_REDUCE = "batch_all_reduce"


def install(session: Session, patches: Patches) -> None:
    try:
        from tensorflow.python.distribute import distribute_lib
    except ImportError:  # pragma: no cover - TensorFlow without tf.distribute
        return
    cls = distribute_lib.ReplicaContext
    orig_merge_call = cls.merge_call

    def merge_call(self, merge_fn, args=(), kwargs=None):
        if hostpoint.in_own_work() and getattr(merge_fn, "__name__", None) == _ALL_REDUCE and not kwargs:
            return [_tf.tf.identity(x) for x in args]
        return orig_merge_call(self, merge_fn, args, kwargs)

    patches.set(cls, "merge_call", merge_call)
