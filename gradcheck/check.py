"""Check many files: each script runs in its own child process (``gradcheck.trace.run.child``)
with a timeout, ``jobs`` at a time; results come back in a deterministic order.

Everything that can go wrong with a file (missing, not Python, a syntax error, a crash, a
hang) ends as that file's one-line GC9xx reason, and the other files are still checked.
However a check ends (its end, the timeout, a signal to gradcheck), every process its
script started ends with it (``processes``). Nothing here imports TensorFlow.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tokenize
import warnings
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from gradcheck import discover, notebook, processes, sourcefile, suppress
from gradcheck.config import Config
from gradcheck.findings import CHECKED, ERROR, PARTIAL, SKIPPED, TIMEOUT, CheckError, FileResult
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
    #: GC301's full finite-difference comparison of every tf.custom_gradient call (a cheap one runs by default).
    check_custom_gradients: bool = False
    #: Command-line arguments for every script (``gradcheck train.py -- --epochs 1``).
    argv: list[str] = field(default_factory=list)
    #: ``-m pkg.train``: the one target is that module's file, run as ``python -m`` runs it.
    module: str | None = None
    #: Seconds without a checked gradient before a file gets a "still running" note
    #: (a replay buffer filling up, data loading); None: no notes.
    note_after: float | None = None
    #: Where notes go (the CLI: stderr).
    note: Callable[[str], None] | None = None
    #: Told when a file's child starts (its shown path and a function giving the last line the
    #: script printed) and ends (None): the CLI's live status line.
    running: Callable[[str, Callable[[], str] | None], None] | None = None


def check_targets(
    targets: list[str],
    config: Config,
    options: Options,
    progress: Callable[[int, int, str], None] | None = None,
    on_result: Callable[[FileResult], None] | None = None,
    total: Callable[[int], None] | None = None,
) -> Report:
    """Check every target. ``on_result`` gets each file's final result (findings filtered)
    as soon as it and every file before it in the report's order are done: the output
    streams with ``-j N`` and its order still does not depend on ``N``."""
    named = {discover.split_target(t)[0] for t in targets}
    files, missing, unreadable = discover.expand(targets, config)
    results: dict[str, FileResult] = {}
    for path in missing:
        results[path] = _error(path, "GC901", "no such file or directory")
    for path, reason in unreadable.items():
        results[path] = _error(path, "GC901", reason)
    to_run: list[str] = []
    for target in files:
        path, function = discover.split_target(target)
        limit = sourcefile.MAX_NOTEBOOK_BYTES if notebook.is_notebook(path) else sourcefile.MAX_SOURCE_BYTES
        reason = sourcefile.problem(path, limit)  # before anything opens it: a FIFO would hang the pre-filter
        if reason is not None:
            results[target] = _error(path, "GC901", reason)
            continue
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
    if total is not None:
        total(len(to_run))  # how many files will run: the status line's [done/total]
    order = [*missing, *unreadable, *files]
    emitted = 0
    finished: set[str] = set()
    lock = threading.Lock()

    def finish(target: str | None = None) -> None:
        """Filter a finished file's findings; hand on every file now due, in order."""
        nonlocal emitted
        with lock:
            if target is not None:
                finished.add(target)
            while emitted < len(order):
                current = order[emitted]
                if current in results and current not in finished and current not in to_run_set:
                    finished.add(current)  # decided without running (missing, skipped, precheck)
                if current not in finished:
                    break
                result = results[current]
                result.findings = suppress.filter_findings(result.findings)
                # the file's own project settings (the nearest [tool.gradcheck] above it)
                config.for_path(discover.split_target(current)[0]).apply_selection(result)
                emitted += 1
                if on_result is not None:
                    on_result(result)

    to_run_set = set(to_run)
    finish()
    if options.static:
        from gradcheck.static import check_file as static_check
        from gradcheck.static import check_notebook as static_notebook

        for target in to_run:
            path, function = discover.split_target(target)
            if notebook.is_notebook(path):
                results[target] = static_notebook(path)
                notebook.register_cells(path)  # for noqa comments and the code frames, as after a trace
            else:
                results[target] = static_check(path, function)
            finish(target)
    else:
        done = 0
        stop = threading.Event()  # set when this thread is interrupted: every check ends at once

        def run(target: str) -> FileResult | None:
            nonlocal done
            if stop.is_set():
                return None  # queued behind the interrupted checks: never started
            result = run_child(target, options, stop=stop)
            if stop.is_set():
                return None  # nothing of an interrupted run is reported
            results[target] = result
            with lock:
                done += 1
                if progress is not None:
                    progress(done, len(to_run), target)
            finish(target)
            return result

        with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
            try:
                list(pool.map(run, to_run))
            except BaseException:  # KeyboardInterrupt, the CLI's signals: the children go now
                stop.set()
                raise
    return Report([results[t] for t in order if t in results])


def _error(path: str, code: str, message: str) -> FileResult:
    return FileResult(path, ERROR, CheckError(code, message))


def _precheck(path: str) -> FileResult | None:
    """Reasons to not even start a child: not Python, unreadable, empty, a syntax error."""
    if notebook.is_notebook(path):
        problem = notebook.precheck(path)
        return _error(path, *problem) if problem is not None else None
    if not path.endswith(".py"):
        return _error(path, "GC901", "not a Python source file (.py or .ipynb)")
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
    except (RecursionError, MemoryError) as error:  # a 5,000-term expression: python cannot run it either
        return _error(path, "GC901", f"Python cannot compile the file: {type(error).__name__}: {error}")
    return None


def child_command(target: str, options: Options, result_path: str, display: str | None = None) -> list[str]:
    path, function = discover.split_target(target)
    cmd = [sys.executable, *interpreter_flags(), "-m", "gradcheck.trace.run.child"]
    cmd += ["--result", result_path, "--steps", str(options.steps)]
    for pattern in options.allow_none:
        cmd += ["--allow-none", pattern]
    if options.graph:
        cmd.append("--graph")
    if options.check_custom_gradients:
        cmd.append("--check-custom-gradients")
    if function:
        cmd += ["--function", function]
    if options.module:
        cmd += ["--module", options.module]
    cmd += ["--display-path", display or path, "--", path, *options.argv]
    return cmd


def interpreter_flags() -> list[str]:
    """The flags this Python was started with that the script can see (``sys.flags``,
    ``sys.warnoptions``, ``sys._xoptions``): ``python -W error -m gradcheck t.py`` runs the
    script as ``python -W error t.py`` would."""
    flags = sys.flags
    out = ["-O"] * flags.optimize + ["-b"] * flags.bytes_warning
    for name, flag in (("dont_write_bytecode", "-B"), ("no_user_site", "-s"), ("safe_path", "-P")):
        if getattr(flags, name, False) and not flags.isolated:
            out.append(flag)
    if flags.isolated:
        out.append("-I")  # implies -E -s -P
    elif flags.ignore_environment:
        out.append("-E")
    for name, value in sys._xoptions.items():
        out += ["-X", name if value is True else f"{name}={value}"]
    return out + [f"-W{option}" for option in _command_line_warnoptions()]


def _command_line_warnoptions() -> list[str]:
    """``sys.warnoptions`` less what the child makes again by itself: ``-X dev``'s first
    ``default``, ``PYTHONWARNINGS`` (the child has the same environment) and ``-b``'s last
    BytesWarning filter."""
    options = list(sys.warnoptions)
    if sys.flags.dev_mode and options[:1] == ["default"]:
        options = options[1:]
    env = os.environ.get("PYTHONWARNINGS") if not sys.flags.ignore_environment else None
    if env:
        from_env = [part for part in env.split(",") if part]
        if options[: len(from_env)] == from_env:
            options = options[len(from_env) :]
    if sys.flags.bytes_warning and options and options[-1].endswith("::BytesWarning"):
        options = options[:-1]
    return options


#: How often a running check looks at its stop event, and how often it looks for the
#: processes its script started (a /proc scan costs some milliseconds; a process that
#: escapes between two scans is re-parented to the subreaper, ``processes``).
_POLL = 0.1
_SCAN_EVERY = 0.5
#: The environment variable naming the child's end of the "where are you?" pipe; the child
#: removes it before the script runs (``trace.run.child._answer_where``).
WHERE_FD = "GRADCHECK_WHERE_FD"


def run_child(
    target: str, options: Options, display: str | None = None, stop: threading.Event | None = None
) -> FileResult:
    """Check one file in a child process. ``display`` is the path findings carry; once
    ``stop`` is set the check ends at once (a signal to gradcheck). Whatever way the check
    ends, every process the script started is killed and the temporary files are removed."""
    path, _ = discover.split_target(target)
    shown = display or path
    if stop is not None and stop.is_set():
        return _error(shown, "GC901", "gradcheck was stopped before this file was checked")
    limit = sourcefile.MAX_NOTEBOOK_BYTES if notebook.is_notebook(path) else sourcefile.MAX_SOURCE_BYTES
    reason = sourcefile.problem(path, limit)  # callers other than check_targets (pytest --gradcheck)
    if reason is not None and os.path.lexists(path):  # a missing file: the runner says it, as before
        return _error(shown, "GC901", reason)
    with tempfile.TemporaryDirectory(prefix="gradcheck-") as tmp:
        result_path = os.path.join(tmp, "result.json")
        # the script's environment as under python (no TF_CPP_MIN_LOG_LEVEL: it may set its
        # own default); TensorFlow's log lines go to the captured output, shown only by -v
        env = dict(os.environ)
        env.setdefault("PYTHONUNBUFFERED", "1")
        ask_read, ask_write = os.pipe()  # "where are you?", answered by a thread of the child
        env[WHERE_FD] = str(ask_read)
        out_read, out_write = os.pipe()  # the script's stdout and stderr, of which a tail is kept
        try:
            with open(os.devnull, "rb") as devnull:
                proc, tree = processes.start(
                    lambda: subprocess.Popen(
                        child_command(target, options, result_path, shown),
                        stdin=devnull,
                        stdout=out_write,
                        stderr=subprocess.STDOUT,
                        env=env,
                        start_new_session=True,
                        pass_fds=(ask_read,),
                    )
                )
        except OSError as error:
            for fd in (ask_read, ask_write, out_read, out_write):
                os.close(fd)
            return _error(shown, "GC901", f"could not start the checker process: {error.strerror or error}")
        os.close(ask_read)
        os.close(out_write)
        tail = OutputTail(out_read)
        if options.running is not None:
            options.running(shown, tail.last_line)
        try:
            outcome = _wait(proc, tree, options, shown, result_path, stop)
            where = _where(proc, result_path, ask_write) if outcome == "timeout" else None
        finally:
            if options.running is not None:
                options.running(shown, None)
            tree.end(proc)  # normal end, timeout, stop or an exception (KeyboardInterrupt): all of them
            os.close(ask_write)
            tail.join()
        result = _read_result(result_path)
        if outcome == "stopped":
            return _error(shown, "GC901", "gradcheck was stopped (a signal) before this file's check ended")
        if outcome == "timeout":
            if result is not None and (result.findings or result.steps_checked):
                # what was checked before the time ran out stands; what it did not reach is named
                result.status = PARTIAL if result.not_reached else CHECKED
                if result.not_reached:
                    result.ended = f"the time ran out first: --timeout {options.timeout:g} s"
            else:
                result = FileResult(shown, TIMEOUT, CheckError("GC903", timeout_reason(options.timeout, where, shown)))
        elif result is None:
            result = _error(shown, "GC901", _death_reason(proc.returncode))
        if options.verbose and result.error is not None:
            _echo_tail(path, tail.text())
        if notebook.is_notebook(path):
            notebook.register_cells(path, shown)  # the code frames of `nb.ipynb:cell N` findings
        return result


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class OutputTail:
    """The last ``limit`` bytes a child wrote, read from a pipe by a thread. A script that
    prints without end (~175 MB/s) fills no disk and no memory: what ``-v`` shows is its
    last lines."""

    def __init__(self, fd: int, limit: int = 1 << 20) -> None:
        self.limit = limit
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self.dropped = False  # something was dropped from the front: the first line is partial
        self._thread = threading.Thread(target=self._read, args=(fd,), name="gradcheck-output", daemon=True)
        self._thread.start()

    def _read(self, fd: int) -> None:
        try:
            while True:
                data = os.read(fd, 1 << 16)
                if not data:
                    return
                self._chunks.append(data)
                self._size += len(data)
                while self._size - len(self._chunks[0]) >= self.limit:
                    self._size -= len(self._chunks.popleft())
                    self.dropped = True
        except OSError:
            return
        finally:
            os.close(fd)

    def join(self, timeout: float = 2.0) -> None:
        """Until the pipe's end (every writer is gone); a writer that escaped the kill holds
        it open, and then the tail is what came so far."""
        self._thread.join(timeout)

    def last_line(self) -> str:
        """The last line the script printed so far (a progress bar's latest state)."""
        for chunk in reversed(list(self._chunks)[-8:]):
            lines = [ln for ln in chunk.replace(b"\r", b"\n").split(b"\n") if ln.strip()]
            if lines:
                return _ANSI.sub("", lines[-1].decode("utf-8", errors="replace")).strip()
        return ""

    def text(self) -> str:
        data = b"".join(list(self._chunks))[-self.limit :]
        if self.dropped:
            data = data[data.find(b"\n") + 1 :]  # a line cut in the middle is not shown
        return data.decode("utf-8", errors="replace")


def _wait(
    proc: subprocess.Popen,
    tree: processes.Tree,
    options: Options,
    shown: str,
    result_path: str,
    stop: threading.Event | None = None,
) -> str:
    """Wait for the child within the timeout: "done", "timeout" or "stopped" (``stop`` was
    set). Meanwhile the processes the script starts are followed (``tree``), and a file with
    no checked gradient after ``note_after`` seconds gets one "still running" note."""
    start = time.monotonic()
    deadline = start + options.timeout
    note_at = start + options.note_after if options.note_after and options.note is not None else None
    scan_at = start + _POLL
    while True:
        now = time.monotonic()
        if now >= deadline:
            return "timeout"
        if stop is not None and stop.is_set():
            return "stopped"
        try:
            proc.wait(timeout=max(min(deadline - now, _POLL), 0.01))
            return "done"
        except subprocess.TimeoutExpired:
            pass
        if time.monotonic() >= scan_at:
            tree.update()
            scan_at = time.monotonic() + _SCAN_EVERY
        if note_at is not None and time.monotonic() >= note_at:
            note_at = None
            if not os.path.exists(result_path):
                options.note(
                    f"gradcheck: {shown}: no gradient yet after {time.monotonic() - start:.0f} s; still running "
                    f"(it is stopped at {options.timeout:g} s, --timeout)"
                )


def _where(proc: subprocess.Popen, result_path: str, ask: int, grace: float = 3.0) -> str | None:
    """Ask a child that ran out of time where the script is (``train.py:42 in fill_buffer``):
    a byte on the pipe ``ask`` wakes a thread of the child, which writes the innermost user
    frame of the main thread (see ``trace.run.child``). No signal: the script's own SIGUSR1
    handler (a "checkpoint now") must not run, and the script may have replaced ours."""
    where_path = f"{result_path}.where"
    try:
        os.write(ask, b"?")
    except OSError:
        return None
    end = time.monotonic() + grace
    while time.monotonic() < end and proc.poll() is None:
        if os.path.exists(where_path):
            try:
                with open(where_path, encoding="utf-8") as fh:
                    return fh.read().strip() or None
            except OSError:
                return None
        time.sleep(0.05)
    return None


def timeout_reason(timeout: float, where: str | None, path: str = "train.py") -> str:
    """GC903's line: where the script ``path`` was when it ran out of time, and what to do."""
    if where is None:
        return f"no gradient was checked within {timeout:g} s (raise --timeout)"
    import shlex

    return (
        f"no gradient was checked within {timeout:g} s; the script was still at {where}, before its first checked "
        "step (a warm-up such as filling a replay buffer or loading data?): raise --timeout, or make that phase "
        f"shorter for the check, e.g. with an argument to the script: `gradcheck {shlex.quote(path)} -- --warmup 100`"
    )


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


def _echo_tail(path: str, output: str, lines: int = 60) -> None:
    tail = output.splitlines(keepends=True)[-lines:]
    if tail:
        sys.stderr.write(f"--- last output of {path} ---\n{''.join(tail)}")
        if not tail[-1].endswith("\n"):
            sys.stderr.write("\n")
