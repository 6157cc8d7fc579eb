"""Every rule's INVALID examples give exactly their marked codes at their marked lines;
every VALID example gives nothing (Fixit's habit: examples are the tests)."""

from __future__ import annotations

import pytest

from gradcheck.rules import get_rule, trace_rules

CASES = [
    pytest.param(rule.code, kind, example, id=f"{rule.code}-{kind}-{i}-{example.setting}")
    for rule in trace_rules()
    for kind, examples in (("invalid", rule.invalid), ("valid", rule.valid))
    for i, example in enumerate(examples)
]


@pytest.mark.parametrize(("code", "kind", "example"), CASES)
def test_rule_example(run_script, code, kind, example):
    options = getattr(get_rule(code), "run_options", {})  # GC301 is opt-in
    result = run_script(example.source, name=f"{code.lower()}_{kind}.py", **options)
    assert result.error is None, result.error
    assert result.steps_checked >= 1 or result.findings, "the example never reached a gradient"
    got = sorted((f.line, f.code) for f in result.findings)
    assert got == sorted(example.expected), "\n".join(f"{f.line}: {f.code} {f.message}" for f in result.findings)
    if kind == "invalid":
        assert example.expected, "an INVALID example must mark its culprit line"
        assert all(code == c for _, c in example.expected)
        for finding in result.findings:
            assert finding.variables, "a finding names the variables it starves"
            assert finding.fix, "a finding carries a fix"


@pytest.mark.parametrize("rule", trace_rules(), ids=lambda r: r.code)
def test_rule_has_enough_examples(rule):
    assert len(rule.invalid) >= 2 and len(rule.valid) >= 2
    settings = {e.setting for e in rule.invalid}
    assert "eager" in settings, "one INVALID example runs eagerly"
    assert settings & {"fit", "tf.function"}, "one INVALID example runs in graph mode"
