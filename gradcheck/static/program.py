"""What the interpreter knows about a whole file: its imports, classes, the names given to
models and variables, and what the runs found (gradient calls, compiled losses, functional
models). One ``Program`` per file; several interpreter runs share it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from gradcheck.static.classes import Classes
from gradcheck.static.names import Aliases, canonical
from gradcheck.static.roles import stops_a_target
from gradcheck.static.scope import StateRef
from gradcheck.static.values import FRESH, Site, Value
from gradcheck.static.walk import BLOCK_FIELDS, CHILD_FIELDS, blocks, child_fields

#: Evaluation steps one file may take before the engine gives up on it (no finding).
BUDGET = 400_000


class _NewVariable:
    """Marks the value of a variable constructor, so the assignment names the variable."""

    ident = ("new-variable",)


NEW_VARIABLE = _NewVariable()


class BudgetExceeded(Exception):
    """The file is too large or too tangled to analyse within the budget."""


_FIT_CALL = re.compile(r"\.fit\(")


@dataclass
class Check:
    """A gradient request: ``tape.gradient(target, sources)`` or a compiled loss."""

    node: ast.AST
    target: Value
    sources: Value
    tape: ast.With | None = None
    births: dict[str, ast.AST] = field(default_factory=dict)  # origin -> its first call in this region
    #: The sources as written, one by one (``[x, w]``): (expression, its value); None: unknown.
    leaves: list[tuple[ast.AST, Value]] | None = None
    own_tape: bool = False  # the tape was opened by a ``with`` this analysis saw
    unknown_watch: bool = False  # the tape watched something this analysis could not name
    fit: bool = False  # ``model.fit``: the check is a training call, not a gradient request
    parts: dict[str, frozenset] = field(default_factory=dict)  # origin -> its parts, when checked
    watched_calls: dict[str, ast.Call] = field(default_factory=dict)  # watched name -> the call that made it
    #: dead stores before the request (``enc = self.encoder(x)``, never read) -> what they carry
    drops: dict[ast.AST, Mapping[str, frozenset]] = field(default_factory=dict)
    #: the ``tape.watch(...)`` calls before the request, with the names each watched
    watch_calls: tuple[tuple[ast.Call, tuple[str, ...]], ...] = ()


@dataclass
class IndexUse:
    """Where an integer value was fed to the taped computation (GC114 points there)."""

    value: Value
    first: ast.AST  # the first such use
    index: ast.AST | None  # the first use as indices (an embedding's ids, a gather's indices)
    as_index: bool | None  # used as indices; False: as data only; None: fed to a model not shown


@dataclass
class Program(Classes):
    tree: ast.Module
    source_lines: list[str]
    aliases: Aliases = field(init=False)
    regions: list[ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=list)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    owner: dict[ast.AST, ast.AST] = field(default_factory=dict)  # def/class -> enclosing def/class/module
    kinds: dict[str, str] = field(default_factory=dict)  # origin -> "model" | "variable" | "tensor"
    labels: dict[str, str] = field(default_factory=dict)  # fresh token -> how to call it in a message
    births: dict[str, ast.AST] = field(default_factory=dict)  # model origin -> its first call
    renames: dict[str, set[str]] = field(default_factory=dict)  # fresh token -> names it was given
    frozen: set[str] = field(default_factory=set)  # models and layers set ``trainable = False``
    guessed: set[str] = field(default_factory=set)  # models known only by their name (``model``)
    model_params: dict[ast.AST, frozenset[str]] = field(default_factory=dict)  # def -> parameters used as models
    opaque: set[str] = field(default_factory=set)  # parameters passed as gradient sources
    trained: set[str] = field(default_factory=set)  # receivers of fit / compile / train_on_batch
    compiled: list[tuple[ast.Call, Value, Value]] = field(default_factory=list)  # (compile call, loss, the model)
    functional: dict[ast.Call, tuple[str, Value]] = field(default_factory=dict)  # keras.Model(i, o) -> (token, o)
    fits: list[tuple[ast.Call, Value]] = field(default_factory=list)  # (fit / train_on_batch call, the model)
    outputs: dict[str, Value] = field(default_factory=dict)  # functional model -> its outputs, as built
    #: layer -> the weights added to it from outside (``conv.add_weight(...)``, the handle
    #: dropped) -> that call: tracked by the layer, read by nothing
    added_weights: dict[str, dict[str, ast.AST]] = field(default_factory=dict)
    added_losses: dict[str, list[Value]] = field(default_factory=dict)  # model -> ``model.add_loss(v)`` values
    compile_losses: dict[str, Value | None] = field(default_factory=dict)  # model -> its compiled loss (None: none)
    parts: dict[str, set[str]] = field(default_factory=dict)  # model origin -> origins whose variables it tracks
    sequential: dict[str, list[Value]] = field(default_factory=dict)  # Sequential token -> its layers, in order
    int_origins: dict[str, ast.AST] = field(default_factory=dict)  # integer variable or tensor -> where it was made
    stateful: dict[str, ast.AST] = field(default_factory=dict)  # layer holding non-trainable variables -> its call
    escaped: set[str] = field(default_factory=set)  # origins whose values went where reads are not followed
    traced_calls: dict[str, ast.AST] = field(default_factory=dict)  # model -> its ``@tf.function`` ``call``
    weighted: set[str] = field(default_factory=set)  # layers known to make trainable variables
    weightless: set[str] = field(default_factory=set)  # Keras layers known to make none (Flatten)
    embeddings: set[str] = field(default_factory=set)  # ``Embedding`` layers (their input is ids)
    id_layers: set[str] = field(default_factory=set)  # lookups that output integer ids
    eager_built: set[str] = field(default_factory=set)  # models and weights made when constructed
    wrapped: dict[str, Value] = field(default_factory=dict)  # ``RNN(cell)``, ``Bidirectional(l)`` -> what it calls
    own_weights: dict[str, set[str]] = field(default_factory=dict)  # instance -> its ``add_weight`` origins
    registered: set[tuple] = field(default_factory=set)  # (instance, class) whose parts are recorded
    fit_nodes: set[ast.AST] = field(default_factory=set)
    fitted_compiles: set[ast.AST] = field(default_factory=set)  # compile calls whose checks a fit made
    training_checks: list = field(default_factory=list)  # checks made by ``compile``/``fit`` as they ran
    eager_births: set[str] = field(default_factory=set)  # layers called somewhere outside a ``tf.function``
    activations: dict[str, object] = field(default_factory=dict)  # layer -> its ``activation=`` function
    param_values: dict[ast.AST, dict[str, list[Value]]] = field(default_factory=dict)  # def -> param -> passed
    #: instance of a class of the file -> the arguments its constructor call passed (args, kwargs)
    ctor_args: dict[str, tuple[list[Value], dict[str, Value]]] = field(default_factory=dict)
    #: class of the file -> the arguments of each of the file's calls that made an instance
    ctor_calls: dict[ast.ClassDef, list[tuple[list[Value], dict[str, Value]]]] = field(default_factory=dict)
    index_uses: dict[object, IndexUse] = field(default_factory=dict)  # int value/origin -> its use
    #: tape item -> watched name -> (its binding before the watch, the watch's line)
    latent: dict[ast.AST, dict[str, tuple[ast.AST, int]]] = field(default_factory=dict)
    #: ``tf.custom_gradient`` that ignores its upstream gradient: its mark -> (it, origins passed in)
    wrong_gradients: dict[str, tuple] = field(default_factory=dict)
    #: host escapes (GC105) in a traced step, on a value computed from variables: the step
    #: stops there with an error (a graph tensor has no value), whatever other paths remain
    crashes: dict[tuple[Site, ast.AST | None], set[str]] = field(default_factory=dict)  # (site, tape) -> origins
    _eager: bool | None = None
    _fits: bool | None = None
    keras2: bool = False  # the file uses Keras 2 (``tf_keras``, ``keras.backend`` math)
    module_scope: object = None  # interp.Scope: the module's names once its body has run
    scopes: dict[ast.AST, object] = field(default_factory=dict)  # def -> its names, run on its own
    closures: list = field(default_factory=list)  # scopes functions close over (``hold``)
    steps: int = 0
    _sites: dict[tuple, Site] = field(default_factory=dict)
    site_nodes: dict[Site, ast.AST] = field(default_factory=dict)  # each site's call or operator
    class_attrs: dict[tuple, Value | None] = field(default_factory=dict)  # (class, attribute, owner) -> value
    method_runs: dict[tuple, dict[str, Value]] = field(default_factory=dict)  # (method, owner) -> attribute -> value
    _model_like: dict[ast.ClassDef, bool] = field(default_factory=dict)
    _loaded: dict[ast.AST, frozenset] = field(default_factory=dict)
    _scans: dict[ast.AST, tuple[set[str], set[str], set[str]]] = field(default_factory=dict)
    _nested: dict[ast.AST, frozenset] = field(default_factory=dict)
    _dynamic: dict[ast.ClassDef, bool] = field(default_factory=dict)
    _builds: set[str] | None = None
    _assignments: dict[ast.ClassDef, dict[str, list[tuple[ast.AST, ast.AST | None]]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._index()

    def _index(self) -> None:
        """One walk over the statements (expressions are not visited: that walk would cost
        more than parsing): who owns each def and class, the imports, and the regions, the
        functions whose own body mentions a tape or a gradient request."""
        imports: list[ast.Import | ast.ImportFrom] = []
        functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        stack: list[tuple[list, ast.AST]] = [(self.tree.body, self.tree)]
        owners, classes = self.owner, self.classes
        fields = BLOCK_FIELDS
        defs = (ast.FunctionDef, ast.AsyncFunctionDef)
        while stack:
            body, owner = stack.pop()
            for stmt in body:
                kind = type(stmt)
                if kind in defs:
                    owners[stmt] = owner
                    functions.append(stmt)
                    stack.append((stmt.body, stmt))
                elif kind is ast.ClassDef:
                    owners[stmt] = owner
                    classes.setdefault(stmt.name, stmt)
                    stack.append((stmt.body, stmt))
                elif kind is ast.Import or kind is ast.ImportFrom:
                    imports.append(stmt)
                elif kind in fields:
                    for block in blocks(stmt):
                        stack.append((block, owner))
        self.aliases = Aliases(imports=imports)
        text = "\n".join(self.source_lines)
        self.regions = _regions(functions, self.source_lines, text)
        self.keras2 = _keras2(imports, text, self.aliases)

    def hold(self, scope) -> None:
        """Note a scope a function defined in it closes over (``scope.release`` empties it
        when the analysis is over: a scope holding such a function is a reference cycle)."""
        if not scope.held:
            scope.held = True
            self.closures.append(scope)

    def tick(self) -> None:
        self.steps += 1
        if self.steps > BUDGET:
            raise BudgetExceeded

    # --- names of models and variables -------------------------------------------------

    def fresh(self, node: ast.AST, kind: str, label: str) -> str:
        token = f"{FRESH}{kind[0]}:{node.lineno}:{node.col_offset}"
        self.labels.setdefault(token, label)
        self.kinds.setdefault(token, kind)
        return token

    def rename(self, value: Value, name: str) -> Value:
        """Give the fresh models/variables in ``value`` the name they are assigned to."""
        if not _has_fresh(value):
            return value
        return self._renamed(value, name)

    def _renamed(self, value: Value, name: str) -> Value:
        cleared = False

        def new(key: str) -> str:
            nonlocal cleared
            if not key.startswith(FRESH) or key.startswith(_SELF):
                return key
            if name in self.renames.get(key, ()):
                return name  # named so before (a layer of a ``Sequential``, each time it runs)
            if not cleared:
                # The name now stands for this value: what it stood for before (a notebook's
                # earlier ``model``) no longer describes it.
                self._forget(name)
                cleared = True
            self.renames.setdefault(key, set()).add(name)
            self.kinds[name] = self.kinds.get(key, "model")
            for members in (
                self.guessed,
                self.frozen,
                self.weighted,
                self.weightless,
                self.eager_built,
                self.embeddings,
                self.id_layers,
            ):
                if key in members:
                    members.add(name)
            for table in (
                self.int_origins,
                self.stateful,
                self.activations,
                self.sequential,
                self.outputs,
                self.wrapped,
                self.ctor_args,
            ):
                if key in table:
                    table.setdefault(name, table[key])
            if key in self.parts:
                prefix = key + "."
                self.parts.setdefault(name, set()).update(
                    name + p[len(key) :] if p.startswith(prefix) else p for p in self.parts[key]
                )
            return name

        # A variable is named where it is created (``w = tf.Variable(...)``); the output of a
        # fresh layer's call keeps its layer's name (``x = Dense(4, name="feature")(x)``).
        flow = {new(k): c for k, c in value.flow.items()} if value.ref is NEW_VARIABLE else value.flow
        ref = value.ref
        if isinstance(ref, StateRef) and ref.token.startswith(FRESH):
            ref = replace(ref, token=new(ref.token))
        return Value(
            flow=flow,
            models=frozenset(new(m) for m in value.models),
            items=tuple(self.rename(i, name) for i in value.items) if value.items is not None else None,
            fields=value.fields,
            element=self.rename(value.element, name) if value.element is not None else None,
            ref=None if ref is NEW_VARIABLE else ref,
            qual=value.qual,
            container=value.container,
            dtype=value.dtype,
            tensor=value.tensor,
        )

    def _forget(self, name: str) -> None:
        for members in (self.frozen, self.weighted, self.weightless, self.eager_built, self.embeddings, self.id_layers):
            members.discard(name)
        for table in (
            *(self.int_origins, self.stateful, self.activations, self.sequential, self.parts, self.outputs),
            self.wrapped,
            self.ctor_args,
        ):
            table.pop(name, None)
        self.registered = {key for key in self.registered if key[0] != name}

    def loaded_names(self, node: ast.AST) -> frozenset:
        """The names of its own scope a function (or the module) may read: every name loaded
        or deleted in it, those its nested functions read and do not bind themselves, and
        those it declares ``global``/``nonlocal`` (read elsewhere). A name bound in it and
        not among these is a dead store."""
        found = self._loaded.get(node)
        if found is None:
            reads, _binds, declared = self._scan_scope(node)
            names = reads | declared
            if isinstance(node, ast.Module):
                names.add("__all__")
            found = self._loaded[node] = frozenset(names)
        return found

    def _scan_scope(self, node: ast.AST) -> tuple[set[str], set[str], set[str]]:
        """(names read, bound, declared ``global``/``nonlocal``) by the body of a module,
        class, function or lambda, with what its nested scopes read and do not bind
        themselves (each nested scope is walked once per file, whatever encloses it)."""
        found = self._scans.get(node)
        if found is None:
            body = node.body if isinstance(node.body, list) else [node.body]
            found = self._scans[node] = self._scan(list(body))
        return found

    def _nested_reads(self, node: ast.AST) -> frozenset:
        """The names a nested scope reads that it does not bind itself (its defaults are
        read where it is defined), with those it declares ``global``/``nonlocal``."""
        found = self._nested.get(node)
        if found is None:
            reads, binds, declared = self._scan_scope(node)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                spec = node.args
                binds = binds | {a.arg for a in (*spec.posonlyargs, *spec.args, *spec.kwonlyargs)}
                binds |= {a.arg for a in (spec.vararg, spec.kwarg) if a is not None}
                defaults = [*spec.defaults, *(d for d in spec.kw_defaults if d is not None)]
                if defaults:
                    more = self._scan(defaults)
                    reads, binds, declared = reads | more[0], binds | more[1], declared | more[2]
            found = self._nested[node] = frozenset((reads - (binds - declared)) | declared)
        return found

    def _scan(self, stack: list) -> tuple[set[str], set[str], set[str]]:
        # ``walk.descendants``'s loop, inlined with this scope's pruning: a call per node
        # would cost more than the walk it saves
        reads: set[str] = set()
        binds: set[str] = set()
        declared: set[str] = set()
        fields = CHILD_FIELDS
        name, store, lam = ast.Name, ast.Store, ast.Lambda
        while stack:
            sub = stack.pop()
            if sub is None:
                continue
            cls = type(sub)
            if cls is name:
                (binds if type(sub.ctx) is store else reads).add(sub.id)
                continue
            if cls in _SCOPES:
                if cls is not lam:
                    binds.add(sub.name)
                    stack.extend(sub.decorator_list)
                reads |= self._nested_reads(sub)
                continue
            if cls in _DECLARATIONS:
                declared.update(sub.names)
                continue
            names = fields.get(cls)
            if names is None:
                names = child_fields(cls)
            for field_name in names:
                value = getattr(sub, field_name, None)
                if value is None:
                    continue
                if type(value) is list:
                    stack.extend(value)
                else:
                    stack.append(value)
        return reads, binds, declared

    def snapshot(self, origins) -> dict[str, frozenset]:
        """What each of these origins is made of now (a check keeps it: a later model given
        the same name must not change what this check's model was)."""
        return {o: frozenset(self.all_parts(o)) for o in origins}

    def parts_in(self, check: Check, origin: str) -> set[str] | frozenset:
        """``all_parts`` as it was when ``check`` was made."""
        found = check.parts.get(origin)
        return found if found is not None else self.all_parts(origin)

    def label(self, origin: str) -> str:
        """How a message names an origin: its variable name, or a layer's ``name=``."""
        if origin in self.labels:
            return self.labels[origin]
        if origin.startswith(FRESH):
            head, dot, rest = origin.partition(".")
            if dot:
                return f"{self.label(head)}.{rest}"
            label = self.labels.get(origin, "a layer")
            return label if label.isidentifier() else f"{label} (line {origin.split(':')[1]})"
        return origin

    # --- what a model is made of ------------------------------------------------------

    def self_token(self, cls: ast.ClassDef) -> str:
        """The origin ``self`` stands for in the methods of ``cls``, shown as ``self``: one per
        class, so that two classes' ``self.model`` stay apart."""
        token = f"{_SELF}{cls.lineno}:{cls.col_offset}"
        self.labels.setdefault(token, "self")
        return token

    def layer_of(self, model: str, index: int, layer: Value) -> Value:
        """A layer made in a ``Sequential``'s list belongs to it (two models from one factory,
        ``model, copy = make(), make()``, do not share variables): ``<model>.<name>``."""
        if not any(m.startswith(FRESH) and not m.startswith(_SELF) for m in layer.models):
            return layer
        label = self.labels.get(min(layer.models), "")
        return self.rename(layer, f"{model}.{label if label.isidentifier() else f'layers[{index}]'}")

    def registered_prefixes(self) -> set[str]:
        """Instances of the file's layer classes whose ``call`` was followed."""
        return {prefix for prefix, _cls in self.registered}

    def add_part(self, model: str, part: str) -> None:
        if part != model:
            self.parts.setdefault(model, set()).add(part)

    def all_parts(self, origin: str) -> set[str]:
        """Every origin whose variables ``origin`` tracks, at any depth."""
        out: set[str] = set()
        stack = [origin]
        while stack:
            for part in self.parts.get(stack.pop(), ()):
                if part not in out:
                    out.add(part)
                    stack.append(part)
        return out

    def related(self, source: str, origin: str, check: Check | None = None) -> bool:
        """Whether ``origin`` holds variables of ``source`` (or ``source`` of ``origin``)."""
        if origin == source or origin.startswith(source + ".") or source.startswith(origin + "."):
            return True
        parts = self.parts_in(check, source) if check is not None else self.all_parts(source)
        return bool(parts) and (origin in parts or any(origin.startswith(p + ".") for p in parts))

    def escaped_origin(self, origin: str) -> bool:
        """Whether ``origin`` or a model holding it went where reads are not followed."""
        if origin in self.escaped:
            return True
        head = origin
        while "." in head:
            head = head.rpartition(".")[0]
            if head in self.escaped:
                return True
        return False

    def describe_call(self, node: ast.AST) -> str:
        """``model(...)``, or ``the layer feature`` for ``Dense(4, name="feature")(x)``."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Call):
            token = f"{FRESH}m:{node.func.lineno}:{node.func.col_offset}"
            return f"the layer {self.label(token)}"
        return f"{callee_text(node)}(...)"

    def note_birth(self, origin: str, node: ast.AST) -> None:
        self.births.setdefault(origin, node)

    def model_kind(self, origin: str) -> str:
        return self.kinds.get(origin) or self.kinds.get(origin.split(".", 1)[0], "model")

    # --- sites -----------------------------------------------------------------------

    def eager_requested(self) -> bool:
        """The file asks for eager execution somewhere (``run_eagerly=True``,
        ``tf.config.run_functions_eagerly``): no step of it is known to run as a graph."""
        if self._eager is None:
            self._eager = any("eagerly" in line for line in self.source_lines)
        return self._eager

    def fit_called(self) -> bool:
        """The file trains with ``fit``, which runs ``train_step`` as a graph."""
        if self._fits is None:
            self._fits = any(_FIT_CALL.search(line) for line in self.source_lines)
        return self._fits

    def site(self, node: ast.AST, code: str, when: str = "", via: int = 0, method: str = "") -> Site:
        key = (id(node), code, when, via, method)
        site = self._sites.get(key)
        if site is None:
            site = Site(
                node.lineno,
                node.col_offset,
                node.end_lineno or node.lineno,
                node.end_col_offset or node.col_offset,
                code,
                callee_text(node),
                first_argument(node),
                when,
                isinstance(node, ast.Call),
                via,
                method,
            )
            self._sites[key] = site
            self.site_nodes[site] = node
        return site

    def stops_a_target(self, site: Site) -> bool:
        """A GC104 site whose stopped value is used as a target (``static/roles``), or a
        forward pass run before the tape (GC109) whose output is only a target."""
        node = self.site_nodes.get(site)
        if not (site.code == "GC104" or (site.code == "GC109" and site.when == "before")) or not isinstance(
            node, ast.Call
        ):
            return False
        spanning = [
            f
            for f in self.owner
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.lineno <= node.lineno <= (f.end_lineno or 0)
        ]
        function = max(spanning, key=lambda f: f.lineno, default=self.tree)
        return stops_a_target(function, node)


#: Words on a line that make its function worth analysing (a tape, a gradient request).
_REGION_HINTS = ("tape", "Tape", "gradient", "jacobian", "minimize")
_REGION_WORDS = re.compile(r"tape|Tape|\.(?:gradient|jacobian|batch_jacobian|minimize)\s*\(|\bgradients\s*\(")


def _lines_of(text: str, offsets: list[int]) -> list[int]:
    """The (1-based) lines of these offsets of ``text``, counting newlines between them."""
    out = []
    line, previous = 1, 0
    for offset in sorted(offsets):
        line += text.count("\n", previous, offset)
        previous = offset
        if not out or out[-1] != line:
            out.append(line)
    return out


def _regions(functions: list[ast.AST], lines: list[str], text: str) -> list[ast.AST]:
    """Functions whose own lines (not those of a nested def) mention a tape or ask for a
    gradient. By spelling: aliases are resolved later, a function found here for nothing
    only costs its analysis, and one missed is only left unanalysed."""
    # ``str.find`` for the words, then the pattern on their lines: a regex scan of the
    # whole text costs as much as parsing it
    starts = []
    for word in _REGION_HINTS:
        position = text.find(word)
        while position >= 0:
            starts.append(position)
            position = text.find(word, position + 1)
    if not starts:
        return []
    # line numbers of the matches, by counting newlines once (a search per line costs more)
    marked = [n for n in _lines_of(text, starts) if _REGION_WORDS.search(lines[n - 1])]
    spans = sorted(((fn.lineno, fn.end_lineno or fn.lineno, fn) for fn in functions), key=lambda t: t[0])
    found = _innermost(spans, marked)
    # Callers of those functions, twice over (``train`` calling ``train_step``, ``main``
    # calling ``train``): what a caller computes before the call runs before the tape.
    for _ in range(_CALLER_LEVELS):
        names = {fn.name for fn in found if not fn.name.startswith("__")}
        starts = []
        for name in names:
            word = name + "("
            position = text.find(word)
            while position >= 0:
                before = text[position - 1] if position else " "
                if not (before.isalnum() or before == "_"):
                    starts.append(position)
                position = text.find(word, position + 1)
        callers = _innermost(spans, _lines_of(text, starts)) - found
        if not callers:
            break
        found |= callers
    return sorted(found, key=lambda fn: (fn.lineno, fn.col_offset))


#: How many levels of callers of a function with a tape are analysed as regions.
_CALLER_LEVELS = 2


def _innermost(spans: list[tuple[int, int, ast.AST]], lines: list[int]) -> set[ast.AST]:
    """The innermost function around each of these lines."""
    found: set[ast.AST] = set()
    for line in lines:
        innermost = None
        for start, end, fn in spans:
            if start > line:
                break
            if end >= line:
                innermost = fn  # later starts are nested deeper
        if innermost is not None:
            found.add(innermost)
    return found


def _keras2(imports: list[ast.Import | ast.ImportFrom], text: str, aliases: Aliases) -> bool:
    """Whether the file is Keras 2 code: it imports ``tf_keras``, sets ``TF_USE_LEGACY_KERAS``,
    or calls ``keras.backend`` functions that Keras 3 no longer has (``K.mean``, ``K.argmax``)."""
    for node in imports:
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        if any(n == "tf_keras" or n.startswith("tf_keras.") for n in names):
            return True
    if "TF_USE_LEGACY_KERAS" in text:
        return True
    backends = [name for name, path in aliases.names.items() if canonical(path) == "keras.backend"]
    if not backends and "keras.backend" not in text:
        return False
    spellings = [re.escape(b) for b in backends] + [r"(?:tf\.)?keras\.backend"]
    for match in re.finditer(rf"\b(?:{'|'.join(spellings)})\.(\w+)\s*\(", text):
        if match.group(1) not in _KERAS3_BACKEND:
            return True
    return False


#: What Keras 3's ``keras.backend`` still offers (anything else is Keras 2's).
_KERAS3_BACKEND = frozenset(
    (
        *("clear_session", "epsilon", "floatx", "image_data_format", "is_keras_tensor", "set_epsilon", "backend"),
        *("set_floatx", "set_image_data_format", "standardize_dtype", "result_type", "get_uid", "is_float_dtype"),
        *("is_int_dtype", "set_image_dim_ordering", "image_dim_ordering"),
    )
)


def binding_line(tree: ast.AST, name: str, before_line: int) -> ast.AST | None:
    """The value of the last assignment to ``name`` at or before ``before_line`` (where a
    tensor was made), as the trace engine finds it (``sourcemap.binding_line``)."""
    best: ast.AST | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        else:
            continue
        if node.lineno > before_line or (best is not None and node.lineno <= best.lineno):
            continue
        if any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t)):
            best = node
    if best is None:
        return None
    value = getattr(best, "value", None)
    return value if isinstance(value, ast.expr) else best


_SELF = FRESH + "s:"  # ``self`` in a class's methods: named by no assignment


def _has_fresh(value: Value) -> bool:
    return (
        (isinstance(value.ref, StateRef) and value.ref.token.startswith(FRESH))
        or (value.ref is NEW_VARIABLE and any(k.startswith(FRESH) for k in value.flow))
        or any(m.startswith(FRESH) and not m.startswith(_SELF) for m in value.models)
        or (value.items is not None and any(_has_fresh(i) for i in value.items))
        or (value.element is not None and _has_fresh(value.element))
    )


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def callee_text(node: ast.AST) -> str:
    """What the user wrote for the culprit: the callee of a call, else the expression."""
    if isinstance(node, ast.Call):
        return _short(ast.unparse(node.func))
    return _short(ast.unparse(node))


def first_argument(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        if node.args:
            return _short(ast.unparse(node.args[0]), 40)
        if node.keywords:
            return _short(ast.unparse(node.keywords[0].value), 40)
        if isinstance(node.func, ast.Attribute):
            return _short(ast.unparse(node.func.value), 40)
    if isinstance(node, ast.Compare):
        return _short(ast.unparse(node.left), 40)
    if isinstance(node, ast.BinOp):
        return _short(ast.unparse(node.left), 40)
    if isinstance(node, ast.UnaryOp):
        return _short(ast.unparse(node.operand), 40)
    return "x"


_SCOPES = frozenset((ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))
_DECLARATIONS = frozenset((ast.Global, ast.Nonlocal))
