"""GC113 variable-assign, static side: a value written into a variable (``assign``) and read
back on the path: ``calls._assign_variable``. The shared path rule (``checks.paths``)
reports it where every path of a source goes through such a site.

The rule's meaning, fix and examples: ``RULE`` (``gradcheck/rules/``)."""

from __future__ import annotations

from gradcheck.rules import get_rule
from gradcheck.static.checks.registry import cut

CODE = "GC113"
RULE = get_rule(CODE)
cut(CODE)
