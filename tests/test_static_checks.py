"""One home per static rule (issue 39): every code the static engine reports has a module
``gradcheck.static.checks.gcNNN`` beside its rule's meaning, registered by phase, as the
trace engine's checks are."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from gradcheck.rules import RULES
from gradcheck.static import catalog, checks
from gradcheck.static.checks import registry

ROOT = Path(__file__).resolve().parent.parent
CHECKS = ROOT / "gradcheck" / "static" / "checks"
REPORTED = {*catalog.REPORTED_CODES, "GC301"}


@pytest.mark.parametrize("code", sorted(REPORTED))
def test_every_reported_code_has_its_module(code):
    module = importlib.import_module(f"gradcheck.static.checks.{code.lower()}")
    assert module.CODE == code
    assert module.RULE is RULES[code]  # meaning, fix, examples and the trace check: one import away
    assert module.RULE.trace_check, "the rule names the trace engine's check of the same code"
    assert checks.MODULES[code] is module
    assert module.__doc__ and module.__doc__.startswith(f"{code} ")


def test_registered_codes_are_the_modules():
    assert registry.codes() == set(checks.MODULES) == REPORTED


def test_no_module_for_a_code_the_engine_does_not_report():
    stray = {p.stem.upper() for p in CHECKS.glob("gc*.py")} - REPORTED
    assert not stray


def test_hooks_run_in_code_order_and_phases_are_checked():
    request = registry.hooks("request")
    assert [fn.__module__.rpartition(".")[2] for fn in request] == sorted(
        fn.__module__.rpartition(".")[2] for fn in request
    )
    assert {fn.__module__.rpartition(".")[2] for fn in request} == {"gc105", "gc108", "gc301"}
    with pytest.raises(ValueError):
        registry.register("later", "GC101")


def test_static_rules_are_not_in_one_file():
    """No module of the static engine other than ``checks`` decides a finding's code: the old
    ``static/rules.py`` is gone, and ``engine`` reads the findings from ``checks``."""
    assert not (ROOT / "gradcheck" / "static" / "rules.py").exists()
    engine = ast.parse((ROOT / "gradcheck" / "static" / "engine.py").read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(engine) if isinstance(n, ast.ImportFrom)}
    assert "gradcheck.static.checks" in imported
