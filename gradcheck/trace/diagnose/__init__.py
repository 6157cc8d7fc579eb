"""Diagnosing None gradients (GC101-GC116): ``analyze`` builds the ``Context`` of one gradient
call and asks ``cuts`` for the op that cut each path; ``cut_findings`` names a cut's cause,
``unreached`` explains sources with no path at all, ``escape`` a host escape found at trace
time, and ``describe`` turns any of them into a ``Finding`` with its chain and fix."""

# Registers the None-gradient checks (``record.registry``).
from gradcheck.trace.diagnose import analyze  # noqa: F401  isort: skip
