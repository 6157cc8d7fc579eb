"""What a real-world case expects, and whether a result meets it.

Used by ``tests/test_realworld.py`` and, as a script, to score the whole set (or some
files) through the real CLI, e.g. for the first run of a new reproduction::

    python -m tests.realworld_check tests/realworld/cases/2*.py

A case's ``.json`` (see tests/realworld/README.md) names the expected codes, the culprit
line and the starved variables; ``findings`` lists them one by one when a case has more
than one culprit; ``fix_any`` lists words of which the fix text must contain one;
``keras: 2`` runs it under ``TF_USE_LEGACY_KERAS=1`` (tf_keras); without tf_keras installed
those cases are skipped, as ``tests/test_realworld.py`` skips them, and the total says so.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "tests" / "realworld"
SHARED = ROOT.parent / "shared" / "realworld"


def expectation(script: Path) -> dict[str, Any]:
    return json.loads(script.with_suffix(".json").read_text(encoding="utf-8"))


def cases(kind: str) -> list[Path]:
    """The project's copies, plus any newer case of the shared set."""
    found = {p.name: p for p in sorted((HERE / kind).glob("*.py"))}
    if SHARED.is_dir():
        for p in sorted((SHARED / kind).glob("*.py")):
            found.setdefault(p.name, p)
    return list(found.values())


def keras_major(expected: dict[str, Any]) -> int:
    return int(expected.get("keras", 3))


def has_tf_keras() -> bool:
    """Keras 2 cases need ``tf_keras`` (``pip install --no-deps "tf-keras==X.Y.*"``, docs/versions.md)."""
    return importlib.util.find_spec("tf_keras") is not None


def missing(expected: dict[str, Any]) -> list[str]:
    """Modules the case needs that are not installed: ``tf_keras`` for a ``keras: 2`` case, and
    whatever its ``"requires"`` names (a script that selects Keras 2 itself, for example)."""
    needs = set(expected.get("requires", ())) | ({"tf_keras"} if keras_major(expected) == 2 else set())
    return sorted(name for name in needs if importlib.util.find_spec(name) is None)


def custom_gradients(expected: dict[str, Any]) -> bool:
    """GC301 is opt-in: a case that expects it says ``"check_custom_gradients": true``."""
    return bool(expected.get("check_custom_gradients", False))


def _normalise(name: str) -> str:
    return name[:-2] if name.endswith(":0") else name


def _names(values) -> set[str]:
    return {_normalise(v) for v in values}


def expected_findings(expected: dict[str, Any]) -> list[dict[str, Any]]:
    """The findings a case expects, one entry per culprit: codes, line (None: any), variables.
    A control expects none, except the warnings of a later rule it was not written for
    (``also_expect``, in the ``findings`` form: a GC203 on a None-gradient control)."""
    if expected.get("expect") == "clean":
        return [
            {"codes": f["codes"], "line": f.get("line"), "variables": _names(f["variables"]), "exact": True}
            for f in expected.get("also_expect", [])
        ]
    if "findings" in expected:
        return [
            {"codes": f["codes"], "line": f.get("line"), "variables": _names(f["variables"]), "exact": True}
            for f in expected["findings"]
        ]
    # The shared set's form: one culprit line, which one of the findings must point at
    # (two unwatched tensors may each be reported where it was made).
    return [
        {
            "codes": expected["expect_codes"],
            "line": expected.get("culprit_line"),
            "variables": _names(expected["none_variables"]),
            "exact": False,
        }
    ]


def problems(expected: dict[str, Any], findings: list[dict[str, Any]]) -> list[str]:
    """Every way ``findings`` (JSON report records) differ from the expectation; [] when exact.

    Each expected culprit must be found with one of its codes at its line (in the shared
    form, one of the findings with its codes at its line), and together the findings for
    it must name exactly its variables; no other finding is allowed.
    """
    out: list[str] = []
    used: set[int] = set()
    for want in expected_findings(expected):
        line = want["line"]
        mine = [
            i
            for i, f in enumerate(findings)
            if f["code"] in want["codes"] and (line is None or not want["exact"] or f["line"] == line)
        ]
        if line is not None and not any(findings[i]["line"] == line for i in mine):
            mine = []
        if not mine:
            got = [f"{f['code']}@{f['line']}" for f in findings]
            out.append(f"missing {'/'.join(want['codes'])} at line {want['line']} (got {got})")
            continue
        used.update(mine)
        named = set().union(*(_names(findings[i]["variables"]) for i in mine))
        if named != want["variables"]:
            out.append(
                f"{'/'.join(want['codes'])}@{want['line']}: variables {sorted(named)} != {sorted(want['variables'])}"
            )
        words = expected.get("fix_any")
        if words and not any(w.lower() in findings[i].get("fix", "").lower() for i in mine for w in words):
            out.append(f"{'/'.join(want['codes'])}@{want['line']}: fix mentions none of {words}")
    for i, f in enumerate(findings):
        if i not in used:
            out.append(f"unexpected {f['code']}@{f['line']}: {f['message']}")
    return out


def run_cli(
    scripts: list[Path], keras: int = 3, jobs: int = 2, timeout: int = 120, custom_gradients: bool = False
) -> dict[str, dict]:
    """``gradcheck --format json`` on ``scripts`` in a real subprocess: path -> file record.
    ``custom_gradients``: with ``--check-custom-gradients`` (GC301 cases ask for it)."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    if keras == 2:
        env["TF_USE_LEGACY_KERAS"] = "1"
    args = [sys.executable, "-m", "gradcheck", "--format", "json", "-j", str(jobs), "--timeout", str(timeout)]
    if custom_gradients:
        args.append("--check-custom-gradients")
    done = subprocess.run([*args, *map(str, scripts)], capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError as error:
        raise RuntimeError(f"gradcheck printed no JSON report:\n{done.stdout}\n{done.stderr}") from error
    return {str(Path(r["path"]).resolve()): r for r in report["files"]}


def score(scripts: list[Path]) -> int:
    """Print one line per script (ok / its problems / skipped) and a total; returns the number
    wrong. A case that needs a module not installed (tf_keras for Keras 2) is skipped."""
    groups: dict[tuple[int, bool], list[Path]] = {}
    for s in scripts:
        groups.setdefault((keras_major(expectation(s)), custom_gradients(expectation(s))), []).append(s)
    skipped = [s for s in scripts if missing(expectation(s))]
    for script in skipped:
        print(f"skip  {script.parent.name}/{script.name} ({', '.join(missing(expectation(script)))} not installed)")
    wrong = 0
    for (keras, custom), group in sorted(groups.items()):
        group = [s for s in group if s not in skipped]
        if not group:
            continue
        records = run_cli(group, keras=keras, custom_gradients=custom)
        for script in group:
            record = records.get(str(script.resolve()))
            if record is None:
                issues = ["no result"]
            elif record["error"]:
                issues = [f"could not check: {record['error']['code']} {record['error']['message']}"]
            else:
                issues = problems(expectation(script), record["findings"])
            wrong += bool(issues)
            print(f"{'ok   ' if not issues else 'WRONG'} {script.parent.name}/{script.name}")
            for issue in issues:
                print(f"        {issue}")
    checked = len(scripts) - len(skipped)
    also = f"; {len(skipped)} cases skipped (a module they need is not installed)" if skipped else ""
    print(f"{checked - wrong}/{checked} exact{also}")
    return wrong


if __name__ == "__main__":
    paths = [Path(p) for p in sys.argv[1:]] or cases("cases") + cases("clean")
    sys.exit(1 if score(paths) else 0)
