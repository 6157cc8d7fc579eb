"""``--format github``: GitHub Actions workflow commands, one line per finding.

The runner turns ``::error file=…,line=…::message`` lines on stdout into annotations on
the pull request's diff. Escaping follows ``@actions/core`` (``escapeData`` and
``escapeProperty`` in ``packages/core/src/command.ts``), which is what the runner undoes.
No TensorFlow import.
"""

from __future__ import annotations

import os

from gradcheck import links
from gradcheck.findings import FileResult, Finding
from gradcheck.rules import RULES

#: Finding severity -> workflow command.
_COMMANDS = {"error": "error", "warning": "warning"}


def escape_data(text: str) -> str:
    """The message after ``::``: a literal newline would end the command."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A ``key=value`` property: ``,`` separates properties and ``::`` ends them."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, properties: dict[str, str | int | None], message: str) -> str:
    """One workflow command line; properties that are None are left out."""
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items() if value is not None)
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def render_github(report, color: bool = False) -> str:
    """One command per finding and per file that could not be checked (``color`` is ignored)."""
    lines = []
    for result in report.files:
        if result.notice is not None:
            lines.append(_error_command(result))
        lines += [_finding_command(f) for f in sorted(result.findings, key=Finding.sort_key)]
    return "\n".join(lines) + ("\n" if lines else "")


def _finding_command(finding: Finding) -> str:
    properties: dict[str, str | int | None] = {
        "file": finding.path,
        "line": finding.line,
        "col": finding.column,
        "endLine": None,
        "endColumn": None,
        "title": f"{finding.code} {finding.name}",
    }
    if finding.end_line is not None and finding.end_line >= finding.line:
        properties["endLine"] = finding.end_line
        # GitHub uses columns only for a single-line annotation.
        if finding.end_line == finding.line and finding.end_column is not None:
            properties["endColumn"] = finding.end_column
    # The annotation shows the title and the message; the fix and the rule page belong there
    # too, since the log line is all a reviewer sees.
    message = finding.message
    if finding.fix:
        message += f"\n\nFix: {finding.fix}"
    if finding.patch is not None and finding.patch.verified and finding.patch.diff:
        message += f"\n\nVerified patch: {patch_link(finding)}"
    message += f"\n\nSee {see(finding.code)}"
    _in_notebook(finding, properties)
    return command(_COMMANDS.get(finding.severity, "notice"), properties, message)


def see(code: str) -> str:
    """Where an annotation sends the reader: the rule's published page, else ``--explain``
    (a path on the machine that ran the job would open nowhere else)."""
    return links.published_rule_url(code) or links.explain_hint(code)


def _in_notebook(finding: Finding, properties: dict[str, str | int | None]) -> None:
    """A notebook cell (``nb.ipynb:cell 3``): annotate the ``.ipynb`` at the line holding
    the cell's line (Jupyter's layout), the cell named in the title."""
    from gradcheck import notebook

    split = notebook.split_cell_path(finding.path)
    if split is None:
        return
    path, cell = split
    line = notebook.raw_line(path, cell, finding.line)
    properties.update(file=path, line=line, col=None, endLine=None, endColumn=None)
    properties["title"] = f"{properties['title']} (cell {cell}, line {finding.line})"


def patch_link(finding: Finding) -> str:
    """Where the patch is shown: the run's job summary (``step_summary`` writes it there)
    when GitHub Actions runs the step, else the command that prints it."""
    server, repository, run = (os.environ.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"))
    if server and repository and run and os.environ.get("GITHUB_STEP_SUMMARY"):
        return f"{server}/{repository}/actions/runs/{run} (job summary, {_anchor(finding)})"
    return f"run `gradcheck --diff {finding.path}` to see it"


def _anchor(finding: Finding) -> str:
    return f"{finding.path}:{finding.line} {finding.code}"


def step_summary(report) -> str:
    """Markdown for ``$GITHUB_STEP_SUMMARY``: each verified patch as a ``diff`` block."""
    parts = []
    for finding in report.findings:
        patch = finding.patch
        if patch is None or not patch.verified or not patch.diff:
            continue
        parts.append(
            f"### {_anchor(finding)}: {finding.message}\n\n{patch.note}\n\n```diff\n{patch.diff.rstrip()}\n```\n"
        )
    if not parts:
        return ""
    intro = "## gradcheck: verified patches\n\nApply with `gradcheck --fix`, or `git apply` a block.\n\n"
    return intro + "\n".join(parts)


def _error_command(result: FileResult) -> str:
    notice = result.notice
    assert notice is not None
    rule = RULES.get(notice.code)
    title = f"{notice.code} {rule.name}" if rule else notice.code
    level = "error" if result.error is not None else "warning"  # GC905: checked in part
    return command(level, {"file": result.path, "title": title}, notice.message)
