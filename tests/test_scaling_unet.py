"""A cut inside an attention block of a diffusion U-Net (issue 35): diagnosed right, in
graph and eager mode, and with a number of liveness questions that does not grow with
the layers after the cut.

Keras 3's swish is a ``tf.custom_gradient``: in a ``tf.function`` each one is an
``IdentityN`` whose result inputs TensorFlow never sends a gradient to. After a cut, every
one of them looked like a cut of its own, each sent the walk back to the same ArgMax, and
the walk asked TensorFlow for a backward pass per culprit per level: exponential in the
swishes after the cut (GC903 after 600 s on a real U-Net).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gradcheck.trace.diagnose.cuts import BLOCK, BOUNDARY, find_cuts
from gradcheck.trace.record.dataflow import CUSTOM_GRADIENT_RESULTS, TAG_CUSTOM_GRADIENT, Flow

UNET = Path(__file__).resolve().parent.parent / "benchmarks" / "programs" / "unet_attention.py"


def _line_of(text: str) -> int:
    lines = UNET.read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


# -- the real model -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("depth", "kind", "eager", "cut_text"),
    [
        (1, "onehot", False, "tf.one_hot(tf.argmax(scores, -1)"),
        (3, "cast", False, "tf.cast(tf.argmax(scores, -1), tf.float32)"),
        (0, "onehot", True, "tf.one_hot(tf.argmax(scores, -1)"),
    ],
    ids=["graph-onehot-depth1", "graph-cast-depth3", "eager-onehot-depth0"],
)
def test_attention_cut_in_unet(depth, kind, eager, cut_text):
    # a process of its own: a large model diagnosed after hundreds of in-process checks of
    # other test files stalled the suite's worker (threads and hooks those runs left behind)
    argv = ["--size", "small", "--cut", str(depth), "--cut-kind", kind] + (["--eager"] if eager else [])
    done = subprocess.run(
        [sys.executable, "-c", _COUNTED_RUN, str(UNET), json.dumps(argv)],
        cwd=UNET.parent,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONPATH": str(UNET.parents[2])},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["error"] is None, result["error"]
    findings = result["findings"]
    assert [f["code"] for f in findings] == ["GC101"], findings
    finding = findings[0]
    assert finding["line"] == _line_of(cut_text)
    # the query and key projections of the block cut, nothing else
    block = f"attention_block_{depth}/" if depth else "attention_block/"
    variables = finding["variables"]
    assert len(variables) == 4 and all(v.startswith(block) for v in variables), variables
    assert {v.rsplit("/", 1)[1] for v in variables} == {"kernel", "bias"}
    # one backward pass for the loss, one for the ArgMax's input (and one for the data
    # edges): not one per swish after the cut, per level
    assert len(result["questions"]) <= 3, result["questions"]


#: run_file on the U-Net, counting the liveness questions the diagnosis asks TensorFlow
_COUNTED_RUN = """
import json, sys
from gradcheck.trace.diagnose import analyze
from gradcheck.trace.run.runner import run_file

questions = []
live_fn = analyze._live_fn

def counted(ctx):
    live = live_fn(ctx)
    def ask(targets, keys):
        questions.append(len(keys))
        return live(targets, keys)
    return ask

analyze._live_fn = counted
result = run_file(sys.argv[1], argv=json.loads(sys.argv[2]))
findings = [{"code": f.code, "line": f.line, "variables": f.variables} for f in result.findings]
error = None if result.error is None else result.error.message
print(json.dumps({"error": error, "findings": findings, "questions": questions}))
"""


# -- the walk, on a synthetic flow (no TensorFlow) -------------------------------------


def _swish_chain(n_swish: int, closure: bool = False):
    """source -> MatMul -> ArgMax -> OneHot -> Mul(live) -> n swishes as graph-mode custom
    gradients (IdentityN[result, arg]) -> Mean. With ``closure``, one more custom gradient
    whose result also reads a variable that is not among its arguments."""
    flow = Flow()
    flow.has_gradient = lambda op_type: True
    for key in ("w", "u", "c"):
        flow.resources.add(key)
        flow.differentiable[key] = False
    flow.add("Placeholder", [], ["x"])
    flow.add("ReadVariableOp", ["w"], ["wv"], tag="read")
    flow.add("ReadVariableOp", ["u"], ["uv"], tag="read")
    flow.add("MatMul", ["x", "wv"], ["scores"])
    argmax = flow.add("ArgMax", ["scores"], ["idx"]).index
    flow.differentiable["idx"] = False
    flow.add("OneHot", ["idx"], ["weights"], nondata=frozenset({0}))
    flow.add("MatMul", ["weights", "uv"], ["h0"])
    h = "h0"
    for i in range(n_swish):
        flow.add("Sigmoid", [h], [f"s{i}"])
        flow.add("Mul", [h, f"s{i}"], [f"m{i}"])
        flow.add(
            "IdentityN",
            [f"m{i}", h],
            [f"o{i}", f"a{i}"],
            tag=TAG_CUSTOM_GRADIENT,
            attrs={CUSTOM_GRADIENT_RESULTS: 1},
        )
        h = f"o{i}"
    closure_op = None
    if closure:
        flow.add("ReadVariableOp", ["c"], ["cv"], tag="read")
        flow.add("Mul", [h, "cv"], ["mc"])
        closure_op = flow.add(
            "IdentityN", ["mc", h], ["oc", "ac"], tag=TAG_CUSTOM_GRADIENT, attrs={CUSTOM_GRADIENT_RESULTS: 1}
        ).index
        h = "oc"
    flow.add("Mean", [h], ["loss"])
    return flow, argmax, closure_op


def _emulated_live(flow: Flow, calls: list):
    """What TensorFlow's backward pass answers: no gradient through ArgMax, into an integer,
    or into a custom gradient's result inputs."""

    def live(targets, keys):
        calls.append(len(keys))
        alive, stack = set(), list(targets)
        while stack:
            k = stack.pop()
            if k in alive:
                continue
            alive.add(k)
            i = flow.producer.get(k)
            if i is None or flow.ops[i].type == "ArgMax":
                continue
            op = flow.ops[i]
            inputs = op.inputs[op.attrs.get(CUSTOM_GRADIENT_RESULTS, 0) :]
            stack += [t for t in inputs if flow.is_differentiable(t) or t in flow.resources]
        return {k for k in keys if k in alive}

    return live


def test_walk_after_a_cut_does_not_grow_with_custom_gradients():
    flow, argmax, _ = _swish_chain(8)
    calls: list = []
    result = find_cuts(flow, ["loss"], ["w", "u"], _emulated_live(flow, calls))
    assert [(c.kind, c.op, c.sources) for c in result.cuts] == [(BOUNDARY, argmax, {"w"})]
    assert not result.unreached
    assert len(calls) <= 3, calls


def test_custom_gradient_result_from_a_closure_stays_a_cut():
    flow, argmax, closure_op = _swish_chain(2, closure=True)
    result = find_cuts(flow, ["loss"], ["w", "u", "c"], _emulated_live(flow, []))
    found = {(c.kind, c.op): c.sources for c in result.cuts}
    assert found == {(BOUNDARY, argmax): {"w"}, (BLOCK, closure_op): {"c"}}
