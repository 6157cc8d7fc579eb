"""The ground-truth probe (``sitecustomize.py``), run in children on their PYTHONPATH."""

from __future__ import annotations

from pathlib import Path

PROBE_DIR = Path(__file__).resolve().parent
