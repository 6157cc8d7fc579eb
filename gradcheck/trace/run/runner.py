"""Run a user's script (or a ``FILE::build`` function) under the tracer, in this process.

The CLI runs this in a child process per file (``gradcheck.trace.run.child``); tests and the
Python API call it directly. Whatever the script does (raise, exit, never train), the
outcome is a ``FileResult`` with findings or a one-line GC9xx reason, never a traceback.
"""

from __future__ import annotations

import dataclasses
import os
import re
import runpy
import sys
import tokenize
import traceback
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from gradcheck import notebook
from gradcheck.findings import ERROR, PARTIAL, CheckError, FileResult
from gradcheck.trace.record import frames, restop  # import no TensorFlow
from gradcheck.trace.record.errors import StopCheck  # imports no TensorFlow
from gradcheck.trace.run import sandbox
from gradcheck.trace.run.lazy import TensorFlowImportHook
from gradcheck.trace.run.own_failure import HooksFailed

if TYPE_CHECKING:
    from gradcheck.trace.capture.reach import Reach
    from gradcheck.trace.capture.session import Session

# Nothing here imports TensorFlow: the script does, itself (see ``lazy``), after setting
# whatever environment it sets for itself; the hooks go in when it has.


def run_file(
    path: str,
    *,
    function: str | None = None,
    module: str | None = None,
    steps: int | None = 1,
    allow_none: Iterable[str] = (),
    display_path: str | None = None,
    argv: list[str] | None = None,
    on_progress: Callable[[FileResult], None] | None = None,
    want_graph: bool = False,
    show_traceback: bool = False,
    check_custom_gradients: bool = False,
    allow_writes: Iterable[str] = (),
    run_atexit: bool = False,
) -> FileResult:
    """Run ``path`` as ``__main__`` (like ``python path``), or import it and check what
    ``function()`` returns, with the tracer installed. ``on_progress`` gets the result so
    far after every checked gradient; ``show_traceback`` prints the script's traceback to
    stderr when it fails (the CLI's child does, for ``-v``). Nothing outside the temp
    directory and ``allow_writes`` is written or deleted meanwhile (``sandbox``). ``run_atexit`` runs the
    ``atexit`` handlers at the end, as Python does when the program ends: only the CLI's
    child asks, a process of its own (in-process they would be the host's handlers too)."""
    shown = display_path or path
    result = FileResult(path=shown)
    abspath = os.path.abspath(path)
    ended: str | None = None  # why the run ended before a training it did not reach

    reach = _reach(abspath) if function is None and not notebook.is_notebook(abspath) else None

    def progress(_new) -> None:
        if on_progress is not None and tracer.session is not None:
            partial = FileResult(shown, steps_checked=tracer.session.steps_checked)
            partial.findings = _relative(list(tracer.session.findings), abspath, shown)
            _not_reached(partial, reach, "the run was stopped before reaching it")
            partial.kept_out = box.kept_out({abspath: shown}, _START_DIR)
            on_progress(partial)

    tracer = _Tracer(
        dict(
            steps=steps,
            allow_none=allow_none,
            skip_updates=True,
            on_findings=progress,
            check_mode=True,
            want_graph=want_graph,
        ),
        check_custom_gradients=check_custom_gradients,
        reach=reach,
    )
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [abspath if module else path, *list(argv or [])]
    if getattr(sys.flags, "safe_path", False):  # `python -P` puts no script directory first
        pass
    elif module:
        sys.path.insert(0, os.getcwd())  # `python -m`: the working directory
    else:
        # python puts the directory of the script's real file first (a symlink's target's)
        sys.path.insert(0, os.path.dirname(os.path.realpath(abspath)))
    main_module = sys.modules.get("__main__")
    hook = TensorFlowImportHook(tracer.ready)
    box = sandbox.Sandbox(protect=(os.path.dirname(abspath), os.getcwd()), allow=allow_writes)
    box.install()
    try:
        if "tensorflow" in sys.modules:  # the Python API or a test: TensorFlow is already there
            tracer.ready("tensorflow")
        hook.install()
        with restop.StopGuard():  # a stop the script catches is raised again (restop)
            if function is None and notebook.is_notebook(abspath):
                _until_threads_end(lambda: _run_notebook(abspath))
            elif module:
                _until_threads_end(lambda: _run_module(module))
            elif function is None:
                _until_threads_end(lambda: _run_script(abspath))
            else:
                _run_function(abspath, function)
        ended = "the script ended without reaching it"
    except StopCheck:
        ended = "the check ended at a gradient that could not be computed"
    except HooksFailed:
        pass  # gradcheck's own failure (tracer.failure below), not the script's
    except SystemExit as exit_:
        ended = f"the script exited (sys.exit({exit_.code!r})) without reaching it"
        if not tracer.gradient_calls:
            result.error = _exit_reason(exit_, abspath)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - every failure becomes a one-line reason
        box.failed(error)
        session = tracer.session
        went_on = session is not None and (tracer.continued or session.ran_on)
        escape = _later_escape(session, error) if went_on else None
        if escape is not None:
            # a training not checked yet failed as the first one would have: its diagnosis
            result.findings.append(escape)
            ended = f"the script failed at the host escape of line {escape.line} (GC105)"
        elif went_on and (reach is not None or not session.findings):
            # after a fit that ended at its checked steps: what was reached was checked, and
            # what the failure kept the run from is named (GC905)
            ended = f"the script failed after its checked steps: {one_line_reason(error, {abspath: shown})}"
        elif hook.failed is not None:
            result.error = _tensorflow_missing(hook.failed)
        else:
            _script_failed(result, tracer, error, abspath, shown)
        if show_traceback and result.error is not None:
            traceback.print_exception(error, file=sys.stderr)  # `gradcheck -v` shows it
    finally:
        restop.disarm()  # the guard's exit did, unless a stop arrived in the middle of it
        # The program's end, as Python ends it: its atexit handlers run (a lock file removed,
        # a log closed) while the hooks are still on, before anything run_file set up for the
        # run (hooks, the disk sandbox) is torn down below. Keep this first in the teardown.
        if run_atexit:
            _run_atexit_handlers()
        hook.remove()
        tracer.stop()
        box.remove()
        sys.argv, sys.path[:] = saved_argv, saved_path
        if main_module is not None:
            sys.modules["__main__"] = main_module
    if tracer.failure is not None:  # even when the script caught it and ran on unchecked
        result.error = tracer.failure.check_error()
        if show_traceback:
            traceback.print_exception(tracer.failure.error, file=sys.stderr)
    session = tracer.session
    found = list(session.findings) if session is not None else []
    result.findings = _relative(found + result.findings, abspath, shown)
    result.steps_checked = session.steps_checked if session is not None else 0
    result.kept_out, result.kept_out_more = box.kept_out({abspath: shown}, _START_DIR), box.more
    if result.error is None and not tracer.gradient_calls and not result.findings:
        result.error = CheckError("GC902", _no_gradient_message(abspath, function))
    if session is not None and session.internal_errors and result.error is None and not result.findings:
        result.error = CheckError("GC901", session.internal_errors[0])
    if result.error is not None:
        result.status = ERROR
    elif tracer.gradient_calls:
        _not_reached(result, reach, ended)
    return result


def _reach(abspath: str) -> Reach | None:
    """The file's training entry points, to be marked as the run reaches them."""
    from gradcheck.trace.capture.reach import Reach
    from gradcheck.trainings import entry_points

    try:
        with tokenize.open(abspath) as fh:
            entries = entry_points(fh.read())
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None
    return Reach(abspath, entries) if entries else None


def _not_reached(result: FileResult, reach: Reach | None, ended: str | None) -> None:
    """A file whose run ended before some of its training entry points is checked in part."""
    if reach is None:
        return
    result.trainings = len(reach.entries)
    result.not_reached = reach.pending()
    if result.not_reached:
        result.status = PARTIAL
        result.ended = ended


class _Tracer:
    """The session, made and activated when the script's own import of TensorFlow is done
    (``lazy.TensorFlowImportHook`` calls ``ready``), and activated again, with the classes of
    a Keras hooked too, when the script first imports that Keras later (``tf_keras`` after
    ``tensorflow``, or Keras 3 in a tf_keras program: never imported for it)."""

    def __init__(self, options: dict, *, check_custom_gradients: bool, reach: Reach | None = None) -> None:
        self.options = options
        self.check_custom_gradients = check_custom_gradients
        self.reach = reach
        self.session: Session | None = None
        self._kerases: frozenset[str] = frozenset()  # the Keras packages hooked
        self._busy = False
        #: installing the hooks raised: gradcheck's failure, whatever the script does next
        self.failure: HooksFailed | None = None
        #: a ``fit`` ended at its checked steps returned and the program went on (``_fit``)
        self.continued = False
        self._fit_patches = _NoPatches()

    @property
    def gradient_calls(self) -> list:
        return self.session.gradient_calls if self.session is not None else []

    def ready(self, name: str) -> None:
        if self._busy or self.failure is not None:  # an import made while the hooks go in
            return
        self._busy = True
        try:
            self._ready()
        except Exception as error:
            self.failure = HooksFailed(name, error)
            raise self.failure from error
        finally:
            self._busy = False

    def _ready(self) -> None:
        sandbox.libraries_ready()  # the writers of TensorFlow, Keras and h5py go through the sandbox too
        from gradcheck.trace.capture import hooks
        from gradcheck.trace.capture.session import Session

        kerases = frozenset(name for name in ("keras", "tf_keras") if name in sys.modules)
        if self.session is None:
            self.session = Session(**self.options)
            self.session.reach = self.reach
        elif kerases <= self._kerases:
            return
        else:
            hooks.deactivate(self.session)  # installed again below, now over the new Keras's classes too
        self._kerases = kerases
        hooks.activate(self.session)
        from gradcheck.trace.values import custom_check

        custom_check.configure(self.session, check_custom_gradients=self.check_custom_gradients)  # GC301 full: opt-in
        self._patch_fit()

    def _patch_fit(self) -> None:
        """A ``fit`` whose checked steps are done returns, as if training ended (as
        ``EarlyStopping`` ends it), while a training entry point of the file is still to be
        reached: a program that trains one model before another (a teacher before its
        distiller, a pretraining run before fine-tuning) gets the later training checked
        too, not only the first one. When every entry point was reached, the program ends
        there. Where the entry points are not known (``FILE::build``, the Python API), a
        ``fit`` returns while nothing was found yet."""
        from gradcheck.trace.capture.patches import Patches
        from gradcheck.trace.record import _tf

        self._fit_patches.restore()
        self._fit_patches = Patches()
        classes = list(_tf.keras_model_classes())
        if "tf_keras" in sys.modules and not _tf.legacy_keras():
            try:
                from tf_keras.src.engine.training import Model as LegacyModel

                classes.append(LegacyModel)
            except ImportError:  # pragma: no cover - tf_keras moved
                pass
        for cls in classes:
            if "fit" in cls.__dict__:
                self._fit_patches.set(cls, "fit", self._fit(cls.__dict__["fit"]))
            elif callable(getattr(cls, "fit", None)):
                self._fit_patches.set(cls, "fit", self._fit(cls.fit))

    def _fit(self, orig):
        tracer = self

        def fit(model, *args, **kwargs):
            session = tracer.session
            before = session.gradient_calls if session is not None else 0
            if session is not None and session.reach is not None:
                session.reach.mark_stack()
            if session is not None:
                session.fitting += 1
            try:
                return orig(model, *args, **kwargs)
            except StopCheck:
                if not _goes_on(session, before):
                    raise
                restop.resume()  # the program goes on from here: no re-stop at its next line
                tracer.continued = True  # what fails from here on does not change the verdict
                model.stop_training = True
                _untrained(session, model)
                return getattr(model, "history", None)
            finally:
                if session is not None:
                    session.fitting -= 1

        fit.__wrapped__ = orig
        return fit

    def stop(self) -> None:
        self._fit_patches.restore()
        if self.session is not None:
            from gradcheck.trace.capture import hooks

            hooks.deactivate(self.session)


def _goes_on(session: Session | None, before: int) -> bool:
    """After a ``fit`` ended at its checked steps: whether the program goes on."""
    if session is None or not session.gradient_calls:
        return False
    if session.reach is not None:
        return bool(session.reach.pending())
    # entry points not known: a fit that checked nothing new (a training loop calling fit
    # again on a model already checked) ends the program, as does a finding
    return not session.findings and session.gradient_calls != before


def _untrained(session, model) -> None:
    """A ``fit`` cut short at its checked steps leaves its model untrained: what the program
    computes with it from here on is not what it would compute (``values.frozen``)."""
    from gradcheck.trace.record import _tf
    from gradcheck.trace.values.frozen import CUT_FIT, freeze

    ids = []
    for variable in getattr(model, "variables", None) or ():
        try:
            ids.append(_tf.handle_of(variable)._id)
        except (AttributeError, ValueError, TypeError):
            continue
    freeze(session, ids, CUT_FIT)


class _NoPatches:
    def restore(self) -> None:
        pass


def _tensorflow_missing(error: BaseException) -> CheckError:
    return CheckError("GC904", f"TensorFlow cannot be imported in {sys.executable} ({type(error).__name__}: {error})")


def _run_notebook(abspath: str) -> None:
    """The notebook's code cells in order, in one ``__main__`` namespace, from the
    notebook's directory (as Jupyter runs them)."""
    import builtins
    import types

    module = types.ModuleType("__main__")
    namespace = module.__dict__
    namespace["__builtins__"] = builtins
    try:
        from IPython.display import display
    except ImportError:

        def display(*objects, **_kwargs) -> None:
            for obj in objects:
                print(repr(obj))

    namespace["display"] = display
    sys.modules["__main__"] = module
    cwd = os.getcwd()
    os.chdir(os.path.dirname(abspath))
    try:
        notebook.run_cells(abspath, namespace)
    finally:
        os.chdir(cwd)


def _run_script(abspath: str) -> None:
    """``python abspath``: the compiled file run in a fresh ``__main__`` module with the
    namespace Python gives a script (``__builtins__`` the module, ``__annotations__``,
    ``__loader__`` a SourceFileLoader, ``__spec__`` None), registered in ``sys.modules`` (pickle,
    ``sys.modules["__main__"]``). ``runpy.run_path`` gives a different one."""
    import builtins
    import types
    from importlib.machinery import SourceFileLoader

    with open(abspath, "rb") as fh:  # bytes: compile honours a coding cookie and a BOM, as python does
        source = fh.read()
    # dont_inherit: this module's ``from __future__ import annotations`` is not the script's
    code = compile(source, abspath, "exec", dont_inherit=True)
    module = types.ModuleType("__main__")
    namespace = module.__dict__
    namespace["__loader__"] = SourceFileLoader("__main__", abspath)
    namespace["__annotations__"] = {}
    namespace["__builtins__"] = builtins
    namespace["__file__"] = abspath
    namespace["__cached__"] = None
    sys.modules["__main__"] = module
    exec(code, namespace)


def _run_module(name: str) -> None:
    """``python -m name``: the module (or a package's ``__main__``) run as ``__main__``, with
    its ``__spec__`` and ``__package__`` (relative imports work) and ``sys.argv[0]`` its file."""
    runpy.run_module(name, run_name="__main__", alter_sys=True)


def _until_threads_end(run: Callable[[], None]) -> None:
    """Run the program's main thread, then wait for the threads it started that are not
    daemons, as Python does before it exits: training in a worker thread is checked, and its
    stop reaches this thread (``restop``). A program that was stopped does not wait."""
    import threading

    before = set(threading.enumerate())
    try:
        run()
    except StopCheck:
        raise
    except BaseException:
        _join_new_threads(before)
        raise
    _join_new_threads(before)


def _join_new_threads(before: set) -> None:
    """The program's own threads, not a library's pool workers (Python tells those to end
    at exit first: ``concurrent.futures`` idle workers would be waited for forever)."""
    import threading

    for thread in threading.enumerate():
        if thread in before or thread.daemon or thread is threading.current_thread():
            continue
        if _runs_user_code(thread):
            thread.join()


def _runs_user_code(thread) -> bool:
    run = getattr(thread, "_target", None) or type(thread).run
    while hasattr(run, "func"):  # functools.partial
        run = run.func
    code = getattr(getattr(run, "__func__", run), "__code__", None)
    return code is not None and frames.is_user_file(code.co_filename)


def _run_atexit_handlers() -> None:
    """The handlers the program registered (and the libraries it imported), as at exit; an
    exception in one is printed by Python and the next runs, as at exit."""
    import atexit

    atexit._run_exitfuncs()


def _run_function(abspath: str, function: str) -> None:
    namespace = runpy.run_path(abspath, run_name="__gradcheck_module__")
    if function not in namespace:
        raise _UsageError(f"{os.path.basename(abspath)} defines no function {function!r}")
    built = namespace[function]()
    check_built(built)


class _UsageError(Exception):
    pass


def check_built(built: object) -> None:
    """Run what a ``build()`` returned: a zero-argument step, or ``(model, batch)``."""
    if callable(built) and not _is_model(built):
        built()
        return
    if isinstance(built, tuple) and len(built) == 2 and _is_model(built[0]):
        from gradcheck.trace.run.steps import run_train_step

        run_train_step(built[0], built[1])
        return
    raise _UsageError("build() must return a zero-argument train step or a (model, batch) pair")


def _is_model(value: object) -> bool:
    return hasattr(value, "train_step") and hasattr(value, "trainable_variables")


def _escape_finding(session: Session | None, error: BaseException):
    """The host escape (GC105) that ``error`` is: ``.numpy()``/NumPy on a symbolic tensor
    while a step is traced, ``model.predict`` on a recording tape; None for any other error."""
    if session is None:
        return None
    from gradcheck.trace.diagnose.escape import crash_on_tape_finding, graph_escape_finding, predict_on_tape_finding

    return (
        predict_on_tape_finding(error) or crash_on_tape_finding(session, error) or graph_escape_finding(session, error)
    )


def _later_escape(session: Session | None, error: BaseException):
    """After a checked step the program ran on toward a training not reached yet (a later
    phase): an error raised while such a training is pending gets the first phase's
    diagnosis. A traced step's host escape fails while it is traced, before its gradient is
    asked: that is no failure "after the checked steps" but the later training's own bug."""
    if session is None or (session.reach is not None and not session.reach.pending()):
        return None
    return _escape_finding(session, error)


def _script_failed(result: FileResult, tracer: _Tracer, error: BaseException, abspath: str, shown: str) -> None:
    session = tracer.session
    escape = _escape_finding(session, error)
    if escape is not None:
        result.findings.append(escape)
        return
    if isinstance(error, _UsageError):
        result.error = CheckError("GC901", str(error))
        return
    if session is not None and session.gradient_calls and session.findings:
        return  # it failed after the checked step; the findings stand
    result.error = CheckError("GC901", one_line_reason(error, {abspath: shown}) + _relative_import_hint(error, abspath))


def _relative_import_hint(error: BaseException, abspath: str) -> str:
    """A script of a package run by its path cannot import its siblings relatively: as
    ``python -m``, ``gradcheck -m`` runs it as a module of its package."""
    if not isinstance(error, ImportError) or "attempted relative import" not in str(error):
        return ""
    relative = os.path.relpath(abspath)
    if relative.startswith("..") or not relative.endswith(".py"):
        return "; run it as a module from its package's parent folder: gradcheck -m PACKAGE.MODULE"
    return f"; run it as a module, as python -m does: gradcheck -m {relative[:-3].replace(os.sep, '.')}"


def _exit_reason(exit_: SystemExit, abspath: str) -> CheckError:
    code = exit_.code
    name = os.path.basename(abspath)
    frames_ = [frame for frame, _ in traceback.walk_tb(exit_.__traceback__)]
    if any(frame.f_code.co_filename.endswith("argparse.py") for frame in frames_):
        said = next(
            (f.f_locals["message"] for f in frames_ if f.f_code.co_name == "error" and "message" in f.f_locals), None
        )
        return CheckError(
            "GC901",
            f"the script needs command-line arguments (argparse: {said or f'exited with {code!r}'}); gradcheck runs "
            f"it as `python {name}`: pass them after `--` (`gradcheck {name} -- {_example_args(said)}`), give them "
            "defaults, or check a function with FILE::build",
        )
    absl = next((f for f in frames_ if f.f_code.co_filename.replace(os.sep, "/").endswith("absl/app.py")), None)
    if absl is not None and code not in (None, 0):
        # absl wrote "FATAL Flags parsing error: <message>" and exited: the message is a local of its frame
        said = next((f.f_locals["message"] for f in frames_ if isinstance(f.f_locals.get("message"), str)), None)
        named = re.search(r"--[\w-]+", said or "")
        flag = named.group(0) if named else "--flag"
        return CheckError(
            "GC901",
            f"the script's absl flags could not be parsed ({said or f'absl exited with {code!r}'}); gradcheck runs "
            f"it as `python {name}`: pass the flags after `--` (`gradcheck {name} -- {flag}=VALUE`), or give them "
            "defaults",
        )
    if code in (None, 0):
        return CheckError("GC902", f"the script exited (sys.exit({code!r})) before computing any gradient")
    return CheckError("GC901", f"the script exited with sys.exit({code!r}) before computing any gradient")


def _example_args(said: str | None) -> str:
    """``-- --data DATA --epochs EPOCHS`` for argparse's "the following arguments are
    required: --data, --epochs"; ``--epochs 1`` when argparse said something else."""
    prefix = "the following arguments are required: "
    if not said or not said.startswith(prefix):
        return "--epochs 1"
    out = []
    for name in (n.strip() for n in said[len(prefix) :].split(",")):
        if name.startswith("-"):
            flag = name.split("/")[-1]  # `-e/--epochs`: the long form
            out.append(f"{flag} {flag.lstrip('-').upper().replace('-', '_')}")
        elif name:
            out.append(name.split("/")[0].upper())
    return " ".join(out) or "--epochs 1"


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def one_line_reason(error: BaseException, shown: dict[str, str] | None = None) -> str:
    """``ValueError: bad shape (at train.py:12)``: the exception and the user's line.
    ``shown`` maps absolute paths to the paths the user gave (a notebook's cells follow)."""
    where = ""
    for frame, lineno in traceback.walk_tb(error.__traceback__):
        if frames.is_user_file(frame.f_code.co_filename):
            where = f" (at {_shown_path(frame.f_code.co_filename, shown or {})}:{lineno})"
    # the whole message on one line: Keras errors put the cause on their later lines
    text = " ".join(line.strip() for line in _ANSI.sub("", str(error)).splitlines() if line.strip())
    if len(text) > 2000:
        text = text[:1997] + "..."
    if isinstance(error, SyntaxError):
        return f"SyntaxError: {error.msg} (at {os.path.relpath(error.filename or '?')}:{error.lineno})"
    if isinstance(error, ModuleNotFoundError):
        return f"the script imports {error.name!r}, which is not installed{where}"
    if isinstance(error, EOFError):
        return f"the script reads standard input, which is empty under gradcheck{where}"
    return f"the script raised {type(error).__name__}: {text}{where}".rstrip(": ")


def _shown_path(filename: str, shown: dict[str, str]) -> str:
    if filename in shown:
        return shown[filename]
    cell = notebook.split_cell_path(filename)
    if cell is not None and cell[0] in shown:
        return notebook.cell_path(shown[cell[0]], cell[1])
    return os.path.relpath(filename)


def _no_gradient_message(abspath: str, function: str | None) -> str:
    if function is not None:
        return f"{function}() ran, but no gradient was computed"
    hint = ""
    try:
        with open(abspath, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        if any(word in text for word in ("keras.Model", "Sequential", "def train_step", "tf.Module")):
            hint = f"; it defines a model but trains nowhere: try `gradcheck {os.path.basename(abspath)}::build`"
    except OSError:
        pass
    return "the script ran to its end without computing any gradient" + hint


def _relative(findings, abspath: str, shown: str):
    """Copies of the findings; those in the checked file carry the path as the user gave it,
    others (a helper module beside it) a path relative to the working directory."""
    out = []
    for f in findings:
        path = os.path.abspath(f.path)
        cell = notebook.split_cell_path(path)
        if path == abspath:
            out.append(dataclasses.replace(f, path=shown))
        elif cell is not None and cell[0] == abspath:
            out.append(dataclasses.replace(f, path=notebook.cell_path(shown, cell[1])))
        else:
            rel = os.path.relpath(path, _START_DIR)
            out.append(dataclasses.replace(f, path=f.path if rel.startswith("..") else rel))
    return out


#: The working directory when gradcheck started (a script may chdir away).
_START_DIR = os.getcwd()
