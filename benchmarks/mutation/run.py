"""Running one file: the probe (plain python + ``probe/sitecustomize.py``) and gradcheck (CLI)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.mutation.probe import PROBE_DIR

PROBE_CACHE = Path(os.environ.get("GRADCHECK_MUTATION_PROBES", "~/.cache/gradcheck/mutation-probes")).expanduser()
ROOT = Path(__file__).resolve().parents[2]
#: the checkout whose ``gradcheck`` is scored (``--engine``): this one unless told, so that one
#: benchmark can measure an older engine (a worktree of an earlier commit) on the same mutants
ENGINE = ROOT


@dataclass
class Job:
    """One file to run: an original, a mutant or a twin."""

    program: str
    kind: str  # "original" | "mutant" | "twin"
    operator: str
    site: int
    path: Path
    lines: list[int] = field(default_factory=list)
    codes: tuple[str, ...] = ()
    detail: str = ""
    timeout: float = 90.0
    env: dict[str, str] = field(default_factory=dict)
    probe: dict[str, Any] | None = None
    gradcheck: dict[str, Any] | None = None
    verdict: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.program}/{self.kind}/{self.operator}/{self.site}"


def _child_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRADCHECK_STRICT", "GCM_", "PYTEST"))}
    env.pop("PYTHONPATH", None)
    env.update({"TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONHASHSEED": "0", "MPLBACKEND": "Agg", "CUDA_VISIBLE_DEVICES": ""})
    env.update(extra)
    return env


def probe(job: Job, use_cache: bool = True, cached_only: bool = False) -> dict[str, Any] | None:
    """TensorFlow's own verdict on ``job.path``: gradient records, crash, exit reason.

    ``cached_only``: None unless an earlier run left it in the cache (a ``--static`` run that
    reuses a trace run's ground truth without running TensorFlow again)."""
    text = job.path.read_text(encoding="utf-8")
    digest = hashlib.sha256(
        (text + json.dumps(job.env, sort_keys=True) + (PROBE_DIR / "sitecustomize.py").read_text()).encode()
    ).hexdigest()[:24]
    cached = PROBE_CACHE / f"{digest}.json"
    if use_cache and cached.is_file():
        return json.loads(cached.read_text(encoding="utf-8"))
    if cached_only:
        return None
    out = job.path.with_suffix(".probe.json")
    out.unlink(missing_ok=True)
    env = _child_env(
        {**job.env, "PYTHONPATH": str(PROBE_DIR), "GCM_PROBE_OUT": str(out), "GCM_PROBE_PROGRAM": str(job.path)}
    )
    try:
        proc = subprocess.run(
            [sys.executable, job.path.name],
            cwd=job.path.parent,
            env=env,
            capture_output=True,
            text=True,
            timeout=job.timeout,
        )
        rc, tail = proc.returncode, proc.stderr[-1500:]
    except subprocess.TimeoutExpired:
        rc, tail = None, "timeout"
    result = (
        json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {"records": [], "traced": [], "crash": None}
    )
    result.update({"returncode": rc, "stderr": tail})
    if rc is not None and rc >= 0:  # not cached: timeouts and signals (a busy or disturbed machine)
        PROBE_CACHE.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps(result), encoding="utf-8")
    return result


def gradcheck(job: Job, static: bool = False) -> dict[str, Any]:
    """gradcheck's report on ``job.path``, through its command line only."""
    cmd = [sys.executable, "-m", "gradcheck", "--format", "json", "-q", "--no-color", "--timeout", str(job.timeout)]
    if static:
        cmd.append("--static")
    # seeded as under the probe (``GCM_SEED_ONLY``: seeds only, records nothing), so that
    # gradcheck judges the run whose gradients are the ground truth
    env = _child_env({**job.env, "PYTHONPATH": f"{PROBE_DIR}{os.pathsep}{ENGINE}", "GCM_SEED_ONLY": "1"})
    try:
        proc = subprocess.run(
            [*cmd, job.path.name],
            cwd=job.path.parent,
            env=env,
            capture_output=True,
            text=True,
            timeout=job.timeout + 60,
        )
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "findings": [], "error": "gradcheck did not return"}
    try:
        report = json.loads(proc.stdout)
        f = report["files"][0]
    except (ValueError, KeyError, IndexError):
        return {"status": "error", "findings": [], "error": (proc.stdout + proc.stderr)[-1500:]}
    findings = [
        {
            "code": x.get("code"),
            "line": x.get("line"),
            "variables": x.get("variables") or [],
            "message": x.get("message", "")[:300],
        }
        for x in f.get("findings", [])
    ]
    err = f.get("error")
    if err is not None and not isinstance(err, str):
        err = json.dumps(err)
    return {"status": f.get("status"), "error": (err or "")[:1500] or None, "findings": findings}
