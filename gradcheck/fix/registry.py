"""The patch kinds, keyed by rule code (and, where a rule's fix depends on it, variant).

A patch kind is a function ``propose(source, finding) -> list[Candidate]``: the patches it
would try, best first (at most two are ever verified). It returns ``[]`` when the code
does not have the shape it knows how to rewrite, and never guesses by editing text: it
reads the libcst tree at the finding's span.
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from gradcheck.fix.source import Source, Unpatchable

if TYPE_CHECKING:
    from gradcheck.findings import Finding
    from gradcheck.fix.patch import Candidate

Propose = Callable[[Source, "Finding"], list["Candidate"]]

#: (code, variant) -> patch kinds, in the order they are tried. ``None`` is the finding
#: without a variant, ``"*"`` any finding of the code.
KINDS: dict[tuple[str, str | None], list[Propose]] = {}

#: The modules that register patch kinds (imported on first use).
_MODULES = (
    "gc101_index_selection",
    "gc102_straight_through",
    "gc104_stop_gradient",
    "gc105_host_escape",
    "gc106_numpy_function",
    "gc108_chain_layers",
    "gc109_into_tape",
    "gc109_build",
    "gc110_watch",
    "gc114_integer_variable",
    "gc115_trainable_variables",
    "gc116_tf_function",
    "gc202_non_finite",
    "gc203_stop_target",
)
_loaded = False
_LOCK = threading.Lock()

#: At most this many candidates per finding are ever verified.
MAX_CANDIDATES = 2


def register(code: str, variant: str | None = None) -> Callable[[Propose], Propose]:
    def decorate(fn: Propose) -> Propose:
        KINDS.setdefault((code, variant), []).append(fn)
        return fn

    return decorate


def _load() -> None:
    """Import the kinds' modules once (files are planned in parallel threads)."""
    global _loaded
    with _LOCK:
        if _loaded:
            return
        for name in _MODULES:
            try:
                importlib.import_module(f"gradcheck.fix.kinds.{name}")
            except ModuleNotFoundError as error:
                if error.name != f"gradcheck.fix.kinds.{name}":
                    raise
        _loaded = True


def kinds_for(finding: Finding) -> list[Propose]:
    _load()
    variant = finding.fields.get("variant") or None
    return KINDS.get((finding.code, variant), []) + KINDS.get((finding.code, "*"), [])


def has_kind(finding: Finding) -> bool:
    return bool(kinds_for(finding))


def candidates(source: Source, finding: Finding) -> list[Candidate]:
    """The patches to try for ``finding``, best first; [] when no kind applies."""
    out: list[Candidate] = []
    for propose in kinds_for(finding):
        try:
            out += [c for c in propose(source, finding) if not c.empty]
        except Unpatchable:
            continue
        except Exception:  # a bug in a patch kind costs its patch, not the run
            if os.environ.get("GRADCHECK_STRICT"):
                raise
            continue
    return out[:MAX_CANDIDATES]
