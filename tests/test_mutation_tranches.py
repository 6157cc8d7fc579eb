"""Every tranche of the mutation benchmark (benchmarks/mutation/tranches/*.toml): a manifest of
programs pinned by repository, path and commit, new repositories only, the adapt transforms
it names known, tf_keras programs named and run as such. No TensorFlow, no network."""

from __future__ import annotations

import pytest

from benchmarks.mutation import adapt, manifest

TRANCHES = sorted((manifest.HERE / "tranches").glob("*.toml"))
#: repositories kept for people who have not seen the code (issue 36), beyond what the
#: original manifest already holds
RESERVED = {"keras-team/keras-io", "tensorflow/docs"}
#: what each tranche was asked to hold: programs, repositories, tf_keras programs
SIZES = {"progE": (10, 4, 2), "progF": (10, 4, 2), "progG": (12, 6, 2)}


def _edits(program) -> list[dict]:
    out = list(program.edits)
    for f in program.files:  # a program's own modules, read beside it, with edits of their own
        out += [] if isinstance(f, str) else f.get("edits", [])
    return out


@pytest.mark.parametrize("tranche", TRANCHES, ids=lambda t: t.stem)
def test_tranche_manifest_loads(tranche):
    programs = manifest.load(tranche)
    least, repositories, tf_keras = SIZES.get(tranche.stem, (9, 1, 0))
    assert len(programs) >= least and len({p.repo for p in programs}) >= repositories
    assert sum(p.keras == "tf_keras" for p in programs) >= tf_keras
    for p in programs:
        assert p.repo and p.commit and len(p.commit) == 40 and p.path
        for edit in _edits(p):
            assert edit["transform"] in adapt.TRANSFORMS, (p.name, edit)
        # tf_keras programs run with TF_USE_LEGACY_KERAS=1, and say so in their name
        assert (p.keras == "tf_keras") == p.name.endswith("_tf_keras") == (p.env.get("TF_USE_LEGACY_KERAS") == "1")
    others = {p.repo for p in manifest.load()}
    for t in TRANCHES:
        if t != tranche:
            others |= {p.repo for p in manifest.load(t)}
    repos = {p.repo for p in programs}
    assert not repos & others  # new repositories only
    assert not repos & RESERVED - {p.repo for p in manifest.load()}
