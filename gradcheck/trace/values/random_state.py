"""Every random state a re-run of the user's code can advance, put back as it was.

GC301 calls the user's ``tf.custom_gradient`` forward function again. When that forward
draws random numbers (``tf.random.*``, dropout, a Keras ``SeedGenerator``, a
``tf.random.Generator``, NumPy or Python ``random``), the draws advance the program's random
state and everything the program does after the checked step differs from its run under
``python``. ``preserved()`` keeps the program's states out of the re-run's reach:

- Python's and NumPy's global generators: saved and set back;
- TensorFlow's eager op seeds: the re-run runs under a private global seed and op-seed
  generator, so it neither consumes the program's op seeds nor advances the kernels that
  keep the state of the program's seeded stateful ops (cached by their seeds);
- ``tf.random.Generator`` states (the global one included) and any variable the re-run
  writes (a Keras ``SeedGenerator``'s state, a batch norm's moving statistics): their
  values before the first write, assigned back.

It also tells whether the re-run drew random numbers: a forward function that does is not
the same function at two calls, and finite differences of it say nothing.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator

import numpy as np

from gradcheck.trace.record import _tf

__all__ = ["Draws", "preserved"]

#: The global seed the re-run's legacy random ops see (a program's own kernels are cached
#: under its seeds; none is this one by more than chance).
PRIVATE_SEED = 0x5EED_301

_WRITES = (
    "assign",
    "assign_add",
    "assign_sub",
    "scatter_add",
    "scatter_sub",
    "scatter_update",
    "scatter_nd_add",
    "scatter_nd_sub",
    "scatter_nd_update",
)


class Draws:
    """What a re-run touched."""

    def __init__(self) -> None:
        self.legacy = 0  # legacy stateful random ops (a seed asked of ``get_seed``)
        self.generators: dict[int, tuple] = {}  # id -> (generator, its state before)
        self.variables: dict[int, tuple] = {}  # id -> (variable, its value before)

    @property
    def random(self) -> bool:
        """The re-run drew random numbers (an integer state written is a seed generator's)."""
        seeds = any(not v.dtype.is_floating for v, _ in self.variables.values())
        return bool(self.legacy or self.generators or seeds)


@contextlib.contextmanager
def preserved() -> Iterator[Draws]:
    """Run the body with the program's random states out of its reach; put back every
    state it advanced. Yields what it drew."""
    from tensorflow.python.eager import context
    from tensorflow.python.framework import random_seed
    from tensorflow.python.ops import resource_variable_ops, stateful_random_ops

    draws = Draws()
    python_state = random.getstate()
    numpy_state = np.random.get_state()
    ctx = context.context()
    seed, rng = getattr(ctx, "_seed", None), getattr(ctx, "_rng", None)
    global_generator = getattr(stateful_random_ops, "global_generator", None)
    patched: list[tuple[object, str, object]] = []

    def patch(owner, name: str, value) -> None:
        patched.append((owner, name, owner.__dict__[name]))
        setattr(owner, name, value)

    # ResourceVariable has its own assign methods (weak-tensor wrappers of the base class's)
    for variable_class in resource_variable_ops.ResourceVariable.__mro__:
        for name in _WRITES:
            if name in variable_class.__dict__:
                patch(variable_class, name, _writing(draws, variable_class.__dict__[name]))
    generator_class = stateful_random_ops.Generator
    if isinstance(generator_class.__dict__.get("state"), property):
        patch(generator_class, "state", property(_generator_state(draws, generator_class.__dict__["state"].fget)))
    original_get_seed = random_seed.get_seed

    def get_seed(op_seed):
        draws.legacy += 1
        return original_get_seed(op_seed)

    patch(random_seed, "get_seed", get_seed)
    if hasattr(ctx, "_seed") and hasattr(ctx, "_rng"):
        ctx._seed, ctx._rng = PRIVATE_SEED, random.Random(PRIVATE_SEED)
    try:
        yield draws
    finally:
        for owner, name, value in reversed(patched):
            setattr(owner, name, value)
        if hasattr(ctx, "_seed"):
            ctx._seed, ctx._rng = seed, rng
        _put_back(draws)
        stateful_random_ops.global_generator = global_generator
        random.setstate(python_state)
        np.random.set_state(numpy_state)


def _writing(draws: Draws, write):
    def wrapper(self, *args, **kwargs):
        key = id(self)
        if key not in draws.variables:
            try:
                draws.variables[key] = (self, self.read_value().numpy())
            except Exception:  # noqa: BLE001 - not readable eagerly (a graph): nothing to put back
                pass
        return write(self, *args, **kwargs)

    return wrapper


def _generator_state(draws: Draws, fget):
    def state(self):
        variable = fget(self)
        if id(self) not in draws.generators:
            try:
                draws.generators[id(self)] = (variable, variable.read_value().numpy())
            except Exception:  # noqa: BLE001
                pass
        return variable

    return state


def _put_back(draws: Draws) -> None:
    """Assign the saved values straight to the resources (not through ``assign``, which
    gradcheck's own hooks note as the program's updates)."""
    from tensorflow.python.ops import gen_resource_variable_ops

    tf = _tf.tf
    for variable, value in [*draws.variables.values(), *draws.generators.values()]:
        try:
            gen_resource_variable_ops.assign_variable_op(variable.handle, tf.constant(value, variable.dtype))
        except Exception:  # noqa: BLE001 - a variable that cannot be written eagerly was not either
            pass
