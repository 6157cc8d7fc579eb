"""GC301 custom-gradient-mismatch. By default: a gradient function that ignores ``dy``, and
the cheap comparison of ``custom_quick`` (the first call of each of the user's custom
gradients). The full comparison, below, is opt-in (``--check-custom-gradients``): compare
each ``tf.custom_gradient`` on the way to the loss with central finite differences of its
own forward function, on the values of the checked batch.

While the check is on, ``tf.custom_gradient``'s eager and graph decorators are wrapped to
remember each call: the user's function, its arguments and its outputs. At the gradient
call, the custom-gradient calls whose outputs reach the loss are checked, once each, by
``tf.test.compute_gradient`` along a few random directions: for input ``x``, random
output weights ``w`` and a random unit direction ``u``, the derivative of
``t -> sum(w * f(x + t u))`` at 0 computed through the custom gradient (the theoretical
Jacobian, as TensorFlow's tape computes it) against central differences of ``f`` (the
numerical one). That costs two evaluations of ``f`` and one of its gradient per direction
and input, whatever the size of ``x``; in a traced function it runs when the function
runs, on the host, with the values the function received.

A gradient whose directional derivatives, taken together, disagree by more than 10% (relative), or whose shape
is not its input's, is reported with the function, the input and the error. Where the
forward function jumps (central differences at two step sizes disagree: ``round``,
``sign``) or is flat in every direction while the custom gradient is not, it is a
deliberate surrogate (a straight-through estimator) that finite differences cannot judge:
not reported.
"""

from __future__ import annotations

import inspect
import weakref
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from gradcheck.findings import Finding
from gradcheck.trace.record import _tf, hostpoint
from gradcheck.trace.record.call import GradientCall
from gradcheck.trace.record.errors import internal_error
from gradcheck.trace.record.frames import Location
from gradcheck.trace.record.registry import register
from gradcheck.trace.values import random_state
from gradcheck.trace.values.checked import checked_call, options
from gradcheck.trace.values.custom_quick import DIRECTIONS as QUICK_DIRECTIONS
from gradcheck.trace.values.custom_quick import quick_mismatch

__all__ = ["check", "check_call", "configure", "install"]

DIRECTIONS = 6
THRESHOLD = 0.1
MAX_CALLS = 256


@dataclass(eq=False)
class CustomCall:
    function: object  # the user's function (returns (result, grad_fn))
    args: tuple
    kwargs: dict
    output_keys: list
    eager: bool
    grad_fn: object = None
    graph: object = None
    checked: bool = False
    extra: dict = field(default_factory=dict)


def install(session, calls: list) -> None:
    """Wrap tf.custom_gradient's decorators for this session (undone with the session's
    other patches)."""
    from tensorflow.python.ops import custom_gradient as module

    orig_eager, orig_graph = module._eager_mode_decorator, module._graph_mode_decorator
    ref = weakref.ref(session)

    def remember(f, args, kwargs, result, eager: bool) -> None:
        if ref() is None or getattr(session.recorder, "paused", 0):
            return
        flat = [t for t in _tf.tf.nest.flatten(result) if _tf.is_tensor(t)]
        if eager:
            keys = [getattr(t, "_id", None) for t in flat]
        else:
            from gradcheck.trace.record import graph as graph_mode

            keys = [graph_mode.key(t) for t in flat if hasattr(t, "op")]
        grad_fn = _GRAD_FNS.pop(id(f), None)
        _note_gradient_code(session, keys, grad_fn)
        call = CustomCall(
            f, tuple(args), dict(kwargs or {}), keys, eager, grad_fn, None if eager else _tf.default_graph()
        )
        calls.append(call)
        if len(calls) > MAX_CALLS:
            del calls[: len(calls) - MAX_CALLS]

    def _eager_mode_decorator(f, args, kwargs):
        result = orig_eager(_capturing(f), args, kwargs)
        remember(f, args, kwargs, result, True)
        return result

    def _graph_mode_decorator(f, args, kwargs):
        result = orig_graph(_capturing(f), args, kwargs)
        remember(f, args, kwargs, result, False)
        return result

    session.patch(module, "_eager_mode_decorator", _eager_mode_decorator)
    session.patch(module, "_graph_mode_decorator", _graph_mode_decorator)


#: id(user function) -> the grad_fn its latest call returned (to point at it).
_GRAD_FNS: dict = {}
#: How many custom-gradient outputs keep the code of their gradient function.
MAX_GRADIENT_CODES = 4096


def _note_gradient_code(session, keys, grad_fn) -> None:
    """The code of the gradient function behind each output of a custom-gradient call,
    on the session (``session.custom_gradient_codes``): GC112 points into it, at the
    ``return`` that gives None. Code objects only: no tensor is kept alive."""
    code = getattr(grad_fn, "__code__", None)
    if code is None:
        return
    codes = session.__dict__.setdefault("custom_gradient_codes", {})
    if len(codes) > MAX_GRADIENT_CODES:
        for key in list(codes)[: len(codes) // 2]:
            del codes[key]
    for key in keys:
        if key is not None:
            codes[key] = code


def _capturing(f):
    """``f`` that also remembers the gradient function it returns."""

    def wrapper(*args, **kwargs):
        result, grad_fn = f(*args, **kwargs)
        _GRAD_FNS[id(f)] = grad_fn
        return result, grad_fn

    try:
        wrapper.__signature__ = inspect.signature(f)  # custom_gradient reads grad_fn's, not f's
    except (TypeError, ValueError):
        pass
    wrapper.__name__ = getattr(f, "__name__", "custom_gradient")
    wrapper.__qualname__ = getattr(f, "__qualname__", wrapper.__name__)
    wrapper.__wrapped__ = f
    return wrapper


# -- at the gradient call --------------------------------------------------------------
def configure(session, *, check_custom_gradients: bool = False) -> None:
    """Set up GC301 for one session; call it once the session is active (``with
    tracing(session): configure(session, ...)``). The custom-gradient calls are always
    remembered: whether a gradient function uses its upstream gradient at all is checked by
    default (three calls of it); the finite-difference comparison is opt-in."""
    state = options(session)
    if not state.installed:
        install(session, state.custom_calls)
        state.installed = True
    state.check_custom_gradients = state.check_custom_gradients or bool(check_custom_gradients)


@register("values", "GC301")
def check_call(call: GradientCall) -> list[Finding]:
    """GC301 on ``call``: a custom gradient that ignores its upstream gradient, and (when
    the session asked for it) one that disagrees with finite differences."""
    state = options(call.session)
    if not state.custom_calls:
        return []
    checked = checked_call(call)
    return check(checked, state.custom_calls, state.check_custom_gradients) if checked is not None else []


def check(checked, calls: list, differences: bool = True) -> list[Finding]:
    """Findings for the custom-gradient calls on the way to the loss (eager: now; in a
    traced function: when it runs, through a host callback)."""
    ctx = checked.ctx
    flow = ctx.flow
    cone = flow.backward_cone(ctx.target_keys, data=True)
    produced = {k for i in cone for k in flow.ops[i].outputs}
    findings: list[Finding] = []
    for call in calls:
        if call.checked or call.eager != checked.eager:
            continue
        if not checked.eager and call.graph is not ctx.graph:
            continue
        if not any(k in produced for k in call.output_keys):
            continue
        call.checked = True
        variables = _upstream_variables(checked, call)
        if checked.eager:
            args = [_fresh(a) for a in call.args]
            with _recording():
                findings += _findings(checked, call, args, variables, differences=differences)
        else:
            _graph_check(checked, call, variables, differences)
    return findings


def _fresh(value):
    """An eager tensor's value as a new tensor no tape has seen (a variable stays itself)."""
    if _tf.is_tensor(value) and not _tf.is_variable(value) and hasattr(value, "_numpy"):
        return _tf.tf.constant(value._numpy())
    return value


@contextmanager
def _recording():
    """Tapes record again inside (the check runs while gradcheck stopped them, and
    ``tf.test.compute_gradient`` needs its own tape to record)."""
    from tensorflow.python import pywrap_tfe

    stopped = pywrap_tfe.TFE_Py_TapeSetIsStopped()
    if stopped:
        pywrap_tfe.TFE_Py_TapeSetRestartOnThread()
    try:
        yield
    finally:
        if stopped:
            pywrap_tfe.TFE_Py_TapeSetStopOnThread()


def _upstream_variables(checked, call: CustomCall) -> dict:
    """For each argument of the call, the sources whose gradient passes through it."""
    ctx = checked.ctx
    flow = ctx.flow
    out: dict = {}
    handles = {}
    for source in ctx.sources:
        if source.key is not None and source.is_variable:
            handles[id(_tf.handle_of(source.value))] = source
    for i, arg in enumerate(call.args):
        names = set()
        if _tf.is_variable(arg):  # a Keras variable's `.value` is the tf.Variable it wraps
            source = handles.get(id(_tf.handle_of(arg)))
            if source is not None:
                names.add(source.name)
        elif _tf.is_tensor(arg):
            key = _arg_key(checked, arg)
            producer = flow.producer.get(key)
            for source in ctx.sources:
                if source.key is None:
                    continue
                if source.key == key or (
                    producer is not None and producer in flow.forward_cone([source.key], data=True)
                ):
                    names.add(source.name)
        out[i] = sorted(names)
    return out


def _arg_key(checked, tensor):
    if checked.eager:
        return getattr(tensor, "_id", None)
    from gradcheck.trace.record import graph as graph_mode

    return graph_mode.key(tensor) if getattr(tensor, "graph", None) is checked.ctx.graph else None


def _graph_check(checked, call: CustomCall, variables: dict, differences: bool = True) -> None:
    tf = _tf.tf
    flat = _tf.tf.nest.flatten((call.args, call.kwargs))
    tensors = [(i, t) for i, t in enumerate(flat) if _tf.is_tensor(t)]
    if not tensors:
        return
    state = {"done": False}

    def receive(*values):
        if state["done"]:
            return np.int32(0)
        state["done"] = True
        session = checked.session
        found: list[Finding] = []
        try:
            # in a TensorFlow runtime callback: the custom gradient called again here is
            # gradcheck's, nothing of gradcheck's is raised into the callback, and a stop
            # met here waits for the next host point
            with hostpoint.deferring_stop(session), session.paused():
                rebuilt = list(flat)
                for (i, _), v in zip(tensors, values, strict=False):
                    rebuilt[i] = v
                args, kwargs = _tf.tf.nest.pack_sequence_as((call.args, call.kwargs), rebuilt)
                found = _findings(checked, call, list(args), variables, kwargs, differences)
            session.add_value_findings(found)
        except Exception as error:  # noqa: BLE001
            internal_error(error)
        return np.int32(0)

    tf.py_function(receive, [t for _, t in tensors], [tf.int32])


def _findings(
    checked, call: CustomCall, args: list, variables: dict, kwargs=None, differences: bool = True
) -> list[Finding]:
    """``variables``: argument index -> the trained variables whose gradient goes through it."""
    kwargs = call.kwargs if kwargs is None else kwargs
    # the check calls the user's forward function again: the program's random states stay
    # out of its reach (its run after the check is the one it has under python)
    with random_state.preserved() as draws:
        return _compared(checked, call, args, variables, kwargs, differences, draws)


def _compared(checked, call: CustomCall, args: list, variables: dict, kwargs, differences: bool, draws) -> list:
    names = _argument_names(call.function, len(args))
    # a variable passed as an argument (a layer's own bias) is checked at its value
    args = [_tf.tf.convert_to_tensor(a) if _tf.is_variable(a) else a for a in args]
    deaf, deaf_variables = _ignores_upstream(call.function, args, kwargs)
    out = [_finding(checked, call, name, ("upstream",), [name]) for name in deaf_variables]
    # by default, the cheap comparison: on the user's own custom gradients only (a library's
    # is tested where it lives, and may be a deliberate surrogate), on the first call of
    # each that reaches the loss (a wrong derivative is wrong at every call: an activation
    # used by twenty layers is compared once)
    quick = not differences and quick_enabled and _first_comparison(checked.session, call.function)
    # a forward function that draws random numbers is another function at each call:
    # finite differences of it would compare two draws, not two inputs
    compare = not draws.random
    for i, x in enumerate(args):
        if not _tf.is_tensor(x) or not _tf.is_differentiable_dtype(x.dtype) or _tf.tf.as_dtype(x.dtype).is_complex:
            continue
        if i in deaf:
            error = ("upstream",)
        elif differences and compare:
            error = _mismatch(call.function, args, kwargs, i)
        elif quick and compare and variables.get(i):  # a wrong gradient no trained variable receives harms nothing
            error = quick_mismatch(call.function, args, kwargs, i)
        else:
            error = None
        if error is None:
            continue
        out.append(_finding(checked, call, names[i], error, variables.get(i, []), full=differences))
    _GRAD_FNS.pop(id(call.function), None)  # the check's own calls left their grad_fn there
    return out


#: The default comparison runs (a switch for the benchmark that measures what it costs).
quick_enabled = True


def _first_comparison(session, function) -> bool:
    """``function`` is the user's and has not been compared yet in this session (it is now)."""
    from gradcheck.trace.record import frames

    code = getattr(function, "__code__", None)
    if code is None or not frames.is_user_file(code.co_filename):
        return False
    compared = session.__dict__.setdefault("custom_gradients_compared", set())
    if code in compared:
        return False
    compared.add(code)
    return True


def _ignores_upstream(function, args: list, kwargs: dict) -> tuple[set[int], list[str]]:
    """The inputs (and, for a gradient function taking ``variables``, the variables the
    forward function reads) whose custom gradient is the same whatever the upstream gradient
    is: the gradient function, called with three upstream gradients (two independent random
    ones and the first negated), returns one and the same nonzero value for them. A gradient
    is linear in ``dy``; a clipped, normalised or sign-of-``dy`` gradient still changes with
    it (at least its sign), a gradient that forgets ``dy`` does not."""
    tf = _tf.tf
    try:
        with tf.GradientTape() as reads:  # which variables the forward function reads
            result, grad_fn = function(*args, **kwargs)
        params = inspect.signature(grad_fn).parameters
    except Exception:  # noqa: BLE001 - cannot call it again: nothing to compare
        return set(), []
    outputs = [o for o in tf.nest.flatten(result) if _tf.is_tensor(o)]
    if not outputs or not all(_tf.is_differentiable_dtype(o.dtype) for o in outputs):
        return set(), []
    read = [v for v in reads.watched_variables() if v.trainable] if "variables" in params else []
    extra = {"variables": read} if "variables" in params else {}
    rng = np.random.default_rng(112)
    first = [rng.standard_normal(o.shape.as_list() or []) * 1e-2 for o in outputs]
    second = [rng.standard_normal(o.shape.as_list() or []) * 1e-2 for o in outputs]
    answers, variable_answers = [], []
    for upstream in (first, second, [-u for u in first]):
        dys = [tf.constant(u.astype(o.dtype.as_numpy_dtype)) for u, o in zip(upstream, outputs, strict=True)]
        try:
            grads = grad_fn(*dys, **extra)
        except Exception:  # noqa: BLE001
            return set(), []
        variable_grads: list = []
        if extra and isinstance(grads, tuple) and len(grads) == 2 and isinstance(grads[1], (list, tuple)):
            grads, variable_grads = grads  # (input gradients, variable gradients)
        answers.append(list(grads) if isinstance(grads, (list, tuple)) else [grads])
        variable_answers.append(list(variable_grads))
    deaf = {i for i, same in enumerate(_unchanged(answers)) if same}
    deaf_variables = [
        _tf.variable_name(read[j]) for j, same in enumerate(_unchanged(variable_answers)) if same and j < len(read)
    ]
    return deaf, deaf_variables


def _unchanged(answers: list[list]) -> list[bool]:
    """For each gradient of three answers: the same nonzero value each time."""
    tf = _tf.tf
    out = []
    for a, b, c in zip(*answers, strict=False):
        if not all(_tf.is_tensor(g) for g in (a, b, c)):
            out.append(False)
            continue
        a, b, c = (np.asarray(tf.convert_to_tensor(g)) for g in (a, b, c))
        if a.shape != b.shape or a.shape != c.shape or not np.any(a):
            out.append(False)  # a zero gradient says nothing about dy
            continue
        out.append(bool(np.array_equal(a, b) and np.array_equal(a, c)))
    return out


def _argument_names(function, count: int) -> list[str]:
    try:
        params = [
            p
            for p in inspect.signature(function).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    return [params[i].name if i < len(params) else f"args[{i}]" for i in range(count)]


def _call_forward(function, args, kwargs):
    """The custom-gradient function applied (its result carries the custom gradient)."""
    return _tf.tf.custom_gradient(function)(*args, **kwargs)


def _mismatch(function, args: list, kwargs: dict, index: int):
    """The relative error of the custom gradient for input ``index``, or
    ``("shape", gradient shape, input shape)``; None when it agrees or cannot be checked."""
    from tensorflow.python.eager import backprop

    tf = _tf.tf
    x = tf.convert_to_tensor(args[index])
    rng = np.random.default_rng(301 + index)
    dtype = x.dtype
    try:
        sample = _call_forward(function, args, kwargs)
    except Exception:  # noqa: BLE001 - cannot call it again: nothing to compare
        return None
    outputs = [o for o in tf.nest.flatten(sample) if _tf.is_tensor(o) and _tf.is_differentiable_dtype(o.dtype)]
    if not outputs:
        return None
    weights = [
        tf.constant(rng.standard_normal(o.shape.as_list() or []).astype(o.dtype.as_numpy_dtype)) for o in outputs
    ]

    # A gradient of the wrong shape is wrong whatever its values (TensorFlow broadcasts it
    # into the update without a word).
    def projected(value):
        moved = list(args)
        moved[index] = value
        result = [o for o in tf.nest.flatten(_call_forward(function, moved, kwargs)) if _tf.is_tensor(o)]
        result = [o for o in result if _tf.is_differentiable_dtype(o.dtype)]
        return tf.add_n(
            [tf.reduce_sum(tf.cast(o, dtype) * tf.cast(w, dtype)) for o, w in zip(result, weights, strict=False)]
        )

    try:
        # a raw tape (as tf.test.compute_gradient uses): not one of the user's tapes
        (analytic,) = backprop.gradients_function(projected)(x)
    except Exception:  # noqa: BLE001
        return None
    if analytic is None:
        return None  # no gradient at all: GC112's business
    analytic = tf.convert_to_tensor(analytic)
    if analytic.shape != x.shape:
        return ("shape", tuple(analytic.shape), tuple(x.shape))
    scale = float(np.sqrt(np.mean(np.square(x.numpy())))) if x.shape.num_elements() else 0.0
    pairs, flat_numeric, jumps = [], 0, 0
    tolerance = 1e-3 if dtype == tf.float32 else 1e-6
    for _ in range(DIRECTIONS):
        u = rng.standard_normal(x.shape.as_list() or [])
        u = u / max(np.linalg.norm(u), 1e-12)
        u = tf.constant(u.astype(dtype.as_numpy_dtype))

        def h(t, u=u):
            moved = list(args)
            moved[index] = x + tf.cast(t, dtype) * u
            result = [o for o in tf.nest.flatten(_call_forward(function, moved, kwargs)) if _tf.is_tensor(o)]
            result = [o for o in result if _tf.is_differentiable_dtype(o.dtype)]
            return tf.add_n(
                [tf.reduce_sum(tf.cast(o, dtype) * tf.cast(w, dtype)) for o, w in zip(result, weights, strict=False)]
            )

        delta = 1e-3 * max(1.0, scale) if dtype == tf.float32 else 1e-6 * max(1.0, scale)
        try:
            theoretical, numerical = tf.test.compute_gradient(h, [tf.constant(0.0, dtype)], delta=delta)
            _, finer = tf.test.compute_gradient(h, [tf.constant(0.0, dtype)], delta=delta / 8)
        except Exception:  # noqa: BLE001
            return None
        a, n = float(np.ravel(theoretical[0])[0]), float(np.ravel(numerical[0])[0])
        n_fine = float(np.ravel(finer[0])[0])
        if not (np.isfinite(a) and np.isfinite(n) and np.isfinite(n_fine)):
            continue
        if abs(n - n_fine) > 0.5 * max(abs(n), abs(n_fine), tolerance):
            # the differences grow as the step shrinks: a jump (sign, round), where finite
            # differences say nothing about a surrogate gradient
            jumps += 1
            continue
        if abs(n) <= 1e-6 * max(1.0, abs(a)):
            flat_numeric += 1
        pairs.append((a, n))
    if not pairs or jumps * 2 > DIRECTIONS:
        return None
    if flat_numeric == len(pairs):
        return None  # a piecewise-constant forward with a surrogate gradient: deliberate
    # One relative error over all directions (a random sketch of the Jacobian): a single
    # direction's derivative can be near zero by chance, and its own relative error then
    # says nothing either way.
    analytic_sketch, numeric_sketch = (np.array(v) for v in zip(*pairs, strict=True))
    error = float(np.linalg.norm(analytic_sketch - numeric_sketch))
    error /= max(float(np.linalg.norm(analytic_sketch)), float(np.linalg.norm(numeric_sketch)), tolerance)
    return error if error > THRESHOLD else None


def _finding(checked, call: CustomCall, arg: str, error, variables: list[str], full: bool = True) -> Finding:
    from gradcheck import sourcemap
    from gradcheck.trace.diagnose.describe import make
    from gradcheck.trace.record import frames

    ctx = checked.ctx
    function = call.function
    name = getattr(function, "__qualname__", None) or getattr(function, "__name__", "custom_gradient")
    location = None
    grad_code = getattr(call.grad_fn, "__code__", None)
    if grad_code is not None and not frames.is_user_file(grad_code.co_filename):
        # a library's custom gradient (tf.nn.silu): point at the user's call of it
        grad_code = None
        location = _call_location(checked, call)
    elif grad_code is not None:
        line = grad_code.co_firstlineno
        expr = None
        if grad_code.co_name == "<lambda>":
            expr = sourcemap.expression_at(grad_code.co_filename, line, hints=("lambda",))
        location = Location(
            grad_code.co_filename,
            line,
            expr.column if expr else 1,
            expr.end_line if expr else None,
            expr.end_column if expr else None,
        )
        if grad_code.co_name != "<lambda>":
            location = _def_location(grad_code.co_filename, line) or location
    elif location is None:
        code = getattr(function, "__code__", None)
        if code is not None and frames.is_user_file(code.co_filename):
            location = _def_location(code.co_filename, code.co_firstlineno)
        else:
            location = _call_location(checked, call)
    grad_name = getattr(call.grad_fn, "__name__", "grad_fn")
    variant = None
    if isinstance(error, tuple) and error[0] == "upstream":
        variant = "upstream"
        error_text = (
            f"`{grad_name}` returns the same gradient whatever the upstream gradient is: it never multiplies by `dy`"
        )
    elif isinstance(error, tuple):
        error_text = f"its gradient has shape {list(error[1])} for an input of shape {list(error[2])}"
    else:
        error_text = f"it disagrees with finite differences, relative error {error:.3g}"
    finding = make(
        ctx,
        "GC301",
        location,
        variables or [arg],
        call=f"{name}",
        function=name,
        arg=arg,
        error=error_text,
        grad=grad_name,
        variant=variant,
    )
    if variant == "upstream":
        finding.notes.append(f"`{grad_name}` was called with three different upstream gradients `dy`")
    elif full:
        finding.notes.append(
            f"compared along {DIRECTIONS} random directions with central finite differences of `{name}` "
            f"(tf.test.compute_gradient) at the values of the checked batch"
        )
    else:
        finding.notes.append(
            f"compared along {QUICK_DIRECTIONS} random directions with central finite differences of `{name}` "
            f"at the values of the checked batch; not a constant multiple of the derivative, so not a scaled "
            f"gradient"
        )
    return finding


def _call_location(checked, call: CustomCall):
    """Where the user's code called the custom-gradient function (the op producing its
    outputs in the flow)."""
    flow = checked.ctx.flow
    for k in call.output_keys:
        producer = flow.producer.get(k)
        if producer is not None:
            return checked.ctx.op_location(producer)
    return None


def _def_location(path: str, line: int) -> Location | None:
    """The ``def`` line of a function (its first line may be a decorator)."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    for n in range(line, min(line + 20, len(lines) + 1)):
        text = lines[n - 1]
        stripped = text.lstrip()
        if stripped.startswith(("def ", "async def ")):
            column = len(text) - len(stripped) + 1
            return Location(path, n, column, n, len(text.rstrip()) + 1)
    return None
