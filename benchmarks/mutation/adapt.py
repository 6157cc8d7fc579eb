"""The minimal edits that make a third-party program run quickly here, as named transforms.

Each transform is ours and is listed, with its arguments, in ``programs.toml``; the program's
own code is read at run time and never stored. ``notebook_to_script`` works on text (a
notebook is not Python); every other transform is a libcst transform.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import libcst as cst

from benchmarks.mutation.cstutil import dotted

TRANSFORMS: dict[str, Callable[..., Any]] = {}


def transform(fn: Callable[..., Any]) -> Callable[..., Any]:
    TRANSFORMS[fn.__name__] = fn
    return fn


class AdaptError(Exception):
    """A transform did not find what the manifest says it edits (the program changed)."""


# -- text level --------------------------------------------------------------------------------


def notebook_to_script(text: str, skip_cells: list[int] | None = None) -> str:
    """A notebook's code cells in order; shell (``!``) and magic (``%``) lines become ``pass``."""
    nb = json.loads(text)
    out = []
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code" or i in (skip_cells or []):
            continue
        src = "".join(cell.get("source", []))
        if src.lstrip().startswith(("%%time", "%%capture")):  # cell magics that still run the body
            src = src.lstrip().split("\n", 1)[1] if "\n" in src.lstrip() else ""
        elif src.lstrip().startswith("%%"):
            continue
        lines = []
        for line in src.splitlines():
            stripped = line.lstrip()
            if stripped.startswith(("!", "%")):
                line = line[: len(line) - len(stripped)] + "pass"
            lines.append(line)
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"


@transform
def replace_text(source: str, old: str, new: str, count: int = 1) -> str:
    """A literal edit, for what no structural transform can say (used sparingly)."""
    if old not in source:
        raise AdaptError(f"replace_text: {old!r} not found")
    return source.replace(old, new, count)


@transform
def prepend(source: str, code: str) -> str:
    """Lines put before the program (e.g. the environment a script expects from its shell)."""
    return code.rstrip("\n") + "\n" + source


@transform
def append(source: str, code: str) -> str:
    """Lines put after the program: a step the program defines but leaves to its reader to call."""
    return source.rstrip("\n") + "\n" + code.rstrip("\n") + "\n"


# -- libcst level ------------------------------------------------------------------------------


def _apply(source: str, t: cst.CSTTransformer, what: str, require: bool = True) -> str:
    module = cst.parse_module(source)
    new = module.visit(t)
    if require and not getattr(t, "hits", 1):
        raise AdaptError(f"{what}: nothing matched")
    return new.code


class _Counting(cst.CSTTransformer):
    hits = 0


@transform
def set_constant(source: str, name: str, value: str, all: bool = False) -> str:
    """``NAME = ...`` becomes ``NAME = value`` (the first assignment, or all with ``all``)."""
    expr = cst.parse_expression(value)

    class T(_Counting):
        def leave_Assign(self, o: cst.Assign, u: cst.Assign) -> cst.Assign:
            if any(dotted(t.target) == name for t in o.targets) and (all or not self.hits):
                self.hits += 1
                return u.with_changes(value=expr)
            return u

        def leave_AnnAssign(self, o: cst.AnnAssign, u: cst.AnnAssign) -> cst.AnnAssign:
            if dotted(o.target) == name and o.value is not None and (all or not self.hits):
                self.hits += 1
                return u.with_changes(value=expr)
            return u

    return _apply(source, T(), f"set_constant {name}")


@transform
def replace_call(source: str, call: str, code: str, all: bool = True) -> str:
    """Every call to the dotted name ``call`` (e.g. a dataset download) becomes ``code``."""
    expr = cst.parse_expression(code)

    class T(_Counting):
        def leave_Call(self, o: cst.Call, u: cst.Call) -> cst.BaseExpression:
            if dotted(o.func) == call and (all or not self.hits):
                self.hits += 1
                return expr
            return u

    return _apply(source, T(), f"replace_call {call}")


@transform
def set_keyword(source: str, call: str, keyword: str, value: str) -> str:
    """In every call to ``call`` (dotted name or its last part), keyword ``keyword=value``."""
    expr = cst.parse_expression(value)

    class T(_Counting):
        def leave_Call(self, o: cst.Call, u: cst.Call) -> cst.Call:
            name = dotted(o.func)
            if name != call and name.split(".")[-1] != call:
                return u
            self.hits += 1
            args = [a for a in u.args if not (a.keyword and a.keyword.value == keyword)]
            if args:
                args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            return u.with_changes(args=[*args, cst.Arg(expr, keyword=cst.Name(keyword))])

    return _apply(source, T(), f"set_keyword {call}.{keyword}")


@transform
def drop_calls(source: str, prefixes: list[str], require: bool = False) -> str:
    """Expression statements calling anything under these prefixes (plots, displays, saves)
    become ``pass``; so do assignments whose value is such a call."""

    def matches(node: cst.BaseExpression) -> bool:
        while isinstance(node, cst.Call):
            name = dotted(node.func)
            if name and name.startswith(tuple(prefixes)):
                return True
            node = node.func.value if isinstance(node.func, cst.Attribute) else None
        return False

    class T(_Counting):
        def leave_SimpleStatementLine(self, o: cst.SimpleStatementLine, u: cst.SimpleStatementLine):
            body = []
            for s in u.body:
                if (isinstance(s, cst.Expr) and matches(s.value)) or (
                    isinstance(s, cst.Assign | cst.AugAssign) and matches(s.value)
                ):
                    self.hits += 1
                    body.append(cst.Pass())
                else:
                    body.append(s)
            return u.with_changes(body=body)

    return _apply(source, T(), f"drop_calls {prefixes}", require)


@transform
def drop_imports(source: str, modules: list[str]) -> str:
    """Imports of these modules (and their submodules) removed: plotting, notebooks helpers."""

    def hit(name: str) -> bool:
        return any(name == m or name.startswith(m + ".") for m in modules)

    class T(_Counting):
        def leave_SimpleStatementLine(self, o: cst.SimpleStatementLine, u: cst.SimpleStatementLine):
            body = []
            for s in u.body:
                if (isinstance(s, cst.Import) and all(hit(dotted(a.name)) for a in s.names)) or (
                    isinstance(s, cst.ImportFrom) and s.module is not None and hit(dotted(s.module))
                ):
                    self.hits += 1
                    body.append(cst.Pass())
                else:
                    body.append(s)
            return u.with_changes(body=body)

    return _apply(source, T(), f"drop_imports {modules}", False)


@transform
def rename_import(source: str, old: str, new: str) -> str:
    """``import gym`` -> ``import gymnasium as gym`` (the module a name refers to, not the name)."""

    class T(_Counting):
        def leave_Import(self, o: cst.Import, u: cst.Import) -> cst.Import:
            names = []
            for a in u.names:
                if dotted(a.name) == old:
                    self.hits += 1
                    asname = a.asname or cst.AsName(name=cst.Name(old.split(".")[0]))
                    a = a.with_changes(name=cst.parse_expression(new), asname=asname)
                names.append(a)
            return u.with_changes(names=names)

    return _apply(source, T(), f"rename_import {old}")


@transform
def replace_statement(source: str, match: str, code: str, all: bool = False) -> str:
    """Top-level or nested simple statements whose code starts with ``match`` become ``code``."""
    new_stmts = cst.parse_module(code).body
    pattern = re.compile(re.escape(match))

    class T(_Counting):
        def leave_SimpleStatementLine(self, o: cst.SimpleStatementLine, u: cst.SimpleStatementLine):
            text = cst.Module([]).code_for_node(o).strip()
            if pattern.match(text) and (all or not self.hits):
                self.hits += 1
                return cst.FlattenSentinel(list(new_stmts))
            return u

    return _apply(source, T(), f"replace_statement {match!r}")


@transform
def limit_range(source: str, name: str, value: int) -> str:
    """``for ... in range(NAME)`` / ``range(NAME)`` anywhere: NAME replaced by ``value``."""

    class T(_Counting):
        def leave_Call(self, o: cst.Call, u: cst.Call) -> cst.Call:
            if dotted(o.func) == "range" and any(dotted(a.value) == name for a in o.args):
                self.hits += 1
                return u.with_changes(
                    args=[
                        a.with_changes(value=cst.Integer(str(value))) if dotted(a.value) == name else a for a in u.args
                    ]
                )
            return u

    return _apply(source, T(), f"limit_range {name}")


def adapt(source: str, edits: list[dict[str, Any]]) -> str:
    """Apply the manifest's edits in order."""
    for edit in edits:
        args = dict(edit)
        name = args.pop("transform")
        if name not in TRANSFORMS:
            raise AdaptError(f"unknown transform {name!r}")
        source = TRANSFORMS[name](source, **args)
    return source


_GYM_SHIM = '''
import sys as _gcm_sys
import types as _gcm_types

import gymnasium as _gcm_gymnasium


class _GcmClassicApi(_gcm_gymnasium.Wrapper):
    """The gym<0.26 API (reset -> obs, step -> 4-tuple, Discrete.n an int) on top of gymnasium."""

    def __init__(self, env):
        super().__init__(env)
        if hasattr(env.action_space, "n"):
            env.action_space.n = int(env.action_space.n)

    def reset(self, **kwargs):
        return self.env.reset(**kwargs)[0]

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated or truncated, info


_gcm_gym = _gcm_types.ModuleType("gym")
_gcm_gym.make = lambda *a, **k: _GcmClassicApi(_gcm_gymnasium.make(*a, **k))
_gcm_gym.spaces = _gcm_gymnasium.spaces
_gcm_sys.modules["gym"] = _gcm_gym
'''


@transform
def gym_classic_api(source: str) -> str:
    """``import gym`` served by gymnasium behind the old reset/step API (gym is not installed)."""
    return _GYM_SHIM.lstrip("\n") + source


@transform
def fake_dataset(
    source: str,
    call: str,
    x_shape: list[int],
    y_classes: int = 10,
    n: int = 256,
    n_test: int | None = None,
    x_max: int = 256,
) -> str:
    """A ``keras.datasets.*.load_data()`` call becomes random uint8 arrays of the same shapes."""

    def part(k: int) -> str:
        rnd = "__import__('numpy').random.randint"
        return (
            f"({rnd}(0, {x_max}, ({k}, {', '.join(map(str, x_shape))}), dtype='uint8'), "
            f"{rnd}(0, {y_classes}, ({k},), dtype='uint8'))"
        )

    return replace_call(source, call, f"({part(n)}, {part(n_test or n)})")


@transform
def truncate_from(source: str, match: str) -> str:
    """Everything from the first top-level line that starts with ``match`` is dropped: a
    notebook's later part (plots of the result, a second solver that needs a package not
    installed here) that follows the training the benchmark checks."""
    lines = source.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith(match):
            return "".join(lines[:i])
    raise AdaptError(f"truncate_from: no line starts with {match!r}")


@transform
def fake_image_dataset(
    source: str,
    call: str,
    shape: list[int],
    n: int = 64,
    batch_size: int = 32,
    classes: int | None = None,
) -> str:
    """An ``image_dataset_from_directory(...)`` call (a folder of downloaded images) becomes a
    ``tf.data`` dataset of random pixel values (0..255, float32) of the same image shape,
    batched by ``batch_size`` (0: unbatched, as ``batch_size=None`` gives); with ``classes``,
    of (image, integer label) pairs as ``labels=...`` would give."""
    np_ = "__import__('numpy')"
    x = f"{np_}.random.randint(0, 256, ({n}, {', '.join(map(str, shape))})).astype('float32')"
    data = x if classes is None else f"({x}, {np_}.random.randint(0, {classes}, ({n},)))"
    code = f"__import__('tensorflow').data.Dataset.from_tensor_slices({data})"
    if batch_size:
        code += f".batch({batch_size})"
    return replace_call(source, call, code)


# -- stand-ins for missing packages (tranche progB) ---------------------------------------------


@transform
def stub_module(source: str, module: str, code: str) -> str:
    """A package missing here (``cv2``, ``imutils``) served by a few lines of ours, registered in
    ``sys.modules`` before the program runs: only what the program calls, nothing it trains."""
    return (
        "import sys as _gcm_sys\nimport types as _gcm_types\n"
        f"_gcm_mod = _gcm_types.ModuleType({module!r})\n"
        f"exec(compile({code!r}, {('<stub ' + module + '>')!r}, 'exec'), _gcm_mod.__dict__)\n"
        f"_gcm_sys.modules[{module!r}] = _gcm_mod\n" + source
    )


_TFDS_STUB = '''
def load(name, split=None, as_supervised=False, with_info=False, **kwargs):
    """Random uint8 images of the dataset's shape and int64 labels, one dataset per split."""
    import types

    import numpy as np
    import tensorflow as tf

    def one(k):
        rng = np.random.default_rng(k)
        x = rng.integers(0, 256, (N, *SHAPE), dtype="uint8")
        y = rng.integers(0, CLASSES, (N,), dtype="int64")
        ds = tf.data.Dataset.from_tensor_slices((x, y))
        return ds if as_supervised else ds.map(lambda a, b: {"image": a, "label": b})

    out = [one(k) for k in range(len(split))] if isinstance(split, (list, tuple)) else one(0)
    if not with_info:
        return out
    label = types.SimpleNamespace(num_classes=CLASSES, names=[str(i) for i in range(CLASSES)])
    splits = {s: types.SimpleNamespace(num_examples=N) for s in (split if isinstance(split, (list, tuple)) else [split])}
    return out, types.SimpleNamespace(features={"label": label}, splits=splits)


def disable_progress_bar():
    pass
'''


@transform
def fake_tfds(source: str, shape: list[int], classes: int, n: int = 64) -> str:
    """``tensorflow_datasets`` (not installed, and its datasets are downloads) replaced by a
    stand-in whose ``load`` gives random uint8 images of ``shape`` and ``classes`` labels (``n``
    per split), as ``(image, label)`` with ``as_supervised`` and as ``{"image", "label"}`` dicts
    otherwise; ``with_info`` gives the label count and split sizes."""
    code = f"N = {n}\nSHAPE = {tuple(shape)!r}\nCLASSES = {classes}\n" + _TFDS_STUB
    return stub_module(source, "tensorflow_datasets", code)


# -- a synthetic continuous-control environment (tranche progD) ---------------------------------

_SYNTH_ENV = '''
import sys as _gcm_sys
import types as _gcm_types

import numpy as _gcm_np
from gymnasium import spaces as _gcm_spaces


class _GcmSyntheticEnv:
    """A tiny continuous-control task behind the gym<0.26 API: random observations in
    [-1, 1], reward -|a|^2, an episode of _GCM_STEPS steps. Stands in for an environment whose
    simulator is not installed here (Box2D, MuJoCo); the agent's networks and losses are
    the program's own, only its data comes from here."""

    def __init__(self, obs_dim, act_dim, high, steps):
        self.observation_space = _gcm_spaces.Box(-1.0, 1.0, (obs_dim,), dtype=_gcm_np.float32)
        self.action_space = _gcm_spaces.Box(-high, high, (act_dim,), dtype=_gcm_np.float32)
        self._steps, self._t = steps, 0
        self.unwrapped = self

    def _obs(self):
        return _gcm_np.random.uniform(-1.0, 1.0, self.observation_space.shape).astype(_gcm_np.float32)

    def reset(self, **kwargs):
        self._t = 0
        return self._obs()

    def step(self, action):
        self._t += 1
        reward = -float(_gcm_np.sum(_gcm_np.square(_gcm_np.asarray(action, dtype=_gcm_np.float32))))
        return self._obs(), reward, self._t >= self._steps, {}

    def seed(self, seed=None):
        return [seed]

    def render(self, *args, **kwargs):
        return None

    def close(self):
        pass


_gcm_gym = _gcm_types.ModuleType("gym")
_gcm_gym.make = lambda *a, **k: _GcmSyntheticEnv(_GCM_OBS_DIM, _GCM_ACT_DIM, _GCM_HIGH, _GCM_STEPS)
_gcm_gym.spaces = _gcm_spaces
_gcm_sys.modules["gym"] = _gcm_gym
'''


@transform
def synthetic_env(source: str, obs_dim: int, act_dim: int, high: float = 1.0, steps: int = 50) -> str:
    """``import gym`` served by a synthetic continuous-control task (old reset/step API) whose
    ``make`` ignores the environment's name: ``obs_dim`` observations, ``act_dim`` actions in
    [-high, high], random observations, episodes of ``steps`` steps. For an agent written for
    an environment whose simulator is not installed here (Box2D's LunarLanderContinuous,
    MuJoCo): the shapes are the environment's, the agent is untouched."""
    consts = f"_GCM_OBS_DIM = {obs_dim}\n_GCM_ACT_DIM = {act_dim}\n_GCM_HIGH = {float(high)}\n_GCM_STEPS = {steps}\n"
    return consts + _SYNTH_ENV.lstrip("\n") + source


# -- notebooks whose cells were run out of order (tranche progE) -------------------------------


@transform
def move_block(source: str, start: str, end: str, before: str) -> str:
    """The top-level lines from the first that starts with ``start`` up to (not including) the
    first later one that starts with ``end`` are moved to just before the first line that
    starts with ``before``: a notebook that defines a class or helper in a cell below the one
    that first uses it (its author ran the cells out of order). The code is unchanged; only
    its place is."""
    lines = source.splitlines(keepends=True)
    i = next((k for k, line in enumerate(lines) if line.startswith(start)), None)
    if i is None:
        raise AdaptError(f"move_block: no line starts with {start!r}")
    j = next((k for k in range(i + 1, len(lines)) if lines[k].startswith(end)), None)
    if j is None:
        raise AdaptError(f"move_block: no line after {start!r} starts with {end!r}")
    block, rest = lines[i:j], lines[:i] + lines[j:]
    b = next((k for k, line in enumerate(rest) if line.startswith(before)), None)
    if b is None:
        raise AdaptError(f"move_block: no line starts with {before!r}")
    return "".join(rest[:b] + block + ["\n"] + rest[b:])
