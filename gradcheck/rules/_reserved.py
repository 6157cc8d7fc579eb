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


class TrainingNotReached(Rule):
    code, name, severity = "GC905", "training-not-reached", "error"
    summary = "The file was checked in part: a training entry point of it was never reached."
    what = (
        "Reported when the run ended (the script finished, failed, or ran out of `--timeout`) before a "
        "`model.fit`, `tape.gradient` or `optimizer.minimize` call of the file was reached: gradcheck checks the "
        "first step of every training a script reaches, and says which ones it did not reach rather than call "
        "the file clean. A partly checked file exits 2 (1 when it has findings); `--ignore GC905` accepts it."
    )
    fix = (
        "Make the run reach that training sooner (fewer epochs or a smaller warm-up for the check, e.g. with an "
        "argument: `gradcheck train.py -- --epochs 1`), raise `--timeout`, check that phase on its own with "
        "`gradcheck FILE::build`, or accept a partial check with `--ignore GC905`."
    )


class TensorFlowMissing(Rule):
    code, name, severity = "GC904", "tensorflow-missing", "error"
    summary = "TensorFlow cannot be imported, so the trace engine cannot run."
    fix = "Install TensorFlow (`pip install tensorflow` or `tensorflow-cpu`), or use `gradcheck --static`."
