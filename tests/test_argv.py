"""Real scripts: arguments after ``--``, a long warm-up before the first gradient (a note
on stderr, then GC903 saying where the script was), results streamed with ``-j``, and
``--graph FILE.svg`` refused before anything runs when Graphviz is missing."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

from tests.conftest import ROOT, run_cli

ARGPARSE_SCRIPT = textwrap.dedent(
    """\
    import argparse

    import keras
    import numpy as np
    import tensorflow as tf

    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("-v", action="store_true")
    args = parser.parse_args()
    assert args.epochs == 1 and args.data == "x y" and args.v, args

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, name="head")])
    x = tf.constant(np.random.rand(8, 4).astype("float32"))
    for _ in range(args.epochs * 3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.cast(tf.argmax(model(x), axis=1), tf.float32))
        tape.gradient(loss, model.trainable_variables)
    """
)


def test_arguments_after_a_double_dash_reach_the_script(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(ARGPARSE_SCRIPT)
    proc = run_cli("--format", "json", str(script), "--", "--epochs", "1", "--data", "x y", "-v")
    (record,) = json.loads(proc.stdout)["files"]
    assert record["error"] is None, record["error"]
    (finding,) = record["findings"]
    assert (finding["code"], finding["line"]) == ("GC101", 18)
    assert proc.returncode == 1


def test_without_them_the_reason_says_how_to_pass_them(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(ARGPARSE_SCRIPT)
    (record,) = json.loads(run_cli("--format", "json", str(script)).stdout)["files"]
    assert record["error"]["code"] == "GC901"
    # the hint names the script's own required flags
    assert "pass them after `--` (`gradcheck train.py -- --epochs EPOCHS --data DATA`)" in record["error"]["message"]


WARM_UP = textwrap.dedent(
    """\
    import time

    import tensorflow as tf


    def fill_replay_buffer(buffer):
        while True:  # a warm-up far longer than the check's timeout
            buffer.append(time.time())
            time.sleep(0.05)


    fill_replay_buffer([])
    """
)


def test_a_long_warm_up_gets_a_note_and_a_gc903_that_says_where(tmp_path):
    script = tmp_path / "dqn.py"
    script.write_text(WARM_UP)
    proc = run_cli("--format", "json", "-v", "--timeout", "40", "dqn.py", cwd=tmp_path)
    (record,) = json.loads(proc.stdout)["files"]
    assert record["status"] == "timeout"
    assert record["error"]["message"].startswith(
        "no gradient was checked within 40 s; the script was still at dqn.py:9 in fill_replay_buffer(), "
    ) or record["error"]["message"].startswith("no gradient was checked within 40 s; the script was still at dqn.py:8")
    assert "gradcheck dqn.py -- --warmup 100" in record["error"]["message"]  # the user's file
    assert (
        "gradcheck: dqn.py: no gradient yet after 10 s; still running (it is stopped at 40 s, --timeout)" in proc.stderr
    )
    assert proc.returncode == 2


SLOW_CLEAN = textwrap.dedent(
    """\
    import time

    import keras
    import tensorflow as tf

    time.sleep(25)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(tf.ones((2, 4))))
    tape.gradient(loss, model.trainable_variables)
    """
)

FAST_BROKEN = textwrap.dedent(
    """\
    import keras
    import tensorflow as tf

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.round(model(tf.ones((2, 4)))))
    tape.gradient(loss, model.trainable_variables)
    """
)


def test_parallel_results_stream_in_order(tmp_path):
    """With ``-j 2``, the first file's diagnosis is printed while the second still runs;
    the order of the output is that of the files, whichever finishes first."""
    (tmp_path / "a_fast.py").write_text(FAST_BROKEN)
    (tmp_path / "b_slow.py").write_text(SLOW_CLEAN)
    (tmp_path / "c_fast.py").write_text(FAST_BROKEN)
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gradcheck", "--format", "concise", "-j", "2", "a_fast.py", "b_slow.py", "c_fast.py"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )
    first = proc.stdout.readline()
    first_at = time.monotonic() - start
    rest, err = proc.communicate(timeout=600)
    total = time.monotonic() - start
    assert first.startswith("a_fast.py:6:27: GC102"), first + rest + err
    assert rest.startswith("c_fast.py:6:27: GC102"), rest
    assert total - first_at > 10, (first_at, total)  # a_fast was shown before b_slow was done


def test_graph_svg_without_graphviz_fails_before_running(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(FAST_BROKEN)
    start = time.monotonic()
    proc = run_cli(str(script), "--graph", str(tmp_path / "cut.svg"), env={"PATH": str(tmp_path)})
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "--graph FILE.svg needs Graphviz's `dot` on PATH" in proc.stderr and "nothing was checked" in proc.stderr
    assert time.monotonic() - start < 30  # no TensorFlow import, no child
    assert not (tmp_path / "cut.svg").exists()
