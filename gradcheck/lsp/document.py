"""What the language server says about one document, with no LSP in sight: the static
engine's findings on the buffer's text, filtered as ``gradcheck --static FILE`` filters
them, and the quick fixes ``gradcheck --static --diff FILE`` would verify.

Never imports TensorFlow and never runs the user's code: the static engine reads it.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gradcheck import config as config_file
from gradcheck.findings import CHECKED, FileResult, Finding
from gradcheck.suppress import file_is_suppressed, line_suppresses

if TYPE_CHECKING:
    from gradcheck.static.incremental import Buffer


@dataclass(frozen=True)
class Edit:
    """Replace the lines ``start``..``end - 1`` (0-based, ``end`` exclusive) by ``text``."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class QuickFix:
    """A verified patch for one finding: what the editor offers as a code action."""

    title: str
    code: str
    line: int
    edits: tuple[Edit, ...]


def settings_for(path: str) -> config_file.Config:
    """``[tool.gradcheck]`` of the nearest ``pyproject.toml`` above the file (as ruff finds
    its settings); a file that cannot be read gives the defaults (the server logs why)."""
    return config_file.load(Path(path).parent)


def findings(
    text: str, path: str, settings: config_file.Config | None = None, buffer: Buffer | None = None
) -> list[Finding] | None:
    """The findings the command line would report for ``path`` holding ``text``; None while
    the text does not parse (the user is typing: the last findings stand). ``buffer`` is the
    document's, whose last tree is reused (the findings are the same)."""
    from gradcheck.static import check_text

    settings = settings if settings is not None else settings_for(path)
    if settings.is_excluded(Path(path)) or file_is_suppressed(text):
        return []
    found = buffer.check(text, path) if buffer is not None else check_text(text, path)
    if isinstance(found, str):
        return None
    lines = text.splitlines()
    kept = []
    for finding in found:
        if finding.path != path or not settings.code_selected(finding.code, path):
            continue
        line = lines[finding.line - 1] if 0 < finding.line <= len(lines) else ""
        if not line_suppresses(line, finding.code):
            kept.append(finding)
    return kept


def quick_fixes(
    text: str, path: str, found: list[Finding], settings: config_file.Config | None = None
) -> list[QuickFix]:
    """The verified patches for ``found`` (findings of ``text``), made and verified as
    ``--static --diff`` makes them, on a copy of the buffer in a temporary directory."""
    from gradcheck.check import Options
    from gradcheck.fix.plan import plan_report
    from gradcheck.report import Report

    if not found or not path.endswith(".py"):
        return []
    settings = settings if settings is not None else settings_for(path)
    workdir = tempfile.mkdtemp(prefix="gradcheck-lsp-")
    try:
        scratch = os.path.join(workdir, os.path.basename(path))
        with open(scratch, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        copies = [copy.copy(f) for f in found]  # the plan attaches patches to what it is given
        report = Report([FileResult(path, CHECKED, findings=copies)])
        plan_report(report, settings, Options(static=True), paths={path: scratch})
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    out = []
    for finding in copies:
        patch = finding.patch
        if patch is None or not patch.verified or not patch.diff:
            continue
        title = patch.note.split(". Verified", 1)[0]
        out.append(QuickFix(f"gradcheck: {title}", finding.code, finding.line, tuple(edits_of(patch.diff))))
    return out


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def edits_of(diff: str) -> list[Edit]:
    """The line edits a unified diff (``gradcheck --diff``'s) makes: per hunk, its changed
    lines (the context lines it repeats are left out)."""
    hunks: list[tuple[int, list[str], list[str]]] = []  # (first old line, 0-based; old; new)
    last = ""  # the kind of the line before (" ", "+" or "-")
    for line in diff.splitlines(keepends=True):
        match = _HUNK.match(line)
        if match:
            first, count = int(match.group(1)), int(match.group(2) or 1)
            hunks.append((first - 1 if count else first, [], []))  # an empty old range is "after line first"
        elif not hunks:
            continue  # the ---/+++ headers
        elif line.startswith("\\"):  # "\ No newline at end of file": the line before has none
            _, old, new = hunks[-1]
            side = new if last == "+" else old if last == "-" else None
            for lines in (old, new) if last == " " else (side,):
                if lines and lines[-1].endswith("\n"):
                    lines[-1] = lines[-1][:-1]
        elif line[:1] in ("+", "-", " "):
            _, old, new = hunks[-1]
            if line[0] != "+":
                old.append(line[1:])
            if line[0] != "-":
                new.append(line[1:])
        last = line[:1]
    edits = []
    for start, old, new in hunks:
        while old and new and old[0] == new[0]:
            old, new, start = old[1:], new[1:], start + 1
        while old and new and old[-1] == new[-1]:
            old, new = old[:-1], new[:-1]
        edits.append(Edit(start, start + len(old), "".join(new)))
    return edits
