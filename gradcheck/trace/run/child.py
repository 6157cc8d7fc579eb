"""The child process that checks one file: ``python -m gradcheck.trace.run.child --result F ...``.

It writes its FileResult as JSON to ``--result`` (after every checked gradient, so a
timeout still reports what was found) and leaves with ``os._exit`` so TensorFlow's teardown
cannot change the outcome; the script's ``atexit`` handlers have run by then (``run_file``,
as at the end of ``python train.py``). The user's script owns stdout and stderr; the parent
captures them.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys


def _write(path: str, result) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(result.to_json(), fh)
    os.replace(tmp, path)


#: Set by the parent (``gradcheck.check.WHERE_FD``): the child's end of the "where are you?" pipe.
_WHERE_FD = "GRADCHECK_WHERE_FD"


def _answer_where(path: str) -> None:
    """When the parent asks (a byte on the pipe it passed, at its timeout), write where the
    user's code is, ``train.py:42 in fill_buffer``, to ``path``. A thread waits on the pipe
    and reads the main thread's frame: no signal handler, so a script's own SIGUSR1 handler
    never runs for us and cannot replace us. When the parent is gone (the pipe's end: it was
    killed), the script's process group goes too: nobody would stop it at the timeout. The
    thread is a bare ``_thread`` one, which ``threading.enumerate()`` does not list: a program
    that joins every thread but its main one, or counts them, sees the threads it has under
    python."""
    import _thread
    import threading

    fd_text = os.environ.pop(_WHERE_FD, None)  # the script's environment is as under python
    if fd_text is None or not fd_text.isdigit():
        return
    fd = int(fd_text)
    try:
        os.set_inheritable(fd, False)  # not into the processes the script starts
        pipe = os.fstat(fd).st_ino
    except OSError:
        return

    from gradcheck.trace.record import frames  # no TensorFlow; imported now, not when asked

    main_id = threading.main_thread().ident

    def answer() -> None:
        frame = sys._current_frames().get(main_id)
        user = frames.user_frame(frame) if frame is not None else None
        if user is None:
            return
        code = user.f_code
        where = f"{os.path.relpath(code.co_filename)}:{user.f_lineno}"
        if code.co_name != "<module>":
            where += f" in {code.co_name}()"
        try:
            with open(f"{path}.tmp", "w", encoding="utf-8") as fh:
                fh.write(where)
            os.replace(f"{path}.tmp", path)
        except OSError:
            pass

    def serve() -> None:
        while True:
            try:
                if os.fstat(fd).st_ino != pipe:
                    return  # the script closed our fd and the number is one of its files now
                asked = os.read(fd, 1)
            except OSError:
                return
            if not asked:
                if os.getpgrp() == os.getpid():
                    import signal

                    os.killpg(os.getpid(), signal.SIGKILL)  # the parent ended without ending us
                return
            answer()

    _thread.start_new_thread(serve, ())


def _drop_working_directory_from_path() -> None:
    """``python -m`` put the working directory first on ``sys.path``; ``python script.py``
    puts the script's directory there instead (the runner does), and the working directory
    nowhere. Dropped unless gradcheck itself is only importable from there (a checkout run
    without installing), so a module beside the user's cwd resolves as under python."""
    if not sys.path or os.path.abspath(sys.path[0] or ".") != os.getcwd():
        return
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__ + "/../..")))
    if os.path.abspath(package_root) == os.getcwd():
        return
    del sys.path[0]


def _parse(argv: list[str]) -> argparse.Namespace:
    """``[OPTIONS] -- PATH [SCRIPT_ARGS...]``: everything after the first ``--`` is the path
    and the script's own arguments, verbatim (argparse would drop a ``--`` among them)."""
    parser = argparse.ArgumentParser(prog="gradcheck-child")
    parser.add_argument("--result", required=True)
    parser.add_argument("--steps", type=int, default=1)
    parser.add_argument("--allow-none", action="append", default=[])
    parser.add_argument("--display-path")
    parser.add_argument("--function")
    parser.add_argument("--module")
    parser.add_argument("--graph", action="store_true")
    parser.add_argument("--check-custom-gradients", action="store_true")
    if "--" not in argv:
        parser.add_argument("path")
        parser.add_argument("script_args", nargs="*", help="the script's own arguments (sys.argv[1:])")
        return parser.parse_args(argv)
    at = argv.index("--")
    if at + 1 >= len(argv):
        parser.error("the path of the script to check is missing after --")
    args = parser.parse_args(argv[:at])
    args.path, args.script_args = argv[at + 1], argv[at + 2 :]
    return args


def main(argv: list[str] | None = None) -> None:
    args = _parse(sys.argv[1:] if argv is None else argv)
    _answer_where(f"{args.result}.where")
    _drop_working_directory_from_path()

    from gradcheck.findings import ERROR, CheckError, FileResult

    shown = args.display_path or args.path
    # TensorFlow is not imported here: the script imports it, after setting the environment
    # it sets for itself (``TF_USE_LEGACY_KERAS``, ``KERAS_BACKEND`` ...), and the hooks go in
    # then (``runner``/``lazy``). A TensorFlow that is found but fails to import is GC904 too.
    if importlib.util.find_spec("tensorflow") is None:
        reason = (
            f"TensorFlow cannot be imported in {sys.executable} (ModuleNotFoundError: No module named 'tensorflow')"
        )
        _write(args.result, FileResult(shown, ERROR, CheckError("GC904", reason)))
        os._exit(0)

    from gradcheck.trace.run import runner

    def progress(result) -> None:
        _write(args.result, result)

    result = runner.run_file(
        args.path,
        function=args.function,
        module=args.module,
        steps=args.steps,
        allow_none=args.allow_none,
        display_path=shown,
        argv=args.script_args,
        on_progress=progress,
        want_graph=args.graph,
        show_traceback=True,
        check_custom_gradients=args.check_custom_gradients,
        allow_writes=[os.path.dirname(os.path.abspath(args.result))],  # the result, written as the check goes
        run_atexit=True,  # this process ends with os._exit below: the script's own handlers run here
    )
    _write(args.result, result)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
