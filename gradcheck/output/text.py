"""Text output: ``full`` (ruff's full format: location, code frame, caret, help lines) and
``concise`` (one line per finding)."""

from __future__ import annotations

from gradcheck.findings import FileResult, Finding, KeptOut
from gradcheck.sourcemap import source_line

_CONTEXT = 1  # source lines shown above and below the culprit


def _style(text: str, color: bool, **kwargs) -> str:
    if not color:
        return text
    import click  # only for colour: a diagnosis raised inside a training step needs none

    return click.style(text, **kwargs)


def header(finding: Finding, color: bool) -> str:
    where = _style(f"{finding.path}:{finding.line}:{finding.column}:", color, bold=True)
    code = _style(finding.code, color, fg="red" if finding.severity == "error" else "yellow", bold=True)
    return f"{where} {code} {finding.message}"


def error_line(result: FileResult, color: bool) -> str:
    """Why the file could not be checked, or (GC905) what of it was not reached."""
    notice = result.notice
    assert notice is not None
    code = _style(notice.code, color, fg="red" if result.error is not None else "yellow", bold=True)
    return f"{_style(result.path + ':', color, bold=True)} {code} {notice.message}"


def code_frame(finding: Finding, color: bool) -> list[str]:
    first = max(1, finding.line - _CONTEXT)
    last = finding.line + _CONTEXT
    lines = [(n, source_line(finding.path, n)) for n in range(first, last + 1)]
    lines = [(n, text) for n, text in lines if text or n == finding.line]
    if not any(text for _, text in lines):
        return []
    width = len(str(last))
    gutter = " " * width + " |"
    out = [_style(gutter, color, fg="blue")]
    for n, text in lines:
        out.append(_style(f"{n:>{width}} |", color, fg="blue") + (f" {text}" if text else ""))
        if n == finding.line:
            start = max(finding.column, 1)
            end = finding.end_column if finding.end_line in (None, finding.line) and finding.end_column else None
            if end is None or end <= start:
                end = len(text) + 1
            caret = " " * (start - 1) + "^" * max(1, end - start)
            out.append(_style(gutter, color, fg="blue") + " " + _style(f"{caret} {finding.code}", color, fg="red"))
    out.append(_style(gutter, color, fg="blue"))
    return out


def chain_text(finding: Finding) -> str:
    if not finding.chain:
        return ""
    parts = [finding.chain_source] if finding.chain_source else []
    parts += [("✂ " if link.cut else "") + link.op for link in finding.chain]
    return " → ".join([*parts, "loss"])


def render_finding(finding: Finding, color: bool = False) -> str:
    width = len(str(finding.line + _CONTEXT))
    pad = " " * width + " "
    lines = [header(finding, color)]
    lines += code_frame(finding, color)
    label = _style("=", color, fg="blue")
    if finding.variables:
        lines.append(f"{pad}{label} variables: {', '.join(finding.variables)}")
    chain = chain_text(finding)
    if chain:
        lines.append(f"{pad}{label} path: {chain}")
    for note in finding.notes:
        lines.append(f"{pad}{label} note: {note}")
    if finding.fix:
        lines.append(f"{pad}{label} {_style('fix', color, bold=True)}: {finding.fix}")
    if finding.patch is not None:
        lines += patch_lines(finding, color, f"{pad}{label} ")
    return "\n".join(lines)


def patch_lines(finding: Finding, color: bool, prefix: str = "") -> list[str]:
    """``= patch: ...`` and, for a verified patch, its unified diff (not indented, so the
    whole output can be given to ``patch -p1`` as it is)."""
    patch = finding.patch
    assert patch is not None
    word = _style("patch", color, bold=True)
    lines = [f"{prefix}{word}: {patch.note}" if patch.note else f"{prefix}{word}:"]
    if patch.verified and patch.diff:
        lines += [diff_line(line, color) for line in patch.diff.splitlines()]
    return lines


def diff_line(line: str, color: bool) -> str:
    if line.startswith(("+++", "---")):
        return _style(line, color, bold=True)
    if line.startswith("+"):
        return _style(line, color, fg="green")
    if line.startswith("-"):
        return _style(line, color, fg="red")
    if line.startswith("@@"):
        return _style(line, color, fg="cyan")
    return line


#: kept-out calls shown per file; ``--format json`` lists up to 50
KEPT_OUT_SHOWN = 5


def kept_out_lines(result: FileResult, color: bool = False) -> list[str]:
    """``train.py:88: model.save('final.keras'): not written during the check``: what the
    check kept off the user's disk, one line per call (its files together), capped."""
    groups: dict[tuple, list[KeptOut]] = {}
    for record in result.kept_out:
        groups.setdefault((record.path, record.line, record.call, record.action), []).append(record)
    # the call whose refusal ended the check is always shown
    ended = [key for key, records in groups.items() if any(r.ended for r in records)]
    others = [key for key in groups if key not in ended][: max(0, KEPT_OUT_SHOWN - len(ended))]
    shown = set(ended + others)
    lines = []
    for (path, line, call, action), records in [(k, v) for k, v in groups.items() if k in shown]:
        where = _style(f"{path}:{line}:" if path else f"{result.path}:", color, bold=True)
        named = [r.target for r in records if not call or r.target.rsplit("/", 1)[-1] not in call]
        what = f"{', '.join(named)} " if named else ""
        if action == "refused":
            text = f"{what}refused (PermissionError)"
        else:
            text = f"{what}not {action} during the check"
        if any(r.ended for r in records):
            text += "; the script failed there, and the check ended there"
        lines.append(f"{where} {call + ': ' if call else ''}{text}")
    hidden = len(groups) - len(shown) + result.kept_out_more
    if hidden:
        lines.append(f"... and {hidden} more kept off the disk (--format json lists them)")
    return lines


def render_findings(findings: list[Finding], color: bool = False) -> str:
    return "\n\n".join(render_finding(f, color) for f in findings)


def render_full(report, color: bool = False) -> str:
    blocks = []
    for result in report.files:
        if result.notice is not None:
            blocks.append(error_line(result, color))
        blocks += [render_finding(f, color) for f in sorted(result.findings, key=Finding.sort_key)]
        if result.kept_out or result.kept_out_more:
            blocks.append("\n".join(kept_out_lines(result, color)))
    return "\n\n".join(blocks) + ("\n" if blocks else "")


def render_concise(report, color: bool = False) -> str:
    lines = []
    for result in report.files:
        if result.notice is not None:
            lines.append(error_line(result, color))
        for finding in sorted(result.findings, key=Finding.sort_key):
            lines.append(header(finding, color))
            if finding.patch is not None and finding.patch.verified:
                lines += patch_lines(finding, color, "  = ")
        lines += kept_out_lines(result, color)
    return "\n".join(lines) + ("\n" if lines else "")
