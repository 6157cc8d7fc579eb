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
- **both families are sampled, rare shapes first.** The operators that have sites in the
  program are taken by family in turn (no gradient: GC1xx; degenerate: GC2xx, GC204, GC3xx),
  so a sample of six holds three of each when the program has sites for three of each; in a
  family, the operators with the fewest sites in the program come first (a ``stop_gradient``
  or an epsilon the program has at one place, before the shapes every forward call offers),
  ties in the family's order rotated by an offset of the program's own (``rotation``, from its
  name), so the programs of a tranche spread over each family's operators (``by_family``).
"""

from __future__ import annotations

import difflib
import zlib
from collections.abc import Callable, Iterable, Sequence

from benchmarks.mutation.operators import Mutation, Operator


def family(op: Operator) -> str:
    """``"GC1xx"`` when the operator's first expected code is a no-gradient code (its bug starves
    a variable: ``custom_gradient_upstream``'s GC112 with GC301 beside it), else ``"degenerate"``
    (GC2xx, GC204, GC3xx: the gradient arrives but is wrong or useless)."""
    return "GC1xx" if op.codes[0].startswith("GC1") else "degenerate"


def by_family(
    operators: Sequence[Operator], rotation: int = 0, sites: Callable[[Operator], int] = lambda op: 1
) -> list[Operator]:
    """The operators with ``sites`` in the program, the two families taken in turn. In each
    family the operators with the fewest sites come first (a shape the program has at one
    place, a ``stop_gradient`` or an epsilon, before one every forward call offers), ties in
    the family's order rotated by ``rotation`` (a program's own offset), so that a sample's
    first N holds as many of each family as the program has, and the rare shapes are sampled
    where they exist."""
    groups: dict[str, list[Operator]] = {}
    for op in operators:
        groups.setdefault(family(op), []).append(op)
    lists = []
    for f in ("GC1xx", "degenerate"):
        g = groups.get(f, [])
        g = g[rotation % len(g) :] + g[: rotation % len(g)] if g else []
        lists.append(sorted((op for op in g if sites(op) > 0), key=sites))  # stable: ties keep the rotation
    out: list[Operator] = []
    for i in range(max((len(g) for g in lists), default=0)):
        out += [g[i] for g in lists if i < len(g)]
    return out


def rotation(program: str) -> int:
    """A program's offset in each family's list of operators: from its name, so that the
    same program samples the same operators whichever part of a run it is in."""
    return zlib.crc32(program.encode("utf-8"))


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
