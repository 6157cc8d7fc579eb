"""What a ``Value`` can refer to besides tensors (functions, classes, instances, tapes...),
and the scopes that names live in while the interpreter runs.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass

from gradcheck.static.values import Value, join

#: Names that are Keras models by convention when the file does not say what they are
#: (a function parameter ``model``, ``self.critic`` set from a constructor argument...).
MODEL_NAME = re.compile(
    r"(?:.*_)?(?:model|net|network|[a-z]*net|actor|critic|generator|discriminator|encoder|decoder|policy|"
    r"agent|classifier|regressor|autoencoder|vae|backbone)(?:_.*)?",
    re.IGNORECASE,
)
TAPE_NAME = re.compile(r".*tape.*", re.IGNORECASE)

# --- what a Value can refer to ------------------------------------------------------


@dataclass(eq=False)
class FuncRef:
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    closure: Scope
    self_value: Value | None = None
    traced: ast.AST | None = None  # wrapped in ``tf.function``: the decorator (or the wrapping call)

    @property
    def ident(self) -> tuple:
        bound = self.self_value.key() if self.self_value is not None else None
        return ("func", id(self.node), id(self.closure), bound, id(self.traced) if self.traced else None)


@dataclass(eq=False)
class ClassRef:
    node: ast.ClassDef

    @property
    def ident(self) -> tuple:
        return ("class", id(self.node))


@dataclass(eq=False)
class Instance:
    cls: ast.ClassDef
    prefix: str  # how its attributes are named when it is no model itself (``Program.self_token``)

    @property
    def ident(self) -> tuple:
        return ("instance", id(self.cls), self.prefix)


@dataclass(eq=False)
class TapeRef:
    item: ast.withitem | None  # the ``with`` item that opened it; None: not visible here (a parameter)
    with_node: ast.With | None = None
    #: Opened in a function the region calls (``train_step`` calling ``train_generator``):
    #: that function, and the line of the region's statement whose call opened it.
    frame: ast.AST | None = None
    entry_line: int = 0
    top: ast.stmt | None = None  # at module level: the top-level statement that opened it

    @property
    def ident(self) -> tuple:
        return ("tape", id(self.item))


@dataclass(eq=False)
class StopRecording:
    tape: TapeRef

    @property
    def ident(self) -> tuple:
        return ("stop", id(self.tape.item))


@dataclass(eq=False)
class LambdaLayer:
    function: Value

    @property
    def ident(self) -> tuple:
        return ("lambda", self.function.key())


@dataclass(eq=False)
class StateRef:
    """A variable that is not trainable (``tf.Variable(..., trainable=False)``): no gradient
    source, but assignments write into it and reads get what was written (GC113)."""

    token: str

    @property
    def ident(self) -> tuple:
        return ("state", self.token)


@dataclass(eq=False)
class MetricRef(StateRef):
    """A Keras metric object: ``update_state(y, y_pred)`` accumulates into its variables
    through ``code``'s cut (thresholds, class indices, or the assignment itself)."""

    code: str = "GC113"

    @property
    def ident(self) -> tuple:
        return ("metric", self.token, self.code)


class _Pass:
    """A function whose gradient the user defined (``tf.custom_gradient``): differentiable."""

    ident = ("pass",)


PASS = _Pass()


class _Picked:
    """A list comprehension with a filter (``[v for v in model.trainable_variables if not
    v.path.startswith("value")]``): which elements it keeps is decided at run time, so as
    gradient sources it may leave out any of the variables its flow names."""

    ident = ("picked",)


PICKED = _Picked()


class _Library:
    """What a library call returned (a tensor, a dataset, a loss object, ``tfd.Normal(...)``):
    it computes only from what it was given, so calling it or its methods hides nothing."""

    ident = ("library",)


LIBRARY = _Library()


class _Discrete(_Library):
    """A distribution over integers (``tfd.Categorical``...): ``sample()`` has no gradient."""

    ident = ("discrete",)


DISCRETE = _Discrete()


def from_library(ref: object) -> bool:
    return isinstance(ref, _Library)


class Scope:
    __slots__ = ("held", "outer", "parent", "returns", "vars")

    def __init__(self, parent: Scope | None = None) -> None:
        self.vars: dict[str, Value] = {}
        self.parent = parent
        self.returns: list[Value] = []
        self.outer: set[str] | None = None  # names declared ``global`` or ``nonlocal`` here
        self.held = False  # a function closes over it: ``release`` empties it (``Program.hold``)

    def lookup(self, name: str) -> Value | None:
        scope: Scope | None = self
        while scope is not None:
            value = scope.vars.get(name)
            if value is not None:
                return value
            scope = scope.parent
        return None


def release(scopes: list[Scope]) -> None:
    """Empty these scopes, the analysis being over. A scope that holds a function defined in
    it (``def main(): ...`` at module level, whose reference closes over the scope) is a
    reference cycle, which would keep the function's tree and every value of the scope alive
    until a pass of the cyclic collector walked them all; emptied, they are freed at once
    by reference counting."""
    for scope in scopes:
        scope.vars = {}
        scope.returns = []
    scopes.clear()


def merge_vars(a: dict[str, Value], b: dict[str, Value]) -> dict[str, Value]:
    out = dict(a)
    for name, value in b.items():
        have = out.get(name)
        out[name] = value if have is None or have is value else join((have, value))
    return out


def same_vars(a: dict[str, Value], b: dict[str, Value]) -> bool:
    return a.keys() == b.keys() and all(a[k] is b[k] or a[k] == b[k] for k in a)


#: Last words that make a model's name the name of something else: what builds a model
#: (``model_fn``, ``model_builder``, ``critic_factory``) or describes one (``model_config``).
_NOT_A_MODEL = frozenset(
    (
        *("fn", "func", "function", "builder", "build", "factory", "maker", "creator", "ctor"),
        *("cls", "class", "type", "config", "cfg", "name", "names", "path", "dir", "file"),
        *("spec", "specs", "params", "kwargs", "args", "id", "ids", "version", "url"),
    )
)


@functools.lru_cache(maxsize=4096)
def model_name(name: str) -> bool:
    """Whether a name says "Keras model" by convention (``model``, ``q_net``, ``critic``);
    not a name that says it builds or describes one (``model_fn``, ``model_config``,
    ``model_generator``: ``generator`` after another model word is a factory)."""
    name = name.rsplit(".", 1)[-1]
    if MODEL_NAME.fullmatch(name) is None:
        return False
    words = name.lower().split("_")
    if len(words) > 1 and words[-1] in _NOT_A_MODEL:
        return False
    if len(words) > 1 and words[-1] == "generator":
        return not any(MODEL_NAME.fullmatch(w) for w in words[:-1])
    return True


@functools.lru_cache(maxsize=4096)
def tape_name(name: str) -> bool:
    return TAPE_NAME.fullmatch(name) is not None


def opaque(value: Value) -> bool:
    """Nothing is known about it (the result of a call into another module)."""
    return (
        not value.flow
        and not value.models
        and value.ref is None
        and value.qual is None
        and not value.tensor
        and value.dtype is None
    )


def keyword(node: ast.Call, name: str) -> ast.AST | None:
    for kw in node.keywords:
        if kw.arg == name:
            return kw.value
    return None
