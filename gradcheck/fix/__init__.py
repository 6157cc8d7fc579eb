"""Suggested patches: ``gradcheck --diff`` and ``gradcheck --fix`` (docs/fixes.md).

For the causes with a mechanical fix, a patch is computed from the finding (its span,
``call`` and template fields) and the file's libcst tree (``gradcheck.fix.kinds``, one
module per kind, registered by rule code in ``gradcheck.fix.registry``), then *verified*
before it is shown: the patched copy is checked again by the same engine, in a child
process (``gradcheck.fix.verify``), and the patch is shown only if its finding is gone and
nothing new appears. ``--fix`` writes verified patches to files that are committed, saved
and UTF-8 (``gradcheck.fix.safety``).

Importing this package imports libcst, never TensorFlow.
"""

from __future__ import annotations

from gradcheck.fix.plan import FilePlan, plan_report

__all__ = ["FilePlan", "plan_report"]
