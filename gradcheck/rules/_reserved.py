"""The GC9xx codes of files that could not be checked (and any code of the vocabulary that
no engine reports yet). They have pages and SARIF metadata like every rule."""

from __future__ import annotations

from gradcheck.rules._base import Rule


class ScriptError(Rule):
    code, name, severity = "GC901", "script-error", "error"
    summary = "The script could not be run to a gradient: it failed to parse, raised, exited or crashed first."
    what = "Reported when the checked file has a syntax error, raises before any gradient is computed, exits, or crashes the interpreter."
    fix = "Make the script run on its own (`python FILE`), or point gradcheck at a function: `gradcheck FILE::build`."


class NoGradientReached(Rule):
    code, name, severity = "GC902", "no-gradient-reached", "error"
    summary = "The script ran to its end without computing any gradient."
    what = "Reported when a file runs without error but never calls `tape.gradient` (directly or through `model.fit`)."
    fix = (
        "Check a file that trains (calls `model.fit` or `tape.gradient` when run as a script), or give "
        "gradcheck a function: `gradcheck FILE::build`, where `build()` returns `(model, batch)` or a "
        "zero-argument train step."
    )


class Timeout(Rule):
    code, name, severity = "GC903", "timeout", "error"
    summary = "The script did not reach a checked gradient within the time limit."
    fix = "Raise `--timeout`, or make the first training step come sooner (smaller warm-up, fewer epochs before training)."


class TensorFlowMissing(Rule):
    code, name, severity = "GC904", "tensorflow-missing", "error"
    summary = "TensorFlow cannot be imported, so the trace engine cannot run."
    fix = "Install TensorFlow (`pip install tensorflow` or `tensorflow-cpu`), or use `gradcheck --static`."
