"""Checks on gradients that exist but are useless or wrong: GC201 zero-gradient and GC202
non-finite-gradient (``degenerate`` flags them, ``frontier`` finds the op where they began),
GC203 unstopped-bootstrap-target (``bootstrap``, structural) and GC301 custom-gradient-mismatch
(``custom_check``), GC204 non-finite-loss (``nonfinite``) and GC117 not-updated (``updates``, judged when the step is over). They run after the None diagnosis, on sources that have a gradient."""

# The checks register in this order, and their findings come in it (``record.registry``).
from gradcheck.trace.values import bootstrap, custom_check, degenerate, nonfinite, updates  # noqa: F401  isort: skip
