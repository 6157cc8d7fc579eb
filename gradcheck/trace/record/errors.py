"""How the trace engine stops a program and reports its own errors."""

from __future__ import annotations

import os
import sys


class StopCheck(BaseException):
    """Ends the user's program once its steps are checked (a BaseException, so a
    script's ``except Exception`` does not swallow it)."""


def strict() -> bool:
    """In gradcheck's own tests an engine error must fail loudly, not be a warning."""
    return os.environ.get("GRADCHECK_STRICT") == "1"


def internal_error(error: BaseException) -> None:
    """A gradient-value check failed: said on stderr, not made the file's verdict (these
    checks come on top of the None diagnosis, which stands). ``StopCheck`` passes through."""
    if isinstance(error, StopCheck) or strict():
        raise error
    message = f"gradcheck: internal error while checking gradient values: {type(error).__name__}: {error}"
    print(message, file=sys.stderr)
