"""The benchmark: adapt each program, generate its mutants and twins, run probes and gradcheck
in parallel, and score every mutant against TensorFlow's ground truth."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.mutation import adapt as adapt_mod
from benchmarks.mutation import run, sampling, score, sources
from benchmarks.mutation.manifest import Program
from benchmarks.mutation.operators import OPERATORS, Mutation, Operator


@dataclass
class ProgramState:
    program: Program
    source: str | None = None
    skipped: str | None = None  # why the program is not in the figures
    original: run.Job | None = None
    jobs: list[run.Job] = field(default_factory=list)
    census: dict[str, int] = field(default_factory=dict)  # every site, run or not
    #: a sampled operator's further sites, by the key of the mutant now running: tried in turn
    #: while TensorFlow finds the mutant before them not valid (``--max-sites`` with ``--sample``)
    next_sites: dict[str, list[Mutation]] = field(default_factory=dict)


def prepare(program: Program, roots: list[Path], workdir: Path) -> ProgramState:
    """Read and adapt the program, and write it out as ``original.py`` in its own directory."""
    st = ProgramState(program)
    try:
        text = sources.read(program, roots)
    except sources.SourceUnavailable as e:
        st.skipped = f"source unavailable: {e}"
        return st
    try:
        if program.notebook:
            text = adapt_mod.notebook_to_script(text)
        st.source = adapt_mod.adapt(text, program.edits)
        compile(st.source, program.name, "exec")
    except (adapt_mod.AdaptError, SyntaxError, ValueError) as e:
        st.skipped = f"adaptation failed: {e}"
        return st
    d = workdir / program.name
    d.mkdir(parents=True, exist_ok=True)
    try:
        for rel, text in sources.sibling_files(program, roots).items():
            (d / rel).parent.mkdir(parents=True, exist_ok=True)
            (d / rel).write_text(text, encoding="utf-8")
    except sources.SourceUnavailable as e:
        st.skipped = f"source unavailable: {e}"
        return st
    path = d / "original.py"
    path.write_text(st.source, encoding="utf-8")
    st.original = run.Job(program.name, "original", "-", 0, path, timeout=program.timeout, env=program.env)
    return st


def make_jobs(
    st: ProgramState,
    operators: list[Operator],
    twins_per_operator: int = 1,
    max_sites: int | None = None,
    sample: int | None = None,
    sample_twins: int | None = None,
    rotation: int = 0,
    ran: set[int] | None = None,
) -> None:
    """One job per mutant site and per twin, each in its own file beside ``original.py``.

    Every site is counted (``st.census``). With ``sample``, only that many operators of the
    program are sampled, the two families in turn, each family's order rotated by the
    program's own offset (``sampling.rotation``), so a sampled run still spreads over every
    operator; each sampled
    operator runs one mutant, at the first site the original reached (``ran``: its lines that
    ran, from the probe; ``sampling``), and keeps its next ``max_sites - 1`` sites in
    ``st.next_sites`` for when TensorFlow finds a mutant not valid. Likewise ``sample_twins``.
    """
    assert st.source is not None and st.original is not None
    if sample is None:
        muts = {op.name: op.mutants(st.source) for op in operators}
        st.census = {name: len(ms) for name, ms in muts.items()}
        if PHASE is not None:  # only the sites of the trainings asked for (then the probe decides)
            muts = {name: [m for m in ms if _in_phase(st.source, m)] for name, ms in muts.items()}
    else:  # count every site, but write only the mutants that will run
        st.census = {op.name: op.count_sites(st.source) for op in operators}
    order = operators[rotation % len(operators) :] + operators[: rotation % len(operators)] if operators else []
    chosen: list[tuple[str, Operator, Mutation]] = []
    if sample is None:
        chosen += [("mutant", op, m) for op in operators for m in muts[op.name][:max_sites]]
        twin_ops = order if sample_twins is None else [op for op in order if st.census[op.name]][:sample_twins]
        for op in twin_ops:
            chosen += [("twin", op, t) for t in op.twins(st.source, twins_per_operator)]
    else:
        ran = ran or set()
        picked = sampling.by_family(operators, sampling.rotation(st.program.name), lambda op: st.census[op.name])[
            :sample
        ]
        for op in picked:
            sites = op.mutants(st.source, limit=SITE_SCAN)
            if PHASE is not None:
                sites = [m for m in sites if _in_phase(st.source, m)]
            sites = sampling.ranked(sites, st.source, ran)[: max(max_sites or 1, 1)]
            if sites:
                chosen.append(("mutant", op, sites[0]))
                st.next_sites[f"{st.program.name}/mutant/{op.name}/{sites[0].site}"] = sites[1:]
        twin_ops = order if sample_twins is None else [op for op in order if st.census[op.name]][:sample_twins]
        for op in twin_ops:
            twins = sampling.ranked(op.twins(st.source, SITE_SCAN), st.source, ran)
            chosen += [("twin", op, t) for t in twins[:twins_per_operator]]
    for kind, op, m in chosen:
        st.jobs.append(_job(st, kind, op, m))


#: how many of an operator's sites a sampled run ranks (those the run reached first)
SITE_SCAN = 24


def _job(st: ProgramState, kind: str, op: Operator, m: Mutation) -> run.Job:
    """The mutant's (or twin's) file, written beside ``original.py``, and its job."""
    assert st.original is not None
    path = st.original.path.parent / f"{kind}_{op.name}_{m.site}.py"
    path.write_text(m.source, encoding="utf-8")
    return run.Job(
        st.program.name, kind, op.name, m.site, path, m.lines, op.codes, m.detail, st.program.timeout, st.program.env
    )


def next_attempt(st: ProgramState, job: run.Job) -> run.Job | None:
    """The sampled operator's next site when TensorFlow found ``job`` not valid (None: none left,
    or the mutant was valid, or its truth is unknown)."""
    rest = st.next_sites.pop(job.key, None)
    cls = job.verdict.get("class")
    if not rest or cls in (None, "valid"):
        return None
    nxt = _job(st, "mutant", OPERATORS[job.operator], rest[0])
    st.next_sites[nxt.key] = rest[1:]
    st.jobs.append(nxt)
    return nxt


CACHED_ONLY = False  # set by --cached-truth: never run a probe, use only cached ground truth
#: set by --phase: score only the mutants whose bug shows first in this training phase
#: ("first": phase 1, "later": phase 2 or later; None: all); the others are "other-phase"
PHASE: str | None = None


def entry_ordinal(source: str, lines: list[int]) -> int:
    """The ordinal (1-based, in source order) of the training entry point a site belongs to:
    the first ``model.fit`` / ``tape.gradient`` / ``minimize`` call at or after the site's
    last line (``gradcheck.trainings``). A guess from the text, used only to choose which
    sites to mutate: the phase a mutant is scored in is the probe's."""
    from gradcheck.trainings import entry_points  # ast only, no TensorFlow

    entries = _ENTRIES.get(source)
    if entries is None:
        entries = _ENTRIES[source] = [e.end_line for e in entry_points(source)]
    line = max(lines) if lines else 0
    return next((i for i, end in enumerate(entries, 1) if end >= line), max(len(entries), 1))


_ENTRIES: dict[str, list[int]] = {}


def _in_phase(source: str, m: Mutation) -> bool:
    """The mutant's site is in the trainings ``--phase`` asks for, by its entry point's ordinal."""
    n = entry_ordinal(source, m.lines)
    return n >= 2 if PHASE == "later" else n == 1


def _selected(phase: int | None) -> bool:
    if PHASE is None:
        return True
    return (score.phase_bucket(phase) == ">=2") == (PHASE == "later")


def _run_original(job: run.Job, static: bool) -> None:
    job.probe = run.probe(job, cached_only=CACHED_ONLY)
    if job.probe is None:
        job.probe = {"records": [], "crash": {"type": "no cached ground truth", "message": ""}}
    job.gradcheck = run.gradcheck(job, static)
    job.verdict = {
        "runs": score.runs(job.probe),
        "findings": len(score.real_findings(job.gradcheck)),
        # a GC9xx is a failure only where plain python gets through: an original that crashes
        # after its first step under python too (a Keras 3 incompatibility) is reported as such
        "cannot_check": score.cannot_check(job.gradcheck) and not job.probe.get("crash"),
    }


def _run_derived(job: run.Job, original: run.Job, static: bool) -> None:
    try:
        _derived(job, original, static)
    except Exception as e:  # noqa: BLE001 - one broken job must not lose the whole run
        job.verdict = {
            "class": "crashed",
            "diff": {"starved": [], "nonfinite": [], "crashed": True, "crash": {"message": f"benchmark error: {e!r}"}},
        }


def _derived(job: run.Job, original: run.Job, static: bool) -> None:
    op = OPERATORS[job.operator]
    job.probe = run.probe(job, cached_only=CACHED_ONLY)
    if job.probe is None:  # not run: no cached ground truth
        return
    diff = score.compare(original.probe or {}, job.probe)
    v: dict[str, Any] = {"diff": diff, "phase": diff.get("phase")}
    if job.kind == "mutant":
        v["class"] = score.classify(op.effect, op.crash_ok, diff)
        if v["class"] == "valid" and op.live_stop and not score.stop_was_live(original.probe or {}, job.lines):
            v["class"] = "equivalent"  # the removed stop held back no gradient
        if v["class"] == "valid" and not _selected(diff.get("phase")):
            v["class"] = "other-phase"  # a valid mutant, in a training --phase leaves out
        if v["class"] == "valid":
            job.gradcheck = run.gradcheck(job, static)
            v.update(score.score(job.codes, job.lines, diff, job.gradcheck, names_variables=not static))
            v["cannot_check"] = score.cannot_check(job.gradcheck)
    else:
        v["class"] = "twin" if score.twin_ok(diff) else "bad-twin"
        if v["class"] == "twin":
            job.gradcheck = run.gradcheck(job, static)
            v["findings"] = len(score.real_findings(job.gradcheck))
            v["cannot_check"] = score.cannot_check(job.gradcheck)
    job.verdict = v


def _restore(job: run.Job, resume: dict[str, dict[str, Any]]) -> bool:
    """Take the job's outcome from an earlier run's record, if it has one for the same file."""
    rec = resume.get(job.key)
    if not rec or not rec.get("verdict") or rec.get("detail") != job.detail:
        return False
    if Path(rec["file"]).is_file() and Path(rec["file"]).read_bytes() != job.path.read_bytes():
        return False  # the operator or the adaptation changed since: run it again
    job.verdict, job.gradcheck, job.probe = rec["verdict"], rec["gradcheck"], rec["probe"]
    return True


def benchmark(
    programs: list[Program],
    operators: list[Operator],
    roots: list[Path],
    jobs: int = 2,
    static: bool = False,
    workdir: Path | None = None,
    progress: Callable[[str, int], Any] | None = None,
    log: Callable[[str], None] = print,
    max_sites: int | None = None,
    twins: int = 1,
    sample: int | None = None,
    sample_twins: int | None = None,
    checkpoint: Callable[[list[ProgramState]], None] | None = None,
    resume: dict[str, dict[str, Any]] | None = None,
) -> list[ProgramState]:
    """Run everything; ``progress(kind, n)`` is told the totals ("total", n) and each step ("advance", 1).

    ``resume``: records of an earlier (stopped) run with the same settings, by job key; a job
    with a verdict there is not run again."""
    resume = resume or {}
    workdir = workdir or Path(tempfile.mkdtemp(prefix="gradcheck-mutation-"))
    states = [prepare(p, roots, workdir) for p in programs]
    for st in states:
        if st.skipped:
            log(f"skip {st.program.name}: {st.skipped}")
    live = [st for st in states if st.original]
    if progress:
        progress("total", len(live))
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        # The originals run while the mutants are written (libcst is not fast); a sampled run
        # writes a program's mutants once its original has run (the sites it reached go first).
        futs = {
            st.program.name: pool.submit(_run_original, st.original, static)
            for st in live
            if not _restore(st.original, resume)
        }
        rotation = {st.program.name: i * 3 for i, st in enumerate(live)}
        if sample is None:
            for st in live:
                make_jobs(st, operators, twins, max_sites, sample, sample_twins, rotation[st.program.name])
                if progress:
                    progress("more", len(st.jobs))
        derived: dict[Future, tuple[ProgramState, run.Job]] = {}

        def submit(st: ProgramState, job: run.Job) -> None:
            """Run the job, or take it from ``resume``; a not-valid sampled mutant's next site follows."""
            while job is not None and _restore(job, resume):
                if progress:
                    progress("advance", 1)
                job = next_attempt(st, job)
                if job is not None and progress:
                    progress("more", 1)
            if job is not None:
                derived[pool.submit(_run_derived, job, st.original, static)] = (st, job)

        for st in live:
            if st.program.name in futs:
                futs[st.program.name].result()
            if progress:
                progress("advance", 1)
            assert st.original is not None
            if sample is not None and st.original.verdict["runs"]:
                ran = set((st.original.probe or {}).get("lines") or [])
                make_jobs(st, operators, twins, max_sites, sample, sample_twins, rotation[st.program.name], ran)
                if progress:
                    progress("more", len(st.jobs))
            if not st.original.verdict["runs"]:
                probe = st.original.probe or {}
                crash = probe.get("crash") or {}
                why = f"{crash.get('type', '')}: {crash.get('message', probe.get('stderr', ''))[:300]}"
                st.skipped = f"does not reach a gradient under python ({why})"
                log(f"skip {st.program.name}: {st.skipped}")
                if progress:
                    progress("advance", len(st.jobs))
                continue
            for j in list(st.jobs):
                submit(st, j)
        done_count = 0
        while derived:
            finished, _ = wait(list(derived), return_when=FIRST_COMPLETED)
            for fut in finished:
                st, job = derived.pop(fut)
                fut.result()
                if progress:
                    progress("advance", 1)
                nxt = next_attempt(st, job)
                if nxt is not None:
                    if progress:
                        progress("more", 1)
                    submit(st, nxt)
                done_count += 1
                if checkpoint:  # a long run can be stopped without losing what it measured
                    checkpoint(states)
    return states
