"""Where a program's code comes from: a directory of git mirrors or checkouts, or a cache
filled with ``git`` where the network allows. Nothing read here is stored in the repository."""

from __future__ import annotations

import os
import posixpath
import subprocess
from pathlib import Path

from benchmarks.mutation.manifest import Program

DEFAULT_CACHE = Path(os.environ.get("GRADCHECK_MUTATION_SOURCES", "~/.cache/gradcheck/mutation-sources")).expanduser()
#: A directory of bare mirrors laid out as owner+name/repo, searched too when set.
FETCH_MIRRORS = Path(os.environ.get("GRADCHECK_MIRRORS", "") or "/nonexistent")


class SourceUnavailable(Exception):
    """The program's code cannot be had here; the runner says so and skips the program."""


def _git_dirs(root: Path, repo: str) -> list[Path]:
    owner, name = repo.split("/")
    cands = []
    for base in (root / f"{owner}+{name}", root / name, root / owner / name):
        cands += [base / "repo", base / "repo" / ".git", base, base / ".git"]
    return [c for c in cands if (c / "HEAD").is_file() and (c / "objects").is_dir()]


def _trees(root: Path, repo: str) -> list[Path]:
    owner, name = repo.split("/")
    return [b for b in (root / f"{owner}+{name}", root / name, root / owner / name) if b.is_dir()]


def read(program: Program, roots: list[Path], fetch: bool = True, path: str | None = None) -> str:
    """The program's file (or the repository's file ``path``) at its commit, from the first root that has it."""
    if program.local is not None:
        if path is not None:  # our own programs' modules: beside them, as in the repository's folder
            return (program.local.parent / posixpath.relpath(path, posixpath.dirname(program.path) or ".")).read_text(
                encoding="utf-8"
            )
        return program.local.read_text(encoding="utf-8")
    assert program.repo and program.commit
    path = program.path if path is None else path
    errors = []
    for root in roots:
        for gd in _git_dirs(root, program.repo):
            proc = subprocess.run(
                ["git", "--git-dir", str(gd), "show", f"{program.commit}:{path}"],
                capture_output=True,
                text=True,
            )
            if proc.returncode == 0:
                return proc.stdout
            errors.append(f"{gd}: {proc.stderr.strip()[:200]}")
        for tree in _trees(root, program.repo):
            f = tree / path
            if f.is_file() and not (tree / "HEAD").is_file():
                return f.read_text(encoding="utf-8")
    if fetch:
        err = _clone(program.repo, program.commit)
        if err is None:
            return read(program, [DEFAULT_CACHE], fetch=False, path=path)
        errors.append(err)
    raise SourceUnavailable(f"{program.repo}@{program.commit[:10]}:{path} not found ({'; '.join(errors[-2:])})")


def sibling_files(program: Program, roots: list[Path]) -> dict[str, str]:
    """The program's ``files`` (its repository's own modules), by their path relative to the
    program's folder, read from the program's commit. An entry is a path, or ``{path, edits}``
    for a module that needs the edits a program gets (a dataset download it makes)."""
    from benchmarks.mutation import adapt  # libcst: only when a program has files

    here = posixpath.dirname(program.path)
    out = {}
    for entry in program.files:
        f, edits = (entry, []) if isinstance(entry, str) else (entry["path"], entry.get("edits", []))
        rel = posixpath.relpath(f, here or ".")
        if rel.startswith("../") or posixpath.isabs(rel):
            raise SourceUnavailable(f"{f}: not under the program's folder {here or '.'}")
        out[rel] = adapt.adapt(read(program, roots, path=f), edits)
    return out


_CLONE_FAILED: dict[str, str] = {}


def _clone(repo: str, commit: str) -> str | None:
    """Mirror ``repo`` into the cache (or fetch ``commit`` into it); an error text on failure."""
    if repo in _CLONE_FAILED:
        return _CLONE_FAILED[repo]
    dest = DEFAULT_CACHE / repo.replace("/", "+")
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    try:
        if not (dest / "HEAD").is_file():
            dest.parent.mkdir(parents=True, exist_ok=True)
            cmd = ["git", "clone", "--bare", "--filter=blob:none", f"https://github.com/{repo}.git", str(dest)]
        else:
            cmd = ["git", "--git-dir", str(dest), "fetch", "origin", commit]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        _CLONE_FAILED[repo] = f"git: {e}"
        return _CLONE_FAILED[repo]
    if proc.returncode != 0:
        _CLONE_FAILED[repo] = f"git clone/fetch failed: {proc.stderr.strip()[-200:]}"
        return _CLONE_FAILED[repo]
    return None


def default_roots(sources: Path | None) -> list[Path]:
    """``--sources`` first, then the cache, then the fetch tool's mirrors when present."""
    roots = [sources] if sources else []
    roots.append(DEFAULT_CACHE)
    if FETCH_MIRRORS.is_dir():
        roots.append(FETCH_MIRRORS)
    return roots
