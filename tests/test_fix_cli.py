"""``--diff`` and ``--fix`` through the real CLI, in real subprocesses, on real files.

The refusal cases run the static engine (no TensorFlow, a second each): a real git
repository in ``tmp_path`` for the dirty check, real Vim swap and Emacs lock files for
unsaved buffers, a Latin-1 file. The seed DQN (``examples/dqn_broken.py``) goes through the
trace engine: ``--diff`` in every format, ``--fix`` in a git repository, then the fixed
script is checked again and trained with plain ``python``. The pre-commit hook variant runs
under real pre-commit.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from gradcheck.findings import FileResult
from gradcheck.fix.patch import unified_diff
from gradcheck.output import render
from gradcheck.output.github import step_summary
from gradcheck.output.sarif import sarif_log
from gradcheck.report import Report
from tests.conftest import GIT_ENV, ROOT, run_cli

GIT = shutil.which("git")
STEP = """\
import keras
import numpy as np
import tensorflow as tf

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
optimizer = keras.optimizers.SGD(0.1)
states = np.random.rand(16, 4).astype("float32")
actions = np.random.randint(0, 3, size=16)
targets = np.random.rand(16).astype("float32")

with tf.GradientTape() as tape:
    q = model(states)
    q_action = tf.cast(tf.argmax(q, axis=1), tf.float32)  # the action's value?
    loss = tf.reduce_mean(tf.square(targets - q_action))
grads = tape.gradient(loss, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""
FIXED_LINE = "    q_action = tf.cast(tf.gather(q, actions, batch_dims=1), tf.float32)  # the action's value?\n"
BROKEN_LINE = "    q_action = tf.cast(tf.argmax(q, axis=1), tf.float32)  # the action's value?\n"
PATCHED = STEP.replace(BROKEN_LINE, FIXED_LINE)

DATA = Path(__file__).resolve().parent / "data"
pytest_plugins = ["pytester"]
needs_git = pytest.mark.skipif(GIT is None, reason="needs git")


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run([GIT or "git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def repo(tmp_path: Path, files: dict[str, str | bytes], commit: bool = True) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q")
    for name, content in files.items():
        path = root / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    if commit:
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "start")
    return root


def static(cwd: Path, *args: str):
    return run_cli("--static", *args, cwd=cwd)


# -- --diff: shown, never written ----------------------------------------------------------------
def test_diff_shows_the_verified_patch_and_writes_nothing(tmp_path):
    (tmp_path / "train.py").write_text(STEP, encoding="utf-8")
    done = static(tmp_path, "--diff", "train.py")
    assert done.returncode == 1, done.stderr
    assert (tmp_path / "train.py").read_text(encoding="utf-8") == STEP
    expected = unified_diff(STEP, PATCHED, "train.py")
    assert expected in done.stdout
    assert "= patch: select the Q-value of the taken action instead of its index. Verified: " in done.stdout
    assert "1 verified patch for 1 finding (gradcheck --fix applies them)" in done.stderr
    # what it prints is a patch git applies as it is
    if GIT is not None:
        root = repo(tmp_path, {"train.py": STEP})
        (root / "out.diff").write_text(done.stdout, encoding="utf-8")
        git(root, "apply", "out.diff")
        assert (root / "train.py").read_text(encoding="utf-8") == PATCHED


def test_a_patch_that_does_not_verify_is_not_shown(tmp_path):
    # The rounding is estimated through, but tf.equal cuts the path again: the patched copy
    # still has a finding at that line, so the patch is not shown and the output says why.
    source = STEP.replace(BROKEN_LINE, "    q_action = tf.cast(tf.equal(tf.round(q), 1.0), tf.float32)\n")
    (tmp_path / "train.py").write_text(source, encoding="utf-8")
    done = static(tmp_path, "--diff", "--format", "json", "train.py")
    (finding,) = json.loads(done.stdout)["files"][0]["findings"]
    patch = finding["patch"]
    assert patch["verified"] is False and patch["diff"] == ""
    assert patch["note"].startswith("no verified patch (") and "apply the fix above by hand" in patch["note"]
    text = static(tmp_path, "--diff", "train.py").stdout
    assert "= patch: no verified patch (" in text and "+++ b/train.py" not in text


def test_codes_without_a_mechanical_fix_say_so(tmp_path):
    (tmp_path / "train.py").write_text(STEP, encoding="utf-8")
    report = json.loads(static(tmp_path, "--diff", "--format", "json", "train.py").stdout)
    assert report["files"][0]["findings"][0]["patch"]["verified"] is True
    # a file with no finding gets no patch objects at all, and exits 0
    (tmp_path / "clean.py").write_text(PATCHED, encoding="utf-8")
    clean = static(tmp_path, "--diff", "--format", "json", "clean.py")
    assert clean.returncode == 0 and json.loads(clean.stdout)["files"][0]["findings"] == []


def test_force_needs_fix(tmp_path):
    (tmp_path / "train.py").write_text(STEP, encoding="utf-8")
    done = static(tmp_path, "--force", "train.py")
    assert done.returncode == 2 and "--force only goes with --fix" in done.stderr


# -- --fix: written only when it is safe ---------------------------------------------------------
@needs_git
def test_fix_writes_a_committed_file_and_shows_what_it_wrote(tmp_path):
    root = repo(tmp_path, {"train.py": STEP})
    done = static(root, "--fix", "train.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (root / "train.py").read_text(encoding="utf-8") == PATCHED
    shown = unified_diff(STEP, PATCHED, "train.py")
    assert shown in done.stdout
    body = git(root, "diff").split("@@", 2)[2].split("\n", 1)[1]  # git's hunk, without its headers
    assert shown.split("@@", 2)[2].split("\n", 1)[1] == body
    assert "Fixed 1 finding in 1 file (0 remaining)" in done.stderr
    again = static(root, "train.py")
    assert again.returncode == 0, again.stdout


@needs_git
@pytest.mark.parametrize(
    ("situation", "reason"),
    [
        ("uncommitted", "it has uncommitted changes (git)"),
        ("staged", "it has uncommitted changes (git)"),
        ("untracked", "it is not tracked by git"),
        ("vim", "Vim has unsaved changes to it (.train.py.swp)"),
        ("emacs", "Emacs has unsaved changes to it (.#lock file)"),
        ("latin-1", "it is not UTF-8 (iso-8859-1)"),
    ],
)
def test_fix_refuses_and_force_overrides(tmp_path, situation, reason):
    source = STEP
    if situation == "latin-1":
        source = "# -*- coding: latin-1 -*-\n# Schätzung des Q-Werts\n" + STEP
    data = source.encode("latin-1")
    root = repo(tmp_path, {"train.py": data}, commit=situation != "untracked")
    if situation in ("uncommitted", "staged"):
        data = data.replace(b"SGD(0.1)", b"SGD(0.2)")
        (root / "train.py").write_bytes(data)
        if situation == "staged":
            git(root, "add", "train.py")
    elif situation == "vim":
        swap = bytearray(4096)
        swap[0:2] = b"b0"
        swap[2:9] = b"VIM 9.0"
        swap[1007] = 0x55  # b0_dirty: the buffer has unsaved changes
        (root / ".train.py.swp").write_bytes(bytes(swap))
    elif situation == "emacs":
        os.symlink("user@host.1234:1700000000", root / ".#train.py")
    refused = static(root, "--fix", "train.py")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert f"gradcheck: not fixing train.py: {reason}" in refused.stderr
    assert "--force fixes it anyway" in refused.stderr
    assert (root / "train.py").read_bytes() == data
    assert "+++ b/train.py" in refused.stdout  # the patch is still shown

    forced = static(root, "--fix", "--force", "train.py")
    assert forced.returncode == 0, forced.stdout + forced.stderr
    expected = data.replace(BROKEN_LINE.encode(), FIXED_LINE.encode())
    assert (root / "train.py").read_bytes() == expected  # same encoding, only the culprit changed


def test_fix_outside_git_is_refused(tmp_path):
    (tmp_path / "train.py").write_text(STEP, encoding="utf-8")
    env = {"GIT_CEILING_DIRECTORIES": str(tmp_path.parent)}
    done = run_cli("--static", "--fix", "train.py", cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert "not in a git repository" in done.stderr or "git is not installed" in done.stderr
    assert (tmp_path / "train.py").read_text(encoding="utf-8") == STEP


def test_a_file_changed_since_it_was_checked_is_never_written(tmp_path):
    from gradcheck.fix import safety

    path = tmp_path / "train.py"
    path.write_text("a = 1\n", encoding="utf-8")
    original = path.read_bytes()
    path.write_text("a = 2\n", encoding="utf-8")  # the user saved in between
    assert (
        safety.write(str(path), original, "a = 3\n", "utf-8")
        == "it changed on disk while gradcheck ran; check it again"
    )
    assert path.read_text(encoding="utf-8") == "a = 2\n"
    path.write_bytes(original)
    path.chmod(0o750)
    assert safety.write(str(path), original, "a = 3\n", "utf-8") is None
    assert path.read_text(encoding="utf-8") == "a = 3\n" and (path.stat().st_mode & 0o777) == 0o750


# -- the seed DQN, through the trace engine --------------------------------------------------------
SEED = ROOT / "examples" / "dqn_broken.py"
SEED_FIX = "            metric = tf.gather(y_pred, tf.math.argmin(y_pred, axis=1), batch_dims=1)\n"


@pytest.fixture(scope="module")
def seed_json():
    pytest.importorskip("tensorflow")
    done = run_cli("--diff", "--format", "json", "examples/dqn_broken.py")
    assert done.returncode == 1, done.stderr
    return json.loads(done.stdout)


def _validator(path: Path) -> jsonschema.Validator:
    schema = json.loads(path.read_text(encoding="utf-8"))
    return jsonschema.validators.validator_for(schema)(schema)


def test_seed_dqn_json_patch(seed_json):
    validator = _validator(ROOT / "gradcheck" / "schema" / "report-v1.json")
    errors = list(validator.iter_errors(seed_json))
    assert not errors, errors[:3]
    (finding,) = seed_json["files"][0]["findings"]
    patch = finding["patch"]
    assert patch["verified"] is True
    assert "-            metric = tf.math.argmin(y_pred, axis=1)\n" in patch["diff"]
    assert "+" + SEED_FIX in patch["diff"]
    assert patch["note"].startswith("select the Q-value of the chosen action instead of its index. Verified: ")
    assert "fields" not in finding  # the engine's template fields stay internal


def test_seed_dqn_sarif_fix_validates(seed_json):
    report = Report([FileResult.from_json(f) for f in seed_json["files"]])
    log = json.loads(render(report, "sarif"))
    validator = _validator(DATA / "sarif-schema-2.1.0.json")
    errors = list(validator.iter_errors(log))
    assert not errors, [e.message for e in errors[:3]]
    assert log == sarif_log(report)
    (result,) = log["runs"][0]["results"]
    (fix,) = result["fixes"]
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "examples/dqn_broken.py"
    (replacement,) = change["replacements"]
    line = (
        SEED.read_text(encoding="utf-8").splitlines().index("            metric = tf.math.argmin(y_pred, axis=1)") + 1
    )
    assert replacement["deletedRegion"] == {"startLine": line, "startColumn": 1, "endLine": line, "endColumn": 52}
    assert replacement["insertedContent"]["text"] == SEED_FIX.rstrip("\n")
    # applying the replacement to the file gives the patched file
    lines = SEED.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[line - 1] = replacement["insertedContent"]["text"] + "\n"
    assert "".join(lines) == SEED.read_text(encoding="utf-8").replace(
        "            metric = tf.math.argmin(y_pred, axis=1)\n", SEED_FIX
    )


def test_seed_dqn_github_links_the_patch(seed_json, monkeypatch):
    report = Report([FileResult.from_json(f) for f in seed_json["files"]])
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert "Verified patch: run `gradcheck --diff examples/dqn_broken.py` to see it" in render(report, "github")
    for key, value in {
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "me/dqn",
        "GITHUB_RUN_ID": "42",
        "GITHUB_STEP_SUMMARY": "/tmp/summary.md",
    }.items():
        monkeypatch.setenv(key, value)
    line = render(report, "github")
    assert "Verified patch: https://github.com/me/dqn/actions/runs/42 (job summary" in line.replace("%0A", "\n")
    summary = step_summary(report)
    assert "```diff\n--- a/examples/dqn_broken.py" in summary and "+" + SEED_FIX in summary


@needs_git
def test_seed_dqn_fix_turns_it_into_working_code(tmp_path):
    pytest.importorskip("tensorflow")
    root = repo(tmp_path, {"dqn_broken.py": SEED.read_text(encoding="utf-8")})
    fixed = run_cli("--fix", "dqn_broken.py", cwd=root)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert SEED_FIX in (root / "dqn_broken.py").read_text(encoding="utf-8")
    assert git(root, "diff", "--stat").strip().endswith("1 insertion(+), 1 deletion(-)")
    again = run_cli("dqn_broken.py", cwd=root)
    assert again.returncode == 0, again.stdout
    trained = subprocess.run(
        [sys.executable, "dqn_broken.py"], cwd=root, capture_output=True, text=True, timeout=600, check=False
    )
    assert trained.returncode == 0, trained.stderr[-2000:]
    losses = [float(line.rsplit("loss: ", 1)[1]) for line in trained.stdout.splitlines() if "loss: " in line]
    assert len(losses) == 3 and losses[-1] < losses[0]  # three epochs, and it learns


def test_pytest_failure_message_shows_the_verified_patch(pytester):
    pytest.importorskip("tensorflow")
    scripts = pytester.mkdir("scripts")
    (scripts / "train.py").write_text(STEP, encoding="utf-8")
    result = pytester.runpytest_subprocess("--gradcheck", "scripts")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "= patch: select the Q-value of the taken action instead of its index. Verified: " in out
    assert unified_diff(STEP, PATCHED, "scripts/train.py").strip() in out
    assert (scripts / "train.py").read_text(encoding="utf-8") == STEP  # shown, not written


# -- pre-commit: the hook variant that fixes ---------------------------------------------------------
PRE_COMMIT = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")


@needs_git
@pytest.mark.skipif(PRE_COMMIT is None, reason="needs pre-commit")
def test_precommit_fix_hook_patches_the_staged_file(tmp_path):
    hook_repo = tmp_path / "hooks" / "gradcheck"
    shutil.copytree(ROOT / "gradcheck", hook_repo / "gradcheck", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", ".pre-commit-hooks.yaml", "README.md", "LICENSE"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, hook_repo / name)
    git(hook_repo, "init", "-q")
    git(hook_repo, "add", "-A")
    git(hook_repo, "commit", "-q", "-m", "snapshot")
    rev = git(hook_repo, "rev-parse", "HEAD").strip()
    config = f"repos:\n  - repo: {hook_repo}\n    rev: {rev}\n    hooks:\n      - id: gradcheck-fix\n"
    root = repo(tmp_path, {".pre-commit-config.yaml": config, "train.py": STEP}, commit=False)
    git(root, "add", "-A")  # staged, not committed: what a commit hook sees
    env = {
        **os.environ,
        **GIT_ENV,
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    done = subprocess.run(
        [PRE_COMMIT, "run", "gradcheck-fix", "--files", "train.py", "--color", "never"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output  # pre-commit fails a hook that changed files
    assert "files were modified by this hook" in output
    assert "+++ b/train.py" in output and "Fixed 1 finding in 1 file (0 remaining)" in output
    assert (root / "train.py").read_text(encoding="utf-8") == PATCHED
    assert git(root, "diff", "--name-only").split() == ["train.py"]  # left unstaged for review
