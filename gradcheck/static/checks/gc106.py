"""GC106 numpy-function, static side: ``tf.numpy_function`` / ``tf.py_function`` on the path
(what the function computes runs on the host): ``calls.library_call``. The shared path rule
(``checks.paths``) reports it where every path of a source goes through such a site.

The rule's meaning, fix and examples: ``RULE`` (``gradcheck/rules/``)."""

from __future__ import annotations

from gradcheck.rules import get_rule
from gradcheck.static.checks.registry import cut

CODE = "GC106"
RULE = get_rule(CODE)
cut(CODE)
