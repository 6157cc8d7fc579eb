"""docs/rules is generated from the rule modules and must not go stale; every code explains itself."""

from __future__ import annotations

import pytest

from gradcheck.rules import RULES, all_rules
from gradcheck.rules.docs import pages
from tests.conftest import ROOT

DOCS = ROOT / "docs" / "rules"


@pytest.mark.parametrize("name", sorted(pages()))
def test_generated_page_is_current(name):
    path = DOCS / name
    assert path.exists(), f"{path} is missing: run `python -m gradcheck.rules.docs`"
    assert path.read_text(encoding="utf-8") == pages()[name], f"{path} is stale: run `python -m gradcheck.rules.docs`"


def test_no_stray_pages():
    assert {p.name for p in DOCS.glob("*.md")} == set(pages())


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_rule_metadata(rule):
    assert rule.code in RULES and rule.name and rule.summary
    assert rule.severity in ("error", "warning")
    if rule.code.startswith("GC1"):
        text = rule.explanation()
        for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix"):
            assert section in text, f"{rule.code} lacks {section}"
        assert rule.message and ("{variables}" in rule.message or "{names}" in rule.message)


def test_codes_and_names_are_unique():
    names = [r.name for r in all_rules()]
    assert len(names) == len(set(names))
