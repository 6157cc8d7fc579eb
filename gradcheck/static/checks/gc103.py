"""GC103 integer-or-bool-cast, static side: a cast to an integer or boolean dtype, or a
comparison, on the path: ``calls.library_call`` (``catalog.CAST``, ``catalog.WHERE``) and
the comparison operators of ``interp``. The shared path rule (``checks.paths``) reports it
where every path of a source goes through such a site.

The rule's meaning, fix and examples: ``RULE`` (``gradcheck/rules/``)."""

from __future__ import annotations

from gradcheck.rules import get_rule
from gradcheck.static.checks.registry import cut

CODE = "GC103"
RULE = get_rule(CODE)
cut(CODE)
