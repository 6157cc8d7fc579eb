"""The tensors of an eager step, with the ones the user's program freed computed again.

The recorder holds the outputs of stateless ops run under a tape by weak reference once a
taped op consumed them (with the op's attributes, in the form ``execute`` takes them):
holding them all kept alive
what TensorFlow's tape frees at once (a convolution's output before its bias is added),
+30% peak memory on an eager WGAN-GP. A diagnosis that reads a freed value gets a
``FreedTensor``: it has the original tensor's id, so the shadow tape can still be asked
about it (the tape knows tensors by id), and its value is computed again on first use, from
its producer's inputs, with the same kernel and attributes, so the same value. Leaves (variable
reads, random draws, function calls, the batch) are held strongly by the recorder.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator


def deref(entry):
    """A held tensor, or the tensor a weak reference still points to (else None)."""
    return entry() if isinstance(entry, weakref.ReferenceType) else entry


class NotComputable(ValueError):
    """A freed value whose producer is no longer recorded, or failed to run again: a
    ValueError, as reading a value that has none (a resource's) is, so readers skip it."""


class FreedTensor:
    """Stands for an eager tensor the program freed: its id, dtype, and its value on demand."""

    __slots__ = ("_dtype_enum", "_id", "_resolve", "_value")

    def __init__(self, key: int, dtype_enum: int, resolve) -> None:
        self._id = key
        self._dtype_enum = dtype_enum
        self._resolve = resolve
        self._value = None

    def value(self):
        if self._value is None:
            self._value = self._resolve(self._id)
        return self._value

    @property
    def dtype(self):
        from tensorflow.python.framework import dtypes

        return dtypes.as_dtype(self._dtype_enum)

    @property
    def shape(self):
        return self.value().shape

    def _datatype_enum(self) -> int:
        return self._dtype_enum

    def _numpy(self):
        return self.value()._numpy()

    def numpy(self):
        return self.value().numpy()

    def __array__(self, dtype=None, copy=None):
        import numpy as np

        return np.asarray(self._numpy(), dtype=dtype)

    def __tf_tensor__(self, dtype=None, name=None):
        return self.value()

    def __repr__(self) -> str:
        return f"<FreedTensor id={self._id}>"


class StepTensors(dict):
    """``key -> tensor`` for a flow: the tensors held (a dict's own items), and the ones held
    weakly by the recorder, alive or computed again (``FreedTensor``)."""

    def __init__(self, held: dict, weak: dict, recorder) -> None:
        super().__init__(held)
        self._weak = weak  # key -> (weakref, record)
        self._recorder = recorder
        self._computed: dict[int, object] = {}

    def __contains__(self, key) -> bool:
        return dict.__contains__(self, key) or self._lookup(key) is not None

    def __getitem__(self, key):
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        t = self._lookup(key)
        if t is None:
            raise KeyError(key)
        return t

    def get(self, key, default=None):
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        t = self._lookup(key)
        return default if t is None else t

    def keys(self):  # the held and the weakly held
        return set(dict.keys(self)) | set(self._weak)

    def __iter__(self) -> Iterator:
        return iter(self.keys())

    def _lookup(self, key):
        entry = self._weak.get(key)
        if entry is None:
            return None
        t = deref(entry[0])
        if t is not None:
            return t
        if entry[1].attrs is None:
            return None
        return FreedTensor(key, self._recorder.dtypes.get(key, 0), self._recompute)

    def _recompute(self, key):
        """The value of ``key`` computed again from its producer's inputs (each alive, held,
        or computed again in turn: an explicit stack, a network can be deep)."""
        recorder = self._recorder
        computed = self._computed
        stack = [key]
        while stack:
            k = stack[-1]
            if k in computed:
                stack.pop()
                continue
            alive = recorder.live_value(k)
            if alive is not None:
                computed[k] = alive
                stack.pop()
                continue
            rec = recorder.producer(k)
            if rec is None or rec.attrs is None:
                raise NotComputable(f"tensor {k} was freed and cannot be computed again")
            missing = [i for i in rec.inputs if i not in computed and recorder.live_value(i) is None]
            if missing:
                stack.extend(missing)
                continue
            inputs = [computed[i] if i in computed else recorder.live_value(i) for i in rec.inputs]
            try:
                outputs = recorder.execute_again(rec, inputs)
            except Exception as error:  # TensorFlow's own errors, whatever the op
                raise NotComputable(f"{rec.type} could not run again: {error}") from error
            for out_key, t in zip(rec.outputs, outputs, strict=False):
                computed[out_key] = t
            stack.pop()
        return computed[key]
