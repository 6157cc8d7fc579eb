"""Tranche progF of the mutation benchmark: its manifest. No TensorFlow, no network."""

from __future__ import annotations

from benchmarks.mutation import adapt, manifest

TRANCHE = manifest.HERE / "tranches" / "progF.toml"


def test_module_helpers_written_here_keep_the_module_importable():
    # the trainers' relative import of the package's helpers becomes lines of ours
    distiller = next(p for p in manifest.load(TRANCHE) if p.name == "distiller_compute_loss")
    src = "import keras\n\nfrom ..utils import nse_export\n\n\n@nse_export(path='x')\nclass Distiller:\n    pass\n"
    edits = [e for e in distiller.edits if e["transform"] == "replace_text"]
    out = adapt.adapt(src, edits)
    ns: dict = {}
    exec(compile(out.replace("import keras\n", ""), "<adapted>", "exec"), ns)
    assert ns["Distiller"].__name__ == "Distiller"
