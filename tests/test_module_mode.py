"""``gradcheck -m pkg.train -- ARGS``: a module of a package run as ``python -m`` runs it
(relative imports, the working directory first on ``sys.path``); a package script run by its
path gets a GC901 that says ``-m``; argparse and absl exits name the flags asked for."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import run_cli

MODEL = """\
import keras


def build():
    inputs = keras.Input((4,))
    return keras.Model(inputs, keras.layers.Dense(3)(inputs))
"""

TRAIN = """\
import argparse

import numpy as np
import tensorflow as tf

from .model import build


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, required=True)
    args = parser.parse_args()
    model = build()
    optimizer = tf.keras.optimizers.SGD(0.1)
    x = tf.constant(np.random.rand(8, 4), tf.float32)
    y = tf.constant(np.random.rand(8), tf.float32)
    for _ in range(args.epochs):
        with tf.GradientTape() as tape:
            q = model(x)
            chosen = tf.cast(tf.math.argmin(q, axis=1), tf.float32)
            loss = tf.reduce_mean(tf.square(y - chosen))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))


if __name__ == "__main__":
    main()
"""
ARGMIN_LINE = 1 + TRAIN.splitlines().index("            chosen = tf.cast(tf.math.argmin(q, axis=1), tf.float32)")
FIXED = TRAIN.replace("tf.cast(tf.math.argmin(q, axis=1), tf.float32)", "tf.reduce_min(q, axis=1)")


def _package(root: Path, train: str) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "model.py").write_text(MODEL)
    (root / "pkg" / "train.py").write_text(train)
    return root


@pytest.mark.parametrize("fmt", ["concise", "json"])
def test_a_module_with_a_relative_import_and_flags(tmp_path, fmt):
    root = _package(tmp_path, TRAIN)
    proc = run_cli("-m", "pkg.train", "--format", fmt, "--", "--epochs", "1", cwd=root)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    if fmt == "json":
        [finding] = json.loads(proc.stdout)["files"][0]["findings"]
        assert (finding["code"], finding["path"], finding["line"]) == ("GC101", "pkg/train.py", ARGMIN_LINE)
    else:
        [line] = [ln for ln in proc.stdout.splitlines() if "GC101" in ln]
        assert line.startswith(f"pkg/train.py:{ARGMIN_LINE}:")


def test_the_fixed_module_is_clean(tmp_path):
    root = _package(tmp_path, FIXED)
    proc = run_cli("-m", "pkg.train", "--", "--epochs", "1", cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # and it runs under python the same way
    done = subprocess.run([sys.executable, "-m", "pkg.train", "--epochs", "1"], cwd=root, capture_output=True)
    assert done.returncode == 0, done.stderr


def test_the_script_run_by_its_path_is_told_about_m(tmp_path):
    root = _package(tmp_path, FIXED)
    proc = run_cli("pkg/train.py", "--", "--epochs", "1", cwd=root)
    assert proc.returncode == 2
    assert "attempted relative import" in proc.stdout
    assert "gradcheck -m pkg.train" in proc.stdout


def test_module_errors_are_one_line(tmp_path):
    root = _package(tmp_path, FIXED)
    missing = run_cli("-m", "pkg.nope", cwd=root)
    assert missing.returncode == 2
    assert missing.stderr.strip() == "gradcheck: -m pkg.nope: No module named 'pkg.nope'"
    package = run_cli("-m", "pkg", cwd=root)
    assert package.returncode == 2 and "'pkg' is a package and cannot be directly executed" in package.stderr
    both = run_cli("-m", "pkg.train", "other.py", cwd=root)
    assert both.returncode == 2 and "-m MODULE takes no PATH" in both.stderr


def test_a_required_flag_is_named_in_the_hint(tmp_path):
    script = tmp_path / "flags.py"
    script.write_text(
        textwrap.dedent(
            """\
            import argparse
            parser = argparse.ArgumentParser()
            parser.add_argument("--data", required=True)
            parser.add_argument("-n", "--num-steps", required=True)
            parser.parse_args()
            """
        )
    )
    proc = run_cli(str(script))
    assert proc.returncode == 2
    assert "the following arguments are required: --data, -n/--num-steps" in proc.stdout
    assert "`gradcheck flags.py -- --data DATA --num-steps NUM_STEPS`" in proc.stdout


def test_an_absl_flags_exit_is_explained(tmp_path):
    pytest.importorskip("absl")
    script = tmp_path / "absl_main.py"
    script.write_text(
        textwrap.dedent(
            """\
            from absl import app, flags
            flags.DEFINE_string("data", None, "where the data is")
            flags.mark_flag_as_required("data")

            def main(argv):
                pass

            app.run(main)
            """
        )
    )
    proc = run_cli(str(script))
    assert proc.returncode == 2
    assert "the script's absl flags could not be parsed (flag --data=None" in proc.stdout
    assert "`gradcheck absl_main.py -- --data=VALUE`" in proc.stdout
