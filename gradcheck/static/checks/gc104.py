"""GC104 stop-gradient, static side: ``tf.stop_gradient`` and its spellings on the path: the
catalog. The shared path rule (``checks.paths``) reports it where every path of a source
goes through such a site.

The rule's meaning, fix and examples: ``RULE`` (``gradcheck/rules/``)."""

from __future__ import annotations

from gradcheck.rules import get_rule
from gradcheck.static.checks.registry import cut

CODE = "GC104"
RULE = get_rule(CODE)
cut(CODE)
