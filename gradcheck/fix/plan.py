"""Propose and verify the patches of a report's files.

Per file: every finding's first candidate is applied together and verified with one
check; when that fails, each finding's candidates are verified alone (at most two each).
The findings get a ``Patch`` (``finding.patch``): the diff of their own verified patch, or
no diff and a note saying why there is none. ``FilePlan.text`` is the file with the
patches that were verified *together* applied: what ``--fix`` writes.
"""

from __future__ import annotations

import dataclasses
import os
import tokenize
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from gradcheck import discover
from gradcheck.check import Options
from gradcheck.config import Config
from gradcheck.findings import CHECKED, FileResult, Finding, Patch
from gradcheck.fix import registry
from gradcheck.fix.patch import Candidate, apply, line_map, unified_diff
from gradcheck.fix.source import Source, Unpatchable
from gradcheck.fix.verify import Target, Verdict, check_text, compare, selected


@dataclass
class FilePlan:
    """What ``--diff``/``--fix`` will show and write for one checked file."""

    result: FileResult
    target: Target
    original: bytes = b""
    old_text: str = ""
    #: the file with every patch verified together applied (== old_text when there are none)
    text: str = ""
    applied: list[Finding] = field(default_factory=list)  # the findings ``text`` fixes
    problem: str | None = None  # why this file gets no patch at all
    runs: int = 0  # verification checks run

    @property
    def diff(self) -> str:
        return unified_diff(self.old_text, self.text, self.target.display) if self.text != self.old_text else ""


def plan_report(
    report,
    config: Config,
    options: Options,
    targets: list[str] | None = None,
    combine_verified: bool = False,
    progress: Callable[[str], None] | None = None,
    paths: dict[str, str] | None = None,
) -> list[FilePlan]:
    """Attach a ``Patch`` to every finding of ``report`` in a checked file; one plan per
    file with findings. ``combine_verified`` (``--fix``): when patches were verified one by
    one, verify them together too, so ``FilePlan.text`` holds all that hold together."""
    functions = _functions(targets or [])
    results = [r for r in report.files if r.findings and r.status == CHECKED]

    def one(result: FileResult) -> FilePlan:
        target = Target((paths or {}).get(result.path, result.path), result.path, functions.get(result.path))
        plan = FilePlan(result, target)
        try:
            _plan_file(plan, config, options, combine_verified)
        except Unpatchable as error:
            plan.problem = str(error)
            _note_all(plan, f"no patch: {error}")
        except Exception as error:  # the diagnosis stands without patches
            if os.environ.get("GRADCHECK_STRICT"):
                raise
            plan.problem = f"internal error while making patches: {type(error).__name__}: {error}"
            plan.text, plan.applied = plan.old_text, []
            _note_all(plan, f"no patch: gradcheck had an {plan.problem}")
        if progress is not None:
            progress(result.path)
        return plan

    with ThreadPoolExecutor(max_workers=max(1, min(options.jobs, len(results) or 1))) as pool:
        return list(pool.map(one, results))


def _functions(targets: list[str]) -> dict[str, str]:
    out = {}
    for t in targets:
        path, function = discover.split_target(t)
        if function:
            out[path] = function
    return out


def _note_all(plan: FilePlan, note: str) -> None:
    for finding in plan.result.findings:
        if finding.patch is None:
            finding.patch = Patch(note=note)


def read_source(path: str) -> tuple[bytes, str, str]:
    """The file's bytes, its text (line ends kept) and its encoding."""
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        encoding, _ = tokenize.detect_encoding(iter(raw.splitlines(keepends=True)).__next__)
    except SyntaxError as error:
        raise Unpatchable(f"cannot decode the file: {error}") from None
    try:
        text = raw.decode(encoding)
    except (UnicodeDecodeError, LookupError) as error:
        raise Unpatchable(f"cannot decode the file: {error}") from None
    if encoding == "utf-8-sig":
        text = text.removeprefix("\ufeff")
    return raw, text, encoding


def _plan_file(plan: FilePlan, config: Config, options: Options, combine_verified: bool) -> None:
    result, target = plan.result, plan.target
    if not target.path.endswith(".py"):
        raise Unpatchable("patches are made to .py files only")
    if not os.path.isfile(target.path):
        raise Unpatchable("the file is not on disk")
    plan.original, plan.old_text, target.encoding = read_source(target.path)
    plan.text = plan.old_text
    source = Source(plan.old_text, target.display)
    tried: dict[int, list[Candidate]] = {}
    for finding in result.findings:
        if finding.path != target.display:
            finding.patch = Patch(
                note=f"no patch: the culprit is in {finding.path}; patches are made to the checked file only"
            )
            continue
        if not registry.kinds_for(finding):
            variant = finding.fields.get("variant")
            kind = f"{finding.code} ({_VARIANTS.get(variant, variant)})" if variant else finding.code
            finding.patch = Patch(
                note=f"no patch: gradcheck has no mechanical fix for {kind}; apply the fix above by hand"
            )
            continue
        found = registry.candidates(source, finding)
        if not found:
            finding.patch = Patch(
                note="no patch: the code around the culprit is not a shape gradcheck knows how to rewrite; apply the fix above by hand"
            )
            continue
        tried[id(finding)] = found
    if not tried:
        return
    by_id = {id(f): f for f in result.findings}

    def verify(candidates: list[Candidate]) -> tuple[Verdict, str]:
        text = apply(source, candidates)
        try:
            compile(text, target.display, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as error:
            return Verdict(f"the patched code does not compile ({error})", []), text
        plan.runs += 1
        patched = check_text(target, text, options)
        kept = selected(patched, target, text, config)
        verdict = compare(result, [c.finding for c in candidates], patched, kept, target, plan.old_text, text)
        return verdict, text

    def attempt(candidates: list[Candidate]) -> tuple[Verdict, list[Candidate], str]:
        """Verify; when the patch only reveals findings that have patches of their own (a
        forward pass moved into the tape lets a bootstrap target's gradient through), add
        those to the first candidate and verify once more."""
        verdict, text = verify(candidates)
        if verdict.ok or not verdict.new:
            return verdict, candidates, text
        follow = _follow_ups(source, plan.old_text, text, verdict.new, target.display)
        if not follow:
            return verdict, candidates, text
        merged = [_merge(candidates[0], follow), *candidates[1:]]
        again, text2 = verify(merged)
        return (again, merged, text2) if again.ok else (verdict, candidates, text)

    firsts = [found[0] for found in tried.values()]
    verdict, firsts, text = attempt(firsts)
    if verdict.ok:
        plan.text, plan.applied = text, [c.finding for c in firsts]
        for c in firsts:
            _verified(c, source, plan, [o for o in firsts if o is not c], options.static)
        return
    failures: dict[int, list[str]] = {}
    verified: list[Candidate] = []
    for key, found in tried.items():
        if len(tried) == 1 and found[0] is not None:
            failures.setdefault(key, []).append(f"{found[0].title}: {verdict.reason}")
            found = found[1:]  # the first was just tried alone
        for c in found:
            why, done, _ = attempt([c])
            if why.ok:
                verified.append(done[0])
                break
            failures.setdefault(key, []).append(f"{c.title}: {why.reason}")
    for key in tried:
        finding = by_id[key]
        if not any(c.finding is finding for c in verified):
            finding.patch = Patch(
                note="no verified patch (" + "; ".join(failures.get(key, [])) + "); apply the fix above by hand"
            )
    for c in verified:
        _verified(c, source, plan, [], options.static)
    if not verified:
        return
    chosen = verified[:1]
    if combine_verified and len(verified) > 1:
        why, _ = verify(verified)
        if why.ok:
            chosen = verified
    plan.text = apply(source, chosen)
    plan.applied = [c.finding for c in chosen]
    for c in verified:
        if c not in chosen and c.finding.patch is not None:
            c.finding.patch.note += (
                "; not applied with the others by --fix (they were not verified together): run --fix again"
            )


#: How the "no mechanical fix" note names a finding's variant.
_VARIANTS = {
    "build": "a value computed once in build()",
    "indices": "integer ids used to select or look up",
    "relative": "the loss uses a copy of the watched tensor",
}


def _merge(candidate: Candidate, follow: list[Candidate]) -> Candidate:
    """``candidate`` with the edits of its follow-up patches."""
    merged = Candidate(
        candidate.finding,
        candidate.kind,
        "; ".join([candidate.title] + [f"{f.title} ({f.finding.code}, which the patch reveals)" for f in follow]),
        list(candidate.edits),
        dict(candidate.before),
        dict(candidate.after),
    )
    for f in follow:
        merged.edits += f.edits
        for key, (node, stmts) in f.before.items():
            merged.before.setdefault(key, (node, []))[1].extend(stmts)
        for key, (node, stmts) in f.after.items():
            merged.after.setdefault(key, (node, []))[1].extend(stmts)
    return merged


def _follow_ups(source: Source, old: str, new: str, findings: list[Finding], display: str) -> list[Candidate]:
    """Patches for the findings a patch revealed, located in the *original* tree: each
    finding's lines are mapped back through the patch (a line moved into the tape is the
    same line, indented deeper); [] when any of them has none."""
    back = {n: o for o, n in line_map(old, new).items()}
    old_lines, new_lines = old.splitlines(), new.splitlines()
    out = []
    for finding in findings:
        if finding.path != display:
            return []
        first, last = back.get(finding.line), back.get(finding.end_line or finding.line)
        if first is None or last is None:
            return []
        shift = _indent(new_lines[finding.line - 1]) - _indent(old_lines[first - 1])
        end_shift = _indent(new_lines[(finding.end_line or finding.line) - 1]) - _indent(old_lines[last - 1])
        moved = dataclasses.replace(
            finding,
            line=first,
            column=finding.column - shift,
            end_line=last,
            end_column=finding.end_column - end_shift if finding.end_column else None,
        )
        found = registry.candidates(source, moved)
        if not found:
            return []
        out.append(found[0])
    return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _verified(candidate: Candidate, source: Source, plan: FilePlan, together: list[Candidate], static: bool) -> None:
    finding = candidate.finding
    diff = unified_diff(plan.old_text, apply(source, [candidate]), plan.target.display)
    how = "the static engine read the patched copy" if static else "gradcheck ran the patched copy"
    note = f"{candidate.title}. Verified: {how}"
    if together:
        others = ", ".join(f"{o.finding.code} at line {o.finding.line}" for o in together)
        note += f" (with the patch{'es' if len(together) > 1 else ''} for {others} too)"
    note += f": this {finding.code} is gone and nothing new is reported"
    finding.patch = Patch(diff=diff, verified=True, note=note)
