"""GC107 sampling-op, static side: a sampler (``tf.random.categorical``, a distribution's
``sample``) on the path: the catalog and ``calls.method_call``. The shared path rule
(``checks.paths``) reports it where every path of a source goes through such a site.

The rule's meaning, fix and examples: ``RULE`` (``gradcheck/rules/``)."""

from __future__ import annotations

from gradcheck.rules import get_rule
from gradcheck.static.checks.registry import cut

CODE = "GC107"
RULE = get_rule(CODE)
cut(CODE)
