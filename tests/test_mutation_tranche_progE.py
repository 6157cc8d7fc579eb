"""Tranche progE of the mutation benchmark: its manifest and the transform it added
(`move_block`). No TensorFlow, no network."""

from __future__ import annotations

import pytest

from benchmarks.mutation import adapt, manifest

TRANCHE = manifest.HERE / "tranches" / "progE.toml"


# a notebook run out of order: the model is built above the cell that defines its class
NOTEBOOK = """import numpy as np
model = Net(3)
train(model)

class Net:
    def __init__(self, n):
        self.n = n

x = Net(1)
"""


def test_move_block_moves_a_definition_above_its_first_use():
    out = adapt.adapt(
        NOTEBOOK, [{"transform": "move_block", "start": "class Net", "end": "x = Net(", "before": "model = Net("}]
    )
    assert out.index("class Net:") < out.index("model = Net(3)") < out.index("x = Net(1)")
    assert sorted(out.split()) == sorted(NOTEBOOK.split())  # moved, not changed
    ns: dict = {"train": lambda m: m.n}
    exec(compile(out, "<adapted>", "exec"), ns)  # the original order raises NameError
    assert ns["model"].n == 3
    with pytest.raises(NameError):
        exec(compile(NOTEBOOK, "<original>", "exec"), {"train": lambda m: m.n})


@pytest.mark.parametrize(
    "start,end,before",
    [
        ("class Gone", "x = Net(", "model = Net("),
        ("class Net", "y = ", "model = Net("),
        ("class Net", "x = Net(", "nowhere"),
    ],
)
def test_move_block_says_when_the_program_changed(start, end, before):
    with pytest.raises(adapt.AdaptError):
        adapt.move_block(NOTEBOOK, start, end, before)
