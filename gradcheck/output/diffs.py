"""Reading a unified diff back as line replacements (SARIF fixes, ``--fix``)."""

from __future__ import annotations


def replacements(diff: str) -> list[tuple[int, list[str], list[str]]]:
    """The line blocks a unified diff replaces: (first old line, 1-based; the old lines;
    the new lines), lines with their line ends. A pure insertion has no old lines and goes
    before its first old line."""
    out: list[tuple[int, list[str], list[str]]] = []
    old_line, current, last = 0, None, ""
    for raw in diff.splitlines(keepends=True):
        if raw.startswith(("--- ", "+++ ")) and current is None and last in ("", " "):
            continue
        if raw.startswith("@@"):
            old = raw.split()[1]  # -start[,count]
            start, _, count = old[1:].partition(",")
            old_line = int(start) + (1 if count == "0" else 0)
            current, last = None, ""
            continue
        kind, text = raw[:1], raw[1:]
        if kind == "\\":  # "\ No newline at end of file": the line above has no line end
            lines = current[2] if current is not None and last == "+" else current[1] if current is not None else None
            if lines:
                lines[-1] = lines[-1].rstrip("\r\n")
            continue
        if kind == " ":
            current = None
            old_line += 1
        elif kind in "-+":
            if current is None:
                current = (old_line, [], [])
                out.append(current)
            if kind == "-":
                current[1].append(text)
                old_line += 1
            else:
                current[2].append(text)
        last = kind
    return out
