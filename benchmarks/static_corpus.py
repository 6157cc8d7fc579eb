"""Precision of the static engine on third-party training code: run it over every file of
the corpus that ``benchmarks/static_corpus.toml`` lists and print every finding, so each
one can be read and classified (a real or intentional None gradient, or a false positive).

The manifest names public repositories at fixed commits and the files taken from each; the
code itself is never kept here. Extract it once from local clones (or bare git
directories), then run::

    python benchmarks/static_corpus.py --extract-from ~/mirrors --corpus /tmp/corpus
    python benchmarks/static_corpus.py --corpus /tmp/corpus [--json] [--source NAME]

``--extract-from DIR`` looks for each source as ``DIR/owner+name`` (or
``DIR/owner+name/repo``, ``DIR/name``) and writes the listed files of the listed commit to
``CORPUS/<source name>/``. Without a corpus the script says so and exits 0: it never
needs the network.

Python files go through ``gradcheck.static.check_file`` (what ``gradcheck --static`` runs);
Jupyter notebooks (``.ipynb``) through ``check_notebook`` (what ``gradcheck --static
nb.ipynb`` runs: code cells joined in order, IPython lines neutralised so that line numbers
hold, findings shown as ``notebook.ipynb:cell N:line``). Lines are physical lines (of the code cells, for
a notebook).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gradcheck import notebook
from gradcheck.static import check_file, check_notebook, may_train

MANIFEST = Path(__file__).resolve().with_name("static_corpus.toml")
SUFFIXES = (".py", ".ipynb")


# --- manifest and globs ------------------------------------------------------------------


@dataclass
class Source:
    name: str
    repo: str
    commit: str
    licence: str
    include: list[str]
    exclude: list[str] = field(default_factory=list)

    def wants(self, path: str) -> bool:
        return any(_glob(p).fullmatch(path) for p in self.include) and not any(
            _glob(p).fullmatch(path) for p in self.exclude
        )


def load_manifest(path: Path = MANIFEST) -> list[Source]:
    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    return [Source(**entry) for entry in data["source"]]


_GLOBS: dict[str, re.Pattern[str]] = {}


def _glob(pattern: str) -> re.Pattern[str]:
    """``**/`` any directories (none included), ``*`` and ``?`` within one path part,
    ``[...]`` a character class."""
    found = _GLOBS.get(pattern)
    if found is None:
        out, i = [], 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                out.append("(?:.*/)?")
                i += 3
            elif pattern.startswith("**", i):
                out.append(".*")
                i += 2
            elif pattern[i] == "*":
                out.append("[^/]*")
                i += 1
            elif pattern[i] == "?":
                out.append("[^/]")
                i += 1
            elif pattern[i] == "[":
                end = pattern.index("]", i + 1)
                out.append(pattern[i : end + 1])
                i = end + 1
            else:
                out.append(re.escape(pattern[i]))
                i += 1
        found = _GLOBS[pattern] = re.compile("".join(out))
    return found


# --- extraction --------------------------------------------------------------------------


def _git_dir(mirrors: Path, source: Source) -> Path | None:
    owner_name = source.repo.replace("/", "+")
    for candidate in (
        mirrors / owner_name / "repo",
        mirrors / owner_name,
        mirrors / source.repo.split("/")[1],
    ):
        if candidate.is_dir():
            return candidate
    return None


def _git(git_dir: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(["git", f"--git-dir={_dot_git(git_dir)}", *args], check=True, **kwargs)


def _dot_git(path: Path) -> Path:
    return path / ".git" if (path / ".git").exists() else path


def extract(sources: list[Source], mirrors: Path, corpus: Path) -> None:
    corpus.mkdir(parents=True, exist_ok=True)
    for source in sources:
        git_dir = _git_dir(mirrors, source)
        if git_dir is None:
            print(f"skip {source.name}: no clone of {source.repo} under {mirrors}", file=sys.stderr)
            continue
        listing = _git(git_dir, "ls-tree", "-r", "--name-only", "-z", source.commit, capture_output=True)
        paths = [p for p in listing.stdout.decode().split("\0") if p.endswith(SUFFIXES) and source.wants(p)]
        into = corpus / source.name
        absent = _write_blobs(git_dir, source.commit, paths, into)
        note = f" ({len(absent)} absent from the clone: {', '.join(absent)})" if absent else ""
        (into / ".corpus-commit").write_text(source.commit + "\n")
        print(
            f"{source.name}: {len(paths) - len(absent)} files from {source.repo}@{source.commit[:12]}{note}",
            file=sys.stderr,
        )


def _write_blobs(git_dir: Path, commit: str, paths: list[str], into: Path) -> list[str]:
    """Write ``commit:path`` for each path under ``into``; the paths whose content the
    clone lacks (partial or size-limited clones) are returned, not written."""
    request = "".join(f"{commit}:{p}\n" for p in paths).encode()
    out = _git(git_dir, "cat-file", "--batch", input=request, capture_output=True).stdout
    absent, at = [], 0
    for path in paths:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        at = end + 1
        if len(header) != 3 or header[1] != b"blob":
            absent.append(path)
            continue
        size = int(header[2])
        target = into / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(out[at : at + size])
        at += size + 1
    return absent


# --- reading files -----------------------------------------------------------------------


@dataclass
class FileOutcome:
    path: str
    lines: int
    analysed: bool
    error: str | None
    findings: list[tuple[str, int, str, str]]  # (shown path, line, code, message)
    seconds: float


def check_one(path: Path, shown: str) -> FileOutcome:
    start = time.perf_counter()
    if path.suffix == ".ipynb":
        result = check_notebook(str(path))  # what `gradcheck --static nb.ipynb` runs
        seconds = time.perf_counter() - start
        if result.error is not None:
            return FileOutcome(shown, 0, False, f"{result.error.code} {result.error.message}", [], seconds)
        cells = notebook.read_cells(str(path))
        source = "\n".join(cell.code for cell in cells)
        found = [(shown + f.path[len(str(path)) :], f.line, f.code, f.message) for f in result.findings]
        return FileOutcome(shown, source.count("\n") + 1, may_train(source), None, found, seconds)
    result = check_file(str(path))
    seconds = time.perf_counter() - start
    try:
        source = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        source = ""
    error = None if result.error is None else f"{result.error.code} {result.error.message}"
    found = [(shown, f.line, f.code, f.message) for f in result.findings]
    return FileOutcome(shown, source.count("\n") + 1, may_train(source), error, found, seconds)


def corpus_paths(corpus: Path, source: Source) -> list[tuple[Path, str]]:
    root = corpus / source.name
    out = []
    for directory, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            full = Path(directory, name)
            rel = full.relative_to(root).as_posix()
            if name.endswith(SUFFIXES) and source.wants(rel):
                out.append((full, f"{source.name}/{rel}"))
    return out


# --- report ------------------------------------------------------------------------------


def run(corpus: Path, sources: list[Source]) -> dict:
    rows, findings, errors = [], [], []
    for source in sources:
        outcomes = [check_one(path, shown) for path, shown in corpus_paths(corpus, source)]
        rows.append(
            {
                "source": source.name,
                "repo": source.repo,
                "commit": source.commit,
                "files": len(outcomes),
                "lines": sum(o.lines for o in outcomes),
                "analysed_files": sum(o.analysed for o in outcomes),
                "analysed_lines": sum(o.lines for o in outcomes if o.analysed),
                "findings": sum(len(o.findings) for o in outcomes),
                "errors": sum(o.error is not None for o in outcomes),
                "seconds": sum(o.seconds for o in outcomes),
            }
        )
        findings += [f for o in outcomes for f in o.findings]
        errors += [(o.path, o.error) for o in outcomes if o.error]
    total = {
        k: sum(r[k] for r in rows)
        for k in ("files", "lines", "analysed_files", "analysed_lines", "findings", "errors", "seconds")
    }
    return {"sources": rows, "total": total, "findings": findings, "errors": errors}


def print_report(result: dict, out=None) -> None:
    out = out or sys.stdout
    head = f"{'source':28} {'files':>6} {'kloc':>7} {'grad files':>10} {'grad kloc':>9} {'findings':>8} {'errors':>6}"
    print(head, file=out)
    for r in [*result["sources"], {"source": "total", **result["total"]}]:
        print(
            f"{r['source']:28} {r['files']:6d} {r['lines'] / 1000:7.1f} {r['analysed_files']:10d} "
            f"{r['analysed_lines'] / 1000:9.1f} {r['findings']:8d} {r['errors']:6d}",
            file=out,
        )
    t = result["total"]
    per_kloc = t["findings"] / (t["lines"] / 1000) if t["lines"] else 0.0
    per_grad_kloc = t["findings"] / (t["analysed_lines"] / 1000) if t["analysed_lines"] else 0.0
    print(
        f"\n{t['files']} files, {t['lines'] / 1000:.1f} kloc ({t['analysed_files']} files, "
        f"{t['analysed_lines'] / 1000:.1f} kloc ask for gradients), {t['findings']} findings: "
        f"{per_kloc:.3f} per kloc ({per_grad_kloc:.3f} per kloc of gradient code); "
        f"{t['errors']} files not analysed; {t['seconds']:.2f} s",
        file=out,
    )
    if result["findings"]:
        print("\nfindings:", file=out)
        for shown, line, code, message in result["findings"]:
            print(f"{shown}:{line}: {code} {message}", file=out)
    if result["errors"]:
        print("\nnot analysed (read or parse errors):", file=out)
        for path, error in result["errors"]:
            print(f"{path}: {error}", file=out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus",
        type=Path,
        default=Path(os.environ.get("GRADCHECK_CORPUS", "/tmp/gradcheck-corpus")),
        help="directory holding the extracted sources (default: $GRADCHECK_CORPUS or /tmp/gradcheck-corpus)",
    )
    parser.add_argument(
        "--extract-from",
        type=Path,
        metavar="MIRRORS",
        help="first extract the manifest's files from the clones under MIRRORS",
    )
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--source", action="append", metavar="NAME", help="only these sources (repeatable)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    sources = load_manifest(args.manifest)
    if args.source:
        unknown = set(args.source) - {s.name for s in sources}
        if unknown:
            parser.error(f"unknown source(s): {', '.join(sorted(unknown))}")
        sources = [s for s in sources if s.name in args.source]
    if args.extract_from is not None:
        extract(sources, args.extract_from, args.corpus)
    present = [s for s in sources if (args.corpus / s.name).is_dir()]
    if not present:
        print(
            f"static corpus absent: no source of {args.manifest.name} under {args.corpus}; skipping "
            "(extract it with --extract-from MIRRORS)",
            file=sys.stderr,
        )
        return 0
    missing = [s.name for s in sources if s not in present]
    if missing:
        print(f"not extracted, skipped: {', '.join(missing)}", file=sys.stderr)
    result = run(args.corpus, present)
    if args.json:
        print(json.dumps(result))
    else:
        print_report(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
