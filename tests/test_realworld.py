"""Acceptance: reproductions of real user reports (tests/realworld, copied from the
project's shared set and grown by our own; any newer shared cases are checked too).
Every finding must be the expected code at the expected line naming exactly the starved
variables; clean look-alikes must give nothing. Expectations: tests/realworld_check.py."""

from __future__ import annotations

import os
import zlib

import pytest

from tests.realworld_check import cases, custom_gradients, expectation, keras_major, missing, problems, run_cli


def in_shard(stem: str, shard: str | None = os.environ.get("GRADCHECK_REALWORLD_SHARD")) -> bool:
    """``GRADCHECK_REALWORLD_SHARD=i/n`` keeps the cases whose name hashes to ``i`` mod ``n``: CI's
    version matrix splits the Keras 2 cases between its oldest and newest TensorFlow (noxfile.py).
    A name's shard never changes when cases are added."""
    if not shard:
        return True
    index, count = (int(part) for part in shard.split("/"))
    return zlib.crc32(stem.encode()) % count == index


def _params(kind: str) -> list:
    out = []
    for path in cases(kind):
        if not in_shard(path.stem):
            continue
        marks = []
        if path.with_suffix(".json").exists() and missing(expectation(path)):
            marks.append(pytest.mark.skip(reason=f"not installed: {', '.join(missing(expectation(path)))}"))
        if path.with_suffix(".json").exists() and expectation(path).get("known_miss"):
            # a first-run miss kept as recorded; strict, so a fix that makes it pass removes the marker
            marks.append(pytest.mark.xfail(strict=True, reason=expectation(path)["known_miss"]))
        out.append(pytest.param(path, id=path.stem, marks=marks))
    return out


def _check(run_script, script):
    """The case's file record: in this process for Keras 3, in a child process for Keras 2
    (``TF_USE_LEGACY_KERAS=1`` must be set before TensorFlow is imported) and for a case
    that must own its process (``"process": "own"``: it configures devices, which a
    TensorFlow runtime already started in this process refuses)."""
    expected = expectation(script)
    custom = custom_gradients(expected)
    if keras_major(expected) == 2 or expected.get("process") == "own":
        record = run_cli([script], keras=keras_major(expected), custom_gradients=custom)[str(script.resolve())]
        return expected, record["error"], record["steps_checked"], record["findings"]
    options = {"check_custom_gradients": True} if custom else {}
    result = run_script(script.read_text(encoding="utf-8"), name=script.name, **options)
    error = result.error.to_json() if result.error else None
    return expected, error, result.steps_checked, [f.to_json() for f in result.findings]


@pytest.mark.parametrize("script", _params("cases"))
def test_case_is_diagnosed(run_script, script):
    expected, error, _, findings = _check(run_script, script)
    assert error is None, error
    assert not problems(expected, findings), "\n".join(problems(expected, findings))
    assert all(f["fix"] for f in findings), "every finding carries a fix"


@pytest.mark.parametrize("script", _params("clean"))
def test_clean_control_is_silent(run_script, script):
    expected, error, steps, findings = _check(run_script, script)
    assert error is None, error
    assert steps >= 1
    if expected.get("also_expect"):  # a later rule's warning on a None-gradient control
        assert not problems(expected, findings), "\n".join(problems(expected, findings))
        return
    assert findings == [], [f"{f['line']}: {f['code']} {f['message']}" for f in findings]


def test_shards_split_the_cases_between_sessions():
    # CI's two tf_keras sessions (noxfile.TF_KERAS_SHARDS) run every Keras 2 case exactly once
    stems = [p.stem for kind in ("cases", "clean") for p in cases(kind)]
    halves = [[s for s in stems if in_shard(s, f"{i}/2")] for i in range(2)]
    assert sorted(halves[0] + halves[1]) == sorted(stems)
    assert all(len(half) > len(stems) / 3 for half in halves)
    assert all(in_shard(s, None) for s in stems)
