"""``tf.py_function`` under the check: its gradient may be asked more than once a run.

A ``tf.py_function`` records its Python body on a tape of its own on each run, keyed by the
op's token, and the op's gradient *pops* that entry: one gradient per run. The check asks
gradients of the user's step beside the user's own (which variables a loss reaches, the
values of the gradients), so in a traced step two backward ops read one entry and the
second fails (``UnknownError ... KeyError: b'pyfunc_4'``): a correct program would crash
under the check. While the hooks are on, the body is recorded on a persistent tape and
the gradient reads the entry without removing it. The gradients are the same; each run
replaces its op's entry, so at most one entry per ``py_function`` op is held.
"""

from __future__ import annotations

from gradcheck.trace.capture.patches import Patches


class _KeptEntries(dict):
    """``tape_cache`` whose ``pop`` leaves the entry for the next gradient of the same run."""

    def pop(self, key, *default):
        if key in self:
            return self[key]
        return super().pop(key, *default)


def install(session, patches: Patches) -> None:
    from tensorflow.python.eager import backprop, backprop_util, record
    from tensorflow.python.ops import script_ops
    from tensorflow.python.util import compat, nest

    eager_func = getattr(script_ops, "EagerFunc", None)
    if eager_func is None or not hasattr(eager_func, "_call") or not isinstance(script_ops.tape_cache, dict):
        return  # another TensorFlow's internals: leave them as they are
    original = eager_func.__call__

    def __call__(self, device, token, args):
        if not (getattr(self, "_support_graph_mode_gradient", False) or record.could_possibly_record()):
            return original(self, device, token, args)
        # as TensorFlow's own ``EagerFunc.__call__``, with a tape that can answer twice
        with backprop.GradientTape(persistent=True) as tape:
            for tensor in args:
                for t in nest.flatten(tensor):
                    if backprop_util.IsTrainable(t):
                        tape.watch(t)
            outputs = self._call(device, args)
        script_ops.tape_cache[compat.as_bytes(token)] = (tape, args, outputs)
        return outputs

    patches.set(script_ops, "tape_cache", _KeptEntries(script_ops.tape_cache))
    patches.set(eager_func, "__call__", __call__)
