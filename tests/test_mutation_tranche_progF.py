"""Tranche progF of the mutation benchmark: its manifest. No TensorFlow, no network."""

from __future__ import annotations

from benchmarks.mutation import adapt, manifest

TRANCHE = manifest.HERE / "tranches" / "progF.toml"


def test_tranche_manifest_loads():
    programs = manifest.load(TRANCHE)
    assert len(programs) >= 10
    assert len({p.repo for p in programs}) >= 4
    for p in programs:
        assert p.repo and p.commit and len(p.commit) == 40 and p.path
        for edit in p.edits:
            assert edit["transform"] in adapt.TRANSFORMS, (p.name, edit)
        assert (p.keras == "tf_keras") == p.name.endswith("_tf_keras") == (p.env.get("TF_USE_LEGACY_KERAS") == "1")
    assert sum(p.keras == "tf_keras" for p in programs) >= 2
    others = {p.repo for p in manifest.load()}
    for t in TRANCHE.parent.glob("*.toml"):
        if t != TRANCHE:
            others |= {p.repo for p in manifest.load(t)}
    assert not {p.repo for p in programs} & others  # new repositories only
    # the repositories kept for people who have not seen the code
    assert not {p.repo for p in programs} & {"keras-team/keras-io", "tensorflow/docs"}


def test_module_helpers_written_here_keep_the_module_importable():
    # the trainers' relative import of the package's helpers becomes lines of ours
    distiller = next(p for p in manifest.load(TRANCHE) if p.name == "distiller_compute_loss")
    src = "import keras\n\nfrom ..utils import nse_export\n\n\n@nse_export(path='x')\nclass Distiller:\n    pass\n"
    edits = [e for e in distiller.edits if e["transform"] == "replace_text"]
    out = adapt.adapt(src, edits)
    ns: dict = {}
    exec(compile(out.replace("import keras\n", ""), "<adapted>", "exec"), ns)
    assert ns["Distiller"].__name__ == "Distiller"
