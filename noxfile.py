"""The supported version matrix: Python 3.10–3.13 × TensorFlow 2.16 / 2.18 / 2.21 × Keras 3 / tf_keras.

    nox -l                                          # every session
    nox -s "matrix(py='3.10', tf='2.16', keras='3')"
    nox -t oldest newest                            # what CI runs beside the full suite
    nox -s "matrix(py='3.12', tf='2.18', keras='tf_keras')" -- tests/test_cli.py   # other tests

Each session runs the real-world cases (``tests/test_realworld.py``) and the smoke set
(``SMOKE``) by default, or the pytest arguments given after ``--``; a Keras 3 session on the
main combination's TensorFlow (whose cases the full suite runs) runs the smoke set only. ``keras='tf_keras'``
sets ``TF_USE_LEGACY_KERAS=1`` (``tf.keras`` is Keras 2) and runs the Keras 2 cases and
tests (marker ``keras2``); ``keras='3'`` runs the others. The oldest and newest tf_keras
sessions (CI's) split the Keras 2 real-world cases between them, half each
(``TF_KERAS_SHARDS``); given pytest arguments, a session runs what they name.

Both Keras modes of one Python × TensorFlow pair share one virtual environment,
``.nox/pyX.Y-tfA.B`` (about 1.3–1.8 GB each; ``$GRADCHECK_NOX_ENVS/pyX.Y-tfA.B`` when set),
made on first use and reused while the installed requirements are unchanged (gradcheck
itself is an editable install of this checkout): nox's own environments would be one per
session.
TensorFlow has no Python 3.13 wheels before 2.20, so 3.13 runs with 2.21 only.
``tf-keras`` depends on ``tensorflow``, not ``tensorflow-cpu``: it is installed with
``--no-deps``, pinned to the same minor version.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent
PYTHONS = ("3.10", "3.11", "3.12", "3.13")
TENSORFLOWS = ("2.16", "2.18", "2.21")
KERAS = ("3", "tf_keras")
#: TensorFlow's first release with wheels for each Python.
FIRST_TF = {"3.13": "2.20"}
#: The combination CI runs the full suite on (the README's command, in ``.venv``).
MAIN = ("3.11", "2.21")
OLDEST = ("3.10", "2.16")
NEWEST = ("3.13", "2.21")

#: The Keras 2 real-world cases split between CI's two tf_keras sessions (tests/test_realworld.py).
TF_KERAS_SHARDS = {OLDEST: "0/2", NEWEST: "1/2"}

#: Fast tests that touch every layer a version change can break: the CLI and its child,
#: eager and graph lines, fit, tf_keras, notebooks, argv, tf.distribute.
SMOKE = (
    "tests/test_versions.py",
    "tests/test_notebook.py",
    "tests/test_distribute.py",
    "tests/test_argv.py::test_arguments_after_a_double_dash_reach_the_script",
    "tests/test_readme.py::test_readme_output_excerpt_is_real",
    "tests/test_modes.py",
)
#: What every environment installs beside gradcheck and TensorFlow.
TEST_REQUIREMENTS = ("pytest>=8", "pytest-xdist>=3", "jsonschema>=4.18", "nbformat>=5", "ipython>=8")

#: Where the environments live: .nox/ here, or GRADCHECK_NOX_ENVS (CI keeps them between its fresh clones).
ENVS = Path(os.environ.get("GRADCHECK_NOX_ENVS") or ROOT / ".nox")

nox.options.sessions = ["matrix"]
nox.options.reuse_existing_virtualenvs = True


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def combinations() -> list[tuple[str, str]]:
    return [
        (py, tf) for py in PYTHONS for tf in TENSORFLOWS if _version_tuple(tf) >= _version_tuple(FIRST_TF.get(py, "0"))
    ]


def _params() -> list:
    out = []
    for py, tf in combinations():
        for keras in KERAS:
            tags = [f"py{py}", f"tf{tf}", f"keras-{keras}"]
            tags += [
                name for name, combo in (("oldest", OLDEST), ("newest", NEWEST), ("main", MAIN)) if combo == (py, tf)
            ]
            out.append(nox.param(py, tf, keras, tags=tags))
    return out


def find_python(version: str) -> str | None:
    """``pythonX.Y`` on PATH (a pyenv shim only if it runs), else a pyenv installation of it."""
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates = [shutil.which(f"python{version}")]
    candidates += sorted(
        glob.glob(os.path.join(root, "versions", f"{version}.*", "bin", f"python{version}")), reverse=True
    )
    for candidate in candidates:
        if candidate and subprocess.run([candidate, "-c", ""], capture_output=True, check=False).returncode == 0:
            return candidate
    return None


def _project_requirements() -> str:
    """What in pyproject.toml an editable install depends on (code changes need no reinstall)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    keys = ("dependencies", "scripts", "entry-points", "requires-python")
    wanted = {key: project.get(key) for key in keys}
    wanted["test"] = project.get("optional-dependencies", {}).get("test")
    return repr(wanted)


def environment(session: nox.Session, py: str, tf: str) -> Path:
    """The shared virtual environment for ``py`` × ``tf``, made or refreshed as needed."""
    venv = ENVS / f"py{py}-tf{tf}"
    python = venv / "bin" / "python"
    wanted = "\n".join(
        [f"tensorflow-cpu=={tf}.*", f"tf-keras=={tf}.* --no-deps", *TEST_REQUIREMENTS, _project_requirements()]
    )
    stamp = venv / "gradcheck-requirements.txt"
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        # the environment may have been made for another checkout (CI's fresh clones)
        where = subprocess.run(
            [str(python), "-c", "import gradcheck; print(gradcheck.__file__)"],
            cwd=venv,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        if not where.startswith(str(ROOT / "gradcheck")):
            session.run(str(python), "-m", "pip", "install", "-q", "--no-deps", "-e", str(ROOT), external=True)
        return venv
    interpreter = find_python(py)
    if interpreter is None:
        session.skip(f"Python {py} is not installed (neither python{py} on PATH nor under pyenv)")
    if venv.exists():
        shutil.rmtree(venv)
    session.run(interpreter, "-m", "venv", str(venv), external=True)
    pip = (str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check")
    # the test extra: every test module imports (the README's Keras 2 command collects tests/)
    session.run(*pip, "-e", ".[test]", f"tensorflow-cpu=={tf}.*", *TEST_REQUIREMENTS, external=True)
    session.run(*pip, "--no-deps", f"tf-keras=={tf}.*", external=True)
    stamp.write_text(wanted)
    return venv


@nox.session(venv_backend="none")
@nox.parametrize("py,tf,keras", _params())
def matrix(session: nox.Session, py: str, tf: str, keras: str) -> None:
    """Real-world cases and the smoke set on one Python × TensorFlow × Keras combination."""
    venv = environment(session, py, tf)
    python = str(venv / "bin" / "python")
    env = {"VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    env["TF_USE_LEGACY_KERAS"] = "1" if keras == "tf_keras" else "0"
    versions = subprocess.run(
        [python, "-m", "gradcheck", "--version"], env={**os.environ, **env}, capture_output=True, text=True, check=False
    )
    session.log(versions.stdout.strip() or versions.stderr.strip())
    # by default the tests of this Keras: the Keras 2 cases and tests (marker keras2) or the others
    marker = "keras2" if keras == "tf_keras" else "not keras2"
    default = ["tests/test_realworld.py", *SMOKE]
    if (py, tf) != OLDEST and (keras, tf) == ("3", MAIN[1]):
        # the full suite already runs every Keras 3 case on this TensorFlow (in CI's .venv):
        # on another Python, the smoke set covers what a Python version can break
        default = list(SMOKE)
    if keras == "tf_keras" and not session.posargs and (py, tf) in TF_KERAS_SHARDS:
        # CI's two tf_keras sessions each run half the Keras 2 cases (a fixed split by name):
        # every case runs once per CI, on the oldest or the newest TensorFlow, in half the time
        env["GRADCHECK_REALWORLD_SHARD"] = TF_KERAS_SHARDS[(py, tf)]
    args = session.posargs or ["-n", "2", "-m", marker, *default]
    session.run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, env=env, external=True)
