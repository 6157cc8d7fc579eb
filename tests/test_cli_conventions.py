"""The command line's conventions, as users of ruff and pytest expect them: colour (``--color``
into a pipe, ``NO_COLOR``, ``FORCE_COLOR``), ``--explain`` by code or name."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT, run_cli

BROKEN = str(ROOT / "examples" / "dqn_broken.py")
ANSI = "\x1b["


@pytest.mark.parametrize(
    ("args", "env", "coloured"),
    [
        ((), {}, False),  # a pipe: no colour
        (("--color",), {}, True),  # --color forces it into the pipe
        ((), {"FORCE_COLOR": "1"}, True),
        ((), {"FORCE_COLOR": ""}, False),  # set but empty: as if unset
        ((), {"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),  # NO_COLOR first
        (("--color",), {"NO_COLOR": "1"}, True),  # the option wins over the environment
        (("--no-color",), {"FORCE_COLOR": "1"}, False),
    ],
)
def test_colour(args, env, coloured, monkeypatch):
    for name in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    proc = run_cli("--static", *args, BROKEN, env=env)
    assert proc.returncode == 1
    assert (ANSI in proc.stdout) is coloured
    assert "GC101" in proc.stdout


@pytest.mark.parametrize("name", ["GC101", "gc101", "integer-index-op"])
def test_explain_takes_a_code_or_a_name(name):
    proc = run_cli("--explain", name)
    assert proc.returncode == 0
    assert proc.stdout.startswith("# GC101 (integer-index-op)")


def test_explain_of_an_unknown_rule_is_a_usage_error():
    proc = run_cli("--explain", "no-such-rule")
    assert proc.returncode == 2
    assert "unknown rule code or name 'no-such-rule'" in proc.stderr
