"""The gallery (examples/gallery): gradcheck is exact on every broken file and silent on
every fixed one.

Each ``*_broken.py`` marks its culprit line with ``# expect: GC1xx``; the findings must be
exactly those (code, line) pairs. Each ``*_fixed.py`` must give no finding. All files are
checked by one real ``gradcheck --format json -j 2`` run (every file still runs in its
own child process), and one parametrized test reads each file's record.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_cli

GALLERY = ROOT / "examples" / "gallery"
FILES = sorted(GALLERY.glob("*.py"))
EXPECT = re.compile(r"#\s*expect:\s*(GC\d{3}(?:\s*,\s*GC\d{3})*)")


def expected_findings(path: Path) -> list[tuple[int, str]]:
    """The (line, code) pairs marked with ``# expect:`` comments."""
    out = []
    for lineno, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = EXPECT.search(text)
        if match:
            out.extend((lineno, code.strip()) for code in match.group(1).split(","))
    return sorted(out)


def relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.fixture(scope="module")
def gallery_report() -> dict[str, dict]:
    """One gradcheck run over the whole gallery: each file's JSON record, by path."""
    proc = run_cli("--format", "json", "-j", "2", "--timeout", "300", *(relative(p) for p in FILES), timeout=1200)
    assert proc.returncode in (0, 1), f"gradcheck could not check the gallery:\n{proc.stdout}\n{proc.stderr}"
    report = json.loads(proc.stdout)
    return {Path(record["path"]).as_posix(): record for record in report["files"]}


def test_gallery_has_pairs():
    names = {p.stem for p in FILES}
    assert len(names) >= 14, "a broken/fixed pair for each of the seven causes"
    for name in names:
        stem, _, kind = name.rpartition("_")
        assert kind in ("broken", "fixed"), f"{name}.py: gallery files end in _broken or _fixed"
        partner = f"{stem}_{'fixed' if kind == 'broken' else 'broken'}"
        assert partner in names, f"{name}.py has no {partner}.py"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_gallery_file(path: Path, gallery_report):
    record = gallery_report[relative(path)]
    assert record["status"] == "checked", record["error"]
    assert record["steps_checked"] >= 1 or record["findings"], "the file never reached a gradient"
    got = sorted((f["line"], f["code"]) for f in record["findings"])
    expected = expected_findings(path)
    if path.stem.endswith("_broken"):
        assert expected, "a broken gallery file marks its culprit line with '# expect: GC1xx'"
    else:
        assert not expected, "a fixed gallery file expects no finding"
    details = "\n".join(f"{f['path']}:{f['line']}: {f['code']} {f['message']}" for f in record["findings"])
    assert got == expected, details
