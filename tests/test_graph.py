"""--graph: the cut drawn as DOT (and SVG), parsed by the real Graphviz."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests.conftest import run_cli

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("graph")
    proc = run_cli("--format", "json", "--graph", str(tmp / "cut.dot"), "examples/dqn_broken.py")
    return proc, (tmp / "cut.dot").read_text(encoding="utf-8"), json.loads(proc.stdout)


def test_dot_names_the_cut_and_the_variables(drawn):
    proc, dot, report = drawn
    assert proc.returncode == 1
    assert "cut graph written to" in proc.stderr
    assert 'label="✂ ArgMin\\ndqn_broken.py:34"' in dot and "penwidth=2" in dot
    for variable in ("q_network/hidden/kernel", "q_network/q_values/bias"):
        assert f'label="{variable}"' in dot
    assert 'label="loss"' in dot
    graph = report["files"][0]["findings"][0]["graph"]
    kinds = [n["kind"] for n in graph["nodes"]]
    assert kinds.count("variable") == 4 and kinds.count("loss") == 1
    assert sum(1 for n in graph["nodes"] if n["cut"]) == 1
    ids = {n["id"] for n in graph["nodes"]}
    assert all(a in ids and b in ids for a, b in graph["edges"])


@needs_dot
def test_dot_parses_with_graphviz(drawn):
    _, dot, _ = drawn
    svg = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, check=True).stdout
    assert svg.lstrip().startswith("<?xml") and "ArgMin" in svg


@needs_dot
def test_svg_output(tmp_path):
    proc = run_cli("-q", "--graph", str(tmp_path / "cut.svg"), "tests/realworld/cases/005_round_count_accuracy_loss.py")
    assert proc.returncode == 1
    svg = (tmp_path / "cut.svg").read_text(encoding="utf-8")
    assert "<svg" in svg and "Round" in svg
