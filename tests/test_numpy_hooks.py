"""NumPy ufuncs under the tracer's hooks: a tensor they read is noted as a host escape (the
finding is tested in tests/test_diagnosis.py and the GC105 rule's examples); here, that the
hooks change nothing a program computes, and go quiet once they come off."""

from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from gradcheck.trace.capture import hooks  # noqa: E402
from gradcheck.trace.capture.session import Session  # noqa: E402


def test_ufuncs_compute_the_same_and_operators_keep_tensors():
    session = Session()
    t = tf.constant([1.0, -2.0, 3.0])
    array = np.array([0.5, 0.5, 0.5], dtype="float32")
    plain = (np.maximum(t, 0.0), np.exp(array), np.add.reduce([1, 2, 3]), array * t)
    with hooks.tracing(session):
        assert np.maximum is not plain[0]  # the stand-in is in
        hooked = (np.maximum(t, 0.0), np.exp(array), np.add.reduce([1, 2, 3]), array * t)
        assert np.maximum.nin == 2 and repr(np.maximum) == "<ufunc 'maximum'>"
        from numpy import maximum as captured  # a module importing it while the hooks are in
    for before, after in zip(plain, hooked, strict=True):
        assert type(before) is type(after)
        np.testing.assert_array_equal(np.asarray(before), np.asarray(after))
    assert tf.is_tensor(hooked[3])  # ndarray * Tensor is still the tensor's __rmul__
    assert isinstance(np.maximum, np.ufunc)  # put back
    assert session.ufunc_notes == {"on": False}
    np.testing.assert_array_equal(captured(t, 0.0), [1.0, 0.0, 3.0])  # still computes, notes nothing
