"""The static engine's rules: one module per code (``gc101.py`` ... ``gc301.py``), each beside
its rule's meaning (``RULE``, from ``gradcheck/rules/``), registered by phase in
``registry`` as the trace checks are in ``trace.record.registry``. ``report.findings`` runs
them over the interpreter's requests: causes in the sources (``sources``), the shared path
rule of the cut codes (``paths``), then each code's own hooks.

To read one static rule: ``gradcheck.static.checks.gcNNN`` (its ``RULE`` has the message,
fix, examples and ``trace_check``, the trace engine's check of the same code).
"""

from __future__ import annotations

from gradcheck.static.checks import (
    gc101,
    gc102,
    gc103,
    gc104,
    gc105,
    gc106,
    gc107,
    gc108,
    gc109,
    gc110,
    gc111,
    gc113,
    gc114,
    gc115,
    gc116,
    gc301,
)
from gradcheck.static.checks.registry import codes
from gradcheck.static.checks.report import STATIC_NOTE, findings

MODULES = {
    m.CODE: m
    for m in (
        gc101,
        gc102,
        gc103,
        gc104,
        gc105,
        gc106,
        gc107,
        gc108,
        gc109,
        gc110,
        gc111,
        gc113,
        gc114,
        gc115,
        gc116,
        gc301,
    )
}

__all__ = ["MODULES", "STATIC_NOTE", "codes", "findings"]
