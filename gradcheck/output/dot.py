"""``--graph FILE.dot|FILE.svg|FILE.png``: a picture of each cut. For every finding with a subgraph,
one cluster: the starved variables, the ops between them and the loss (labelled with the
user's file:line), the cut op highlighted, inputs from other branches collapsed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from gradcheck.findings import Finding

_NODE_STYLE = {
    "variable": 'shape=ellipse, style=filled, fillcolor="#d9ead3"',
    "loss": 'shape=doubleoctagon, style=filled, fillcolor="#cfe2f3"',
    "collapsed": 'shape=note, style=dashed, fontcolor="#666666"',
    "op": "shape=box",
}


def _quote(text: str) -> str:
    """A DOT double-quoted string; ``\\n`` sequences already in ``text`` stay line breaks."""
    return '"' + text.replace('"', "'") + '"'


def _label(node: dict, finding: Finding) -> str:
    label = node["label"]
    if node.get("cut"):
        label = f"✂ {label}"
    if node.get("line"):
        where = (
            Path(node["path"]).name if node.get("path") and node["path"] != finding.path else Path(finding.path).name
        )
        label += f"\\n{where}:{node['line']}"
    return label


def render_dot(findings: list[Finding]) -> str:
    lines = ["digraph gradcheck {", "  rankdir=TB;", '  node [fontname="Helvetica", fontsize=10];']
    for n, finding in enumerate(f for f in findings if f.graph):
        lines.append(f"  subgraph cluster_{n} {{")
        title = f"{finding.path}:{finding.line}:{finding.column}: {finding.code} {finding.name}"
        lines.append(f"    label={_quote(title)}; fontname=Helvetica; fontsize=11;")
        for node in finding.graph["nodes"]:
            style = _NODE_STYLE.get(node["kind"], "shape=box")
            if node.get("cut"):
                style = 'shape=box, style="filled,bold", fillcolor="#f4cccc", color="#cc0000", penwidth=2'
            lines.append(f"    f{n}_{node['id']} [label={_quote(_label(node, finding))}, {style}];")
        for a, b in finding.graph["edges"]:
            lines.append(f"    f{n}_{a} -> f{n}_{b};")
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


#: Written as DOT text.
DOT_SUFFIXES = (".dot", ".gv")
#: Rendered by Graphviz's ``dot -T<format>``.
RENDERED_SUFFIXES = (".svg", ".png")


class GraphvizMissing(RuntimeError):
    """A picture (.svg, .png) was asked for, but Graphviz's ``dot`` is not on PATH."""


def unsupported_suffix(target: Path) -> str | None:
    """Why ``--graph target`` cannot be written (a suffix that is neither DOT nor a picture
    Graphviz renders), or None."""
    suffix = target.suffix.lower()
    if suffix in DOT_SUFFIXES or suffix in RENDERED_SUFFIXES:
        return None
    return f"--graph {target.name}: write FILE.dot, FILE.svg or FILE.png (.svg and .png are rendered by Graphviz)"


def needs_graphviz(target: Path) -> bool:
    return target.suffix.lower() in RENDERED_SUFFIXES


def write_graph(findings: list[Finding], target: Path) -> Path:
    """Write DOT to ``target``; for ``.svg`` and ``.png``, render it with Graphviz's ``dot``."""
    text = render_dot(findings)
    if not needs_graphviz(target):
        target.write_text(text, encoding="utf-8")
        return target
    dot = shutil.which("dot")
    suffix = target.suffix.lower()
    if dot is None:
        raise GraphvizMissing(f"--graph FILE{suffix} needs Graphviz's `dot` on PATH; ask for FILE.dot instead")
    picture = subprocess.run([dot, f"-T{suffix[1:]}"], input=text.encode("utf-8"), capture_output=True, check=True)
    target.write_bytes(picture.stdout)
    return target
