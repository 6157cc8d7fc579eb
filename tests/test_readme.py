"""The README's set-up commands are what CI runs and what users type."""

from __future__ import annotations

import re

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def _commands() -> list[str]:
    return re.findall(r"```sh\n(.+?)\n```", README)


def test_readme_has_the_two_setup_commands_and_the_keras2_one():
    commands = _commands()
    assert len(commands) == 3
    assert commands[0].endswith("gradcheck examples/dqn_broken.py")
    assert commands[1].split(" && ")[-1].startswith("python -m pytest")
    # the part the test command skips: the Keras 2 tests, in nox's environment with tf-keras
    assert (
        commands[2].startswith('nox -s "matrix(') and "keras='tf_keras'" in commands[2] and "-m keras2" in commands[2]
    )


def test_readme_says_what_the_test_command_skips():
    for words in ("keras2", "tf_keras", "Graphviz", "--no-deps"):
        assert words in README, words


def test_nox_installs_tf_keras_without_a_second_tensorflow():
    noxfile = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    assert 'f"tensorflow-cpu=={tf}.*"' in noxfile
    assert '"--no-deps", f"tf-keras=={tf}.*"' in noxfile  # tf-keras's own dependency is `tensorflow`


def test_ci_runs_the_readme_test_command_verbatim():
    assert _commands()[1] in CI.splitlines()


def test_readme_output_excerpt_is_real():
    """The excerpt is what the CLI prints today: stdout, then the summary on stderr."""
    from tests.conftest import run_cli

    block = README.split("$ gradcheck examples/dqn_broken.py\n", 1)[1].split("\n```", 1)[0]
    proc = run_cli("examples/dqn_broken.py")
    assert (proc.stdout + proc.stderr).rstrip("\n") == block
