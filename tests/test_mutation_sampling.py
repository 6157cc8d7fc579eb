"""The mutation benchmark's site sampler (benchmarks/mutation/sampling.py, bench.make_jobs,
bench.next_attempt) and the probe's record of the lines that ran. No TensorFlow: the sampler
reads the program's text and the probe's record; the probe runs on a program that never
imports TensorFlow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.mutation import bench, run, sampling, sources
from benchmarks.mutation.manifest import Program
from benchmarks.mutation.operators import OPERATORS
from benchmarks.mutation.probe import PROBE_DIR

# Two training steps: `alternate` is never called (the dead branch progF's GAN mutated), `step` is.
PROGRAM = """\
import numpy as np
import tensorflow as tf


def alternate(x):
    with tf.GradientTape() as tape:
        h = encoder(x)
        p = tf.nn.softmax(head(h))
        loss = tf.reduce_mean(tf.math.log(p + 1e-8))
    return tape.gradient(loss, encoder.trainable_variables)


def step(x):
    with tf.GradientTape() as tape:
        h = encoder(x)
        p = tf.nn.softmax(head(h))
        loss = tf.reduce_mean(tf.math.log(p + 1e-8))
    return tape.gradient(loss, encoder.trainable_variables)


step(data)
"""
# what the probe would record: everything but the body of `alternate` (lines 6-10)
RAN = set(range(1, 23)) - {6, 7, 8, 9, 10}


def test_families_are_taken_in_turn_each_in_its_order():
    order = [OPERATORS[n] for n in ("argmax_output", "round_output", "tanh_saturate", "floor_output", "clip_softmax")]
    names = [op.name for op in sampling.by_family(order)]
    assert names == ["argmax_output", "tanh_saturate", "round_output", "clip_softmax", "floor_output"]
    rotated = [op.name for op in sampling.by_family(order, 1)]  # each family rotated by one
    assert rotated == ["round_output", "clip_softmax", "floor_output", "tanh_saturate", "argmax_output"]
    assert sampling.rotation("p") == sampling.rotation("p") != sampling.rotation("q")
    # the shapes a program has at fewest places first (ties: the rotated order)
    sites = {"argmax_output": 5, "round_output": 1, "floor_output": 5, "tanh_saturate": 4, "clip_softmax": 2}
    rare = [op.name for op in sampling.by_family(order, 0, lambda op: sites[op.name])]
    assert rare == ["round_output", "clip_softmax", "argmax_output", "tanh_saturate", "floor_output"]
    assert sampling.family(OPERATORS["remove_stop_gradient"]) == "degenerate"
    assert sampling.family(OPERATORS["remove_log_epsilon"]) == "degenerate"  # GC204
    assert sampling.family(OPERATORS["drop_loss_term"]) == "GC1xx"
    assert sampling.family(OPERATORS["custom_gradient_upstream"]) == "GC1xx"  # GC112 first
    assert sampling.family(OPERATORS["custom_gradient_derivative"]) == "degenerate"  # GC301


def test_a_family_without_sites_does_not_hand_its_turns_to_the_other_one_first():
    order = [OPERATORS[n] for n in ("argmax_output", "round_output", "floor_output", "tanh_saturate", "clip_softmax")]
    no_tanh = sampling.by_family(order, 0, lambda op: int(op.name != "tanh_saturate"))
    assert [op.name for op in no_tanh][:2] == ["argmax_output", "clip_softmax"]


def test_an_edit_sits_on_the_lines_it_rewrote_or_between_the_code_lines_around_an_insertion():
    original = "a = 1\n\ndef f():\n    x = g()\n\n    return x\n"
    rewritten = original.replace("x = g()", "x = tf.round(g())")
    assert sampling.site_lines(original, rewritten) == {4}
    inserted = original.replace("    x = g()\n", "    x = g()\n    x = tf.stop_gradient(x)\n")
    assert sampling.site_lines(original, inserted) == {4, 6}  # the blank line skipped


def test_sites_the_run_reached_come_first_in_text_order():
    for name in ("argmax_output", "stop_gradient_path", "tanh_saturate", "clip_softmax", "remove_epsilon"):
        op = OPERATORS[name]
        sites = op.mutants(PROGRAM)
        assert len(sites) >= 2, name
        first = sampling.ranked(sites, PROGRAM, RAN)[0]
        assert first.site > sites[0].site, name  # not the dead function's site
        assert min(first.lines) > 12, name  # in `step`
        assert sampling.ranked(sites, PROGRAM, set())[0].site == sites[0].site  # nothing known: text order


def _state(tmp_path: Path) -> bench.ProgramState:
    (tmp_path / "p").mkdir()
    path = tmp_path / "p" / "original.py"
    path.write_text(PROGRAM, encoding="utf-8")
    st = bench.ProgramState(Program("p", []), source=PROGRAM)
    st.original = run.Job("p", "original", "-", 0, path)
    return st


def test_a_sampled_operator_tries_its_next_site_only_while_tensorflow_finds_the_mutant_not_valid(tmp_path):
    st = _state(tmp_path)
    ops = [OPERATORS[n] for n in ("argmax_output", "tanh_saturate", "round_output")]
    bench.make_jobs(st, ops, sample=2, max_sites=2, sample_twins=1, ran=RAN)
    mutants = [j for j in st.jobs if j.kind == "mutant"]
    assert sorted(sampling.family(OPERATORS[j.operator]) for j in mutants) == ["GC1xx", "degenerate"]
    twins = [j for j in st.jobs if j.kind == "twin"]
    assert len(twins) == 1 and min(twins[0].lines) > 12  # the twin too, where the run went
    first = next(j for j in mutants if sampling.family(OPERATORS[j.operator]) == "GC1xx")
    assert min(first.lines) > 12 and first.path.is_file()
    first.verdict = {"class": "no-effect"}
    again = bench.next_attempt(st, first)
    assert again is not None and again.operator == first.operator and again.site != first.site
    assert again.path.is_file() and again in st.jobs
    again.verdict = {"class": "equivalent"}
    assert bench.next_attempt(st, again) is None  # --max-sites 2: no third site
    valid = next(j for j in mutants if j is not first)
    valid.verdict = {"class": "valid"}
    assert bench.next_attempt(st, valid) is None


def test_without_a_record_of_the_lines_the_sample_keeps_the_text_order(tmp_path):
    st = _state(tmp_path)
    bench.make_jobs(st, [OPERATORS["argmax_output"]], sample=1, max_sites=1, sample_twins=0)
    assert max(st.jobs[0].lines) < 12  # the first site, in `alternate`
    assert not any(st.next_sites.values())


def test_a_programs_sibling_modules_are_read_beside_it(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text("from unet import build\n", encoding="utf-8")
    (tmp_path / "pkg" / "unet.py").write_text("def build():\n    return 1\n", encoding="utf-8")
    program = Program("p", [], local=tmp_path / "pkg" / "train.py", path="pkg/train.py", files=["pkg/unet.py"])
    assert sources.sibling_files(program, []) == {"unet.py": "def build():\n    return 1\n"}


def test_the_probe_records_the_lines_of_the_program_that_ran(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(
        "def used():\n    return 1\n\n\ndef unused():\n    return 2\n\n\nif used():\n    x = 3\nelse:\n    x = 4\n",
        encoding="utf-8",
    )
    out = tmp_path / "probe.json"
    env = {
        **os.environ,
        "PYTHONPATH": str(PROBE_DIR),
        "GCM_PROBE_OUT": str(out),
        "GCM_PROBE_PROGRAM": str(prog),
    }
    subprocess.run([sys.executable, prog.name], cwd=tmp_path, env=env, check=True, timeout=60)
    lines = set(json.loads(out.read_text(encoding="utf-8"))["lines"])
    assert {1, 2, 5, 9, 10} <= lines
    assert not {6, 12} & lines  # `unused`'s body and the branch not taken
