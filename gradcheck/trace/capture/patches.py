"""Attributes replaced on TensorFlow, Keras and NumPy objects, and put back."""

from __future__ import annotations

_MISSING = object()


class Patches:
    """The attributes one hook step replaced, in order, so that ``restore`` undoes exactly
    them (an attribute that was inherited is deleted again, not set to the parent's)."""

    def __init__(self) -> None:
        self._saved: list[tuple[object, str, object]] = []

    def set(self, owner: object, name: str, value: object) -> None:
        self._saved.append((owner, name, owner.__dict__.get(name, _MISSING)))
        setattr(owner, name, value)

    def restore(self) -> None:
        for owner, name, old in reversed(self._saved):
            if old is _MISSING:
                try:
                    delattr(owner, name)
                except AttributeError:
                    pass
            else:
                setattr(owner, name, old)
        self._saved.clear()
