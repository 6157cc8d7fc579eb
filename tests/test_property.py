"""Property: for random Keras models with a cut of a random kind inserted at a random depth
of a random branch, gradcheck reports exactly the variables upstream of the cut, at the
inserted line, and nothing else; without the cut it reports nothing. Graph and eager.

CI runs a few examples per mode; run longer with
``GRADCHECK_HYPOTHESIS_EXAMPLES=500 python -m pytest tests/test_property.py``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("GRADCHECK_HYPOTHESIS_EXAMPLES", "12"))

LAYERS = {
    "dense": ("keras.layers.Dense({width}, name={name!r})", ("kernel", "bias")),
    "conv": ("keras.layers.Conv1D({width}, 3, padding='same', name={name!r})", ("kernel", "bias")),
    "batchnorm": ("keras.layers.BatchNormalization(name={name!r})", ("gamma", "beta")),
    "layernorm": ("keras.layers.LayerNormalization(name={name!r})", ("gamma", "beta")),
}

CUTS = {
    "GC101": "h = tf.cast(tf.argmax(h, axis=-1)[..., None], tf.float32)",
    "GC102": "h = tf.round(h)",
    "GC103": "h = tf.cast(h > 0.0, tf.float32)",
    "GC104": "h = tf.stop_gradient(h)",
    "GC105": "h = tf.constant(h.numpy())",  # eager only: in graph mode it fails while tracing
}


@dataclass
class Recipe:
    embedding: bool
    trunk: list[str]
    heads: list[list[str]]
    cut: tuple[str, int, int] | None  # (code, branch: 0 trunk / 1.. head, position)
    mode: str  # "eager" | "graph"


@st.composite
def recipes(draw, mode: str) -> Recipe:
    embedding = draw(st.booleans())
    kinds = st.sampled_from(sorted(LAYERS))
    trunk = draw(st.lists(kinds, min_size=1, max_size=4))
    n_heads = draw(st.integers(1, 2))
    heads = [draw(st.lists(kinds, min_size=1, max_size=2)) for _ in range(n_heads)]
    codes = [c for c in CUTS if mode == "eager" or c != "GC105"]
    code = draw(st.sampled_from(codes))
    branch = draw(st.integers(0, n_heads))
    size = len(trunk) + (1 if embedding else 0) if branch == 0 else len(heads[branch - 1])
    position = draw(st.integers(1, size))  # after at least one layer of that branch
    return Recipe(embedding, trunk, heads, (code, branch, position), mode)


def render(recipe: Recipe, with_cut: bool) -> tuple[str, int | None, list[str]]:
    """The script, the line of the cut, and the variables it must starve."""
    lines = ["import keras", "import numpy as np", "import tensorflow as tf", "", "layers = []"]
    trunk_names, head_names = [], []
    if recipe.embedding:
        lines.append("embed = keras.layers.Embedding(12, 6, name='embed')")
        trunk_names.append(("embed", ("embeddings",)))
    for i, kind in enumerate(recipe.trunk):
        name = f"t{i}"
        lines.append(f"{name} = " + LAYERS[kind][0].format(width=5, name=name))
        trunk_names.append((name, LAYERS[kind][1]))
    for h, head in enumerate(recipe.heads):
        names = []
        for j, kind in enumerate(head):
            name = f"h{h}_{j}"
            lines.append(f"{name} = " + LAYERS[kind][0].format(width=4, name=name))
            names.append((name, LAYERS[kind][1]))
        out = f"h{h}_out"
        lines.append(f"{out} = keras.layers.Dense(1, name={out!r})")
        head_names.append([*names, (out, ("kernel", "bias"))])
    if recipe.embedding:
        lines.append("x = np.random.randint(0, 12, size=(4, 6))")
    else:
        lines.append("x = np.random.rand(4, 6, 3).astype('float32')")
    lines.append("y = np.random.rand(4, 1).astype('float32')")
    lines.append("")
    if recipe.mode == "graph":
        lines.append("@tf.function")
    lines.append("def step(x, y):")
    lines.append("    with tf.GradientTape() as tape:")
    body: list[str] = []
    cut_line_index = None
    code, branch, position = recipe.cut

    def apply(name: str) -> str:
        call = f"{name}(h, training=True)" if name.startswith(("t", "h")) else f"{name}(h)"
        return f"h = {call}"

    def maybe_cut(b: int, done: int) -> None:
        nonlocal cut_line_index
        if with_cut and b == branch and done == position:
            cut_line_index = len(body)
            body.append(CUTS[code])

    body.append("h = x")
    for k, (name, _) in enumerate(trunk_names):
        body.append(apply(name))
        maybe_cut(0, k + 1)
    body.append("trunk = h")
    outputs = []
    for h, names in enumerate(head_names):
        body.append("h = trunk")
        for k, (name, _) in enumerate(names[:-1]):
            body.append(apply(name))
            maybe_cut(h + 1, k + 1)
        body.append(f"h = {names[-1][0]}(tf.reduce_mean(h, axis=1))")
        body.append(f"out{h} = h")
        outputs.append(f"out{h}")
    body.append("loss = " + " + ".join(f"tf.reduce_mean(tf.square({o} - y))" for o in outputs))
    start = len(lines)
    lines += ["        " + line for line in body]
    all_vars = [f"{n}/{v}" for n, vs in trunk_names + [x for hn in head_names for x in hn] for v in vs]
    lines.append("    sources = [v for layer in layers for v in layer.trainable_variables]")
    lines.append("    return tape.gradient(loss, sources)")
    lines.append("")
    layer_list = ", ".join(n for n, _ in trunk_names + [x for hn in head_names for x in hn])
    lines.insert(start - (3 if recipe.mode == "graph" else 2), f"layers = [{layer_list}]")
    lines.append("step(x, y)")
    lines.append("step(x, y)")
    source = "\n".join(lines) + "\n"
    if cut_line_index is None:
        return source, None, []
    cut_line = source.splitlines().index("        " + body[cut_line_index]) + 1
    if branch == 0:
        starved_layers = trunk_names[:position]
    else:
        starved_layers = head_names[branch - 1][:position]
        if len(head_names) == 1:  # the only head: the whole trunk is upstream of the cut too
            starved_layers = trunk_names + starved_layers
    starved = sorted(f"{n}/{v}" for n, vs in starved_layers for v in vs)
    assert set(starved) <= set(all_vars)
    return source, cut_line, starved


def _check(run_script, recipe: Recipe) -> None:
    source, line, starved = render(recipe, with_cut=True)
    result = run_script(source)
    assert result.error is None, (result.error, source)
    code = recipe.cut[0]
    got = [(f.code, f.line, sorted(f.variables)) for f in result.findings]
    assert got == [(code, line, starved)], f"{got}\n--- script ---\n{source}"

    clean, _, _ = render(recipe, with_cut=False)
    result = run_script(clean)
    assert result.error is None and result.findings == [], (result.findings, clean)


PROPERTY_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("GRADCHECK_HYPOTHESIS_EXAMPLES") is None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@PROPERTY_SETTINGS
@given(recipe=recipes("eager"))
def test_random_models_eager(run_script, recipe):
    _check(run_script, recipe)


@PROPERTY_SETTINGS
@given(recipe=recipes("graph"))
def test_random_models_graph(run_script, recipe):
    _check(run_script, recipe)


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_render_is_sane(mode):
    recipe = Recipe(True, ["dense", "conv"], [["layernorm"], ["batchnorm"]], ("GC102", 1, 1), mode)
    source, line, starved = render(recipe, with_cut=True)
    compile(source, "<recipe>", "exec")
    assert source.splitlines()[line - 1].strip() == "h = tf.round(h)"
    assert starved == ["h0_0/beta", "h0_0/gamma"]
