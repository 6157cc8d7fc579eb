"""Renderers: one function per ``--format``, each taking a Report and a colour flag.

Each format's module is imported when it is used: a diagnosis rendered as text (the
exception a checked step raises) pays for neither SARIF nor JSON."""

from __future__ import annotations

import importlib

#: format name -> (module under gradcheck.output, renderer taking ``(report, color=...)``)
FORMATS: dict[str, tuple[str, str]] = {
    "full": ("text", "render_full"),
    "concise": ("text", "render_concise"),
    "json": ("json_format", "render_json"),
    "sarif": ("sarif", "render_sarif"),
    "github": ("github", "render_github"),
}


def render(report, fmt: str, color: bool = False) -> str:
    module, name = FORMATS[fmt]
    renderer = getattr(importlib.import_module(f"gradcheck.output.{module}"), name)
    if fmt == "json":  # JSON has no colours
        return renderer(report)
    return renderer(report, color=color)
