"""Tables: per operator, per program, the operator x program grid, precision, what was dropped."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from benchmarks.mutation import score
from benchmarks.mutation.operators import Operator

SCORES = ("found", "code", "line", "all")


def _blank() -> dict[str, int]:
    return {
        "sites": 0,
        "valid": 0,
        "equivalent": 0,
        "no-effect": 0,
        "crashed": 0,
        "other-phase": 0,
        **dict.fromkeys(SCORES, 0),
        "cannot_check": 0,
    }


def summarize(states: list[Any], operators: list[Operator]) -> dict[str, Any]:
    per_op: dict[str, dict[str, int]] = {op.name: _blank() for op in operators}
    per_prog: dict[str, dict[str, Any]] = {}
    grid: dict[str, dict[str, str]] = defaultdict(dict)
    twins = Counter()
    twin_flagged: list[dict[str, Any]] = []
    bad_twins: list[dict[str, Any]] = []
    originals_flagged: list[dict[str, Any]] = []
    originals_known_bug: list[dict[str, Any]] = []
    not_checkable: list[dict[str, Any]] = []
    skipped = []
    misses: list[dict[str, Any]] = []
    # valid mutants by the training phase their bug shows in (the probe's, GCM_PROBE_PHASES)
    by_phase: dict[str, dict[str, int]] = {b: _phase_blank() for b in PHASES}
    prog_phase: dict[str, dict[str, dict[str, int]]] = {}
    for st in states:
        name = st.program.name
        if st.skipped:
            skipped.append({"program": name, "why": st.skipped})
            continue
        o = st.original
        if not o.verdict:  # not run yet (a checkpoint during the run)
            continue
        row = {
            "shapes": ",".join(st.program.shapes),
            **_blank(),
            "original_findings": o.verdict["findings"],
            "twins": 0,
            "twin_findings": 0,
            "bad_twins": 0,
            "census": sum(st.census.values()),
        }
        for opn, n in st.census.items():
            per_op[opn]["census"] = per_op[opn].get("census", 0) + n
        if o.verdict["findings"]:
            known = {bug["code"] for bug in st.program.known_bugs}
            record = {"program": name, "findings": o.gradcheck["findings"]}
            if known and all(f["code"] in known for f in o.gradcheck["findings"]):
                originals_known_bug.append(record)  # its documented real bug, found
            else:
                originals_flagged.append(record)
        if o.verdict["cannot_check"]:
            not_checkable.append(
                {
                    "program": name,
                    "status": o.gradcheck.get("status"),
                    "error": (o.gradcheck.get("error") or "")[:300],
                    "codes": [f["code"] for f in o.gradcheck.get("findings", [])],
                }
            )
        cells: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for j in st.jobs:
            v = j.verdict
            if not v:
                continue
            if j.kind == "twin":
                if v.get("class") == "bad-twin":
                    row["bad_twins"] += 1
                    bad_twins.append(
                        {
                            "program": name,
                            "operator": j.operator,
                            "diff": {k: v["diff"][k] for k in ("starved", "nonfinite", "crashed")},
                            "crash": (v["diff"].get("crash") or {}).get("message", "")[:200],
                        }
                    )
                elif v.get("class") == "twin":
                    twins["twins"] += 1
                    row["twins"] += 1
                    if v.get("findings"):
                        twins["flagged"] += 1
                        row["twin_findings"] += v["findings"]
                        twin_flagged.append(
                            {"program": name, "operator": j.operator, "findings": j.gradcheck["findings"]}
                        )
                continue
            rec = per_op[j.operator]
            for r in (rec, row):
                r["sites"] += 1
                r[v["class"]] += 1
            if v["class"] != "valid":
                continue
            cells[j.operator][1] += 1
            bucket = score.phase_bucket(v.get("phase"))
            pp = prog_phase.setdefault(name, {b: _phase_blank() for b in PHASES})
            for r in (by_phase[bucket], pp[bucket]):
                r["valid"] += 1
                for sc in SCORES:
                    r[sc] += int(v[sc])
                r["cannot_check"] += int(v.get("cannot_check", False))
            for r in (rec, row):
                for s in SCORES:
                    r[s] += int(v[s])
                r["cannot_check"] += int(v.get("cannot_check", False))
            cells[j.operator][0] += int(v["all"])
            if not v["all"]:
                misses.append(
                    {
                        "program": name,
                        "operator": j.operator,
                        "site": j.site,
                        "phase": v.get("phase"),
                        "detail": j.detail,
                        "expected": {"codes": list(j.codes), "lines": j.lines, "starved": v["diff"]["starved"][:6]},
                        "got": [
                            {k: f[k] for k in ("code", "line")} | {"variables": f["variables"][:4]}
                            for f in (j.gradcheck or {}).get("findings", [])
                        ],
                    }
                )
        for opn, (a, n) in cells.items():
            grid[name][opn] = f"{a}/{n}"
        per_prog[name] = row
    total = {**_blank(), "census": 0}
    for rec in per_op.values():
        for k in total:
            total[k] += rec.get(k, 0)
    return {
        "operators": per_op,
        "programs": per_prog,
        "grid": dict(grid),
        "phases": by_phase,
        "program_phases": prog_phase,
        "total": total,
        "codes": {op.name: list(op.codes) for op in operators},
        "precision": {
            "originals": len(per_prog),
            "originals_flagged": originals_flagged,
            "originals_known_bug": originals_known_bug,
            "twins": twins["twins"],
            "twins_flagged": twin_flagged,
            "bad_twins": bad_twins,
        },
        "not_checkable": not_checkable,
        "skipped": skipped,
        "misses": misses,
    }


PHASES = ("1", ">=2")


def _phase_blank() -> dict[str, int]:
    return {"valid": 0, **dict.fromkeys(SCORES, 0), "cannot_check": 0}


def phase_rows(s: dict[str, Any]) -> list[list[str]]:
    """Per program and phase, then the totals: valid mutants and how many gradcheck got right."""
    rows = [["program", "phase", "valid", "found", "code right", "line right", "all right", "cannot check"]]
    items = [(name, by) for name, by in s.get("program_phases", {}).items()]
    items.append(("**total**", s.get("phases", {})))
    for name, by in items:
        for b in PHASES:
            r = by.get(b)
            if not r or (not r["valid"] and name != "**total**"):
                continue
            n = r["valid"]
            rows.append([name, b, str(n), *(_pct(r[k], n) for k in SCORES), str(r["cannot_check"])])
    return rows


def _pct(a: int, n: int) -> str:
    return f"{a} ({100 * a / n:.0f}%)" if n else "-"


def _table(rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    out += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return out


def render_markdown(s: dict[str, Any]) -> str:
    lines = [
        f"Mode: **{s.get('mode', 'trace')}**. Command: `{s.get('command', '')}` ({s.get('elapsed_s', '?')} s).",
        "",
    ]
    head = [
        "operator",
        "codes",
        "all sites",
        "run",
        "equivalent",
        "no effect",
        "crashed",
        "other phase",
        "valid",
        "found",
        "code right",
        "line right",
        "all right",
    ]
    rows = [head]
    for name, r in [*s["operators"].items(), ("**total**", s["total"])]:
        n = r["valid"]
        rows.append(
            [
                name,
                ",".join(s["codes"].get(name, [])),
                str(r.get("census", 0)),
                str(r["sites"]),
                str(r["equivalent"]),
                str(r["no-effect"]),
                str(r["crashed"]),
                str(r["other-phase"]),
                str(n),
                *(_pct(r[k], n) for k in SCORES),
            ]
        )
    lines += ["### Per operator", "", *_table(rows), ""]
    rows = [
        [
            "program",
            "shapes",
            "all sites",
            "run",
            "valid",
            "found",
            "code right",
            "line right",
            "all right",
            "findings on original",
            "twins (findings)",
            "bad twins",
        ]
    ]
    for name, r in s["programs"].items():
        n = r["valid"]
        rows.append(
            [
                name,
                r["shapes"],
                str(r["census"]),
                str(r["sites"]),
                str(n),
                *(_pct(r[k], n) for k in SCORES),
                str(r["original_findings"]),
                f"{r['twins']} ({r['twin_findings']})",
                str(r["bad_twins"]),
            ]
        )
    lines += ["### Per program", "", *_table(rows), ""]
    if s.get("program_phases"):
        lines += ["### Per training phase (valid mutants by the phase their bug shows in)", ""]
        lines += [*_table(phase_rows(s)), ""]
    ops = [o for o in s["operators"] if s["operators"][o]["valid"]]
    rows = [["program", *ops]]
    for name in s["programs"]:
        rows.append([name, *(s["grid"].get(name, {}).get(o, "·") for o in ops)])
    lines += ["### Grid (all right / valid mutants; · = no valid mutant)", "", *_table(rows), ""]
    p = s["precision"]
    lines += [
        "### Precision",
        "",
        f"- originals with a finding: {len(p['originals_flagged'])} of {p['originals']}",
        f"- twins with a finding: {len(p['twins_flagged'])} of {p['twins']} (bad twins, not scored: {len(p['bad_twins'])})",
    ]
    for f in p["originals_flagged"]:
        lines.append(f"  - original `{f['program']}`: " + ", ".join(f"{x['code']}@{x['line']}" for x in f["findings"]))
    for f in p.get("originals_known_bug", []):
        lines.append(
            f"  - original `{f['program']}`, its documented real bug (manifest `known_bugs`), found: "
            + ", ".join(f"{x['code']}@{x['line']}" for x in f["findings"])
        )
    for f in p["twins_flagged"]:
        lines.append(
            f"  - twin `{f['program']}` / `{f['operator']}`: "
            + ", ".join(f"{x['code']}@{x['line']}" for x in f["findings"])
        )
    lines.append("")
    if s["not_checkable"]:
        lines += ["### Originals gradcheck cannot check (plain python runs them)", ""]
        lines += [
            f"- `{x['program']}`: {x['status']} {','.join(x['codes'])} {x['error'][:200]}" for x in s["not_checkable"]
        ]
        lines.append("")
    if s["skipped"]:
        lines += ["### Programs skipped", ""] + [f"- `{x['program']}`: {x['why'][:300]}" for x in s["skipped"]] + [""]
    return "\n".join(lines)


def render_text(s: dict[str, Any]) -> str:
    out = [
        f"{'operator':26} {'sites':>5} {'equiv':>5} {'noeff':>5} {'crash':>5} {'valid':>5} "
        f"{'found':>5} {'code':>5} {'line':>5} {'all':>5}"
    ]
    for name, r in [*s["operators"].items(), ("TOTAL", s["total"])]:
        out.append(
            f"{name:26} {r['sites']:5} {r['equivalent']:5} {r['no-effect']:5} {r['crashed']:5} {r['valid']:5} "
            f"{r['found']:5} {r['code']:5} {r['line']:5} {r['all']:5}"
        )
    for b in PHASES:
        r = s.get("phases", {}).get(b)
        if r and r["valid"]:
            out.append(
                f"{'phase ' + b:26} {'':5} {'':5} {'':5} {'':5} {r['valid']:5} "
                f"{r['found']:5} {r['code']:5} {r['line']:5} {r['all']:5}"
            )
    p = s["precision"]
    out.append(
        f"originals flagged: {len(p['originals_flagged'])}/{p['originals']}   twins flagged: "
        f"{len(p['twins_flagged'])}/{p['twins']}   bad twins: {len(p['bad_twins'])}   "
        f"not checkable: {len(s['not_checkable'])}   skipped: {len(s['skipped'])}"
    )
    return "\n".join(out)


def records(states: list[Any]) -> list[dict[str, Any]]:
    out = []
    for st in states:
        for j in ([st.original] if st.original else []) + st.jobs:
            out.append(
                {
                    "program": j.program,
                    "kind": j.kind,
                    "operator": j.operator,
                    "site": j.site,
                    "file": str(j.path),
                    "detail": j.detail,
                    "expected_codes": list(j.codes),
                    "expected_lines": j.lines,
                    "verdict": j.verdict,
                    "gradcheck": j.gradcheck,
                    "probe": {k: (j.probe or {}).get(k) for k in ("records", "traced", "crash", "exit", "returncode")},
                }
            )
    return out
