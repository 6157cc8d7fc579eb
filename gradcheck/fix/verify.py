"""Verification: a patch is shown only after the same engine that found the problem ran
again on the patched code and found it gone, with nothing new.

The verification runs the script once more. The patched text goes to a temporary directory,
under the original's name, beside links to everything else in the original's directory: the
script's directory (now this one) stays first on ``sys.path``, so its sibling imports and the
data files it opens relative to ``__file__`` are found as before, and nothing is written
beside the user's file. It is checked in a child process exactly as the CLI checks a file
(``gradcheck.check.run_child``, same ``--steps``, ``--timeout`` and ``--allow-none``, under the
same sandbox: nothing the patched script writes reaches the disk), or statically with
``--static``. The directory is removed afterwards. TensorFlow is never imported in this
process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import tempfile
from dataclasses import dataclass

from gradcheck import suppress
from gradcheck.check import Options, run_child
from gradcheck.config import Config
from gradcheck.findings import FileResult, Finding
from gradcheck.fix.patch import line_map


@dataclass
class Target:
    """The file a patch is for: where it is, how findings name it, and how it was checked."""

    path: str  # on disk
    display: str  # as findings and the report show it
    function: str | None = None  # FILE::function targets
    encoding: str = "utf-8"


def check_text(target: Target, text: str, options: Options) -> FileResult:
    """Check ``text`` as if it were ``target``'s file (findings carry ``target.display``)."""
    directory, name = os.path.split(os.path.abspath(target.path))
    workdir = os.path.realpath(tempfile.mkdtemp(prefix="gradcheck-fix-"))
    copy = os.path.join(workdir, name)
    try:
        _link_siblings(directory, workdir, name)
        with open(copy, "w", encoding=target.encoding, newline="") as fh:
            fh.write(text)
        if options.static:
            from gradcheck.static import check_file

            result = check_file(copy)
            result.path = target.display
            for finding in result.findings:
                if os.path.abspath(finding.path) == os.path.abspath(copy):
                    finding.path = target.display
            return result
        spec = f"{copy}::{target.function}" if target.function else copy
        return _from_original(run_child(spec, _quiet(options), display=target.display), workdir, directory)
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(workdir)  # the links only: rmtree never follows them


def _link_siblings(directory: str, workdir: str, name: str) -> None:
    """Links to the original's neighbours (helper modules, packages, data files), where the
    platform has symlinks; without them, sibling imports of the patched copy may fail and
    the patch is then not shown."""
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    for entry in entries:
        if entry != name and entry != "__pycache__":
            with contextlib.suppress(OSError):
                os.symlink(os.path.join(directory, entry), os.path.join(workdir, entry))


def _from_original(result: FileResult, workdir: str, directory: str) -> FileResult:
    """A finding in a sibling module names it where the user has it, not through the link."""
    prefix = workdir + os.sep
    for finding in result.findings:
        path = os.path.abspath(finding.path)
        if path.startswith(prefix):
            original = os.path.join(directory, path[len(prefix) :])
            relative = os.path.relpath(original)
            finding.path = original if relative.startswith("..") else relative
    return result


def _quiet(options: Options) -> Options:
    """The run's options without its "still running" notes: a verification is not the
    user's check, and the notes would name the original file."""
    if getattr(options, "note", None) is None:
        return options
    return dataclasses.replace(options, note=None)


def selected(result: FileResult, target: Target, text: str, config: Config) -> list[Finding]:
    """The patched run's findings that the CLI would report: the configuration's selection
    and the ``# noqa`` comments, read from the patched text for the patched file."""
    lines = text.splitlines()
    out = []
    if suppress.file_is_suppressed(text):
        ours = []
    else:
        ours = [
            f
            for f in result.findings
            if f.path == target.display
            and not (0 < f.line <= len(lines) and suppress.line_suppresses(lines[f.line - 1], f.code))
        ]
    others = suppress.filter_findings([f for f in result.findings if f.path != target.display])
    config = config.for_path(target.path)
    for finding in [*ours, *others]:
        if config.code_selected(finding.code, finding.path):
            out.append(finding)
    return out


@dataclass
class Verdict:
    """What the patched run says about a patch: ``reason`` is None when it is verified;
    ``new`` holds the findings the patch made (a follow-up patch may fix them)."""

    reason: str | None
    new: list[Finding]

    @property
    def ok(self) -> bool:
        return self.reason is None


def compare(
    original: FileResult,
    fixed: list[Finding],
    patched: FileResult,
    patched_findings: list[Finding],
    target: Target,
    old_text: str,
    new_text: str,
) -> Verdict:
    """Whether the patched run verifies the patch: it checked a step, none of ``fixed`` is
    reported again, every finding it reports was already reported (at the same place, for
    no more variables), and each fixed finding's variables now get a gradient (not all of
    them starved by another cut that remains)."""
    if patched.error is not None:
        return Verdict(f"the patched file could not be checked ({patched.error.code}: {patched.error.message})", [])
    if original.steps_checked and not patched.steps_checked and not patched_findings:
        return Verdict("the patched file ran no checked training step", [])
    lines = line_map(old_text, new_text)
    fixed_ids = {id(f) for f in fixed}
    kept = [f for f in original.findings if id(f) not in fixed_ids]
    new = []
    for finding in patched_findings:
        if any(_same(o, finding, target, lines) for o in kept):
            continue
        if any(o.code == finding.code and set(finding.variables) <= set(o.variables) and o.variables for o in fixed):
            return Verdict(f"{finding.code} is still reported at line {finding.line}", [])
        new.append(finding)
    if new:
        finding = new[0]
        where = f"line {finding.line}" if finding.path == target.display else f"{finding.path}:{finding.line}"
        return Verdict(f"it makes a new finding, {finding.code} at {where}: {finding.message}", new)
    starved = {v for f in patched_findings if f.code.startswith("GC1") for v in f.variables}
    for finding in fixed:
        if finding.code.startswith("GC1") and finding.variables and set(finding.variables) <= starved:
            other = next(f for f in patched_findings if set(f.variables) & set(finding.variables))
            return Verdict(
                f"{_phrase(finding.variables)} still get no gradient: {other.code} at line {other.line} cuts their path too",
                [],
            )
    return Verdict(None, [])


def _phrase(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"its {len(names)} variables"


def _same(old: Finding, new: Finding, target: Target, lines: dict[int, int]) -> bool:
    if old.code != new.code or old.path != new.path:
        return False
    if not set(new.variables) <= set(old.variables):
        return False
    if old.path == target.display:
        return lines.get(old.line) == new.line
    return old.line == new.line
