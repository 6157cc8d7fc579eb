"""The precision corpus runner (``benchmarks/static_corpus.py``): its manifest is valid, it
skips cleanly without a corpus, and it extracts and checks a tiny local one (no network)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import static_corpus  # noqa: E402

BROKEN_NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "source": ["# demo"]},
        {
            "cell_type": "code",
            "source": ["!pip install tensorflow\n", "import tensorflow as tf\n", "%matplotlib inline"],
        },
        {
            "cell_type": "code",
            "source": [
                "w = tf.Variable(1.0)\n",
                "with tf.GradientTape() as tape:\n",
                "    loss = tf.round(w * 2.0)\n",
                "grads = tape.gradient(loss, [w])",
            ],
        },
    ],
    "metadata": {},
    "nbformat": 4,
    "nbformat_minor": 5,
}

CLEAN_SCRIPT = """import tensorflow as tf

w = tf.Variable(1.0)
with tf.GradientTape() as tape:
    loss = (w * 2.0) ** 2
grads = tape.gradient(loss, [w])
"""


def test_manifest_lists_pinned_sources():
    sources = static_corpus.load_manifest()
    assert len(sources) >= 10
    assert len({s.name for s in sources}) == len(sources)
    for source in sources:
        assert len(source.commit) == 40 and int(source.commit, 16) >= 0, source.name
        assert source.repo.count("/") == 1 and source.include and source.licence, source.name


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*.py", "a.py", True),
        ("**/*.py", "a/b/c.py", True),
        ("site/en/guide/**/*.ipynb", "site/en/guide/x.ipynb", True),
        ("site/en/guide/**/*.ipynb", "site/en/r1/x.ipynb", False),
        ("1[0-9]_*.ipynb", "12_custom.ipynb", True),
        ("1[0-9]_*.ipynb", "02_end.ipynb", False),
        ("tf2/*.py", "tf2/sub/x.py", False),
    ],
)
def test_globs(pattern, path, matches):
    assert (static_corpus._glob(pattern).fullmatch(path) is not None) is matches


def test_absent_corpus_is_skipped(tmp_path, capsys):
    assert static_corpus.main(["--corpus", str(tmp_path / "nothing")]) == 0
    assert "static corpus absent" in capsys.readouterr().err


def test_notebooks_go_through_the_static_notebook_check(tmp_path):
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(BROKEN_NOTEBOOK))
    outcome = static_corpus.check_one(path, "demo/nb.ipynb")
    assert outcome.error is None and outcome.analysed
    assert [(p, line, code) for p, line, code, _ in outcome.findings] == [("demo/nb.ipynb:cell 3", 3, "GC102")]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_extract_and_check_a_local_corpus(tmp_path, capsys):
    repo = tmp_path / "mirrors" / "someone+demo"
    (repo / "notebooks").mkdir(parents=True)
    (repo / "notebooks" / "nb.ipynb").write_text(json.dumps(BROKEN_NOTEBOOK))
    (repo / "train.py").write_text(CLEAN_SCRIPT)
    (repo / "skipped.py").write_text("raise SystemExit\n")

    def git(*args):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=repo,
            check=True,
            capture_output=True,
        )

    git("init", "-q")
    git("add", "-A")
    git("commit", "-q", "-m", "demo")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    manifest = tmp_path / "corpus.toml"
    manifest.write_text(
        f'[[source]]\nname = "demo"\nrepo = "someone/demo"\ncommit = "{commit}"\nlicence = "MIT"\n'
        'include = ["train.py", "notebooks/*.ipynb"]\n'
    )
    corpus = tmp_path / "corpus"
    args = ["--manifest", str(manifest), "--corpus", str(corpus)]
    assert static_corpus.main([*args, "--extract-from", str(tmp_path / "mirrors")]) == 0
    out = capsys.readouterr().out
    assert not (corpus / "demo" / "skipped.py").exists()
    assert "2 files" in out
    assert "demo/notebooks/nb.ipynb:cell 3:3: GC102" in out
    assert static_corpus.main([*args, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["total"]["files"] == 2 and result["total"]["findings"] == 1
