"""Tranche progG of the mutation benchmark: its manifest. No TensorFlow, no network."""

from __future__ import annotations

from benchmarks.mutation import adapt, manifest

TRANCHE = manifest.HERE / "tranches" / "progG.toml"


def test_tranche_manifest_loads():
    programs = manifest.load(TRANCHE)
    assert len(programs) >= 12
    assert len({p.repo for p in programs}) >= 6
    for p in programs:
        assert p.repo and p.commit and len(p.commit) == 40 and p.path
        for edit in p.edits:
            assert edit["transform"] in adapt.TRANSFORMS, (p.name, edit)
        for f in p.files:
            for edit in [] if isinstance(f, str) else f.get("edits", []):
                assert edit["transform"] in adapt.TRANSFORMS, (p.name, f)
        assert (p.keras == "tf_keras") == p.name.endswith("_tf_keras") == (p.env.get("TF_USE_LEGACY_KERAS") == "1")
    assert sum(p.keras == "tf_keras" for p in programs) >= 2
    others = {p.repo for p in manifest.load()}
    for t in TRANCHE.parent.glob("*.toml"):
        if t != TRANCHE:
            others |= {p.repo for p in manifest.load(t)}
    assert not {p.repo for p in programs} & others  # new repositories only
    # the repositories kept for people who have not seen the code
    assert not {p.repo for p in programs} & {"keras-team/keras-io", "tensorflow/docs"}


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
