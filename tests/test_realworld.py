"""Acceptance: reproductions of real user reports (tests/realworld, copied from the
project's shared set; any newer cases found there are checked too)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "realworld"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "realworld"


def _cases(kind: str) -> list:
    found = {p.name: p for p in sorted((HERE / kind).glob("*.py"))}
    if SHARED.is_dir():
        for p in sorted((SHARED / kind).glob("*.py")):
            found.setdefault(p.name, p)
    return [pytest.param(p, id=p.stem) for p in found.values()]


def _normalise(name: str) -> str:
    return name[:-2] if name.endswith(":0") else name


@pytest.mark.parametrize("script", _cases("cases"))
def test_case_is_diagnosed(run_script, script):
    expected = json.loads(script.with_suffix(".json").read_text())
    result = run_script(script.read_text(), name=script.name)
    assert result.error is None, result.error
    matching = [f for f in result.findings if f.code in expected["expect_codes"]]
    assert matching, f"expected one of {expected['expect_codes']}, got {[f.code for f in result.findings]}"
    if expected["culprit_line"] is not None:
        assert expected["culprit_line"] in {f.line for f in matching}
    named = {_normalise(v) for f in matching for v in f.variables}
    assert named == {_normalise(v) for v in expected["none_variables"]}
    unexpected = [f for f in result.findings if f not in matching]
    assert not unexpected, [f"{f.line}: {f.code} {f.message}" for f in unexpected]


@pytest.mark.parametrize("script", _cases("clean"))
def test_clean_control_is_silent(run_script, script):
    result = run_script(script.read_text(), name=script.name)
    assert result.error is None, result.error
    assert result.steps_checked >= 1
    assert result.findings == []
