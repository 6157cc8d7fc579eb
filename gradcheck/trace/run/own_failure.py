"""gradcheck's own failure while the program runs, told apart from the program's.

The hooks go in at the script's own ``import tensorflow`` (``lazy``), so an exception raised
while they go in surfaces at the user's import line, and would read as "the script raised"
(GC901 at that line) for a program that runs under ``python``. It is gradcheck's: the check
ends with a one-line reason that names gradcheck and where it failed, not the script.
"""

from __future__ import annotations

import os
import sys
import traceback

from gradcheck.findings import CheckError


class HooksFailed(BaseException):
    """Installing the hooks raised ``error`` at the program's import of ``name``. A
    BaseException, as ``StopCheck`` is: a script's ``except Exception`` around its import
    does not swallow it and run on unchecked."""

    def __init__(self, name: str, error: BaseException) -> None:
        super().__init__(name, error)
        self.name, self.error = name, error

    def check_error(self) -> CheckError:
        error = self.error
        text = " ".join(str(error).split())
        return CheckError(
            "GC901",
            f"gradcheck failed, not the script: installing its hooks at the script's import of {self.name} raised "
            f"{type(error).__name__}: {text}{_where(error)}; the script was not checked (please report this)",
        )


def _where(error: BaseException) -> str:
    """`` (in keras/src/x.py:22)``: the innermost frame, relative to the sys.path entry holding it."""
    frames = list(traceback.walk_tb(error.__traceback__))
    if not frames:
        return ""
    frame, lineno = frames[-1]
    filename = os.path.abspath(frame.f_code.co_filename)
    roots = sorted((os.path.abspath(p) for p in sys.path if p), key=len, reverse=True)
    root = next((r for r in roots if filename.startswith(r + os.sep)), None)
    shown = os.path.relpath(filename, root) if root else filename
    return f" (in {shown}:{lineno})"
