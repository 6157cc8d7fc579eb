"""Tranche progG of the mutation benchmark: its manifest. No TensorFlow, no network."""

from __future__ import annotations

from benchmarks.mutation import adapt, manifest

TRANCHE = manifest.HERE / "tranches" / "progG.toml"


def test_the_brief_s_shapes_are_all_there():
    shapes = [set(p.shapes) | {p.keras} for p in manifest.load(TRANCHE)]
    keras3_fit = [
        s for s in shapes if "keras3" in s and "fit" in s and s & {"custom-train-step", "compute-loss-override"}
    ]
    assert len(keras3_fit) >= 5
    for wanted in ("diffusion", "rl", "second-order", "input-gradient", "teacher-student", "byol"):
        assert any(wanted in s for s in shapes), wanted


def test_a_module_read_beside_a_program_gets_its_own_edits():
    byol = next(p for p in manifest.load(TRANCHE) if p.name == "byol_pretraining_tf_keras")
    datasets = next(f for f in byol.files if not isinstance(f, str))
    src = "import tensorflow as tf\n\n(x, y), (xt, yt) = tf.keras.datasets.cifar10.load_data()\n"
    out = adapt.adapt(src, datasets["edits"])
    assert "load_data" not in out and "randint" in out
