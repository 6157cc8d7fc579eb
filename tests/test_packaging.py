"""The distributions: the wheel is typed and carries its licence; the sdist is the repository
(docs and examples the README links to, the tests with their fixtures and data), and its
tests run in the unpacked sdist."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    # a copy of the tracked files: building must not leave build/ or *.egg-info in the clone
    src = tmp_path_factory.mktemp("src") / "gradcheck"
    tracked = _tracked()
    for name in tracked:
        target = src / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    done = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(src)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [sdist] = out.glob("*.tar.gz")
    [wheel] = out.glob("*.whl")
    return {"sdist": sdist, "wheel": wheel, "tracked": tracked}


def _tracked() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs the git clone (the tracked files are what the sdist must hold)")
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [name for name in listed.splitlines() if (ROOT / name).is_file()]


def test_the_wheel_is_typed_and_licensed(dists):
    with zipfile.ZipFile(dists["wheel"]) as wheel:
        names = wheel.namelist()
        metadata = wheel.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "gradcheck/py.typed" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "License-Expression: Apache-2.0" in metadata.splitlines()
    assert "gradcheck/schema/report-v1.json" in names


def test_the_sdist_holds_every_tracked_file(dists):
    with tarfile.open(dists["sdist"]) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    missing = sorted(set(dists["tracked"]) - names - {".gitignore"})
    assert missing == []
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_tests_run_in_the_unpacked_sdist(dists, tmp_path):
    with tarfile.open(dists["sdist"]) as sdist:
        sdist.extractall(tmp_path, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    [tree] = [p for p in tmp_path.iterdir() if p.is_dir()]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_rule_docs.py",
            "tests/test_static_cli.py",  # reads tests/fixtures and the real-world cases
        ],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-4000:]
    assert " passed" in done.stdout and "error" not in done.stdout.splitlines()[-1]
