"""GC101 integer-index-op, static side: an op that returns indices (``argmax``, ``argsort``,
``top_k``'s indices...) on the path: the catalog (``catalog.lookup``) names its spellings,
``calls.library_call`` cuts there. The shared path rule (``checks.paths``) reports it where
every path of a source goes through such a site.

The rule's meaning, fix and examples: ``RULE`` (``gradcheck/rules/``)."""

from __future__ import annotations

from gradcheck.rules import get_rule
from gradcheck.static.checks.registry import cut

CODE = "GC101"
RULE = get_rule(CODE)
cut(CODE)
