"""Fuzzing the trace engine's report builder: random data-flow graphs with random liveness
through the cut finder, and random findings through every output format, never raise and
keep their invariants. No TensorFlow needed.

Run longer with ``GRADCHECK_FUZZ_EXAMPLES=5000 python -m pytest tests/test_fuzz_engine.py``.
"""

from __future__ import annotations

import json
import os

from hypothesis import given, settings
from hypothesis import strategies as st

from gradcheck.findings import ChainLink, CheckError, FileResult, Finding
from gradcheck.output import FORMATS, render
from gradcheck.report import Report
from gradcheck.rules import RULES
from gradcheck.trace.diagnose.cuts import UNKNOWN, find_cuts
from gradcheck.trace.record.dataflow import TAG_ASSIGN, Flow

EXAMPLES = int(os.environ.get("GRADCHECK_FUZZ_EXAMPLES", "200"))
OP_TYPES = ["MatMul", "ArgMax", "Cast", "Round", "StopGradient", "Add", "AssignVariableOp", "ReadVariableOp", "Mul"]


@st.composite
def graphs(draw):
    n_sources = draw(st.integers(1, 4))
    n_ops = draw(st.integers(1, 40))
    flow = Flow()
    keys = [("src", i) for i in range(n_sources)]
    for key in keys:
        flow.differentiable[key] = draw(st.booleans()) or True
    for i in range(n_ops):
        arity = draw(st.integers(0, 3))
        inputs = [draw(st.sampled_from(keys)) for _ in range(arity)] if keys else []
        outputs = [("t", i, j) for j in range(draw(st.integers(1, 2)))]
        for key in outputs:
            flow.differentiable[key] = draw(st.booleans())
        op_type = draw(st.sampled_from(OP_TYPES))
        tag = TAG_ASSIGN if op_type == "AssignVariableOp" else ""
        flow.add(op_type, inputs, outputs, recorded=draw(st.booleans()), tag=tag)
        keys.extend(outputs)
    produced = [k for k in keys if k in flow.producer]
    targets = draw(st.lists(st.sampled_from(produced), min_size=1, max_size=2, unique=True)) if produced else []
    live = set(draw(st.lists(st.sampled_from(keys), unique=True)))
    sources = [("src", i) for i in range(n_sources)]
    return flow, targets, sources, live


@settings(max_examples=EXAMPLES, deadline=None)
@given(graphs())
def test_cut_finder_never_raises_and_accounts_for_every_source(case):
    flow, targets, sources, live = case

    def live_fn(target_keys, keys):
        return {k for k in keys if k in live}

    result = find_cuts(flow, targets, sources, live_fn)
    blamed = set().union(*(c.sources for c in result.cuts)) if result.cuts else set()
    assert blamed | result.unreached <= set(sources)
    assert not (result.unreached & blamed)
    for cut in result.cuts:
        assert cut.sources
        assert cut.kind == UNKNOWN or 0 <= cut.op < len(flow.ops)


texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@st.composite
def findings(draw):
    code = draw(st.sampled_from(sorted(c for c in RULES if not c.startswith("GC9"))))
    line = draw(st.integers(1, 500))
    return Finding(
        code=code,
        message=draw(texts) or "m",
        path=draw(st.sampled_from(["a.py", "dir/b.py", "ünï cödé.py", "/abs/c.py"])),
        line=line,
        column=draw(st.integers(1, 80)),
        end_line=draw(st.none() | st.just(line)),
        end_column=draw(st.none() | st.integers(1, 120)),
        op=draw(st.none() | st.sampled_from(OP_TYPES)),
        call=draw(st.none() | texts),
        variables=draw(st.lists(texts, max_size=4)),
        chain=[ChainLink(draw(st.sampled_from(OP_TYPES)), draw(st.none() | st.integers(1, 99)), draw(st.booleans()))],
        fix=draw(texts),
        notes=draw(st.lists(texts, max_size=2)),
    )


@st.composite
def reports(draw):
    files = []
    for i in range(draw(st.integers(0, 3))):
        error = draw(st.none() | st.builds(CheckError, st.sampled_from(["GC901", "GC902", "GC903", "GC904"]), texts))
        status = "error" if error else "checked"
        files.append(
            FileResult(f"f{i}.py", status, error, draw(st.integers(0, 3)), draw(st.lists(findings(), max_size=3)))
        )
    return Report(files)


@settings(max_examples=EXAMPLES, deadline=None)
@given(reports())
def test_every_format_renders_any_report(report):
    for fmt in FORMATS:
        out = render(report, fmt)
        assert isinstance(out, str)
        if fmt in ("json", "sarif"):
            json.loads(out)
    for result in report.files:
        assert FileResult.from_json(result.to_json()).to_json() == result.to_json()
