"""Documented commands work in the environment the docs have set up by then: the test modules
import nothing the test extra does not install (the nox environments install that extra, and
the README's Keras 2 command collects every module), and a doc runs an example that needs the
``examples`` extra only after it has said to install it."""

from __future__ import annotations

import ast
import re
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
#: What the environments install beside the extras: TensorFlow and the Keras it brings.
BESIDE = {"tensorflow", "tensorflow-cpu", "keras", "tf-keras"}
#: Modules of this repository that tests import.
OURS = {"gradcheck", "tests", "benchmarks", "helper", "conftest"}


def _top_imports(path: Path, anywhere: bool = False) -> set[str]:
    """The modules a file imports at its top level (not inside functions or test strings),
    or ``anywhere`` in its code."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree) if anywhere else tree.body:
        if isinstance(node, ast.Import):
            out |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out


def _closure(requirements: list[str]) -> set[str]:
    """The distributions ``requirements`` bring in, recursively (those installed here)."""
    seen: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        if name in seen:
            continue
        seen.add(name)
        try:
            todo += [Requirement(r) for r in metadata.requires(req.name) or [] if "extra ==" not in r]
        except metadata.PackageNotFoundError:
            continue
    return seen


def _project_extra(extra: str) -> list[str]:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [*project["dependencies"], *project["optional-dependencies"][extra]]


def test_test_modules_import_only_what_the_test_extra_installs():
    installed = _closure([*_project_extra("test"), *BESIDE])
    providers = metadata.packages_distributions()
    stdlib = set(sys.stdlib_module_names)
    wanting = {}
    for path in sorted((ROOT / "tests").glob("*.py")):
        for module in _top_imports(path) - stdlib - OURS - {"__future__"}:
            dists = {re.sub(r"[-_.]+", "-", d).lower() for d in providers.get(module, [module])}
            if not dists & installed:
                wanting.setdefault(module, []).append(path.name)
    assert wanting == {}, "imported by tests but not installed by the test extra"


EXTRA_FOR = {"gymnasium": "examples", "matplotlib": "examples"}
_RUN = re.compile(r"(?:gradcheck|python)\s+(examples/\w+\.py)")
_INSTALL = re.compile(r"pip install[^\n`]*\.\[([\w,-]+)\]")


def test_docs_run_an_example_only_after_installing_its_extra():
    late = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for match in _RUN.finditer(text):
            example = ROOT / match.group(1)
            if not example.is_file():
                continue
            needed = {EXTRA_FOR[m] for m in _top_imports(example, anywhere=True) if m in EXTRA_FOR}
            before = {e for m in _INSTALL.finditer(text[: match.start()]) for e in m.group(1).split(",")}
            if needed - before:
                line = text.count("\n", 0, match.start()) + 1
                late.append(f"{doc.relative_to(ROOT)}:{line}: {match.group(0)} needs {sorted(needed - before)}")
    assert late == []


def test_nox_environments_install_the_test_extra():
    """The README's Keras 2 command runs ``tests/`` in a nox environment: it has the test extra."""
    assert '".[test]"' in (ROOT / "noxfile.py").read_text(encoding="utf-8")


def test_output_formats_counts_the_rules_sarif_describes():
    from gradcheck.rules import all_rules

    text = (ROOT / "docs" / "output-formats.md").read_text(encoding="utf-8")
    [count] = re.findall(r"every\*\* GC code \((\d+) today", text)
    assert int(count) == len(all_rules())
