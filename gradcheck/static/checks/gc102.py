"""GC102 rounding-op, static side: rounding (``round``, ``floor``, ``ceil``, Keras 3's
``ops.round``...) on the path: the catalog names its spellings. The shared path rule
(``checks.paths``) reports it where every path of a source goes through such a site.

The rule's meaning, fix and examples: ``RULE`` (``gradcheck/rules/``)."""

from __future__ import annotations

from gradcheck.rules import get_rule
from gradcheck.static.checks.registry import cut

CODE = "GC102"
RULE = get_rule(CODE)
cut(CODE)
