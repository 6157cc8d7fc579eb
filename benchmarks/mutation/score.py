"""Ground truth from two probes (original vs mutant), and the score of gradcheck's findings."""

from __future__ import annotations

import math
import re
from typing import Any

STARVED = {"none", "zero"}


def _records(p: dict[str, Any]) -> list[dict[str, Any]]:
    return p.get("records") or p.get("traced") or []


def _traced_after(missing: list[dict[str, Any]], done: list[dict[str, Any]], mut: dict[str, Any]) -> list:
    """A phased mutant that stopped before some training's gradients ran (a ``tf.function``
    step that raises at trace time, e.g. on all-None gradients): what its traces showed of
    them, in order. The traced requests (one per distinct sources, retraces folded) past those
    whose graph did run (``graph`` records) stand for the missing ones. A gradient the trace
    cannot value ("?") keeps the original's status, so only the ``None`` it knew count."""
    distinct: list[dict[str, Any]] = []
    seen: set[tuple[str, ...]] = set()
    for t in mut.get("traced") or []:
        names = tuple(s["name"] for s in t["sources"])
        if names not in seen:
            seen.add(names)
            distinct.append(t)
    ran = sum(1 for r in done if r.get("graph"))
    out = []
    for t, o in zip(distinct[ran:], missing, strict=False):
        before = {s["name"]: s for s in o["sources"]}
        sources = [
            {**s, "status": (before.get(s["name"]) or {}).get("status", "ok") if s["status"] == "?" else s["status"]}
            | {"norm": None}
            for s in t["sources"]
        ]
        out.append({"line": t.get("line"), "sources": sources})
    return out


def runs(p: dict[str, Any]) -> bool:
    """The program reached at least one gradient call under plain python."""
    return bool(_records(p))


def compare(orig: dict[str, Any], mut: dict[str, Any]) -> dict[str, Any]:
    """What changed: sources newly None/zero (starved), newly non-finite, any change, a crash,
    and ``phase``: the training phase (the probe's, ``GCM_PROBE_PHASES``) of the first
    gradient call that changed (None when nothing did, or the probe kept no phases)."""
    a, b = _records(orig), _records(mut)
    phased = any("phase" in r for r in a)
    if phased and len(b) < len(a):
        b = b + _traced_after(a[len(b) :], b, mut)
    starved: list[str] = []
    nonfinite: list[str] = []
    loss_nonfinite = False  # a record whose loss is NaN/Inf where the original's was finite
    changed = False
    first: int | None = None  # index of the first record that changed
    for i, (ra, rb) in enumerate(zip(a, b, strict=False)):
        was = (changed, len(starved), len(nonfinite), loss_nonfinite)
        if rb.get("loss") == "nonfinite" and ra.get("loss") != "nonfinite":
            loss_nonfinite = changed = True
        na, nb = [s["name"] for s in ra["sources"]], [s["name"] for s in rb["sources"]]
        if na == nb:  # same sources: align by position (raw tf.Variables often share a name)
            pairs = list(zip(rb["sources"], ra["sources"], strict=True))
        else:
            changed = True
            before = {s["name"]: s for s in ra["sources"]}
            pairs = [(s, before.get(s["name"])) for s in rb["sources"]]
        for s, o in pairs:
            st, ost = s["status"], (o or {}).get("status")
            if st in STARVED and ost not in STARVED:
                starved.append(s["name"])
            if st == "nonfinite" and ost != "nonfinite":
                nonfinite.append(s["name"])
            if o is None or st != ost:
                changed = True
            elif s.get("norm") is not None and o.get("norm") is not None:
                x, y = s["norm"], o["norm"]
                if not (math.isfinite(x) and math.isfinite(y)) or abs(x - y) > 1e-4 * max(abs(x), abs(y)) + 1e-9:
                    changed = True
        if first is None and (changed, len(starved), len(nonfinite), loss_nonfinite) != was:
            first = i
    crashed = not b and mut.get("crash") is not None
    if phased and first is None and len(b) < len(a) and mut.get("crash") is not None:
        crashed = True  # a later training crashed before its first gradient, showing no bug
    if phased and len(b) < len(a) and first is None:
        changed, first = True, len(b)  # a training's gradient requests never came
    if crashed and first is None:
        first = min(len(a), len(b))
    if not b and not crashed:
        crashed = mut.get("returncode") not in (0, None) or mut.get("returncode") is None
    if b and not mut.get("records") and mut.get("crash") is not None and not (starved or nonfinite):
        # only traced, never run, then a crash (a graph that fails to build after its gradient
        # was traced): no gradient TensorFlow computed differs, and the traces knew no None
        crashed = True
        first = 0 if first is None else first
    ref = a[first] if first is not None and first < len(a) else None
    return {
        "phase": (ref or {}).get("phase") if phased else None,
        "starved": sorted(set(starved)),
        "nonfinite": sorted(set(nonfinite)),
        "loss_nonfinite": loss_nonfinite,
        "changed": changed or bool(starved) or bool(nonfinite),
        "crashed": crashed,
        "crash": mut.get("crash"),
        "timeout": mut.get("returncode") is None and not b,
    }


def phase_bucket(phase: int | None) -> str:
    """ "1" or ">=2": the training a mutant's bug shows in. A program probed without phases
    has one training as far as the benchmark knows."""
    return ">=2" if phase is not None and phase >= 2 else "1"


def classify(effect: str, crash_ok: bool, diff: dict[str, Any]) -> str:
    """'valid', 'equivalent' (no change TensorFlow can see), 'no-effect' (changed, but not the
    operator's effect), or 'crashed' (plain python fails, and that is not this bug's symptom)."""
    if diff["crashed"]:
        return "valid" if crash_ok and not diff["timeout"] and not _misfit(diff) else "crashed"
    if not diff["changed"]:
        return "equivalent"
    if effect == "starve":
        return "valid" if diff["starved"] else "no-effect"
    if effect == "zero":
        return "valid" if diff["starved"] else "no-effect"
    if effect == "nonfinite":
        return "valid" if diff["nonfinite"] else "no-effect"
    if effect == "nonfinite-loss":  # GC204: the loss itself NaN/Inf in the step TensorFlow ran
        return "valid" if diff.get("loss_nonfinite") else "no-effect"
    return "valid"  # "change"


#: crashes that say the operator's edit does not fit the program, not that the bug did what
#: it does: a name or module that is not there, an attribute missing on what is no tensor
#: (``.predict`` on a plain function; ``.numpy()`` failing on a symbolic tensor *is* the bug)
_MISFIT = ("NameError", "ImportError", "ModuleNotFoundError")
_MISSING_ATTRIBUTE = re.compile(r"'(\w+)' object has no attribute")


def _misfit(diff: dict[str, Any]) -> bool:
    crash = diff.get("crash") or {}
    kind, message = crash.get("type"), str(crash.get("message", ""))
    if kind in _MISFIT:
        return True
    missing = _MISSING_ATTRIBUTE.search(message) if kind == "AttributeError" else None
    return missing is not None and "Tensor" not in missing.group(1)


def stop_was_live(probe: dict[str, Any], lines: list[int]) -> bool:
    """The original's probe saw a ``tf.stop_gradient`` on one of ``lines`` stop a value some
    tape was recording (``stops``): removing it lets a gradient through. A stop on a value
    no tape records (a NumPy target, a previous policy passed in) changes nothing."""
    stops = probe.get("stops") or {}
    return any(stops.get(str(line)) for line in lines)


def twin_ok(diff: dict[str, Any]) -> bool:
    """A twin is good when TensorFlow shows no new None/zero/non-finite gradient and no crash."""
    return not (diff["crashed"] or diff["starved"] or diff["nonfinite"] or diff.get("loss_nonfinite"))


def real_findings(gc: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in gc.get("findings", []) if not str(f.get("code", "")).startswith("GC9")]


def cannot_check(gc: dict[str, Any]) -> bool:
    return gc.get("status") != "checked" or any(
        str(f.get("code", "")).startswith("GC9") for f in gc.get("findings", [])
    )


def score(
    codes: tuple[str, ...], lines: list[int], diff: dict[str, Any], gc: dict[str, Any], names_variables: bool = True
) -> dict[str, bool]:
    """found / code / line / all-right for one valid mutant. ``names_variables=False`` (the
    static engine, which never runs the program and cannot know a variable's run-time path)
    leaves out the test that every starved variable is named."""
    nonfinite = set(diff.get("nonfinite", []))
    # a second, true cause TensorFlow confirms (an all-zero input gradient whose penalty norm
    # is then sqrt(0): GC202 for exactly the variables the probe saw non-finite) is no error
    fs = [
        f
        for f in real_findings(gc)
        if f["code"] in codes or f["code"] != "GC202" or not f["variables"] or not set(f["variables"]) <= nonfinite
    ]
    found = any(f["code"] in codes for f in fs)
    code_right = bool(fs) and all(f["code"] in codes for f in fs)
    line_right = bool(fs) and all(f["line"] in lines for f in fs)
    named = set().union(*(set(f["variables"]) for f in fs)) if fs else set()
    starved = {n for n in diff.get("starved", []) if not n.startswith("<tensor")}
    all_right = bool(fs) and all(f["code"] in codes and f["line"] in lines for f in fs)
    all_right = all_right and (starved <= named or not names_variables)
    return {"found": found, "code": code_right, "line": line_right, "all": all_right}
