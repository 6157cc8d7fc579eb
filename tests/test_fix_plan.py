"""The planner's verdicts, with the check of the patched copy replaced by a stand-in (no
TensorFlow, no child process): what is shown as verified, and what never is."""

from __future__ import annotations

import textwrap

import pytest

from gradcheck.check import Options
from gradcheck.config import Config
from gradcheck.findings import ERROR, CheckError, FileResult, Finding
from gradcheck.fix import plan as plan_mod
from gradcheck.report import Report

SOURCE = textwrap.dedent(
    """\
    import tensorflow as tf

    with tf.GradientTape() as tape:
        a = tf.round(x * w)
        b = tf.round(y * w)
        loss = a + b
    grads = tape.gradient(loss, [w, v])
    """
)


def finding(path: str, line: int, snippet: str, code: str = "GC102", variables=("w",)) -> Finding:
    text = SOURCE.splitlines()[line - 1]
    column = text.index(snippet) + 1
    return Finding(code, "m", path, line, column, line, column + len(snippet), variables=list(variables))


@pytest.fixture
def script(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(SOURCE, encoding="utf-8")
    return "train.py"


def run(monkeypatch, findings, answers, combine=False):
    """Plan ``findings`` of train.py; each check of a patched copy gets the next answer:
    a FileResult, or a function of the patched text returning one."""
    calls = []

    def fake_check(target, text, options):
        calls.append(text)
        answer = answers[min(len(calls), len(answers)) - 1]
        return answer(text) if callable(answer) else answer

    monkeypatch.setattr(plan_mod, "check_text", fake_check)
    result = FileResult("train.py", steps_checked=1, findings=findings)
    (plan,) = plan_mod.plan_report(Report([result]), Config(), Options(), combine_verified=combine)
    return plan, calls


def clean() -> FileResult:
    return FileResult("train.py", steps_checked=1)


def test_verified_when_the_patched_copy_is_clean(script, monkeypatch):
    f = finding(script, 4, "tf.round(x * w)")
    plan, calls = run(monkeypatch, [f], [clean()])
    assert len(calls) == 1 and f.patch.verified
    assert "+    a = x * w + tf.stop_gradient(tf.round(x * w) - x * w)\n" not in f.patch.diff  # named once
    assert "+    unrounded = x * w\n" in f.patch.diff
    assert plan.text != plan.old_text and plan.applied == [f]


def test_a_new_finding_means_no_patch_is_shown(script, monkeypatch):
    f = finding(script, 4, "tf.round(x * w)")
    new = FileResult(
        "train.py", steps_checked=1, findings=[Finding("GC103", "new cut", "train.py", 2, 1, variables=["w"])]
    )
    plan, _ = run(monkeypatch, [f], [new])
    assert not f.patch.verified and f.patch.diff == ""
    assert "it makes a new finding, GC103 at line 2: new cut" in f.patch.note
    assert plan.text == plan.old_text and plan.applied == []


def test_a_patched_copy_that_cannot_be_checked_verifies_nothing(script, monkeypatch):
    f = finding(script, 4, "tf.round(x * w)")
    broken = FileResult("train.py", ERROR, CheckError("GC901", "the script raised NameError: x"))
    run(monkeypatch, [f], [broken])
    assert not f.patch.verified and f.patch.diff == ""
    assert "could not be checked (GC901: the script raised NameError: x)" in f.patch.note


def test_variables_still_starved_by_another_cut_are_not_a_fix(script, monkeypatch):
    first = finding(script, 4, "tf.round(x * w)", variables=("w",))
    second = finding(script, 5, "tf.round(y * w)", code="GC105", variables=("w",))  # no patch kind matches here
    second.call = "y"

    def keeps_second(text):
        line = next(n for n, t in enumerate(text.splitlines(), 1) if "b = tf.round(y * w)" in t)
        return FileResult(
            "train.py", steps_checked=1, findings=[Finding("GC105", "m", "train.py", line, 9, variables=["w"])]
        )

    run(monkeypatch, [first, second], [keeps_second])
    assert not first.patch.verified
    assert "w still get no gradient: GC105 at line" in first.patch.note


def test_patches_verified_together_and_one_by_one(script, monkeypatch):
    a = finding(script, 4, "tf.round(x * w)", variables=("w",))
    b = finding(script, 5, "tf.round(y * w)", variables=("v",))
    plan, calls = run(monkeypatch, [a, b], [clean()])
    assert len(calls) == 1 and a.patch.verified and b.patch.verified
    assert "(with the patch for GC102 at line 5 too)" in a.patch.note
    assert plan.applied == [a, b]

    a = finding(script, 4, "tf.round(x * w)", variables=("w",))
    b = finding(script, 5, "tf.round(y * w)", variables=("v",))
    together_fails = FileResult("train.py", steps_checked=1, findings=[Finding("GC201", "zero", "train.py", 1, 1)])
    plan, calls = run(monkeypatch, [a, b], [together_fails, clean(), clean(), together_fails], combine=True)
    assert len(calls) == 4  # together, each alone, together again for --fix
    assert a.patch.verified and b.patch.verified
    assert plan.applied == [a]  # not verified together: --fix writes the first alone
    assert "run --fix again" in b.patch.note


def test_a_revealed_finding_with_its_own_patch_is_patched_too(script, monkeypatch):
    f = finding(script, 4, "tf.round(x * w)")

    def reveals(text):
        if "tf.stop_gradient(y * w)" in text:
            return clean()
        line = next(n for n, t in enumerate(text.splitlines(), 1) if "b = tf.round(y * w)" in t)
        column = text.splitlines()[line - 1].index("y * w") + 1
        found = Finding("GC203", "target", "train.py", line, column, line, column + 5, variables=["w"])
        found.fields = {"variant": "td"}
        return FileResult("train.py", steps_checked=1, findings=[found])

    # GC203's patch wraps the revealed expression: here ``y * w`` inside the second round
    _, calls = run(monkeypatch, [f], [reveals])
    assert len(calls) == 2 and f.patch.verified
    assert "(GC203, which the patch reveals)" in f.patch.note
    assert "tf.stop_gradient(y * w)" in f.patch.diff


def test_findings_without_a_kind_or_in_another_file_say_why(script, monkeypatch):
    other = Finding("GC102", "m", "helper.py", 3, 1, variables=["w"])
    assign = finding(script, 6, "a + b", code="GC113")
    run(monkeypatch, [other, assign], [clean()])
    assert other.patch.note.startswith("no patch: the culprit is in helper.py")
    assert assign.patch.note == "no patch: gradcheck has no mechanical fix for GC113; apply the fix above by hand"
    assert not other.patch.verified and not assign.patch.verified
