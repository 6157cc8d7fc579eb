"""Links and install instructions point only at what exists (issue 27, items 1 and 2).

The project's public home is ``[project.urls]`` in pyproject.toml, and nothing else names
one: findings link to the installed docs (JSON ``url``), SARIF leaves ``helpUri`` out and
annotations say ``gradcheck --explain`` until a home is published (gradcheck/links.py).
"""

from __future__ import annotations

import re

import pytest

from gradcheck import links
from gradcheck.config import tomllib
from gradcheck.findings import Finding
from gradcheck.output import github
from gradcheck.output.sarif import sarif_log
from gradcheck.report import Report
from tests.conftest import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
TEXTS = [
    ROOT / "README.md",
    ROOT / ".pre-commit-hooks.yaml",
    *sorted((ROOT / "docs").rglob("*.md")),
    *sorted((ROOT / "gradcheck").rglob("*.py")),
    *sorted((ROOT / "gradcheck").rglob("*.json")),
]


def test_the_home_is_declared_in_one_place():
    urls = PYPROJECT["project"].get("urls")
    assert urls is not None, "[project.urls] is the one place for the project's home"
    named = set(urls.values())
    for path in TEXTS:
        text = path.read_text(encoding="utf-8")
        for url in re.findall(r"https?://github\.com/gradcheck/[\w./-]*", text):
            assert url in named, f"{path.relative_to(ROOT)} names {url}, which [project.urls] does not publish"


def test_no_home_published_means_no_web_link():
    if links.project_urls():
        pytest.skip("a home is published")
    assert links.home() is None and links.published_rule_url("GC101") is None
    assert links.rule_url("GC101") == (ROOT / "docs" / "rules" / "GC101.md").as_uri()
    finding = Finding("GC101", "argmax", "train.py", 3, variables=["dense/kernel"])
    assert finding.to_json()["url"] == (ROOT / "docs" / "rules" / "GC101.md").as_uri()
    driver = sarif_log(Report())["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver
    assert all("helpUri" not in rule for rule in driver["rules"])
    assert github.see("GC101") == "`gradcheck --explain GC101`"


def test_published_urls_are_derived(monkeypatch):
    monkeypatch.setattr(
        links,
        "project_urls",
        lambda: {"homepage": "https://example.org/gc", "documentation": "https://example.org/gc/docs/"},
    )
    assert links.rule_url("GC105") == "https://example.org/gc/docs/rules/GC105.md"
    assert github.see("GC105") == "https://example.org/gc/docs/rules/GC105.md"
    driver = sarif_log(Report())["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == "https://example.org/gc"
    assert driver["rules"][0]["helpUri"] == "https://example.org/gc/docs/rules/GC101.md"


def test_a_finding_without_docs_has_no_url(monkeypatch, tmp_path):
    monkeypatch.setattr(links, "DOCS_DIR", tmp_path)  # a wheel install: no docs/ beside the package
    assert "url" not in Finding("GC101", "argmax", "train.py", 3).to_json()  # the schema allows it absent


def test_no_install_url_that_cannot_work():
    for path in TEXTS:
        text = path.read_text(encoding="utf-8")
        assert "git+https://github.com/gradcheck" not in text, path
        assert "rev: v0.1.0" not in text, path  # the repository has no tags


def _dependency_names() -> list[str]:
    return [re.split(r"[<>=!;\[ ]", d, maxsplit=1)[0] for d in PYPROJECT["project"]["dependencies"]]


@pytest.mark.parametrize("doc", ["docs/pre-commit.md", ".pre-commit-hooks.yaml"])
def test_the_static_hook_environment_is_described_as_it_is(doc):
    text = (ROOT / doc).read_text(encoding="utf-8")
    assert "only click and numpy" not in text and "with click and numpy only" not in text
    for name in (*_dependency_names(), "PyYAML"):  # libcst depends on PyYAML
        assert name in text, f"{doc} does not name {name}, which the hook's environment holds"
