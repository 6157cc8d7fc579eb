"""The program manifests: ``programs.toml`` (third-party) and ``smoke_programs/smoke.toml`` (ours)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomllib

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs.toml"
SMOKE = HERE / "smoke_programs" / "smoke.toml"


@dataclass
class Program:
    """One training program: where its code is, and the edits that make it run here."""

    name: str
    shapes: list[str]
    repo: str | None = None  # owner/name of a public repository
    path: str = ""
    commit: str | None = None
    licence: str = ""
    local: Path | None = None  # our own programs (the smoke subset)
    notebook: bool = False
    edits: list[dict[str, Any]] = field(default_factory=list)
    keras: str = "keras3"  # or "tf_keras"
    timeout: float = 90.0
    env: dict[str, str] = field(default_factory=dict)
    #: trains in more than one phase: the probe runs on past the first repeated step and
    #: records every training's first step, with its phase (``GCM_PROBE_PHASES``)
    phases: bool = False
    #: real bugs of the original, each confirmed by a public report (issue 36: "record it as
    #: the original's expected finding"): ``{code = "GC203", report = "https://..."}``. A
    #: finding on the original with one of these codes is its expected finding, not a false alarm.
    known_bugs: list[dict[str, str]] = field(default_factory=list)
    #: the repository's other files the program imports (its own modules), by their path in the
    #: repository: read from the same commit at run time and written beside the program, under
    #: their path relative to the program's folder, so that ``from unet_model import ...`` finds them;
    #: ``{path = ..., edits = [...]}`` for a module that needs edits too (its dataset download)
    files: list[Any] = field(default_factory=list)


def load(path: Path = PROGRAMS) -> list[Program]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = []
    for p in data.get("program", []):
        p = dict(p)
        if "local" in p:
            p["local"] = (path.parent / p["local"]).resolve()
        p.setdefault("notebook", str(p.get("path", "")).endswith(".ipynb"))
        if p.get("phases"):
            p["env"] = {**p.get("env", {}), "GCM_PROBE_PHASES": "1"}
        out.append(Program(**p))
    names = [p.name for p in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"{path}: duplicate program names {sorted(dup)}")
    return out
