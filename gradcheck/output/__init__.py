"""Renderers: one function per ``--format``, each taking a Report and a colour flag."""

from __future__ import annotations

from collections.abc import Callable

from gradcheck.output.github import render_github
from gradcheck.output.json_format import render_json
from gradcheck.output.sarif import render_sarif
from gradcheck.output.text import render_concise, render_full


def _render_json(report, color: bool = False) -> str:
    return render_json(report)


FORMATS: dict[str, Callable[..., str]] = {
    "full": render_full,
    "concise": render_concise,
    "json": _render_json,
    "sarif": render_sarif,
    "github": render_github,
}


def render(report, fmt: str, color: bool = False) -> str:
    return FORMATS[fmt](report, color=color)
