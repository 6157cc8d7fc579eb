"""The package's structure as docs/architecture.md states it: import-linter's contracts
(pyproject.toml) hold, no import cycle exists (function-level imports count), and every
code the trace engine reports is one import away from its rule module."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gradcheck.rules import trace_rules

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold():
    lint_imports = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    if lint_imports is None:
        pytest.skip("import-linter is not installed (it is in the `test` extra)")
    result = subprocess.run([lint_imports, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BROKEN" not in result.stdout


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the components of more than one module (cycles)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_no_import_cycle():
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("gradcheck", cache_dir=None)
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    assert _strongly_connected(edges) == []


def test_cycle_finder_sees_a_cycle():
    assert _strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("rule", trace_rules(), ids=lambda r: r.code)
def test_trace_check_is_one_import_away(rule):
    """``rule.trace_check`` names the registered check that reports the code."""
    pytest.importorskip("tensorflow")
    import gradcheck.trace.capture.hooks  # noqa: F401  (registers every check)
    from gradcheck.trace.record import registry

    module_name, _, function_name = rule.trace_check.partition(":")
    function = getattr(importlib.import_module(module_name), function_name)
    registered = [c for c in registry.checks() if c.fn is function]
    assert registered, f"{rule.trace_check} is not a registered check"
    assert rule.code in registered[0].codes


def test_every_registered_code_has_its_rule():
    pytest.importorskip("tensorflow")
    import gradcheck.trace.capture.hooks  # noqa: F401
    from gradcheck.rules import RULES
    from gradcheck.trace.record import registry

    for check in registry.checks():
        for code in check.codes:
            assert RULES[code].trace_check == check.name, (code, check.name)
