"""How the trace engine stops a program and reports its own errors."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from types import FrameType


class StopCheck(BaseException):
    """Ends the user's program once its steps are checked (a BaseException, so a
    script's ``except Exception`` does not swallow it; a bare ``except:`` that does is
    stopped again at its next line, see ``restop``)."""


#: Set while the runner runs a program (``restop.StopGuard``): arms the re-stop. None for
#: the Python API, whose caller's own code must go on as written.
_on_stop: Callable[[FrameType], None] | None = None


def set_stop_hook(hook: Callable[[FrameType], None] | None) -> None:
    global _on_stop
    _on_stop = hook


def stop_program() -> StopCheck:
    """The exception every site that ends the program raises: ``raise stop_program()``.
    Under the runner it also arms the re-stop, so user code that catches it and goes on is
    stopped again before its next line."""
    hook = _on_stop
    if hook is not None:
        hook(sys._getframe(1))
    return StopCheck()


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
