"""The static engine's table of ops without a gradient (GC111) is generated from
TensorFlow's gradient registry (``tools/gen_no_gradient_ops.py``) and shipped as data: it
must match the installed TensorFlow, and the engine must read it without TensorFlow."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

from gradcheck.static import catalog

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "gradcheck" / "static" / "data" / "no_gradient_ops.json"


def test_data_file_is_shipped_and_read():
    table = json.loads(DATA.read_text(encoding="utf-8"))
    assert {"tensorflow", "no_gradient", "not_differentiable", "api"} <= set(table)
    assert "AdjustSaturation" in table["no_gradient"]
    api = catalog.lookup("tensorflow.image.adjust_saturation")
    assert api is not None and (api.kind, api.code, api.op) == (catalog.CUT, "GC111", "AdjustSaturation")
    # a better-known cause keeps its own code (GC104, GC103), not GC111
    assert catalog.lookup("tensorflow.stop_gradient").code == "GC104"
    assert catalog.lookup("tensorflow.math.greater").code == "GC103"
    assert catalog.lookup("tensorflow.raw_ops.AdjustHue").code == "GC111"
    assert catalog.lookup("tensorflow.image.resize") is None  # differentiable by default


def test_package_data_ships_the_table():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "static/data/*.json" in text


@pytest.mark.skipif(find_spec("tensorflow") is None, reason="TensorFlow is not installed")
def test_data_file_is_not_stale():
    """Regenerate from the installed TensorFlow (in a subprocess: TensorFlow stays out of
    this one) and compare: ``python tools/gen_no_gradient_ops.py`` rewrites the file."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_no_gradient_ops.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
