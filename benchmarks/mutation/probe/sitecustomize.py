"""The ground-truth probe: TensorFlow's own gradients, recorded without gradcheck.

Put first on a child's PYTHONPATH (by ``run.py``). It seeds the random generators, and once
``tensorflow`` is imported wraps ``tf.GradientTape.gradient`` to record, for every call,
which sources got a None, all-zero or non-finite gradient (in a ``tf.function`` the values
are read when the graph runs, through a ``tf.py_function``). The process exits as soon as a
gradient call site repeats (the second training step has begun), or a few seconds after the
first record, so no program trains to the end. Records go to ``$GCM_PROBE_OUT`` (JSON),
rewritten after every event so a crash loses nothing.

It also records which lines of the program ran (``lines``), in the code TensorFlow traces too
(autograph's converted copies, mapped back to the program's lines): the site sampler
(``benchmarks/mutation/sampling.py``) prefers sites the run reached.

With ``GCM_PROBE_PHASES=1`` (a program that trains in more than one phase) a repeated site
does not end the run: the program goes on, and every gradient call site is recorded at its
first call, with its training *phase*: 1 for the sites first called before any site repeated,
then one more each time a new site is first called after a repeat (a GAN's two adversarial
tapes, first called in the same step, share a phase). The run ends with the program, or
once the process has used ``GCM_PROBE_GRACE`` seconds of CPU (default 20) since the last new
site: CPU, not wall time, so that a busy machine does not end a run before its next training.
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
import time
import traceback

_OUT = os.environ.get("GCM_PROBE_OUT")
_PROGRAM = os.path.realpath(os.environ.get("GCM_PROBE_PROGRAM", ""))
_GRACE = float(os.environ.get("GCM_PROBE_GRACE", "8"))
_PHASES = os.environ.get("GCM_PROBE_PHASES") == "1"
if _PHASES:
    _GRACE = float(os.environ.get("GCM_PROBE_GRACE", "20"))
_STATE: dict = {"records": [], "traced": [], "crash": None, "exit": "end", "stops": {}, "lines": []}
_LINES: set = set()  # the program's lines that ran (a set while running; a list in the dump)
_SEEN_EXEC: set = set()
_PHASE = {"phase": 1, "repeated": False, "last_new": 0.0}
_LOCK = threading.Lock()


def _dump() -> None:
    if not _OUT:
        return
    tmp = _OUT + ".tmp"
    _STATE["lines"] = sorted(_LINES)
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(_STATE, f)
    os.replace(tmp, _OUT)


def _finish(reason: str) -> None:
    with _LOCK:
        _STATE["exit"] = reason
        _dump()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _user_line() -> int | None:
    """Line of the innermost frame in the program file (None when called from elsewhere only)."""
    f = sys._getframe(2)
    while f is not None:
        if os.path.realpath(f.f_code.co_filename) == _PROGRAM:
            return f.f_lineno
        f = f.f_back
    return None


def _name(src, i: int) -> str:
    if hasattr(src, "op") and not hasattr(src, "handle"):
        # a graph tensor's name is its op's (`Cast`, `add`), not the program's name for it:
        # unknown, as an eager tensor's is (the score leaves `<tensor i>` out)
        return f"<tensor {i}>"
    for attr in ("path", "name"):
        v = getattr(src, attr, None)
        if isinstance(v, str) and v:
            return v[:-2] if v.endswith(":0") else v
    return f"<tensor {i}>"


def _status(norm: float, finite: bool) -> str:
    if not finite:
        return "nonfinite"
    return "zero" if norm == 0.0 else "ok"


def _record(key, line, names, stats, nones, graph=False, loss_ok=None) -> None:
    """Store one executed gradient call; end the run when its site comes round again (with
    ``GCM_PROBE_PHASES``: go on, and count the repeat towards the next phase)."""
    with _LOCK:
        if key in _SEEN_EXEC:
            repeat = True
            _PHASE["repeated"] = True
        else:
            repeat = False
            _SEEN_EXEC.add(key)
            if _PHASE["repeated"]:  # a new site after a step repeated: the next training
                _PHASE["phase"] += 1
                _PHASE["repeated"] = False
            _PHASE["last_new"] = time.process_time()
            sources = []
            it = iter(stats)
            for n, is_none in zip(names, nones, strict=True):
                if is_none:
                    sources.append({"name": n, "status": "none", "norm": None})
                else:
                    norm, finite = next(it)
                    sources.append({"name": n, "status": _status(norm, finite), "norm": norm})
            rec = {"line": line, "sources": sources}
            if loss_ok is not None:  # the target itself: a NaN/Inf loss is GC204's truth
                rec["loss"] = "ok" if loss_ok else "nonfinite"
            if _PHASES:
                rec["phase"] = _PHASE["phase"]
                rec["graph"] = graph  # also in "traced" (score.compare reads what a crash cut off)
            _STATE["records"].append(rec)
            _dump()
            if len(_STATE["records"]) == 1 and _GRACE > 0:
                threading.Thread(target=_deadline, daemon=True).start()
    if repeat and not _PHASES:
        _finish("second step")


def _deadline() -> None:
    if not _PHASES:
        time.sleep(_GRACE)
        _finish("grace")
    while time.process_time() - _PHASE["last_new"] < _GRACE:  # CPU since the last new site
        time.sleep(0.5)
    _finish("grace")


def _patch(tf) -> None:
    from tensorflow.python.eager import backprop

    original = backprop.GradientTape.gradient
    if getattr(original, "_gcm_probe", False):
        return

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients=None, **kw):
        if unconnected_gradients is None:
            unconnected_gradients = tf.UnconnectedGradients.NONE
        line = _user_line()
        frame = sys._getframe(1)
        key = (frame.f_code.co_filename, frame.f_lineno, line)
        result = original(self, target, sources, output_gradients, unconnected_gradients, **kw)
        try:
            flat_src = tf.nest.flatten(sources, expand_composites=False)
            flat = tf.nest.flatten(result, expand_composites=False)
            if len(flat) != len(flat_src):
                return result
            names = [_name(s, i) for i, s in enumerate(flat_src)]
            if _PHASES:  # in a tf.function every call comes from autograph's same line: the
                key = (*key, tuple(names))  # sources tell a GAN's two tapes apart
            nones = [g is None for g in flat]
            live = [g for g in flat if g is not None]
            with self.stop_recording() if self._recording else _null():
                stats = [_stats(tf, g) for g in live]
                loss_ok = _finite(tf, target)
            if tf.executing_eagerly():
                _record(key, line, names, [(float(n), bool(f)) for n, f in stats], nones, loss_ok=bool(loss_ok))
            else:
                # What is known before the graph runs: which gradients are None.
                with _LOCK:
                    _STATE["traced"].append(
                        {
                            "line": line,
                            "sources": [
                                {"name": n, "status": "none" if z else "?"} for n, z in zip(names, nones, strict=True)
                            ],
                        }
                    )
                    _dump()

                def _cb(*vals):
                    pairs = [(float(vals[2 * i].numpy()), bool(vals[2 * i + 1].numpy())) for i in range(len(live))]
                    _record(key, line, names, pairs, nones, graph=True, loss_ok=bool(vals[-1].numpy()))
                    return 0

                flat_stats = [t for pair in stats for t in pair] + [loss_ok]
                tf.py_function(_cb, flat_stats, tf.int32)
        except Exception:  # noqa: BLE001 - the probe must never change the program's behaviour
            traceback.print_exc()
        return result

    gradient._gcm_probe = True
    backprop.GradientTape.gradient = gradient
    _patch_stop_gradient(tf)


def _patch_stop_gradient(tf) -> None:
    """Record, per line of the program, whether a ``tf.stop_gradient`` there stopped a value
    that some tape was recording (TensorFlow's own ``should_record_backprop``): only there
    does removing it let a gradient through (the ground truth of ``remove_stop_gradient``)."""
    from tensorflow.python.eager import record
    from tensorflow.python.ops import array_ops

    original = array_ops.stop_gradient

    def stop_gradient(input, name=None):  # TensorFlow's own signature (`input=` is accepted)
        try:
            line = _user_line()
            flat = [t for t in tf.nest.flatten(input) if tf.is_tensor(t)]
            if line is not None:
                live = bool(flat) and record.should_record_backprop(flat)
                with _LOCK:
                    _STATE["stops"][str(line)] = _STATE["stops"].get(str(line), False) or live
        except Exception:  # noqa: BLE001 - the probe must never change the program's behaviour
            traceback.print_exc()
        return original(input, name=name)

    for owner in (tf, array_ops):
        if getattr(owner, "stop_gradient", None) is original:
            owner.stop_gradient = stop_gradient


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def _stats(tf, g):
    if isinstance(g, tf.IndexedSlices):
        g = g.values
    g = tf.cast(g, tf.float64)
    return tf.reduce_sum(tf.abs(g)), tf.reduce_all(tf.math.is_finite(g))


def _finite(tf, target):
    """Whether every floating value of the gradient call's target (the loss) is finite."""
    flags = [
        tf.reduce_all(tf.math.is_finite(t)) for t in tf.nest.flatten(target) if tf.is_tensor(t) and t.dtype.is_floating
    ]
    return tf.reduce_all(tf.stack(flags)) if flags else tf.constant(True)


def _excepthook(tp, value, tb) -> None:
    frames = [fr for fr in traceback.extract_tb(tb) if os.path.realpath(fr.filename) == _PROGRAM]
    with _LOCK:
        _STATE["crash"] = {
            "type": tp.__name__,
            "message": str(value)[:2000],
            "lines": [fr.lineno for fr in frames],
        }
        _dump()
    _previous_hook(tp, value, tb)


#: autograph's converted copies of the program's functions: their file -> {their line: the program's line}
_AG_LINES: dict = {}
_IS_PROGRAM: dict = {}


def _program_file(filename: str) -> bool:
    known = _IS_PROGRAM.get(filename)
    if known is None:
        known = _IS_PROGRAM[filename] = os.path.realpath(filename) == _PROGRAM
    return known


def _line_tracer(frame, event, arg):
    if event == "line":
        filename = frame.f_code.co_filename
        if _program_file(filename):
            _LINES.add(frame.f_lineno)
        else:
            line = _AG_LINES.get(filename, {}).get(frame.f_lineno)
            if line is not None:
                _LINES.add(line)
    return _line_tracer


def _call_tracer(frame, event, arg):
    """Trace lines only in the program's own frames (and autograph's copies of them)."""
    filename = frame.f_code.co_filename
    if filename in _AG_LINES or _program_file(filename):
        return _line_tracer
    return None


def _patch_autograph() -> None:
    """Map the lines of every function autograph converts back to the program's lines: in a
    traced step (``fit``, ``tf.function``) the program's code runs as autograph's copy."""
    from tensorflow.python.autograph.impl import api

    original = api._convert_actual
    if getattr(original, "_gcm_probe", False):
        return

    def convert(entity, program_ctx):
        transformed = original(entity, program_ctx)
        try:
            for loc, origin in (getattr(transformed, "ag_source_map", None) or {}).items():
                if _program_file(origin.loc.filename):
                    _AG_LINES.setdefault(loc.filename, {})[loc.lineno] = origin.loc.lineno
        except Exception:  # noqa: BLE001 - the probe must never change the program's behaviour
            traceback.print_exc()
        return transformed

    convert._gcm_probe = True
    api._convert_actual = convert


class _TfHook:
    """Patch TensorFlow the moment the program imports it (never earlier: the program may set
    TF_USE_LEGACY_KERAS or KERAS_BACKEND first)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "tensorflow":
            return None
        sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_and_patch(module):
            exec_module(module)
            try:
                module.random.set_seed(0)
                _patch(module)
                _patch_autograph()
            except Exception:  # noqa: BLE001
                traceback.print_exc()

        loader.exec_module = exec_and_patch
        return spec


def _seed_tensorflow_after_import() -> None:
    """Seed TensorFlow once the program's outermost import that brought it in has returned.
    For gradcheck's run of the same file (``GCM_SEED_ONLY``): gradcheck's own import hook
    takes the ``tensorflow`` import before any other finder, so a finder cannot do it there."""
    import builtins

    original = builtins.__import__
    depth = [0]

    def seeding_import(*args, **kwargs):
        depth[0] += 1
        try:
            return original(*args, **kwargs)
        finally:
            depth[0] -= 1
            tf = sys.modules.get("tensorflow")
            if depth[0] == 0 and tf is not None and hasattr(getattr(tf, "random", None), "set_seed"):
                builtins.__import__ = original
                tf.random.set_seed(0)

    builtins.__import__ = seeding_import


if _OUT or os.environ.get("GCM_SEED_ONLY") == "1":
    # the same random state under the probe and under gradcheck: a program that does not seed
    # itself (a dead ReLU by chance) must be judged on the run the probe saw
    random.seed(0)
    os.environ.setdefault("PYTHONHASHSEED", "0")
    try:
        import numpy

        numpy.random.seed(0)
    except ImportError:
        pass

if os.environ.get("GCM_SEED_ONLY") == "1" and not _OUT:
    _seed_tensorflow_after_import()
elif _OUT:
    _previous_hook = sys.excepthook
    sys.excepthook = _excepthook
    sys.meta_path.insert(0, _TfHook())
    if _PROGRAM:
        sys.settrace(_call_tracer)
        threading.settrace(_call_tracer)
    import atexit

    atexit.register(lambda: _dump())
    _dump()
