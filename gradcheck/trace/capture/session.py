"""The tracer: hooks installed while the user's code runs, and the step budget.

While a ``Session`` is active:

- every ``GradientTape`` gets a shadow tape beside it (see ``TapeState``); the user's own
  tape is left exactly as TensorFlow made it;
- ``tape.gradient`` computes the user's gradients, then diagnoses every source whose
  gradient is None (even under ``UnconnectedGradients.ZERO``);
- eager ops are recorded (``eager.EagerRecorder``), as are tensors leaving TensorFlow,
  custom-gradient ops and where variables were created;
- optimizers apply no update when ``skip_updates`` is set (a check must not train);
- the budget of ``steps`` ends the user's program with ``StopCheck``: in eager mode when
  a checked ``tape.gradient`` call site is about to run once more than the budget, in
  graph mode when a traced function holding a checked gradient is about to run again.
"""

from __future__ import annotations

import threading
import weakref
from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field

from gradcheck.findings import Finding
from gradcheck.trace.capture.patches import Patches
from gradcheck.trace.capture.reach import Reach
from gradcheck.trace.record import _tf, frames
from gradcheck.trace.record import graph as graph_mode
from gradcheck.trace.record.dataflow import function_base_name
from gradcheck.trace.record.eager import EagerRecorder
from gradcheck.trace.record.errors import stop_program
from gradcheck.trace.values import mailbox

#: How many more times than the budget an inner gradient call may run under an outer tape
#: that records, before the check ends the program anyway (a whole training loop inside one
#: persistent tape).
NESTED_REPEATS = 64
#: How many repeated gradient calls inside a ``fit`` run on unchecked while an entry point inside
#: the running step is still to be reached (a WGAN's ``train_step`` run eagerly: three critic steps,
#: then the generator's); past them the ``fit`` ends as usual, however long its training.
FIT_RUN_ON = 16


@dataclass(eq=False)
class TapeState:
    """What gradcheck keeps beside one user tape.

    ``shadow`` is gradcheck's own persistent tape, pushed and popped with the user's, which
    watches every float tensor produced while it records: TensorFlow's tape records an op
    only when an input is already on the tape, so past a cut (an argmax, a cast from int)
    the user's tape knows nothing. The shadow records the whole computation, and asking it
    for gradients tells, for any tensor, whether the loss has a gradient with respect to it.
    The user's tape is never touched.
    """

    ident: int
    shadow: object
    windows: dict = field(default_factory=dict)  # graph -> list of [start, end] op ids
    start_seq: int = 0  # eager recorder sequence number when first pushed
    watched: list = field(default_factory=list)
    #: the user's site of each ``tape.watch`` call, with the tensors it watched
    watch_sites: list = field(default_factory=list)
    #: the user's line that opened the tape, and whether another tape still recording was
    #: opened by the same line (``with tf.GradientTape() as d_tape, tf.GradientTape() as g_tape:``)
    opened_at: tuple | None = None
    together: bool = False


@dataclass(eq=False)
class Origin:
    """Where a variable was created: the innermost user site and, when it was created while
    a function was being traced, that function's graphs (innermost first) and the user
    frames of the trace (autograph's copy mapped back to the user's source)."""

    site: tuple | None
    graphs: tuple = ()  # weak references to the FuncGraphs being built
    trace_frames: tuple = ()  # frames.UserFrame, innermost first

    @property
    def in_function(self) -> bool:
        return bool(self.graphs)

    def created_in(self, graph) -> bool:
        return any(ref() is graph for ref in self.graphs)

    @property
    def function(self) -> str | None:
        """The name of the user's function that created the variable (``build``, ``call``)."""
        if self.trace_frames:
            return self.trace_frames[0].function
        return self.site[0].co_name if self.site is not None else None

    def location(self) -> frames.Location | None:
        """The user's line that created the variable. Created while autograph's copy of a
        function ran (a layer built lazily inside ``fit``, TF 2.16's tf_keras), the live
        frames skip the user's converted code; the trace's frames, mapped back, do not."""
        live = frames.site_location(self.site) if self.site is not None else None
        if self.trace_frames:
            inner = self.trace_frames[0]
            if live is None or (inner.path, inner.line) != (live.path, live.line):
                return frames.line_location(inner.path, inner.line)
        return live


_NEXT_TAPE_ID = 0


class _PerThread(threading.local):
    """A session's state of one thread (``__init__`` runs once in each thread that reads it)."""

    def __init__(self) -> None:
        self.recording: list[TapeState] = []
        self.pending: list = []


class Session:
    def __init__(
        self,
        *,
        steps: int | None = 1,
        skip_updates: bool = True,
        allow_none: Iterable[str] = (),
        on_findings: Callable[[list[Finding]], None] | None = None,
        check_mode: bool = False,
        want_graph: bool = False,
    ) -> None:
        #: Attach the cut's subgraph to each finding (for ``--graph`` pictures).
        self.want_graph = want_graph
        #: In a check (CLI, check_step/check_model) a failing gradient call that was
        #: diagnosed ends the run quietly; under watch()/install() the user's error stands.
        self.check_mode = check_mode
        self.steps = steps
        self.skip_updates = skip_updates
        self.allow_none = tuple(allow_none)
        self.on_findings = on_findings
        #: How Keras's "No gradients provided" error names findings (``%load_ext`` names cells as IPython does)
        self.describe: Callable[[list[Finding]], str] | None = None
        self.findings: list[Finding] = []
        self.gradient_calls = 0
        self.site_counts: Counter = Counter()
        self.recorder = EagerRecorder(self)
        self.tapes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.checked_graphs: dict = {}  # outermost FuncGraph -> executions so far
        self.function_graphs: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._last_noted: weakref.ref | None = None  # the function ``note_function`` saw last
        self.internal_errors: list[str] = []
        #: per thread, as TensorFlow's tape stack is: ``recording`` and ``_pending``
        self._thread = _PerThread()
        #: the traced functions running now, called from the user's threads (``hostpoint``)
        self.host_calls: list = []
        #: a stop the step budget called for inside a Python callback of TensorFlow's
        #: runtime, where it cannot be raised: a weak reference to the function that ran
        #: the callback, whose next call raises it (``record.hostpoint``)
        self.stop_pending: weakref.ref | None = None
        #: id(model) -> (weak reference, user site of ``compile``, its ``loss``, its ``loss_weights``)
        self.compiled: dict[int, tuple] = {}
        self._variables: list[weakref.ref] = []
        #: (hook step, its Patches) in installation order (``hooks.install``)
        self.installed: list[tuple[object, Patches]] = []
        self._late = Patches()  # made after the hooks, by an option (``values.custom_check``)
        #: the armed value checks of traced functions (``values.mailbox``), and when the host
        #: last looked into them
        self.mailboxes: list = []
        self.mailbox_looked = 0.0
        #: ``_id`` of a variable's resource handle -> the updates a check skipped for it (a
        #: ``fit`` cut short counts for the rest of its training): ``values.frozen``
        self.frozen: dict[int, int] = {}
        #: the checked file's training entry points and which were reached (``reach``);
        #: None when they are not known (a ``FILE::build`` target, the Python API)
        self.reach: Reach | None = None
        #: how many patched ``fit`` calls are running: past its budget a ``fit`` ends, and
        #: the program goes on (``run.runner``)
        self.fitting = 0
        #: a step past its budget ran on, unchecked, toward a training not reached yet
        self.ran_on = False
        self.fit_repeats = 0  # repeated gradient calls a fit ran on unchecked (``runs_on``)

    # -- per thread -----------------------------------------------------------------------
    @property
    def recording(self) -> list[TapeState]:
        """The states whose user tape records now in this thread. Tapes are per thread: a
        replica of a MirroredStrategy, a ``py_function`` or a ``tf.data`` function run in
        threads of their own, and one replica's open tape is not another's."""
        return self._thread.recording

    @property
    def _pending(self) -> list:
        """Outputs of this thread's newest op, to watch once it is recorded."""
        return self._thread.pending

    @_pending.setter
    def _pending(self, value: list) -> None:
        self._thread.pending = value

    # -- step accounting ----------------------------------------------------------------
    @property
    def steps_checked(self) -> int:
        eager = max(self.site_counts.values(), default=0)
        graph = max(self.checked_graphs.values(), default=0)
        return max(eager, graph, 1 if self.gradient_calls else 0)

    def runs_on(self) -> bool:
        """Past the budget: whether the program goes on, unchecked, because a training
        entry point of the file is still to be reached (outside a ``fit``, which ends
        instead and returns to the program: ``run.runner``)."""
        if self.reach is None or not self.reach.pending():
            return False
        if self.fitting:
            # inside a fit's step: its later gradient calls (the generator's after the critic's)
            # are reached a few repeats on; a fit that never reaches them ends as before
            if self.fit_repeats >= FIT_RUN_ON or not self.reach.pending_here():
                return False
            self.fit_repeats += 1
            return True
        self.ran_on = True
        return True

    def _before_eager_gradient(self, site, state: TapeState | None = None) -> bool:
        """Count a gradient call at ``site``: True to check it, False to let it run unchecked,
        StopCheck past the budget. An inner call repeated under an outer tape that still
        records (MAML's inner steps, a gradient penalty per sample) runs on unchecked, up to
        ``NESTED_REPEATS`` times, so that the outer tape's own gradient is reached and checked.
        While a training entry point of the file is not reached yet, a repeated step runs on
        unchecked too (``runs_on``)."""
        if self.steps is not None and self.site_counts[site] >= self.steps:
            outer = any(s is not state for s in self.recording)
            if outer and self.site_counts[site] < self.steps + NESTED_REPEATS:
                self.site_counts[site] += 1
                return False
            if self.runs_on():
                return False
            raise stop_program()
        self.site_counts[site] += 1
        return True

    def before_function_call(self, concrete) -> int:
        """Count a run of a checked traced function: how many times it ran before (its
        value checks are in its graph, and its call was recorded on its first run); -1 for
        any other function."""
        graph = getattr(concrete, "_func_graph", None)
        if graph is None or graph not in self.checked_graphs or not _tf.executing_eagerly():
            return -1
        runs = self.checked_graphs[graph]
        if self.steps is not None and runs >= self.steps:
            if self.runs_on():
                return runs  # runs on as a step already checked, not counted
            raise stop_program()
        self.checked_graphs[graph] = runs + 1
        return runs

    def poll_values(self, runs: int | None = None) -> None:
        """Report what the value checks of traced functions delivered since the last look
        (``values.mailbox``): before a checked function's next run, and when the session ends."""
        mailbox.poll(self, runs)

    # -- tapes --------------------------------------------------------------------------
    def tape_state(self, tape) -> TapeState | None:
        return self.tapes.get(tape)

    def on_push(self, tape, creating: bool) -> None:
        global _NEXT_TAPE_ID
        state = self.tapes.get(tape)
        if state is None or creating or state.shadow is None:
            _NEXT_TAPE_ID += 1
            state = TapeState(_NEXT_TAPE_ID, _tf.new_shadow_tape(), start_seq=self.recorder.seq)
            self.tapes[tape] = state
            self._release_unneeded()
        else:
            _tf.push_tape(state.shadow)
        self.recording.append(state)
        if _tf.executing_eagerly():
            self.recorder.active = (*self.recorder.active, state.ident)
        else:
            graph = _tf.default_graph()
            mark = graph_mode.graph_mark(graph)
            state.windows.setdefault(graph, []).append([mark, None])

    def on_pop(self, tape) -> None:
        state = self.tapes.get(tape)
        if state is None:
            return
        if state in self.recording:
            self.flush_watch()
            self.recording.remove(state)
            _tf.pop_tape(state.shadow)
        if _tf.executing_eagerly():
            active = list(self.recorder.active)
            if state.ident in active:
                active.remove(state.ident)
            self.recorder.active = tuple(active)
        else:
            graph = _tf.default_graph()
            windows = state.windows.get(graph)
            if windows and windows[-1][1] is None:
                windows[-1][1] = graph_mode.graph_mark(graph)

    def _release_unneeded(self) -> None:
        """Drop the recorded tensors no live shadow tape can be asked about (all of them
        when none is left)."""
        alive = [s.start_seq for s in self.tapes.values() if s.shadow is not None]
        self.recorder.release_before(min(alive) if alive else self.recorder.seq)

    def release(self, tape) -> None:
        """The user's tape is spent: drop its shadow and what it kept alive, now (not at
        the next tape: the optimizer's update and the next batch would run beside them)."""
        state = self.tapes.get(tape)
        if state is not None and state not in self.recording:
            state.shadow = None
            self._release_unneeded()

    def watch_outputs(self, outputs, float_only) -> None:
        """Put every float output on the shadow tapes recording now (see TapeState).

        Eager ops are recorded before the callback runs, graph ops after it, and a watch
        made while tapes are paused (``tf.stop_gradient`` pauses them around its op) is
        dropped. So each output is watched now and once more before the next op can be
        recorded: at the next callback, when a pause ends, and at the gradient call. A
        watch never unlinks a tensor an op already produced on the tape."""
        self.flush_watch()
        floats = [t for t in outputs if float_only(t)]
        for state in self.recording:
            for t in floats:
                _tf.watch_tensor(state.shadow, t)
        self._pending = floats

    def flush_watch(self) -> None:
        pending, self._pending = self._pending, []
        for state in self.recording:
            for t in pending:
                _tf.watch_tensor(state.shadow, t)

    @contextmanager
    def paused(self):
        self.recorder.paused += 1
        try:
            yield
        finally:
            self.recorder.paused -= 1

    # -- variables ----------------------------------------------------------------------
    def note_variable(self, variable) -> None:
        """Remember where a variable was created, and whether inside a traced function.
        (Variables are unhashable in TF2, so the note lives on the object.)"""
        if getattr(variable, "_gc_origin", None) is None:
            origin = Origin(frames.current_user_site())
            if _tf.inside_function():
                graphs, graph = [], _tf.default_graph()
                while isinstance(graph, _tf.FuncGraph):
                    graphs.append(weakref.ref(graph))
                    graph = getattr(graph, "outer_graph", None)
                origin.graphs = tuple(graphs)
                origin.trace_frames = tuple(frames.stack_frames(_tf.extract_stack()))
            try:
                variable._gc_origin = origin
                self._variables.append(weakref.ref(variable))
            except (AttributeError, TypeError):
                pass

    def add_known_variables(self, variables) -> None:
        for variable in variables:
            self._variables.append(weakref.ref(variable))

    def variables_by_handle(self) -> dict[int, str]:
        """id(resource handle) -> the variable's name, for every variable seen. Keras
        variables win over the tf.Variable they wrap (their ``.path`` is the useful name)."""
        out: dict[int, str] = {}
        for ref in self._variables:
            variable = ref()
            if variable is None:
                continue
            try:
                handle = _tf.handle_of(variable)
            except (AttributeError, ValueError, TypeError):
                continue
            if _tf.KerasVariable is not None and isinstance(variable, _tf.KerasVariable):
                out[id(handle)] = _tf.variable_name(variable)
            else:
                out.setdefault(id(handle), _tf.variable_name(variable))
        return out

    def note_function(self, concrete) -> None:
        """Remember a traced function's graph by the name its call ops carry. Under a tape
        TensorFlow runs a ``__forward_<name>_<n>`` rewrite of it instead, made on demand
        from the same Python code: that name maps to the newest graph of ``<name>``."""
        if self._last_noted is not None and self._last_noted() is concrete:
            return  # a training loop calls the same function at every step
        self._last_noted = weakref.ref(concrete)
        function = getattr(concrete, "_inference_function", None)
        name = getattr(function, "name", None)
        graph = getattr(concrete, "_func_graph", None)
        if name is not None and graph is not None:
            name = name.decode() if isinstance(name, bytes) else str(name)
            self.function_graphs[name] = graph
            self.function_graphs["__forward_" + function_base_name(name)] = graph

    def function_graph(self, name: str):
        if name.startswith("__forward_"):
            return self.function_graphs.get("__forward_" + function_base_name(name))
        return self.function_graphs.get(name)

    @staticmethod
    def variable_origin(variable) -> Origin | None:
        for candidate in (variable, getattr(variable, "_value", None)):
            origin = getattr(candidate, "_gc_origin", None)
            if origin is not None:
                return origin
        return None

    # -- results ------------------------------------------------------------------------
    def add_findings(self, findings: list[Finding]) -> None:
        self.gradient_calls += 1
        seen = {f.identity() for f in self.findings}
        findings = [f for f in findings if f.identity() not in seen]
        self.findings.extend(findings)
        if self.on_findings is not None:
            self.on_findings(findings)

    def add_value_findings(self, findings: list[Finding]) -> None:
        """Findings of a gradient-value check (which may report when a traced graph runs,
        after the call that traced it returned): not counted as a gradient call."""
        if not findings:
            return
        seen = {f.identity() for f in self.findings}
        new = [f for f in findings if f.identity() not in seen]
        if not new:
            return
        self.findings.extend(new)
        if self.on_findings is not None:
            self.on_findings(new)

    # -- patches made after the hooks are installed, undone with them ---------------------
    def patch(self, owner: object, name: str, value: object) -> None:
        self._late.set(owner, name, value)

    def restore(self) -> None:
        self._late.restore()
