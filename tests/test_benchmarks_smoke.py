"""The benchmark suite runs and reports well-formed figures (CI smoke run, tiny sizes).

Speed is measured by ``benchmarks/run.py``, never asserted here: on a shared CI machine a
timing assertion would only be flaky. This checks that every benchmark still runs against
the current engine and that each figure is a positive number with its same-run baseline.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from tests.conftest import ROOT

EXPECTED = {"trace", "eager", "install", "verdict", "static", "scaling"}


@pytest.fixture(scope="module")
def smoke_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "smoke.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--smoke", "-j", "2", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text(encoding="utf-8")), proc.stdout


def _positive(x) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def test_every_benchmark_reports(smoke_results):
    data, _ = smoke_results
    assert data["smoke"] is True
    assert set(data["results"]) == EXPECTED
    assert {f["benchmark"] for f in data["figures"]} == EXPECTED


def test_figures_are_positive_numbers_with_a_baseline(smoke_results):
    data, _ = smoke_results
    for fig in data["figures"]:
        assert fig["name"] and fig["unit"] in ("s", "lines/s"), fig
        assert _positive(fig["value"]), fig
        assert _positive(fig["baseline"]) and fig["baseline_name"], fig
        assert _positive(fig["ratio"]), fig
        # ratio is always time over the baseline's time: for a throughput, baseline / value
        cost = fig["value"] / fig["baseline"] if fig["unit"] == "s" else fig["baseline"] / fig["value"]
        assert math.isclose(fig["ratio"], cost, rel_tol=1e-6), fig
        assert fig["met"] in (True, False, None), fig
        assert fig["reps"] >= 1 and all(_positive(x) for x in fig["spread"]), fig
        if fig.get("cpu_ratio") is not None:
            assert _positive(fig["cpu_value"]) and _positive(fig["cpu_baseline"]) and _positive(fig["cpu_ratio"])


def test_checked_runs_found_what_they_should(smoke_results):
    """The benchmarked steps are the right ones: the broken DQN is diagnosed (GC101), the
    eager loop is clean, and gradcheck's verdict on the example is a finding (exit 1)."""
    data, _ = smoke_results
    broken = data["results"]["trace"]["runs"]["dqn_broken"]["checked"][0]
    assert broken["findings"] == ["GC101"] and not broken["internal_errors"]
    assert "No gradients provided" in broken["error"]
    eager = data["results"]["eager"]["runs"]["eager_mlp"]["checked"][0]
    assert eager["findings"] == [] and eager["error"] is None
    verdict = data["results"]["verdict"]["figures"][0]
    assert "exit code 1" in verdict["notes"]


def test_machine_is_described(smoke_results):
    data, table = smoke_results
    machine = data["machine"]
    assert machine["nproc"] >= 1 and machine["cpu"] and machine["python"]
    assert machine["tensorflow"] and machine["keras"]
    assert len(table.strip().splitlines()) == len(data["figures"]) + 1  # a header and one row per figure
