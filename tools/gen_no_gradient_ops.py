"""Generate ``gradcheck/static/data/no_gradient_ops.json`` from the installed TensorFlow.

The static engine never imports TensorFlow, so what TensorFlow's gradient registry says
about each op is dumped here, once, into a data file shipped with the package:

- ``no_gradient``: op types (``tf.raw_ops`` names) with no entry in
  ``tensorflow.python.framework.ops._gradient_registry``: differentiating through them
  raises ``LookupError``;
- ``not_differentiable``: op types registered with ``ops.NotDifferentiable`` (their
  gradient is None);
- ``api``: public API functions (``tensorflow.image.adjust_saturation``) that compute their
  result through such an op and nothing else: the generated wrapper of the op itself, or a
  Python function whose every float input, watched on a tape, gets no gradient when it is
  called with float tensors (it is called only when its source calls such an op).

    python tools/gen_no_gradient_ops.py [--check]

``--check`` compares with the shipped file instead of writing it (exit 1 when stale).
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import sys
import warnings
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "gradcheck" / "static" / "data" / "no_gradient_ops.json"

#: Public modules whose functions may be called with float tensors to confirm they have no
#: gradient (pure math on tensors; never I/O, devices, summaries, distribution or state).
_CALLABLE_MODULES = ("", "math", "nn", "image", "signal", "linalg", "bitwise", "experimental.numpy")
#: ``gen_xxx_ops.yyy(`` in a function's source: a call of a generated op wrapper.
_GEN_CALL = re.compile(r"\b(gen_\w+_ops)\.(\w+)\s*\(")


def generate() -> dict:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    from tensorflow.python.framework import ops

    registry = ops._gradient_registry._registry
    raw = sorted(n for n in dir(tf.raw_ops) if not n.startswith("_"))
    missing = sorted(n for n in raw if n not in registry)
    undiff = sorted(n for n in raw if n in registry and registry[n]["type"] is None)
    dead = set(missing) | set(undiff)
    op_of_code = _wrapper_codes(raw)
    api: dict[str, str] = {}
    for name, function in sorted(_public_functions(tf).items()):
        code = getattr(inspect.unwrap(function), "__code__", None)
        op = op_of_code.get(code)
        if op is not None:
            if op in dead:
                api[f"tensorflow.{name}"] = op
            continue
        called = _dead_ops_called(function, dead, op_of_code)
        if called and _module_of(name) in _CALLABLE_MODULES and _has_no_gradient(tf, function):
            api[f"tensorflow.{name}"] = called
    return {
        "generated_by": "python tools/gen_no_gradient_ops.py",
        "tensorflow": tf.__version__,
        "no_gradient": missing,
        "not_differentiable": undiff,
        "api": api,
    }


def _wrapper_codes(raw: list[str]) -> dict:
    """The code object of each generated op wrapper -> its op type (``tf.raw_ops.X`` shares
    the code of ``gen_*_ops.x``)."""
    import tensorflow as tf

    out = {}
    for name in raw:
        code = getattr(inspect.unwrap(getattr(tf.raw_ops, name)), "__code__", None)
        if code is not None:
            out[code] = name
    return out


def _public_functions(tf) -> dict[str, object]:
    """Public TensorFlow 2 API name (``image.adjust_saturation``) -> function, by walking the
    ``tf`` namespace (``compat``, ``raw_ops`` and the Keras re-exports left out)."""
    found: dict[str, object] = {}
    seen: set[int] = set()
    stack = [("", tf)]
    while stack:
        prefix, module = stack.pop()
        if id(module) in seen:
            continue
        seen.add(id(module))
        for attr in sorted(dir(module)):
            if attr.startswith("_") or (not prefix and attr in _SKIPPED):
                continue
            value = getattr(module, attr, None)
            name = f"{prefix}{attr}"
            if inspect.ismodule(value):
                if value.__name__.startswith("tensorflow._api.") or value.__name__ == "tensorflow":
                    stack.append((name + ".", value))
            elif callable(value) and inspect.isfunction(inspect.unwrap(value)):
                found[name] = value
    return found


#: Top-level namespaces not walked: other spellings (``compat``), ops by type (``raw_ops``),
#: and packages that are not TensorFlow's ops (Keras, Estimator).
_SKIPPED = frozenset(("compat", "raw_ops", "keras", "estimator", "experimental"))


def _module_of(name: str) -> str:
    return name.rpartition(".")[0]


def _dead_ops_called(function, dead: set[str], op_of_code: dict) -> str | None:
    """The no-gradient op a Python function's source calls (the first), if any."""
    try:
        source = inspect.getsource(inspect.unwrap(function))
    except (OSError, TypeError):
        return None
    module = sys.modules.get(inspect.unwrap(function).__module__)
    for gen_name, leaf in _GEN_CALL.findall(source):
        wrapper = getattr(getattr(module, gen_name, None), leaf, None)
        op = op_of_code.get(getattr(inspect.unwrap(wrapper), "__code__", None)) if wrapper else None
        if op in dead:
            return op
    return None


def _has_no_gradient(tf, function) -> bool:
    """Called with float tensors (an image-shaped first argument, scalars for the other
    required ones), every input gets no gradient. Any failure to call it: not confirmed."""
    try:
        params = [
            p
            for p in inspect.signature(function).parameters.values()
            if p.default is inspect.Parameter.empty
            and p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        return False
    if not params:
        return False
    inputs = [tf.fill([2, 8, 8, 3], 0.5)] + [tf.constant(0.5) for _ in params[1:]]
    try:
        with warnings.catch_warnings(), tf.GradientTape(persistent=True) as tape:
            warnings.simplefilter("ignore")
            for x in inputs:
                tape.watch(x)
            out = function(*inputs)
        outs = [t for t in tf.nest.flatten(out) if isinstance(t, tf.Tensor) and t.dtype.is_floating]
        if not outs:
            return False
        grads = [tape.gradient(outs[0], x) for x in inputs]
    except LookupError:
        return True
    except Exception:  # noqa: BLE001 - any failure to call it with these inputs: not confirmed
        return False
    return all(g is None for g in grads)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the shipped file is stale")
    args = parser.parse_args(argv)
    data = generate()
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    if args.check:
        stale = not OUT.exists() or json.loads(OUT.read_text(encoding="utf-8")) != data
        print(f"{OUT}: {'stale' if stale else 'up to date'} (TensorFlow {data['tensorflow']})")
        return int(stale)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(
        f"wrote {OUT}: {len(data['no_gradient'])} ops without a gradient, {len(data['not_differentiable'])} "
        f"not differentiable, {len(data['api'])} API functions (TensorFlow {data['tensorflow']})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
