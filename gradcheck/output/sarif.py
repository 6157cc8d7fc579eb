"""``--format sarif``: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

One run. ``tool.driver.rules`` describes every GC code (not only the reported ones), so a
viewer can show any rule's help, and ``ruleIndex`` stays the same for a code across runs.
Files that could not be checked (GC9xx) are tool execution notifications, not results
(see ``_notification``). No TensorFlow import.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from gradcheck import links
from gradcheck._version import __version__
from gradcheck.findings import SKIPPED, FileResult, Finding, KeptOut
from gradcheck.output.text import chain_text
from gradcheck.rules import RULES, Rule

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
#: Relative paths are relative to the directory gradcheck ran in; code scanning resolves
#: them against the repository root, which is where CI runs gradcheck.
SRCROOT = "%SRCROOT%"
_FINGERPRINT = "gradcheckFinding/v1"

_LEVELS = {"error": "error", "warning": "warning"}
_FAMILY_TAGS = {
    "GC1": "no-gradient",
    "GC2": "degenerate-gradient",
    "GC3": "wrong-gradient",
    "GC9": "could-not-check",
}


def render_sarif(report, color: bool = False) -> str:
    """The report as a SARIF 2.1.0 log (``color`` is ignored: this is for machines)."""
    return json.dumps(sarif_log(report), indent=2, ensure_ascii=False) + "\n"


def sarif_log(report) -> dict[str, Any]:
    rules = [RULES[code] for code in sorted(RULES)]
    rule_index = {rule.code: i for i, rule in enumerate(rules)}
    # GC9xx codes also get notification descriptors: SARIF looks a notification's
    # ``descriptor`` up in ``driver.notifications``, not in ``driver.rules``.
    notification_rules = [rule for rule in rules if rule.code.startswith("GC9")]
    notification_index = {rule.code: i for i, rule in enumerate(notification_rules)}
    artifacts = _Artifacts()
    for result in report.files:
        if result.status != SKIPPED:
            artifacts.add(result.path)
    results = [_result(f, rule_index, artifacts) for f in report.findings]
    _add_fingerprints(report.findings, results)
    notifications = [_notification(r, notification_index, artifacts) for r in report.files if r.notice is not None]
    kept_out = [_kept_out(r, k, artifacts) for r in report.files for k in r.kept_out]
    invocation: dict[str, Any] = {
        "executionSuccessful": not report.errors,  # a file checked in part (GC905) was analysed
        "workingDirectory": {"uri": _dir_uri(Path.cwd())},
    }
    if notifications or kept_out:
        invocation["toolExecutionNotifications"] = notifications + kept_out
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "gradcheck",
                        "version": __version__,
                        "semanticVersion": __version__,
                        # published links only (gradcheck.links): a SARIF log travels to other machines
                        **({"informationUri": links.home()} if links.home() else {}),
                        "rules": [_descriptor(rule) for rule in rules],
                        "notifications": [_descriptor(rule) for rule in notification_rules],
                    }
                },
                "invocations": [invocation],
                "artifacts": artifacts.entries,
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def _descriptor(rule: Rule) -> dict[str, Any]:
    explanation = rule.explanation()
    level = _LEVELS.get(rule.severity, "note")
    tags = ["gradient-flow", _FAMILY_TAGS.get(rule.code[:3], "other")]
    if not rule.implemented:
        tags.append("reserved")
    help_uri = links.published_rule_url(rule.code)
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": _unwrap(rule.what) or rule.summary},
        "help": {"text": explanation, "markdown": explanation},
        **({"helpUri": help_uri} if help_uri else {}),
        "defaultConfiguration": {"level": level},
        "properties": {"tags": tags},
    }


def _result(finding: Finding, rule_index: dict[str, int], artifacts: _Artifacts) -> dict[str, Any]:
    properties: dict[str, Any] = {"variables": list(finding.variables)}
    location = _in_notebook(finding, properties, artifacts) or {
        "physicalLocation": {
            "artifactLocation": artifacts.location(finding.path),
            "region": _region(finding),
        }
    }
    for key, value in (("op", finding.op), ("call", finding.call), ("chainSource", finding.chain_source)):
        if value:
            properties[key] = value
    chain = chain_text(finding)
    if chain:
        properties["chain"] = chain
    if finding.notes:
        properties["notes"] = list(finding.notes)
    if finding.fix:
        properties["fix"] = finding.fix
    if finding.patch is not None and finding.patch.note:
        properties["patch"] = finding.patch.note
    result = {
        "ruleId": finding.code,
        "ruleIndex": rule_index.get(finding.code, -1),
        "level": _LEVELS.get(finding.severity, "note"),
        # The fix text is advice, so it goes in the text that code scanning shows on the
        # alert; a verified patch (``--diff``) is an artifact edit, SARIF's ``fixes``.
        "message": {"text": _message(finding, chain)},
        "locations": [location],
        "properties": properties,
    }
    if finding.patch is not None and finding.patch.verified and finding.patch.diff:
        result["fixes"] = [_fix(finding, artifacts)]
    return result


def _fix(finding: Finding, artifacts: _Artifacts) -> dict[str, Any]:
    """A verified patch as a SARIF fix (§3.55): one replacement per changed block of lines.
    A block's deleted region ends at the end of its last line (line end excluded), so the
    inserted text leaves out its own final line end; a pure insertion is an empty region
    at the start of the line it goes before."""
    from gradcheck.output.diffs import replacements

    assert finding.patch is not None
    changes = []
    for start, old, new in replacements(finding.patch.diff):
        if old:
            last = old[-1].rstrip("\r\n")
            region = {
                "startLine": start,
                "startColumn": 1,
                "endLine": start + len(old) - 1,
                "endColumn": len(last) + 1,
            }
            text = "".join(new)
            if old[-1] != last and text.endswith("\n"):
                text = text[:-2] if text.endswith("\r\n") else text[:-1]
        else:
            region = {"startLine": start, "startColumn": 1, "endLine": start, "endColumn": 1}
            text = "".join(new)
        changes.append({"deletedRegion": region, "insertedContent": {"text": text}})
    return {
        "description": {"text": finding.patch.note},
        "artifactChanges": [{"artifactLocation": artifacts.location(finding.path), "replacements": changes}],
    }


def _in_notebook(finding: Finding, properties: dict, artifacts: _Artifacts) -> dict | None:
    """A notebook cell (``nb.ipynb:cell 3``): the artifact is the ``.ipynb``, the region the
    line of that file holding the cell's line (Jupyter's layout; none when it cannot be
    told), and the cell and its line and column are properties."""
    from gradcheck import notebook

    split = notebook.split_cell_path(finding.path)
    if split is None:
        return None
    path, cell = split
    physical: dict[str, Any] = {"artifactLocation": artifacts.location(path)}
    line = notebook.raw_line(path, cell, finding.line)
    if line is not None:
        physical["region"] = {"startLine": line}
    properties.update(cell=cell, cellLine=finding.line, cellColumn=finding.column)
    return {"physicalLocation": physical}


def _message(finding: Finding, chain: str) -> str:
    parts = [finding.message]
    if chain:
        parts.append(f"Path: {chain}")
    parts += [f"Note: {note}" for note in finding.notes]
    if finding.fix:
        parts.append(f"Fix: {finding.fix}")
    return "\n\n".join(parts)


def _region(finding: Finding) -> dict[str, int]:
    region = {"startLine": finding.line, "startColumn": finding.column}
    if finding.end_line is not None and finding.end_line >= finding.line:
        region["endLine"] = finding.end_line
        if finding.end_column is not None:
            end_column = finding.end_column
            # Finding.end_column is exclusive, as SARIF's endColumn is.
            if finding.end_line > finding.line or end_column > region["startColumn"]:
                region["endColumn"] = end_column
    return region


def _add_fingerprints(findings: list[Finding], results: list[dict[str, Any]]) -> None:
    """A line-independent identity for each result, so an alert survives code moving above
    it; a count tells apart findings that would otherwise share one (same call, same
    variables, twice in a file)."""
    seen: dict[str, int] = {}
    for finding, result in zip(findings, results, strict=True):
        key = "\0".join([finding.code, finding.path, finding.call or finding.op or "", *sorted(finding.variables)])
        seen[key] = seen.get(key, 0) + 1
        digest = hashlib.sha256(f"{key}\0{seen[key]}".encode()).hexdigest()[:32]
        result["partialFingerprints"] = {_FINGERPRINT: digest}


def _notification(result: FileResult, notification_index: dict[str, int], artifacts: _Artifacts) -> dict[str, Any]:
    """A file gradcheck could not check, as a tool execution notification.

    Why not a result: code scanning turns every result into an alert on a source line, and
    "the script timed out" is neither a defect nor at a line. As an alert it would open on a
    slow CI run and close itself on the next one, adding noise to the alert history. A
    notification with ``executionSuccessful: false`` is where SARIF puts "this target was
    not analysed" (§3.20.21, §3.20.14); the CLI's exit code 2 is what fails the CI job.
    """
    notice = result.notice
    assert notice is not None
    rule = RULES.get(notice.code)
    name = f" {rule.name}" if rule else ""
    return {
        # GC905 (a training not reached): the file was analysed, only not whole
        "level": "error" if result.error is not None else "warning",
        "message": {"text": f"{notice.code}{name}: {result.path}: {notice.message}"},
        "descriptor": {"id": notice.code, "index": notification_index.get(notice.code, -1)},
        "locations": [{"physicalLocation": {"artifactLocation": artifacts.location(result.path)}}],
        "properties": {"status": result.status},
    }


def _kept_out(result: FileResult, kept: KeptOut, artifacts: _Artifacts) -> dict[str, Any]:
    """A write or deletion the check kept off the disk, as a note (not an alert: the script
    is not wrong to save its model)."""
    done = "refused" if kept.action == "refused" else f"not {kept.action} during the check"
    location: dict[str, Any] = {"artifactLocation": artifacts.location(kept.path or result.path)}
    if kept.line > 0:
        location["region"] = {"startLine": kept.line}
    return {
        "level": "note",
        "message": {"text": f"{kept.call + ': ' if kept.call else ''}{kept.target} {done}"},
        "locations": [{"physicalLocation": location}],
        "properties": {"keptOut": kept.to_json()},
    }


class _Artifacts:
    """``run.artifacts``: every file the run looked at, each listed once, in order."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self._index: dict[str, int] = {}

    def add(self, path: str) -> int:
        if path not in self._index:
            self._index[path] = len(self.entries)
            self.entries.append({"location": _artifact_location(path), "roles": ["analysisTarget"]})
        return self._index[path]

    def location(self, path: str) -> dict[str, Any]:
        return {**_artifact_location(path), "index": self.add(path)}


def _artifact_location(path: str) -> dict[str, str]:
    """A relative path stays relative (to ``%SRCROOT%``); an absolute one becomes a file URI."""
    if os.path.isabs(path):
        return {"uri": Path(path).as_uri()}
    posix = path.replace(os.sep, "/")
    posix = re.sub(r"^(\./)+", "", posix)
    # quote() leaves "/" alone and escapes ":" so "a:b.py" is not read as a URI scheme.
    return {"uri": quote(posix, safe="/"), "uriBaseId": SRCROOT}


def _dir_uri(path: Path) -> str:
    uri = path.as_uri()
    return uri if uri.endswith("/") else uri + "/"


def _unwrap(text: str) -> str:
    """Markdown hard-wrapped at ~90 columns, as one line per paragraph."""
    paragraphs = [" ".join(p.split()) for p in text.strip().split("\n\n")]
    return "\n\n".join(p for p in paragraphs if p)
