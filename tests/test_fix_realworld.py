"""Suggested patches on the real-world cases (tests/realworld and ../shared/realworld).

As a script, it measures what docs/fixes.md reports: for every case, a copy is fixed with
the real CLI (``gradcheck --fix --force --format json``, in a real subprocess), then the
patched copy is run with plain ``python`` under a watcher that counts the ``None``
gradients ``tf.GradientTape.gradient`` returns. A case *has a verified patch* when at
least one of its findings got one; a patched case *trains* when it then runs to its end
(exit status 0), computes at least one gradient, and no gradient it computes is ``None``::

    python -m tests.test_fix_realworld              # every case: the table and both shares
    python -m tests.test_fix_realworld 001 207      # some cases

As a test module it holds a few representative cases to the same standard (slow: several
TensorFlow runs each).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.realworld_check import cases, expectation, keras_major

ROOT = Path(__file__).resolve().parent.parent

#: Installed (as ``sitecustomize``) in the plain ``python`` run of a patched case.
WATCHER = textwrap.dedent(
    """\
    import atexit, json, os

    _counts = {"calls": 0, "none": 0}

    def _write():
        with open(os.environ["GRADCHECK_FIX_WATCH"], "w") as fh:
            json.dump(_counts, fh)

    atexit.register(_write)
    import tensorflow as tf

    _original = tf.GradientTape.gradient

    def _gradient(self, target, sources, *args, **kwargs):
        result = _original(self, target, sources, *args, **kwargs)
        _counts["calls"] += 1
        _counts["none"] += sum(1 for g in tf.nest.flatten(result) if g is None)
        return result

    tf.GradientTape.gradient = _gradient
    """
)


@dataclass
class Outcome:
    case: str
    codes: list[str]
    verified: list[str] = field(default_factory=list)  # titles of the verified patches
    unverified: list[str] = field(default_factory=list)  # notes of the findings without one
    error: str | None = None
    trains: bool | None = None  # None: not run (no verified patch)
    why: str = ""

    @property
    def patched(self) -> bool:
        return bool(self.verified)


def _env(keras: int) -> dict[str, str]:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONUNBUFFERED="1")
    env.pop("GRADCHECK_STRICT", None)
    if keras == 2:
        env["TF_USE_LEGACY_KERAS"] = "1"
    return env


def fix_copies(
    scripts: list[Path], workdir: Path, keras: int, jobs: int = 2, timeout: int = 180, extra: tuple[str, ...] = ()
) -> dict[str, dict]:
    """Copy ``scripts`` to ``workdir`` and run ``gradcheck --fix --force`` on the copies:
    copy name -> its JSON file record."""
    copies = []
    for script in scripts:
        copy = workdir / script.name
        shutil.copy2(script, copy)
        copies.append(copy)
    cmd = [sys.executable, "-m", "gradcheck", "--fix", "--force", "--format", "json", "-j", str(jobs)]
    cmd += ["--timeout", str(timeout), *extra, *[c.name for c in copies]]
    done = subprocess.run(cmd, cwd=workdir, env=_env(keras), capture_output=True, text=True, check=False)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError as error:
        raise RuntimeError(f"no JSON report:\n{done.stdout}\n{done.stderr}") from error
    return {Path(r["path"]).name: r for r in report["files"]}


def trains(copy: Path, keras: int, timeout: int = 300) -> tuple[bool, str]:
    """Run the (patched) copy with plain python: exit 0, some gradient, no None gradient."""
    with tempfile.TemporaryDirectory(prefix="gradcheck-watch-") as tmp:
        (Path(tmp) / "sitecustomize.py").write_text(WATCHER, encoding="utf-8")
        counts = Path(tmp) / "counts.json"
        env = _env(keras)
        env["PYTHONPATH"] = os.pathsep.join([tmp, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        env["GRADCHECK_FIX_WATCH"] = str(counts)
        try:
            run = subprocess.run(
                [sys.executable, copy.name],
                cwd=copy.parent,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return False, f"did not finish within {timeout} s"
        if run.returncode != 0:
            last = [line for line in (run.stderr or run.stdout).strip().splitlines() if line.strip()]
            return False, f"exit status {run.returncode}: {last[-1] if last else ''}"[:200]
        try:
            seen = json.loads(counts.read_text())
        except (OSError, ValueError):
            return False, "the watcher wrote nothing"
        if not seen["calls"]:
            return False, "no gradient was computed"
        if seen["none"]:
            return False, f"{seen['none']} None gradient(s) in {seen['calls']} gradient call(s)"
        return True, f"{seen['calls']} gradient call(s), none None"


def measure(selected: list[Path], workdir: Path, jobs: int = 2) -> list[Outcome]:
    outcomes: dict[str, Outcome] = {}
    groups: dict[tuple[int, bool], list[Path]] = {}
    for script in selected:
        expected = expectation(script) if script.with_suffix(".json").exists() else {}
        key = (keras_major(expected), bool(expected.get("check_custom_gradients")))
        groups.setdefault(key, []).append(script)
    for (keras, custom), scripts in sorted(groups.items()):
        where = workdir / f"keras{keras}{'-custom' if custom else ''}"
        where.mkdir(parents=True, exist_ok=True)
        extra = ("--check-custom-gradients",) if custom else ()
        records = fix_copies(scripts, where, keras, jobs=jobs, extra=extra)
        for script in scripts:
            record = records.get(script.name)
            expected = expectation(script) if script.with_suffix(".json").exists() else {}
            codes = sorted(
                {c for f in expected.get("findings", []) for c in f["codes"]} or set(expected.get("expect_codes", []))
            )
            outcome = Outcome(script.stem, codes)
            outcomes[script.name] = outcome
            if record is None or record["error"]:
                outcome.error = (
                    "no result" if record is None else f"{record['error']['code']} {record['error']['message']}"
                )
                continue
            for finding in record["findings"]:
                patch = finding.get("patch") or {}
                if patch.get("verified"):
                    outcome.verified.append(f"{finding['code']}: {patch['note'].split('. Verified')[0]}")
                else:
                    outcome.unverified.append(f"{finding['code']}: {patch.get('note', '')}")
            if outcome.patched:
                outcome.trains, outcome.why = trains(where / script.name, keras)
    return [outcomes[s.name] for s in selected]


def table(outcomes: list[Outcome]) -> str:
    lines = ["| case | codes | verified patch | trains |", "| --- | --- | --- | --- |"]
    for o in outcomes:
        if o.error:
            patch = f"could not check: {o.error}"
        elif o.verified:
            patch = "; ".join(o.verified)
        elif not o.unverified:
            patch = "no finding reported"
        else:
            patch = (
                "none ("
                + "; ".join(
                    n.split(": ", 1)[1].removeprefix("no patch: ").removeprefix("no verified patch (")
                    for n in o.unverified
                )[:160]
                + ")"
            )
        ran = "—" if o.trains is None else ("yes" if o.trains else f"no: {o.why}")
        lines.append(f"| {o.case} | {', '.join(o.codes)} | {patch.replace('|', '/')} | {ran.replace('|', '/')} |")
    patched = [o for o in outcomes if o.patched]
    ok = [o for o in patched if o.trains]
    lines.append("")
    lines.append(
        f"Cases with a verified patch: {len(patched)}/{len(outcomes)} ({100 * len(patched) / max(1, len(outcomes)):.0f}%)"
    )
    lines.append(
        f"Of those, patched scripts that train: {len(ok)}/{len(patched)} ({100 * len(ok) / max(1, len(patched)):.0f}%)"
    )
    return "\n".join(lines)


def complete_cases() -> list[Path]:
    """The cases with their expectation written (a case being added may not have it yet)."""
    return [p for p in cases("cases") if p.with_suffix(".json").exists()]


def main(argv: list[str]) -> None:
    every = complete_cases()
    selected = [p for p in every if not argv or any(p.name.startswith(a) or a in p.name for a in argv)]
    with tempfile.TemporaryDirectory(prefix="gradcheck-fix-measure-") as tmp:
        outcomes = measure(selected, Path(tmp))
    print(table(outcomes))


# -- tests -----------------------------------------------------------------------------------
# (206, keras-io's actor-critic, left the sample: with `float()` gone its patched copy shows the
# tutorial's own real bug, an unstopped advantage (GC203, keras-team/keras-io#194), so no
# patch of it can verify)
_SAMPLE = ["001_", "021_", "031_"]


@pytest.mark.slow
def test_sample_cases_get_verified_patches_that_train(tmp_path):
    pytest.importorskip("tensorflow")
    selected = [p for p in complete_cases() if p.name.startswith(tuple(_SAMPLE))]
    assert len(selected) == len(_SAMPLE)
    outcomes = measure(selected, tmp_path)
    for outcome in outcomes:
        assert outcome.patched, (outcome.case, outcome.unverified, outcome.error)
        assert outcome.trains, (outcome.case, outcome.why)


if __name__ == "__main__":
    main(sys.argv[1:])
