"""``%load_ext gradcheck``: in IPython and Jupyter, every ``tape.gradient`` (eager, traced,
inside ``model.fit``) that leaves a variable without a gradient is diagnosed in the cell that
ran it, as rich HTML in Jupyter and as text in a terminal. It is ``gradcheck.install()``
with a display: training is not changed. ``%unload_ext gradcheck`` removes it.

Cells are named as IPython names them in tracebacks: ``Cell In[3], line 4``.
"""

from __future__ import annotations

import html
import os
import re

from gradcheck.findings import Finding

_TERMINAL_CELL = re.compile(r"^<ipython-input-(\d+)-[0-9a-f]+>$")


def cell_label(path: str, shell=None) -> str:
    """``Cell In[3]`` for a cell's file name (ipykernel's ``/tmp/ipykernel_1/123.py`` or the
    terminal's ``<ipython-input-3-abc>``); the path itself for a file."""
    match = _TERMINAL_CELL.match(path)
    if match:
        return f"Cell In[{match[1]}]"
    compiler = getattr(shell, "compile", None)
    number = getattr(compiler, "_filename_map", {}).get(path)
    if number is not None:
        return f"Cell In[{number}]"
    return path


class Diagnosis:
    """What a cell displays: the findings, as text (``repr``) and as HTML (Jupyter)."""

    def __init__(self, findings: list[Finding], shell=None) -> None:
        self.findings = list(findings)
        self.shell = shell

    def _where(self, finding: Finding) -> str:
        label = cell_label(finding.path, self.shell)
        if label.startswith("Cell In["):
            return f"{label}, line {finding.line}"
        return f"{os.path.relpath(finding.path) if os.path.isabs(finding.path) else finding.path}:{finding.line}"

    def __repr__(self) -> str:
        from gradcheck.output.text import render_finding

        blocks = []
        for finding in self.findings:
            text = render_finding(finding, False)
            label = cell_label(finding.path, self.shell)
            if label != finding.path:
                text = text.replace(
                    f"{finding.path}:{finding.line}:{finding.column}:", f"{label}:{finding.line}:{finding.column}:", 1
                )
            blocks.append(text)
        return "\n\n".join(blocks)

    def _repr_html_(self) -> str:
        from gradcheck.sourcemap import source_line

        parts = ['<div class="gradcheck" style="font-family: var(--jp-content-font-family, sans-serif)">']
        for f in self.findings:
            color = "#b00020" if f.severity == "error" else "#8a6d00"
            parts.append(
                f'<div style="border-left: 4px solid {color}; padding: 0.4em 0.8em; margin: 0.5em 0; '
                'background: rgba(127,127,127,0.07)">'
                f'<div><b style="color: {color}">{f.code}</b> <code>{html.escape(f.name)}</code> '
                f"&middot; {html.escape(self._where(f))}</div>"
                f"<div>{html.escape(f.message)}</div>"
            )
            first, last = f.line, f.end_line or f.line
            code = [source_line(f.path, n) for n in range(max(1, first - 1), last + 2)]
            if any(code):
                lines = []
                for n, text in zip(range(max(1, first - 1), last + 2), code, strict=False):
                    mark = first <= n <= last
                    style = ' style="background: rgba(255,80,80,0.18)"' if mark else ""
                    lines.append(f"<span{style}>{n:>4} | {html.escape(text)}</span>")
                parts.append('<pre style="margin: 0.4em 0">' + "\n".join(lines) + "</pre>")
            if f.variables:
                names = ", ".join(f"<code>{html.escape(v)}</code>" for v in f.variables)
                parts.append(f"<div><b>variables without a gradient:</b> {names}</div>")
            if f.chain:
                ops = [html.escape(f.chain_source)] if f.chain_source else []
                ops += [
                    f'<b style="color: {color}">&#9986; {html.escape(link.op)}</b>'
                    if link.cut
                    else html.escape(link.op)
                    for link in f.chain
                ]
                path = " &rarr; ".join([*ops, "loss"])
                parts.append(f"<div><b>path:</b> {path}</div>")
            if f.fix:
                parts.append(f"<div><b>fix:</b> {html.escape(f.fix)}</div>")
            if f.url:
                parts.append(f'<div><a href="{html.escape(f.url)}" target="_blank">{f.code} explained</a></div>')
            else:
                parts.append(f"<div><code>gradcheck --explain {f.code}</code></div>")
            parts.append("</div>")
        parts.append("</div>")
        return "".join(parts)


_SHELL = None


def load_ipython_extension(shell) -> None:
    """``%load_ext gradcheck``."""
    global _SHELL
    from gradcheck import api

    api.install()
    session = api._INSTALLED
    if session is None:  # pragma: no cover - install() raised instead
        return

    def show(findings: list[Finding]) -> None:
        if findings:
            from IPython.display import display

            display(Diagnosis(findings, shell))

    session.on_findings = show
    session.describe = lambda findings: repr(Diagnosis(findings, shell))  # the error names cells as IPython does
    _SHELL = shell
    events = getattr(shell, "events", None)
    if events is not None:
        # a traced step's value checks report when the host next looks: at the latest, when
        # the cell that ran it ends
        events.register("post_run_cell", _look)


def _look(*_args) -> None:
    from gradcheck import api

    if api._INSTALLED is not None:
        api._INSTALLED.poll_values()


def unload_ipython_extension(shell) -> None:
    """``%unload_ext gradcheck``."""
    global _SHELL
    from gradcheck import api

    events = getattr(shell, "events", None)
    if events is not None:
        try:
            events.unregister("post_run_cell", _look)
        except ValueError:
            pass
    api.uninstall()
    _SHELL = None
