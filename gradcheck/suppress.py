"""Suppression comments: ``# noqa: GC101`` (or a bare ``# noqa``) on the culprit line, and
``# gradcheck: noqa`` on a line of its own for the whole file (flake8's conventions)."""

from __future__ import annotations

import linecache
import re

from gradcheck.findings import Finding

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z0-9]+(?:[,\s]+[A-Z0-9]+)*))?", re.IGNORECASE)
_FILE_NOQA = re.compile(r"^\s*#\s*gradcheck:\s*noqa\s*$", re.IGNORECASE | re.MULTILINE)


def file_is_suppressed(text: str) -> bool:
    return bool(_FILE_NOQA.search(text))


def line_suppresses(line: str, code: str) -> bool:
    match = _NOQA.search(line)
    if match is None:
        return False
    codes = match.group("codes")
    if not codes:
        return True
    return any(code.startswith(c.strip().upper()) for c in re.split(r"[,\s]+", codes) if c.strip())


def filter_findings(findings: list[Finding]) -> list[Finding]:
    kept = []
    for finding in findings:
        text = "".join(linecache.getlines(finding.path))
        if text and file_is_suppressed(text):
            continue
        if line_suppresses(linecache.getline(finding.path, finding.line), finding.code):
            continue
        kept.append(finding)
    return kept
