"""Check many files: each script runs in its own child process (``gradcheck.trace.child``)
with a timeout, ``jobs`` at a time; results come back in a deterministic order.

Everything that can go wrong with a file (missing, not Python, a syntax error, a crash, a
hang) ends as that file's one-line GC9xx reason, and the other files are still checked.
Nothing here imports TensorFlow.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import tokenize
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from gradcheck import discover, suppress
from gradcheck.config import Config
from gradcheck.findings import CHECKED, ERROR, SKIPPED, TIMEOUT, CheckError, FileResult
from gradcheck.report import Report


@dataclass
class Options:
    steps: int = 1
    timeout: float = 120.0
    allow_none: list[str] = field(default_factory=list)
    jobs: int = 1
    verbose: bool = False
    static: bool = False
    #: Trace only training code, even among the files named directly (the pre-commit hook
    #: passes every changed file); ``PATH::function`` targets are always checked.
    training_only: bool = False
    graph: bool = False  # attach each cut's subgraph (for --graph pictures)


def check_targets(
    targets: list[str],
    config: Config,
    options: Options,
    progress: Callable[[int, int, str], None] | None = None,
) -> Report:
    named = {discover.split_target(t)[0] for t in targets}
    files, missing = discover.expand(targets, config)
    results: dict[str, FileResult] = {}
    for path in missing:
        results[path] = _error(path, "GC901", "no such file or directory")
    to_run: list[str] = []
    for target in files:
        path, function = discover.split_target(target)
        traced_if_training = not options.static and function is None and (path not in named or options.training_only)
        if traced_if_training and not discover.is_training_script(path, config):
            results[target] = FileResult(path, SKIPPED)
            continue
        problem = _precheck(path)
        if problem is not None and options.static and problem.error.code == "GC902":
            results[target] = FileResult(path, CHECKED)  # an empty file (``__init__.py``) reads as clean
        elif problem is not None:
            results[target] = problem
        else:
            to_run.append(target)
    if options.static:
        from gradcheck.static import check_file as static_check

        for target in to_run:
            results[target] = static_check(discover.split_target(target)[0])
    else:
        done = 0

        def run(target: str) -> FileResult:
            nonlocal done
            result = run_child(target, options)
            done += 1
            if progress is not None:
                progress(done, len(to_run), target)
            return result

        with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
            for target, result in zip(to_run, pool.map(run, to_run), strict=False):
                results[target] = result
    ordered = [results[t] for t in [*missing, *files] if t in results]
    for result in ordered:
        result.findings = [f for f in suppress.filter_findings(result.findings) if config.code_selected(f.code, f.path)]
    return Report(ordered)


def _error(path: str, code: str, message: str) -> FileResult:
    return FileResult(path, ERROR, CheckError(code, message))


def _precheck(path: str) -> FileResult | None:
    """Reasons to not even start a child: not Python, unreadable, empty, a syntax error."""
    if not path.endswith(".py"):
        return _error(path, "GC901", "not a Python source file (.py)")
    try:
        with tokenize.open(path) as fh:  # honours a BOM and a coding cookie, as Python does
            source = fh.read()
    except (SyntaxError, UnicodeDecodeError) as error:
        return _error(path, "GC901", f"cannot decode the file: {error}")
    except OSError as error:
        return _error(path, "GC901", f"cannot read the file: {error.strerror or error}")
    if not source.strip():
        return _error(path, "GC902", "the file is empty: nothing computes a gradient")
    try:
        with warnings.catch_warnings():  # SyntaxWarnings about the user's code are not ours to print
            warnings.simplefilter("ignore")
            compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as error:
        return _error(path, "GC901", f"SyntaxError: {error.msg} (line {error.lineno})")
    except ValueError as error:  # e.g. null bytes
        return _error(path, "GC901", f"cannot compile the file: {error}")
    return None


def child_command(target: str, options: Options, result_path: str, display: str | None = None) -> list[str]:
    path, function = discover.split_target(target)
    cmd = [sys.executable, "-m", "gradcheck.trace.child", "--result", result_path, "--steps", str(options.steps)]
    for pattern in options.allow_none:
        cmd += ["--allow-none", pattern]
    if options.graph:
        cmd.append("--graph")
    if function:
        cmd += ["--function", function]
    cmd += ["--display-path", display or path, "--", path]
    return cmd


#: Children are started one at a time (``-j`` runs them in parallel once started): forking
#: from several threads at once is where a busy process meets the rare fork/exec failure.
_SPAWN = threading.Lock()


def run_child(target: str, options: Options, display: str | None = None) -> FileResult:
    """Check one file in a child process. ``display`` is the path findings carry."""
    path, _ = discover.split_target(target)
    shown = display or path
    with tempfile.TemporaryDirectory(prefix="gradcheck-") as tmp:
        result_path = os.path.join(tmp, "result.json")
        log_path = os.path.join(tmp, "output.log")
        env = dict(os.environ)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        env.setdefault("PYTHONUNBUFFERED", "1")
        with open(log_path, "wb") as log, open(os.devnull, "rb") as devnull:
            try:
                with _SPAWN:
                    proc = subprocess.Popen(
                        child_command(target, options, result_path, shown),
                        stdin=devnull,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        env=env,
                        start_new_session=True,
                    )
            except OSError as error:
                return _error(shown, "GC901", f"could not start the checker process: {error.strerror or error}")
            timed_out = False
            try:
                proc.wait(timeout=options.timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(proc)
        result = _read_result(result_path)
        if timed_out:
            if result is not None and result.findings:
                result.status = CHECKED
            else:
                result = FileResult(
                    shown,
                    TIMEOUT,
                    CheckError("GC903", f"no gradient was checked within {options.timeout:g} s (raise --timeout)"),
                )
        elif result is None:
            result = _error(shown, "GC901", _death_reason(proc.returncode))
        if options.verbose and result.error is not None:
            _echo_tail(path, log_path)
        return result


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def _read_result(path: str) -> FileResult | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return FileResult.from_json(json.load(fh))
    except (OSError, ValueError, KeyError):
        return None


def _death_reason(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"the script crashed the Python process ({name}) before any gradient was checked"
    return f"the script ended the process (exit status {returncode}) before any gradient was checked"


def _echo_tail(path: str, log_path: str, lines: int = 60) -> None:
    try:
        with open(log_path, encoding="utf-8", errors="replace") as fh:
            tail = fh.readlines()[-lines:]
    except OSError:
        return
    if tail:
        sys.stderr.write(f"--- last output of {path} ---\n{''.join(tail)}")
