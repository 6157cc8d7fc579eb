"""Tranche progC of the mutation benchmark: its manifest, the transform it added, the mirror
layout it needed. No TensorFlow, no network."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchmarks.mutation import adapt, manifest, sources

TRANCHE = manifest.HERE / "tranches" / "progC.toml"


def test_truncate_from():
    src = "a = 1\nfor i in range(2):\n    from x import y\nfrom x import y\nb = 2\n"
    # only a top-level line counts: the indented import is kept
    assert adapt.truncate_from(src, "from x import y") == "a = 1\nfor i in range(2):\n    from x import y\n"
    with pytest.raises(adapt.AdaptError):
        adapt.truncate_from(src, "import scipy")


def test_reads_a_checkout_under_repo(tmp_path: Path):
    """The fetch tool lays some repositories out as owner+name/repo/.git (a non-bare checkout)."""
    work = tmp_path / "owner+name" / "repo"
    work.mkdir(parents=True)
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    (work / "train.py").write_text("print('hi')\n")
    subprocess.run([*git, "add", "train.py"], check=True)
    subprocess.run([*git, "commit", "-qm", "c"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    (work / "train.py").write_text("changed in the work tree\n")  # the commit is read, not the tree
    prog = manifest.Program(name="p", shapes=[], repo="owner/name", path="train.py", commit=commit)
    assert sources.read(prog, [tmp_path], fetch=False) == "print('hi')\n"
