"""``[tool.gradcheck]`` is found per checked file, as ruff finds its settings: the nearest
``pyproject.toml`` above the file that has the table; the command line's options on top."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ROOT, run_cli

BROKEN = (ROOT / "examples" / "dqn_broken.py").read_text(encoding="utf-8")


def _tree(root: Path) -> Path:
    proj = root / "proj"
    (proj / "sub").mkdir(parents=True)
    (proj / "pyproject.toml").write_text('[tool.gradcheck]\nignore = ["GC101"]\nexclude = ["generated"]\n')
    (proj / "train.py").write_text(BROKEN)
    (proj / "generated").mkdir()
    (proj / "generated" / "train.py").write_text(BROKEN.replace("argmin", "argmax"))
    # another tool's pyproject.toml (no [tool.gradcheck]) does not hide the project's
    (proj / "sub" / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    (proj / "sub" / "train.py").write_text(BROKEN)
    (root / "other").mkdir()
    (root / "other" / "train.py").write_text(BROKEN)
    return root


def test_a_projects_settings_apply_when_checked_from_its_parent(tmp_path):
    root = _tree(tmp_path)
    proc = run_cli("--static", "--format", "concise", "proj", "other", cwd=root)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    reported = sorted(line.split(":")[0] for line in proc.stdout.splitlines() if "GC101" in line)
    assert reported == ["other/train.py"]  # proj's ignore and exclude held, for proj's files only
    assert "generated" not in proc.stdout


def test_the_same_from_inside_the_project(tmp_path):
    root = _tree(tmp_path)
    proc = run_cli("--static", ".", cwd=root / "proj")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_command_line_goes_on_top_of_each_projects_settings(tmp_path):
    root = _tree(tmp_path)
    # --select replaces the selection everywhere; proj's ignore still holds there
    proc = run_cli("--static", "--select", "GC1", "--format", "concise", "proj/train.py", "other/train.py", cwd=root)
    assert [line.split(":")[0] for line in proc.stdout.splitlines() if "GC101" in line] == ["other/train.py"]
    # --ignore adds to it
    proc = run_cli("--static", "--ignore", "GC101", "proj/train.py", "other/train.py", cwd=root)
    assert proc.returncode == 0, proc.stdout
