"""An original's documented real bug (manifest ``known_bugs``, issue 36: "record it as the
original's expected finding, with the public report that confirms it") is reported as its
bug found, not as a false alarm; any other finding on it still is one. No TensorFlow."""

from __future__ import annotations

from types import SimpleNamespace

from benchmarks.mutation import manifest, report

BUG = {"code": "GC203", "report": "https://github.com/keras-team/keras-io/issues/194"}


def _state(findings: list[dict], known_bugs: list[dict]) -> SimpleNamespace:
    program = manifest.Program(name="p", shapes=["rl-actor-critic"], known_bugs=known_bugs)
    original = SimpleNamespace(
        verdict={"findings": len(findings), "cannot_check": False}, gradcheck={"findings": findings}
    )
    return SimpleNamespace(program=program, skipped=None, original=original, census={}, jobs=[])


def _precision(findings, known_bugs):
    return report.summarize([_state(findings, known_bugs)], [])["precision"]


def test_the_documented_bug_found_on_the_original_is_not_a_false_alarm():
    p = _precision([{"code": "GC203", "line": 12}], [BUG])
    assert p["originals_flagged"] == [] and [r["program"] for r in p["originals_known_bug"]] == ["p"]
    assert "its documented real bug" in report.render_markdown(
        report.summarize([_state([{"code": "GC203", "line": 12}], [BUG])], [])
    )


def test_another_finding_on_the_original_is_still_a_false_alarm():
    p = _precision([{"code": "GC203", "line": 12}, {"code": "GC108", "line": 30}], [BUG])
    assert [r["program"] for r in p["originals_flagged"]] == ["p"] and p["originals_known_bug"] == []
    assert [r["program"] for r in _precision([{"code": "GC203", "line": 12}], [])["originals_flagged"]] == ["p"]


def test_the_tutorial_with_the_reported_advantage_bug_records_it():
    [tutorial] = [p for p in manifest.load() if p.name == "tfdocs_actor_critic_tf_keras"]
    assert tutorial.known_bugs == [BUG]
