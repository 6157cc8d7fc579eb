"""Which sites a sampled run (``--sample``) mutates, chosen by TensorFlow's run, never by gradcheck.

progF's first run spent 28 of its 49 mutants on sites that could not matter: a branch the
program never takes, a class it never uses, the first of an encoder's three outputs while the
third carried every gradient. Three habits, each judged by what the original did under plain
python (the probe), never by what gradcheck says:

- **sites the run reached come first.** The probe records the program's lines that ran
  (``lines``, autograph's traced copies included); a site whose lines all ran is tried before
  one whose lines did not, each group in text order (``ranked``);
- **a site that cuts nothing hands its operator's turn on.** A mutant that is not valid by
  TensorFlow's truth (equivalent, no effect, crashed) is followed by the operator's next site,
  up to ``--max-sites`` sites per operator (``bench.benchmark`` runs them one after another);
- **both families are sampled.** The operators are taken by family in turn (no gradient:
  GC1xx; degenerate: GC2xx, GC204, GC3xx), each family in the rotated order, so a sample of
  six holds three of each when the program has sites for both (``by_family``).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from benchmarks.mutation.operators import Mutation, Operator


def family(op: Operator) -> str:
    """``"GC1xx"`` when every code the operator expects is a no-gradient code, else ``"degenerate"``."""
    return "GC1xx" if all(c.startswith("GC1") for c in op.codes) else "degenerate"


def by_family(order: Sequence[Operator]) -> list[Operator]:
    """The operators in ``order``, the two families taken in turn (each keeps its own order)."""
    groups: dict[str, list[Operator]] = {}
    for op in order:
        groups.setdefault(family(op), []).append(op)
    lists = [groups[f] for f in ("GC1xx", "degenerate") if f in groups]
    out: list[Operator] = []
    for i in range(max((len(g) for g in lists), default=0)):
        out += [g[i] for g in lists if i < len(g)]
    return out


def _code_line(lines: list[str], i: int, step: int) -> int | None:
    """The 1-based number of the first line from index ``i`` on (going by ``step``) that holds code."""
    while 0 <= i < len(lines):
        text = lines[i].strip()
        if text and not text.startswith("#"):
            return i + 1
        i += step
    return None


def site_lines(original: str, mutant: str) -> set[int]:
    """The original's lines a mutant's edit sits on: the lines it rewrote or removed, and for a
    line it inserted the code lines on both sides (an insertion at the end of a function body
    is reached only if the line before it ran; one after a ``def`` line only if the line after
    it did)."""
    a, b = original.splitlines(), mutant.splitlines()
    out: set[int] = set()
    for tag, i1, i2, _j1, _j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            out |= {n for n in range(i1 + 1, i2 + 1) if _code_line(a, n - 1, 1) == n}
        elif tag == "insert":
            out |= {n for n in (_code_line(a, i1 - 1, -1), _code_line(a, i1, 1)) if n is not None}
    return out


def reached(original: str, mutation: Mutation, ran: set[int]) -> bool:
    """Whether every line the mutant's edit sits on ran in the original (True when nothing is known)."""
    if not ran:
        return True
    return site_lines(original, mutation.source) <= ran


def ranked(mutations: Iterable[Mutation], original: str, ran: set[int]) -> list[Mutation]:
    """The mutations, those at sites the original reached first, each group in text order."""
    ms = list(mutations)
    return sorted(ms, key=lambda m: (not reached(original, m, ran), m.site))
